"""What an imported puzzle's reference.py calls: the source's own reference, loaded from the copy
of its files beside the puzzle (source/), on the judge's tensors.

The judge hands a reference flat tensors (floats widened to float64) and the sizes and scalars of
the case, in the order of the signature. The source's reference wants its tensors shaped and of
their own type: each is made so, the source's function runs on the CPU, and what it wrote is
copied back into the judge's output tensors. (A LeetGPU reference that asserts its tensors are
CUDA tensors, as older checkouts' do, runs without those asserts.)

This runs the source's code: a user imports only from a checkout they trust (docs/importing.md).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path

import torch

from judge.core.spec import evaluate
from judge.sources import layout


def _module(path: Path, name: str, search: list[Path], on_cpu: bool = False):
    """The module at path, its own folders first on the search path (a process that loads
    several imported puzzles finds each one's helpers, not another's); `on_cpu`: without its
    asserts that tensors are on a CUDA device (_OffCuda)."""
    for folder in search:
        while str(folder) in sys.path:
            sys.path.remove(str(folder))
        sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    if not on_cpu:
        spec.loader.exec_module(module)
        return module
    tree = _OffCuda().visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    exec(compile(ast.fix_missing_locations(tree), str(path), "exec"), module.__dict__)
    return module


class _OffCuda(ast.NodeTransformer):
    """A reference written for the GPU, made to run on the CPU: each `assert` that a tensor is
    a CUDA tensor (`x.is_cuda`, `x.device.type == "cuda"`) becomes `pass`; the rest is kept."""

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        found = list(ast.walk(node.test))
        cuda = any(isinstance(n, ast.Attribute) and n.attr == "is_cuda" for n in found) or any(
            isinstance(n, ast.Constant) and n.value == "cuda" for n in found
        )
        return ast.copy_location(ast.Pass(), node) if cuda else node


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


def on_cpu(fn: Callable) -> dict:
    """The keyword that puts what `fn` makes on the CPU: {"device": "cpu"} where it takes a
    `device` parameter, else nothing."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin's signature may not be known
        return {}
    return {"device": "cpu"} if "device" in parameters else {}


def leetgpu_challenge(cls: type):
    """A LeetGPU Challenge for the CPU, whichever constructor its checkout has: one that takes
    the device, or one of no arguments (its metadata passed up to the base class)."""
    return cls(**on_cpu(cls))


def leetgpu_reference(reference_file: str, signature: list[dict]) -> Callable:
    """A LeetGPU challenge's reference_impl(**arguments), which writes its outputs in place."""
    source = Path(reference_file).parent / "source"
    for name in [n for n in sys.modules if n == "core" or n.startswith("core.")]:
        sys.modules.pop(name)  # each puzzle's own copy of the checkout's challenge_base
    name = f"tpuzzle_source_{source.parent.name}"
    module = _module(source / "challenge.py", name, [source], on_cpu=True)
    challenge = leetgpu_challenge(module.Challenge)

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
    returns: str = "",
    as_tuple: bool = True,
    new_output: bool = False,
    *,
    data: dict | None = None,
    outputs: list[str] | None = None,
) -> Callable:
    """A GPU MODE problem's ref_kernel(data), which returns its outputs: the data is built from
    the judge's arguments by its layout (`data`, see judge.sources.layout); each output, filled
    in place or returned anew, is copied into the buffer `outputs` names in its place.
    (`returns`, `as_tuple` and `new_output` say as much of a puzzle imported with one output and
    a tuple of tensors: the output's buffer, whether the data is a tuple or one tensor, and
    whether the output is a buffer of its own.)"""
    module = _gpumode_module(reference_file)
    if data is None:
        data, outputs = _one_output(signature, returns, as_tuple, new_output), [returns]
    arguments = {a["theirs"]: a for a in signature}

    def reference(*values):
        call = _Call(signature, values)
        built = layout.build(data, lambda kind, name: call.theirs(arguments[name]))
        result = module.ref_kernel(built)
        results = result if isinstance(result, (tuple, list)) else (result,)
        for name, written in zip(outputs, results, strict=True):
            call.write_back(arguments[name]["ours"], written)

    return reference


def gpumode_check(
    reference_file: str, signature: list[dict], *, data: dict, outputs: list[str]
) -> Callable:
    """A GPU MODE problem's check_implementation(data, output) as the judge's `check(*args)`:
    the data built from the arguments as for the reference, the outputs (a tuple where there
    are several) shaped and typed as the source gives them; None when it passes, else its
    message. (For a problem whose check compares no output element by element: a residual,
    an orthogonality, answers that are not unique.)"""
    module = _gpumode_module(reference_file)
    arguments = {a["theirs"]: a for a in signature}

    def check(*values):
        call = _Call(signature, values)
        built = layout.build(data, lambda kind, name: call.theirs(arguments[name]))
        given = tuple(call.shaped[arguments[name]["ours"]] for name in outputs)
        said = module.check_implementation(built, given if len(given) > 1 else given[0])
        return None if passed(said) else said_message(said)

    return check


def _gpumode_module(reference_file: str):
    """A GPU MODE problem's reference.py from the copy beside the puzzle, loaded once for its
    reference and its check (its own task.py and utils.py, not another puzzle's); loaded anew
    once the copy changed (imported again while a judge server runs)."""
    source = Path(reference_file).parent / "source" / "reference.py"
    return _loaded_gpumode(str(source), source.stat().st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _loaded_gpumode(path: str, stamp: int):
    source = Path(path).parent
    for name in ("task", "utils"):
        sys.modules.pop(name, None)
    return _module(source / "reference.py", f"tpuzzle_source_{source.parent.name}", [source])


def passed(said) -> bool:
    """A GPU MODE check's answer: (passed, message), a message (empty when it passed), or a
    bool."""
    if isinstance(said, tuple) and said:
        return bool(said[0])
    if isinstance(said, str):
        return said == ""
    return said is None or bool(said)


def said_message(said) -> str:
    """What a check that did not pass said, in one line."""
    message = said[1] if isinstance(said, tuple) and len(said) > 1 else said
    text = str(message or "the problem's check_implementation did not pass it")
    return " ".join(text.split())[:500]


def _one_output(signature: list[dict], returns: str, as_tuple: bool, new_output: bool) -> dict:
    """The layout of a tuple of tensors (or of one tensor), the data of a puzzle imported with
    one output."""
    given = [a for a in signature if "dtype" in a and not (new_output and a["theirs"] == returns)]
    tensors = [{"tensor": a["theirs"]} for a in given]
    return {"tuple": tensors} if as_tuple else tensors[0]
