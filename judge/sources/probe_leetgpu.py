"""A LeetGPU challenge, read in the probe's process: `challenges/<difficulty>/<n>_<name>/
challenge.py` holds a `Challenge` class (name, atol, rtol, num_gpus, access_tier,
reference_impl, get_solve_signature, and the example, functional and performance generators).
Its constructor may take the device (`Challenge(device=...)`, its generators then use it) or
nothing (its generators ask for "cuda", which the probe makes the CPU): both are read.
Runs third-party code: only `judge.sources.probe` imports this."""

from __future__ import annotations

import ctypes
import importlib.util
import sys
from pathlib import Path
from typing import Any

from judge.sources.probing import Recorder, Skip
from judge.sources.runtime import leetgpu_challenge, on_cpu

INTEGERS = {
    ctypes.c_int, ctypes.c_int8, ctypes.c_int16, ctypes.c_int32, ctypes.c_int64, ctypes.c_uint,
    ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_size_t,
    ctypes.c_long, ctypes.c_longlong, ctypes.c_short,
}  # fmt: skip
FLOATS = {ctypes.c_float, ctypes.c_double}
DECLARED = {  # the declarative inputs of challenge_base, by class name: their fill
    "RandTensor": lambda d: {"dist": "uniform", "low": float(d.low), "high": float(d.high)},
    "RandnTensor": lambda d: {"dist": "normal", "mean": float(d.mean), "std": float(d.std)},
    "RandIntTensor": lambda d: {"dist": "randint", "low": int(d.low), "high": int(d.high)},
    "FullTensor": lambda d: {"dist": "full", "value": float(d.value)},
    "OutTensor": lambda d: {"dist": "out"},
}


def load(checkout: Path, problem: str):
    """The problem's Challenge class, its imports resolved in the checkout's challenges/."""
    path = checkout / problem / "challenge.py"
    if not path.is_file():
        raise Skip("no challenge.py")
    base = str(checkout / "challenges")
    if base not in sys.path:
        sys.path.insert(0, base)
    name = "tpuzzle_leetgpu_" + "".join(c if c.isalnum() else "_" for c in problem)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = getattr(module, "Challenge", None)
    if found is None:
        raise Skip("challenge.py defines no Challenge class")
    return found


def describe(checkout: Path, problem: str, recorder: Recorder) -> dict:
    challenge = leetgpu_challenge(load(checkout, problem))
    gpus = getattr(challenge, "num_gpus", 1)
    if gpus != 1:
        raise Skip(f"needs {gpus} GPUs")
    tier = getattr(challenge, "access_tier", "free")
    if tier != "free":
        raise Skip(f"a {tier!r} challenge, outside LeetGPU's free tier")
    signature = [_argument(name, entry) for name, entry in challenge.get_solve_signature().items()]
    cases = []
    for kind, method in (
        ("example", challenge.generate_example_test),
        ("test", challenge.generate_functional_test),
        ("benchmark", challenge.generate_performance_test),
    ):
        made = method(**on_cpu(method))
        for values in made if isinstance(made, list) else [made]:
            cases.append({"kind": kind, "values": _values(values, signature, recorder)})
    return {
        "title": str(challenge.name),
        "atol": float(challenge.atol),
        "rtol": float(challenge.rtol),
        "signature": signature,
        "cases": cases,
    }


def _argument(name: str, entry: Any) -> dict:
    """One parameter of solve(): (ctypes type, direction) as the challenge declares it."""
    try:
        ctype, direction = entry
    except (TypeError, ValueError):
        raise Skip(f"argument {name!r}: expected (ctypes type, direction), got {entry!r}") from None
    if direction not in ("in", "out", "inout"):
        raise Skip(f"argument {name!r}: unknown direction {direction!r}")
    if isinstance(ctype, type) and issubclass(ctype, ctypes._Pointer):
        return {
            "name": name,
            "kind": "pointer",
            "ctype": ctype._type_.__name__,
            "direction": direction,
        }
    if ctype in INTEGERS:
        kind = "int"
    elif ctype in FLOATS:
        kind = "float"
    else:
        raise Skip(f"argument {name!r}: the type {getattr(ctype, '__name__', ctype)} is not mapped")
    if direction != "in":
        raise Skip(f"argument {name!r}: a scalar passed {direction}, not mapped")
    return {"name": name, "kind": kind, "ctype": ctype.__name__, "direction": direction}


def _values(case: Any, signature: list[dict], recorder: Recorder) -> dict:
    if not isinstance(case, dict):
        raise Skip(f"a generator returned {type(case).__name__}, not a dict of arguments")
    missing = [a["name"] for a in signature if a["name"] not in case]
    if missing:
        raise Skip(f"a test case lacks the argument {missing[0]!r}")
    return {
        a["name"]: recorder.value(case[a["name"]], _declared(case[a["name"]])) for a in signature
    }


def _declared(value: Any) -> dict | None:
    """A declarative input (RandTensor, OutTensor, ...) as a tensor description, without making
    it."""
    fill = DECLARED.get(type(value).__name__)
    if fill is None or not hasattr(value, "shape"):
        return None
    dtype = str(getattr(value, "dtype", "float32")).removeprefix("torch.")
    return {"dtype": dtype, "shape": [int(d) for d in value.shape], "fill": fill(value)}
