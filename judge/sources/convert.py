"""A problem of another catalogue, as the probe described it, made a tpuzzle puzzle: its
puzzle.yaml (the signature on the raw-pointer ABI, dtypes, roles, tolerances, cases with seeds,
the performance case as the benchmark, the source and its licence), a template, a reference that
calls the source's own, and the source's files it needs.

Inputs made by one random or constant fill become the case's own draws (tpuzzle draws them from
its seeds); any other input is stored in the puzzle's folder (cases/<n>.npz), within a size limit.

Runs no third-party code: it reads the probe's JSON and arrays and writes files.
"""

from __future__ import annotations

import keyword
import math
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from judge.core.spec import DTYPES
from judge.core.spec_reader import load_spec
from judge.errors import SpecError
from judge.sources import shapes, tolerances
from judge.sources.files import reference_text, template_text

ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "float8_e4m3fn": 1,
            "float8_e5m2": 1, "int8": 1, "uint8": 1, "int16": 2, "int32": 4, "uint32": 4,
            "int64": 8}  # fmt: skip
INTERPRET_MAX = 1 << 20  # elements over every buffer: larger cases do not run in the interpreter
FALLBACK_DRAWS = {  # integer buffers: values of their whole range, never all zeros
    "uint8": {"dist": "randint", "low": 0, "high": 256},
    "int8": {"dist": "randint", "low": -128, "high": 128},
    "int16": {"dist": "randint", "low": -1000, "high": 1000},
    "int32": {"dist": "randint", "low": -1000, "high": 1000},
    "uint32": {"dist": "randint", "low": 0, "high": 1 << 32},
    "int64": {"dist": "randint", "low": -1000, "high": 1000},
}
DRAW_SEED = 0x7A11  # the seed of inputs drawn at import to complete a stored case


class Skip(Exception):
    """A problem that cannot become a puzzle, with the reason in words."""


@dataclass(frozen=True)
class Origin:
    """What the importer knows of a problem before its code runs."""

    kind: str  # "leetgpu" or "gpumode"
    problem: str  # its folder in the checkout
    puzzle_id: str
    difficulty: str
    statement: str  # plain text
    source: dict  # repository, commit, path, licence
    files: tuple[tuple[Path, str], ...]  # the source's files the reference needs: (file, name)


@dataclass(frozen=True)
class Converted:
    puzzle_id: str
    directory: Path
    notes: tuple[str, ...]  # cases left out, and why


def convert(
    description: dict, origin: Origin, probed: Path, into: Path, max_stored: int
) -> Converted:
    """Write the puzzle into `into`/<id>; Skip with the reason when it cannot be."""
    if "skip" in description:
        raise Skip(description["skip"])
    args = _arguments(description)
    sizes = [a["ours"] for a in args if a["role"] == "size"]
    tolerance = _tolerance(description, sizes, origin.kind)
    cases = description.get("cases") or []
    typed = [c for c in cases if _mistyped(args, c) is None]
    for arg in args:
        if arg["role"] in ("in", "out", "inout"):
            arg["shape"] = _shape(arg, typed, sizes)
    # Each conversion stages in a folder of its own, named as the puzzle (its spec checks that):
    # another import into the same folder, at the same time, neither sees nor removes it.
    with tempfile.TemporaryDirectory(dir=into, prefix=".importing-") as work:
        staging = Path(work) / origin.puzzle_id
        (staging / "cases").mkdir(parents=True)
        notes: list[str] = []
        tests, benchmarks = _cases(args, cases, probed, staging, max_stored, notes)
        if not tests:
            raise Skip("no test case could be kept: " + "; ".join(notes[:2]))
        spec = _spec(description, origin, args, tests, benchmarks, tolerance)
        text = yaml.safe_dump(spec, sort_keys=False, width=100, allow_unicode=True)
        (staging / "puzzle.yaml").write_text(text, encoding="utf-8")
        (staging / "template.py").write_text(template_text(origin.puzzle_id, args))
        (staging / "reference.py").write_text(reference_text(origin, args, description))
        _copy_sources(origin, staging / "source")
        if not any((staging / "cases").iterdir()):
            (staging / "cases").rmdir()
        try:
            load_spec(staging / "puzzle.yaml").id  # noqa: B018 - validated as every spec is
        except SpecError as exc:
            raise Skip(f"the converted spec does not load: {exc}") from None
        target = into / origin.puzzle_id
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    return Converted(origin.puzzle_id, target, tuple(notes))


# ------------------------------------------------------------------------------- the signature


def _arguments(description: dict) -> list[dict]:
    """The signature on the raw-pointer ABI: each pointer `<name>_ptr` with its dtype and role,
    each integer a size, each float a scalar with the first case's value."""
    cases = description.get("cases") or []
    if not cases:
        raise Skip("no test cases")
    args, taken = [], set()
    for entry in description.get("signature") or []:
        name, kind = str(entry["name"]), entry["kind"]
        ours = name if kind != "pointer" or name.endswith("_ptr") else f"{name}_ptr"
        if not ours.isidentifier() or keyword.iskeyword(ours) or ours in taken:
            raise Skip(f"argument {name!r} cannot be named {ours!r} in Python")
        taken.add(ours)
        arg = {"theirs": name, "ours": ours, "kind": kind}
        if kind == "pointer":
            arg |= {"role": entry["direction"], "dtype": _dtype(name, cases)}
        elif kind == "int":
            arg |= {"role": "size"}
        else:
            arg |= {"role": "scalar", "value": _first(name, cases, "float")}
        args.append(arg)
    if not any(a["role"] in ("out", "inout") for a in args):
        raise Skip("no output buffer in the signature")
    return args


