"""What an imported puzzle's reference.py calls: the source's own reference, loaded from the copy
of its files beside the puzzle (source/), on the judge's tensors.

The judge hands a reference flat tensors (floats widened to float64) and the sizes and scalars of
the case, in the order of the signature. The source's reference wants its tensors shaped and of
their own type: each is made so, the source's function runs on the CPU, and what it wrote is
copied back into the judge's output tensors.

This runs the source's code: a user imports only from a checkout they trust (README).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

import torch

from judge.core.spec import evaluate


def _module(path: Path, name: str, search: list[Path]):
    """The module at path, its own folders first on the search path (a process that loads
    several imported puzzles finds each one's helpers, not another's)."""
    for folder in search:
        while str(folder) in sys.path:
            sys.path.remove(str(folder))
        sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Call:
    """The judge's arguments of one call, as the source wants them."""

    def __init__(self, signature: list[dict], values: tuple):
        self.signature = signature
        self.values = dict(zip((a["ours"] for a in signature), values, strict=True))
        self.sizes = {
            a["ours"]: int(self.values[a["ours"]]) for a in signature if a["role"] == "size"
        }
        self.shaped: dict[str, torch.Tensor] = {}
        for a in signature:
            if "dtype" in a:
                dims = [int(evaluate(d, self.sizes)) for d in a["shape"]]
                flat = self.values[a["ours"]]
                self.shaped[a["ours"]] = flat.to(getattr(torch, a["dtype"])).reshape(dims)

    def theirs(self, a: dict):
        if "dtype" in a:
            return self.shaped[a["ours"]]
        return int(self.values[a["ours"]]) if a["role"] == "size" else float(self.values[a["ours"]])

    def write_back(self, ours: str, result: torch.Tensor | None = None) -> None:
        target = self.values[ours]
        written = self.shaped[ours] if result is None else result
        target.copy_(written.reshape(-1).to(target.dtype))


def leetgpu_reference(reference_file: str, signature: list[dict]) -> Callable:
    """A LeetGPU challenge's reference_impl(**arguments), which writes its outputs in place."""
    source = Path(reference_file).parent / "source"
    module = _module(source / "challenge.py", f"tpuzzle_source_{source.parent.name}", [source])
    challenge = module.Challenge(device="cpu")

    def reference(*values):
        call = _Call(signature, values)
        challenge.reference_impl(**{a["theirs"]: call.theirs(a) for a in signature})
        for a in signature:
            if a["role"] in ("out", "inout"):
                call.write_back(a["ours"])

    return reference


def gpumode_reference(
    reference_file: str,
    signature: list[dict],
    returns: str,
    as_tuple: bool = True,
    new_output: bool = False,
) -> Callable:
    """A GPU MODE problem's ref_kernel(data), which returns its output: the data tuple's tensor
    named `returns`, filled in place or returned anew, or (`new_output`) a tensor of its own,
    which the buffer `returns` receives. `as_tuple`: the data is a tuple (else one tensor)."""
    source = Path(reference_file).parent / "source"
    for name in ("task", "utils"):
        sys.modules.pop(name, None)
    module = _module(source / "reference.py", f"tpuzzle_source_{source.parent.name}", [source])
    data = [a for a in signature if "dtype" in a and not (new_output and a["theirs"] == returns)]

    def reference(*values):
        call = _Call(signature, values)
        given = tuple(call.theirs(a) for a in data)
        result = module.ref_kernel(given if as_tuple else given[0])
        target = next(a["ours"] for a in signature if a["theirs"] == returns)
        call.write_back(target, result)

    return reference
