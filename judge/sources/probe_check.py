"""The tolerance a GPU MODE problem's own check_implementation applies, found in the probe's
process: the check runs on the reference's own output while the comparisons it may call are
recorded (the problem set's `verbose_allclose`, `match_reference` and `verbose_allequal`, and
torch's `allclose`, `isclose`, `testing.assert_close` and `equal`). A comparison counts for an
output when one of the tensors it is handed holds that output's values.

The judge then compares every output element by element under that tolerance; a check that
compares some output with no tolerance (a residual, a property of its own) judges the outputs
itself, run by the judge, once it is seen to reject outputs of zeros.

Runs third-party code: only `judge.sources.probe_gpumode` imports this.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
from collections.abc import Iterator
from typing import Any

import torch

from judge.sources.probing import Skip
from judge.sources.runtime import passed, said_message

TOLERANT = ("verbose_allclose", "match_reference")  # the problem set's, with rtol and atol
EXACT = ("verbose_allequal",)
TORCH = {"allclose": (1e-05, 1e-08), "isclose": (1e-05, 1e-08)}  # (rtol, atol) defaults
ASSERT_CLOSE = {  # torch.testing.assert_close's defaults by dtype: (rtol, atol)
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
}
Call = tuple[list[torch.Tensor], float, float]  # the tensors compared, atol, rtol


def tolerance(module, data: Any, output: Any, outputs: list[torch.Tensor]) -> dict:
    """{"atol", "rtol"}: the loosest tolerance the check compares an output with, when it
    passes the reference's own `output` on `data`; {"custom": True} where it compares some
    output with no tolerance (a residual, an orthogonality: the check itself then judges, run
    by the judge), provided it rejects outputs of zeros; Skip where it rejects the reference's
    own output, or accepts zeros."""
    with recording(module) as calls:
        said = module.check_implementation(data, output)
    if not passed(said):
        raise Skip(
            f"its check_implementation rejects the reference's own output: {said_message(said)}"
        )
    found = [[(a, r) for tensors, a, r in calls if any(_holds(t, o) for t in tensors)]
             for o in outputs]  # fmt: skip
    if not all(found):
        if passed(module.check_implementation(data, _zeros(output))):
            raise Skip("its check_implementation compares no output and accepts zeros")
        return {"custom": True}
    pairs = [pair for each in found for pair in each]
    return {"atol": max(a for a, _ in pairs), "rtol": max(r for _, r in pairs)}


def _zeros(output: Any) -> Any:
    """The output with every tensor zeroed; a tuple of any kind (torch.geqrf's named one too)
    becomes a plain tuple, as the judge hands the check several outputs."""
    if isinstance(output, torch.Tensor):
        return torch.zeros_like(output)
    if isinstance(output, (tuple, list)):
        return tuple(_zeros(v) for v in output)
    if isinstance(output, dict):
        return {k: _zeros(v) for k, v in output.items()}
    return output


def _holds(t: torch.Tensor, output: torch.Tensor) -> bool:
    if not isinstance(t, torch.Tensor) or t.shape != output.shape:
        return False
    a, b = t.detach().cpu().double(), output.detach().cpu().double()
    return bool(((a == b) | (a.isnan() & b.isnan())).all())


@contextlib.contextmanager
def recording(module) -> Iterator[list[Call]]:
    """The comparisons called while the block runs, each as (tensors, atol, rtol)."""
    calls: list[Call] = []
    owners = [module, sys.modules.get("utils")]
    patches = [(o, n, _tolerant(getattr(o, n), calls)) for o in owners for n in TOLERANT
               if callable(getattr(o, n, None))]  # fmt: skip
    patches += [(o, n, _exact(getattr(o, n), calls)) for o in owners for n in EXACT
                if callable(getattr(o, n, None))]  # fmt: skip
    patches += [(torch, n, _torch(getattr(torch, n), calls, d)) for n, d in TORCH.items()]
    patches += [(torch, "equal", _exact(torch.equal, calls))]
    patches += [(torch.testing, "assert_close", _assert_close(torch.testing.assert_close, calls))]
    originals = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    try:
        for owner, name, wrapper in patches:
            setattr(owner, name, wrapper)
        yield calls
    finally:
        for owner, name, original in reversed(originals):
            setattr(owner, name, original)


def _tensors(args: tuple, kwargs: dict) -> list[torch.Tensor]:
    return [v for v in (*args, *kwargs.values()) if isinstance(v, torch.Tensor)]


def _tolerant(original, calls: list[Call]):
    signature = inspect.signature(original)

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        bound = signature.bind_partial(*args, **kwargs)
        bound.apply_defaults()
        atol, rtol = bound.arguments.get("atol"), bound.arguments.get("rtol")
        if isinstance(atol, (int, float)) and isinstance(rtol, (int, float)):
            calls.append((_tensors(args, kwargs), float(atol), float(rtol)))
        return original(*args, **kwargs)

    return wrapper


def _exact(original, calls: list[Call]):
    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        calls.append((_tensors(args, kwargs), 0.0, 0.0))
        return original(*args, **kwargs)

    return wrapper


def _torch(original, calls: list[Call], defaults: tuple[float, float]):
    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        rtol = kwargs.get("rtol", args[2] if len(args) > 2 else defaults[0])
        atol = kwargs.get("atol", args[3] if len(args) > 3 else defaults[1])
        calls.append((_tensors(args, kwargs), float(atol), float(rtol)))
        return original(*args, **kwargs)

    return wrapper


def _assert_close(original, calls: list[Call]):
    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        tensors = _tensors(args, kwargs)
        dtype = tensors[-1].dtype if tensors else torch.float32
        rtol, atol = ASSERT_CLOSE.get(dtype, (0.0, 0.0))
        rtol = rtol if kwargs.get("rtol") is None else kwargs["rtol"]
        atol = atol if kwargs.get("atol") is None else kwargs["atol"]
        calls.append((tensors, float(atol), float(rtol)))
        return original(*args, **kwargs)

    return wrapper