def _dtype(name: str, cases: list[dict]) -> str:
    """The argument's type in the first case (a case where it has another is left out)."""
    if not all("tensor" in c["values"][name] for c in cases):
        raise Skip(f"argument {name!r} is not a tensor in every case")
    dtype = cases[0]["values"][name]["tensor"]["dtype"]
    if dtype not in DTYPES:
        raise Skip(f"argument {name!r} is {dtype}, a type tpuzzle lacks")
    return dtype


def _mistyped(args: list[dict], case: dict) -> str | None:
    """Why a case's tensors are not of the arguments' types, or None."""
    for arg in (a for a in args if "dtype" in a):
        found = case["values"][arg["theirs"]]["tensor"]["dtype"]
        if found != arg["dtype"]:
            return f"its {arg['theirs']!r} is {found}, the first case's {arg['dtype']}"
    return None


def _first(name: str, cases: list[dict], key: str) -> Any:
    value = cases[0]["values"][name]
    if key not in value:
        raise Skip(f"argument {name!r} is not a {key} in every case")
    return value[key]


def _shape(arg: dict, cases: list[dict], sizes: list[str]) -> list[str]:
    observed = [
        (_sizes(c, sizes), tuple(c["values"][arg["theirs"]]["tensor"]["shape"])) for c in cases
    ]
    found = shapes.infer(observed, sizes)
    if found is None:
        raise Skip(f"the shape of {arg['theirs']!r} follows from no expression in {sizes}")
    return found


def _sizes(case: dict, sizes: list[str]) -> dict[str, int]:
    return {s: int(case["values"][s]["int"]) for s in sizes}


def _tolerance(description: dict, sizes: list[str], kind: str) -> dict:
    """The source's tolerance: the description's, or, where its check was asked of some cases
    (each case's "tolerance"), one that gives what it applied to each."""
    asked = [(_sizes(c, sizes), c["tolerance"]) for c in description["cases"] if "tolerance" in c]
    found = {key: float(description.get(key, 0.0)) for key in ("atol", "rtol")}
    if description.get("check") == "reference":
        note = (
            "the problem's own check judges the outputs (check: reference); this is how far a "
            "timed call's outputs may be from the first call's on the same inputs"
        )
        return {**found, "note": note}
    for key in found if asked else ():
        found[key] = tolerances.fitted([(s, float(t[key])) for s, t in asked], sizes)
        if found[key] is None:
            raise Skip(f"its check's {key} changes from case to case as no expression in the sizes")
    return {**found, "note": f"the source's own tolerance ({kind})"}


# ------------------------------------------------------------------------------- cases


def _cases(args, cases, probed: Path, staging: Path, max_stored: int, notes: list[str]):
    sizes = [a["ours"] for a in args if a["role"] == "size"]
    tests, benchmarks, counts = [], [], {"example": 0, "test": 0, "benchmark": 0}
    for index, case in enumerate(cases):
        kind = case["kind"]
        counts[kind] += 1
        label = _label(kind, counts[kind], _sizes(case, sizes))
        try:
            entry = _case(args, case, label, index, probed, staging, max_stored)
        except Skip as skip:
            notes.append(f"{label}: left out, {skip}")
            continue
        (benchmarks if kind == "benchmark" else tests).append(entry)
    _keep_one_for_the_interpreter(tests)
    return tests, benchmarks


def _label(kind: str, n: int, sizes: dict[str, int]) -> str:
    shown = " ".join(f"{k}={v}" for k, v in sizes.items())
    head = "example" if kind == "example" and n == 1 else f"{kind} {n}"
    return f"{head}: {shown}" if shown else head


def _case(args, case, label, index, probed: Path, staging: Path, max_stored: int) -> dict:
    if mistyped := _mistyped(args, case):
        raise Skip(mistyped)
    values = case["values"]
    entry: dict[str, Any] = {
        "name": label,
        "sizes": _sizes(case, [a["ours"] for a in args if a["role"] == "size"]),
    }
    seed = case.get("seed")
    entry["seed"] = int(1000 + index if seed is None else seed) & 0x7FFFFFFF
    drawn = [a for a in args if a["role"] in ("in", "inout")]
    fills = {a["ours"]: values[a["theirs"]]["tensor"].get("fill") for a in drawn}
    if all(f is not None and f.get("dist") not in ("empty", "out") for f in fills.values()):
        entry["draws"] = {name: _draw(f) for name, f in fills.items()}
    elif drawn:
        entry["inputs"] = _store(drawn, values, index, probed, staging, max_stored)
    scalars = {a["ours"]: values[a["theirs"]]["float"] for a in args if a["role"] == "scalar"}
    own = {
        k: v for k, v in scalars.items() if v != next(a["value"] for a in args if a["ours"] == k)
    }
    if own:
        entry["scalars"] = own
    elements = sum(math.prod(values[a["theirs"]]["tensor"]["shape"]) for a in args if "dtype" in a)
    if elements > INTERPRET_MAX or case["kind"] == "benchmark":
        entry["interpret"] = False
    return entry


