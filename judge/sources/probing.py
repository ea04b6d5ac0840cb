"""The machinery of the probe (judge.sources.probe), the process that runs an import's
third-party code: the CPU in place of the device, each tensor's fill, the recorder of what a
problem gave, the time limit. probe_leetgpu and probe_gpumode describe their sources with it.

For the I-th PROBLEM (a folder of the checkout) it writes OUT/I/problem.json and one .npy per
stored tensor; a problem that cannot be read gets {"skip": "reason"}. Each problem has a time
limit; one that crashes the process is found missing by the importer, which goes on after it.

Two things make third-party generators usable here:
- The device: every tensor they ask for on "cuda" is made on the CPU (factories, `.to`, `.cuda`,
  generators), so no GPU is needed.
- Provenance: a tensor made by one random or constant fill (`torch.rand`, `empty().uniform_()`,
  `randn`, `randint`, `zeros`, `full`, ...) and not changed since is described by that fill, to be
  drawn again by tpuzzle from its own seeds; any other tensor is stored as it is.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import torch

from judge.core import inputs, spec

TIME_LIMIT_S = int(os.environ.get("TPUZZLE_IMPORT_TIMEOUT", "300"))  # per problem, on the CPU
DTYPES = {  # the tensor types tpuzzle has buffers of (judge.core.spec.DTYPES) that this torch has
    getattr(torch, name): name for name in spec.DTYPES if hasattr(torch, name)
}


class Skip(Exception):
    """A problem that cannot be converted, with the reason in words."""


# ------------------------------------------------------------------------------- the device


def _cpu(device: Any) -> Any:
    if device is None:
        return None
    text = str(device)
    return "cpu" if text.startswith("cuda") else device


def _on_cpu(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "device" in kwargs:
            kwargs["device"] = _cpu(kwargs["device"])
        return fn(*args, **kwargs)

    return wrapper


FACTORIES = (
    "tensor", "as_tensor", "empty", "zeros", "ones", "full", "rand", "randn", "randint",
    "randperm", "arange", "linspace", "eye", "empty_strided", "zeros_like", "ones_like",
    "empty_like", "full_like", "rand_like", "randn_like", "randint_like", "from_numpy",
)  # fmt: skip


class _Generator(torch.Generator):
    """torch.Generator(device="cuda") made a CPU generator (still a torch.Generator, a type that
    annotations such as `torch.Generator | None` can use)."""

    def __new__(cls, device: Any = "cpu"):
        return super().__new__(cls, _cpu(device))


def _to(self, *args, **kwargs):
    args = tuple(_cpu(a) if isinstance(a, (str, torch.device)) else a for a in args)
    if "device" in kwargs:
        kwargs["device"] = _cpu(kwargs["device"])
    return _ORIGINAL["Tensor.to"](self, *args, **kwargs)


_ORIGINAL: dict[str, Any] = {}


def redirect_cuda() -> None:
    """Make every CUDA request of the generators a CPU one, for the rest of this process."""
    for name in FACTORIES:
        if hasattr(torch, name) and name not in _ORIGINAL:
            _ORIGINAL[name] = getattr(torch, name)
            setattr(torch, name, _track(name, _on_cpu(_ORIGINAL[name])))
    torch.Generator = _Generator  # type: ignore[misc]
    _ORIGINAL["Tensor.to"] = torch.Tensor.to
    torch.Tensor.to = _to  # type: ignore[method-assign]
    torch.Tensor.cuda = lambda self, *a, **k: self  # type: ignore[method-assign]
    torch.cuda.synchronize = lambda *a, **k: None
    torch.cuda.manual_seed = lambda *a, **k: None  # torch.manual_seed seeds the CPU
    torch.cuda.manual_seed_all = lambda *a, **k: None
    for method in ("uniform_", "normal_", "fill_", "zero_", "random_"):
        _ORIGINAL[f"Tensor.{method}"] = getattr(torch.Tensor, method)
        setattr(torch.Tensor, method, _track_method(method))


# ------------------------------------------------------------------------------- provenance

_FILLS: dict[int, tuple[weakref.ref, dict, int]] = {}  # id -> (tensor, fill, version after it)


def _remember(tensor: Any, fill: dict | None) -> None:
    if isinstance(tensor, torch.Tensor) and fill is not None:
        _FILLS[id(tensor)] = (weakref.ref(tensor), fill, tensor._version)


def fill_of(tensor: torch.Tensor) -> dict | None:
    """The one fill that made the tensor, if it is still as that fill left it."""
    entry = _FILLS.get(id(tensor))
    if entry is None or entry[0]() is not tensor or tensor._version != entry[2]:
        return None
    if tensor._base is not None or not tensor.is_contiguous():
        return None
    return entry[1]


def _factory_fill(name: str, args: tuple, kwargs: dict) -> dict | None:
    if name in ("rand", "rand_like"):
        return {"dist": "uniform", "low": 0.0, "high": 1.0}
    if name in ("randn", "randn_like"):
        return {"dist": "normal", "mean": 0.0, "std": 1.0}
    if name in ("zeros", "zeros_like"):
        return {"dist": "full", "value": 0.0}
    if name in ("ones", "ones_like"):
        return {"dist": "full", "value": 1.0}
    if name == "full":
        value = kwargs.get("fill_value", args[1] if len(args) > 1 else None)
        return {"dist": "full", "value": float(value)} if _number(value) else None
    if name == "randint":
        numbers = [a for a in args if isinstance(a, int) and not isinstance(a, bool)]
        low, high = (0, numbers[0]) if len(numbers) == 1 else (numbers[:2] + [None])[:2]
        low = kwargs.get("low", low)
        high = kwargs.get("high", high)
        return {"dist": "randint", "low": low, "high": high} if _number(high) else None
    if name in ("empty", "empty_like", "empty_strided"):
        return {"dist": "empty"}
    return None


def _track(name: str, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        made = fn(*args, **kwargs)
        _remember(made, _factory_fill(name, args, kwargs))
        return made

    return wrapper


def _method_fill(method: str, args: tuple, kwargs: dict) -> dict | None:
    if method == "uniform_":
        low = kwargs.get("from", args[0] if args else 0.0)
        high = kwargs.get("to", args[1] if len(args) > 1 else 1.0)
        return {"dist": "uniform", "low": float(low), "high": float(high)}
    if method == "normal_":
        mean = kwargs.get("mean", args[0] if args else 0.0)
        std = kwargs.get("std", args[1] if len(args) > 1 else 1.0)
        return {"dist": "normal", "mean": float(mean), "std": float(std)}
    if method == "fill_":
        value = args[0] if args else kwargs.get("value")
        return {"dist": "full", "value": float(value)} if _number(value) else None
    if method == "zero_":
        return {"dist": "full", "value": 0.0}
    return None  # random_: its range depends on the dtype


def _track_method(method: str):
    original = _ORIGINAL[f"Tensor.{method}"]

    @functools.wraps(original)
    def wrapper(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        _remember(self, _method_fill(method, args, kwargs))
        return result

    return wrapper


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# ------------------------------------------------------------------------------- writing down


class Recorder:
    """Writes one problem's description and its stored arrays into a folder."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.stored = 0

    def value(self, value: Any, declared: dict | None = None) -> dict:
        """One argument's value in a case: a tensor (by its fill, or stored), an int, a float."""
        if declared is not None:
            return {"tensor": declared}
        if isinstance(value, torch.Tensor):
            return {"tensor": self.tensor(value)}
        if isinstance(value, bool):
            raise Skip(f"a boolean argument ({value!r}) has no place in the signature")
        if isinstance(value, int):
            return {"int": value}
        if isinstance(value, float):
            return {"float": value}
        raise Skip(f"an argument of type {type(value).__name__} has no place in the signature")

    def tensor(self, t: torch.Tensor) -> dict:
        dtype = DTYPES.get(t.dtype)
        if dtype is None:
            raise Skip(f"a tensor of {str(t.dtype).removeprefix('torch.')}, a type tpuzzle lacks")
        described = {"dtype": dtype, "shape": list(t.shape)}
        fill = fill_of(t)
        if fill is not None:
            return {**described, "fill": fill}
        self.stored += 1
        name = f"t{self.stored}.npy"
        np.save(self.folder / name, inputs.to_numpy(t, dtype), allow_pickle=False)
        return {**described, "file": name}

    def write(self, description: dict) -> None:
        (self.folder / "problem.json").write_text(json.dumps(description))


@contextlib.contextmanager
def time_limit(seconds: int):
    def expired(signum, frame):
        raise Skip(f"its generators ran past {seconds} s on the CPU")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def forget_fills() -> None:
    """Forget every tensor's fill: the next problem starts with none known."""
    _FILLS.clear()