def _draw(fill: dict) -> dict:
    dist = fill["dist"]
    if dist == "uniform":
        return {"dist": "uniform", "low": fill["low"], "high": fill["high"]}
    if dist == "normal":
        return {"dist": "normal", "mean": fill["mean"], "std": fill["std"]}
    if dist == "randint":
        return {"dist": "randint", "low": int(fill["low"]), "high": int(fill["high"])}
    return {"dist": "full", "value": float(fill["value"])}


def _store(drawn, values, index: int, probed: Path, staging: Path, max_stored: int) -> str:
    """The case's inputs in cases/<index>.npz: stored ones as the generators made them, filled
    ones drawn now from a fixed seed."""
    arrays, total = {}, 0
    rng = np.random.default_rng(DRAW_SEED + index)
    for arg in drawn:
        tensor = values[arg["theirs"]]["tensor"]
        total += math.prod(tensor["shape"]) * ITEMSIZE[arg["dtype"]]
        if total > max_stored:
            raise Skip(f"its inputs are made by code and over the {max_stored >> 20} MiB stored")
        if "file" in tensor:
            arrays[arg["ours"]] = np.load(probed / tensor["file"], allow_pickle=False).reshape(-1)
        else:
            arrays[arg["ours"]] = _drawn_now(tensor, arg["dtype"], rng)
    name = f"cases/{index}.npz"
    np.savez_compressed(staging / name, **arrays)
    return name


def _drawn_now(tensor: dict, dtype: str, rng: np.random.Generator) -> np.ndarray:
    n = math.prod(tensor["shape"])
    fill = tensor.get("fill") or {"dist": "full", "value": 0.0}
    if fill["dist"] == "uniform":
        values = rng.uniform(fill["low"], fill["high"], n)
    elif fill["dist"] == "normal":
        values = rng.normal(fill["mean"], fill["std"], n)
    elif fill["dist"] == "randint":
        values = rng.integers(int(fill["low"]), int(fill["high"]), n)
    else:  # full, and "empty": what an uninitialised buffer holds does not matter
        values = np.full(n, float(fill.get("value", 0.0)))
    if not hasattr(np, dtype):  # bfloat16, float8: NumPy lacks them, their bits are stored
        import torch

        from judge.core import inputs

        return inputs.to_numpy(torch.from_numpy(values).to(inputs.torch_dtype(dtype)), dtype)
    return values.astype(dtype)


def _keep_one_for_the_interpreter(tests: list[dict]) -> None:
    """Without a GPU, at least the smallest test runs."""
    if tests and all(t.get("interpret") is False for t in tests):
        tests[0].pop("interpret")


# ------------------------------------------------------------------------------- the spec


def _spec(description: dict, origin: Origin, args, tests, benchmarks, tolerance: dict) -> dict:
    sizes = [a["ours"] for a in args if a["role"] == "size"]
    seen = {s: [c["sizes"][s] for c in tests + benchmarks] for s in sizes}
    written = [a for a in args if a["role"] in ("out", "inout")]
    traffic = " + ".join(f"{ITEMSIZE[a['dtype']]} * {' * '.join(a['shape'])}" for a in written)
    return {
        "id": origin.puzzle_id,
        "title": str(description.get("title") or origin.puzzle_id),
        "difficulty": origin.difficulty,
        "tags": ["imported", origin.kind],
        "statement": origin.statement or str(description.get("statement") or ""),
        "example": "",
        "args": [_arg(a) for a in args],
        "limits": {s: [min(v), max(v)] for s, v in seen.items()},
        "tolerance": tolerance,
        "tests": tests,
        "benchmarks": benchmarks,
        "library": "",
        "speed_of_light": {"bytes": traffic, "peak": "copy_bandwidth"},
        "source": {"kind": origin.kind, **origin.source},
        **({"check": "reference"} if description.get("check") == "reference" else {}),
    }


def _arg(a: dict) -> dict:
    if a["role"] == "size":
        return {"name": a["ours"], "role": "size"}
    if a["role"] == "scalar":
        return {"name": a["ours"], "role": "scalar", "value": float(a["value"])}
    arg = {"name": a["ours"], "role": a["role"], "dtype": a["dtype"], "shape": a["shape"]}
    if a["role"] != "out":  # for cases of the user's own sizes; a case's own draw wins
        arg["draw"] = FALLBACK_DRAWS.get(a["dtype"], {"dist": "uniform", "low": -1.0, "high": 1.0})
    return arg


def _copy_sources(origin: Origin, folder: Path) -> None:
    for path, name in origin.files:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
