"""A puzzle.yaml read into a `PuzzleSpec`: `load_spec(path)`, and `worker_view(path)` (what a
worker is handed of it).

A puzzle.yaml is validated here once; every error names the file and the key, so a typo in a spec
is a one-line message, never a traceback.
"""

from __future__ import annotations

import ast
import math
from dataclasses import replace
from pathlib import Path

from judge.core.spec import (
    CHECKS,
    DIFFICULTIES,
    DISTS,
    DTYPES,
    PEAKS,
    ROLES,
    VISIBILITIES,
    Arg,
    Case,
    Draw,
    Mistake,
    PuzzleSpec,
    Requires,
    Source,
    SpeedOfLight,
    Tolerance,
    evaluate,
    violated,
)
from judge.core.yaml_reader import Reader, read_yaml
from judge.errors import SpecError


def load_spec(path: str | Path, view: bool = False) -> PuzzleSpec:
    """Read and validate a puzzle.yaml; raises SpecError naming the file and the key. A `view`
    (what a worker is handed: `worker_view`) has no cases."""
    path = Path(path)
    data = read_yaml(path)
    try:
        return _build_spec(Reader(path, data), path.parent, view)
    except SpecError:
        raise
    except Exception as exc:  # a shape of YAML the checks above did not foresee
        first = (str(exc).splitlines() or [""])[0]
        raise SpecError(f"{path}: cannot be loaded: {type(exc).__name__}: {first}") from None


# What a worker running a submission is handed of its puzzle: what it needs to lay out buffers and
# draw a case it is told to judge. Never the cases themselves (hidden sizes and seeds), the hints,
# the named mistakes or the reference.
WORKER_KEYS = ("id", "title", "difficulty", "tags", "statement", "args", "limits", "constraints",
               "tolerance", "speed_of_light", "timeout_s", "requires", "check")  # fmt: skip


def worker_view(path: str | Path) -> dict:
    """The keys of a puzzle.yaml a worker is handed (WORKER_KEYS), for `load_spec(view=True)`."""
    data = read_yaml(Path(path))
    return {k: data[k] for k in WORKER_KEYS if k in data}


def _build_spec(r: Reader, directory: Path, view: bool = False) -> PuzzleSpec:
    raw_args = r.get("args", list)
    sizes = {
        a.get("name")
        for a in raw_args
        if isinstance(a, dict) and isinstance(a.get("name"), str) and a.get("role") == "size"
    }
    args = tuple(_build_arg(r.child(f"args[{i}]", a), sizes) for i, a in enumerate(raw_args))
    _check_args(r, args)
    limits = _build_limits(r, args)
    constraints = _build_constraints(r, sizes)
    spec = PuzzleSpec(
        id=r.get("id", str),
        title=r.get("title", str),
        difficulty=r.choice("difficulty", DIFFICULTIES),
        tags=tuple(str(t) for t in r.get("tags", list, [])),
        statement=r.get("statement", str).strip(),
        example=r.get("example", str, "").strip(),
        args=args,
        tolerance=_build_tolerance(r.child("tolerance", r.get("tolerance", dict)), sizes),
        limits=limits,
        constraints=constraints,
        tests=_build_cases(r, "tests", args, limits, constraints),
        benchmarks=_build_cases(r, "benchmarks", args, limits, constraints),
        speed_of_light=_build_sol(r.child("speed_of_light", r.get("speed_of_light", dict)), sizes),
        library=r.get("library", str, "").strip(),
        timeout_s=_positive(r, "timeout_s", 60.0),
        directory=directory,
        source=_build_source(r) if "source" in r.data else None,
        hints=_build_hints(r),
        mistakes=_build_mistakes(r),
        requires=_build_requires(r),
        best=r.get("best", str, "").strip(),
        check=r.choice("check", CHECKS, "elementwise"),
    )
    if spec.check == "reference" and not view and not _defines(directory / "reference.py", "check"):
        r.fail("check: reference, but reference.py defines no check(*args)", "check")
    if spec.id != directory.name:
        r.fail(f"id {spec.id!r} does not match the directory name {directory.name!r}", "id")
    if not spec.tests and not view:
        r.fail("at least one test case is needed", "tests")
    return spec


def _defines(path: Path, name: str) -> bool:
    """Whether a Python file defines a function `name` at its top level (read, never run)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, SyntaxError, ValueError):
        return False
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body) or any(
        isinstance(n, ast.Assign) and any(getattr(t, "id", "") == name for t in n.targets)
        for n in tree.body
    )


def _positive(r: Reader, key: str, default: float) -> float:
    value = r.get(key, float, default)
    if not (math.isfinite(value) and value > 0):
        r.fail(f"expected a positive number of seconds, got {value}", key)
    return value


def _build_arg(r: Reader, sizes: set[str]) -> Arg:
    name, role = r.get("name", str), r.choice("role", ROLES)
    if not name.isidentifier():
        r.fail(f"{name!r} is not a Python identifier", "name")
    if role in ("size", "scalar"):
        value = r.get("value", float, None) if role == "scalar" else None
        if role == "scalar" and value is None:
            r.fail("a scalar needs a value", "value")
        return Arg(name=name, role=role, value=value)
    shape = r.get("shape", list)
    if not shape:
        r.fail("a buffer needs a non-empty shape", "shape")
    draw = _build_draw(r.child("draw", r.get("draw", dict)), sizes) if role != "out" else None
    if role != "out" and draw is None:
        r.fail("an input buffer needs a draw", "draw")
    return Arg(
        name=name,
        role=role,
        dtype=r.choice("dtype", DTYPES),
        shape=tuple(str(d) for d in shape),
        draw=draw,
    )


def _build_draw(r: Reader, sizes: set[str]) -> Draw:
    dist = r.choice("dist", DISTS)
    draw = Draw(
        dist=dist,
        low=r.expression("low", sizes, -1.0),
        high=r.expression("high", sizes, 1.0),
        mean=r.get("mean", float, 0.0),
        std=r.get("std", float, 1.0),
        value=r.get("value", float, 0.0),
    )
    numeric = isinstance(draw.low, float) and isinstance(draw.high, float)
    if dist in ("uniform", "randint") and numeric and not draw.low < draw.high:
        r.fail(f"low ({draw.low}) must be below high ({draw.high})", "low")
    return draw


def _check_args(r: Reader, args: tuple[Arg, ...]) -> None:
    names = [a.name for a in args]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        r.fail(f"argument {duplicate!r} appears twice", "args")
    sizes = {a.name: 1 for a in args if a.role == "size"}
    for i, arg in enumerate(args):
        for dim in arg.shape:
            try:
                evaluate(dim, sizes)
            except ValueError as exc:
                r.fail(f"shape {dim!r}: {exc}", f"args[{i}].shape")
    if not any(a.role in ("out", "inout") for a in args):
        r.fail("no output buffer (role out or inout)", "args")


def _build_limits(r: Reader, args: tuple[Arg, ...]) -> tuple[tuple[str, int, int], ...]:
    raw = r.child("limits", r.get("limits", dict))
    limits = []
    for name in (a.name for a in args if a.role == "size"):
        bounds = raw.get(name, list)
        if len(bounds) != 2 or not all(isinstance(b, int) for b in bounds):
            raw.fail("expected [min, max] as two integers", name)
        limits.append((name, bounds[0], bounds[1]))
    return tuple(limits)


def _build_tolerance(r: Reader, sizes: set[str]) -> Tolerance:
    tol = Tolerance(
        atol=r.expression("atol", sizes),
        rtol=r.expression("rtol", sizes),
        note=r.get("note", str, ""),
    )
    for key in ("atol", "rtol"):
        value = evaluate(getattr(tol, key), dict.fromkeys(sizes, 1))
        if not (math.isfinite(value) and value >= 0):
            r.fail("tolerances must be finite and non-negative", key)
    return tol


def _build_constraints(r: Reader, sizes: set[str]) -> tuple[str, ...]:
    found = r.get("constraints", list, [])
    for i, text in enumerate(found):
        if not isinstance(text, str):
            r.fail(f"expected a condition such as 'K <= N', got {text!r}", f"constraints[{i}]")
        try:
            evaluate(text, dict.fromkeys(sizes, 1))
        except (ValueError, ZeroDivisionError) as exc:
            r.fail(f"{text!r}: {exc}", f"constraints[{i}]")
    return tuple(found)


def _build_cases(
    r: Reader, key: str, args: tuple[Arg, ...], limits, constraints: tuple[str, ...]
) -> tuple[Case, ...]:
    cases = []
    for i, raw in enumerate(r.get(key, list, [])):
        c = r.child(f"{key}[{i}]", raw)
        sizes = c.child("sizes", c.get("sizes", dict))
        values = []
        for name, low, high in limits:
            value = sizes.get(name, int)
            if not low <= value <= high:
                sizes.fail(f"{value} is outside the limits [{low}, {high}]", name)
            values.append((name, value))
        broken = violated(constraints, dict(values))
        if broken:
            sizes.fail(f"breaks the constraint {broken!r}")
        extra = set(sizes.data) - {n for n, _, _ in limits}
        if extra:
            sizes.fail(f"unknown size {sorted(map(str, extra))[0]!r}")
        label = c.get("name", str, " ".join(f"{n}={v}" for n, v in values))
        draw = c.get("draw", str, "")
        if draw not in ("", "mixed"):
            c.fail(f"unknown draw {draw!r} (expected 'mixed' or nothing)", "draw")
        case = Case(
            name=label,
            sizes=tuple(values),
            seed=c.get("seed", int),
            draw=draw,
            interpret=c.get("interpret", bool, True),
            visibility=c.choice("visibility", VISIBILITIES, "visible"),
            group=c.get("group", str, "").strip(),
            draws=_case_draws(c, args, {n for n, _, _ in limits}),
            inputs=_case_inputs(c, r.path.parent),
            scalars=_case_scalars(c, args),
        )
        if case.own:
            if draw:
                c.fail("a case with its own draws, inputs or scalars takes no draw", "draw")
            case = replace(case, draw=f"{key.rstrip('s')}:{label}")
        cases.append(case)
    names = [case.name for case in cases]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        r.fail(f"two cases are named {twice!r} (a case's name identifies it in grading)", key)
    return tuple(cases)


def _case_draws(c: Reader, args: tuple[Arg, ...], sizes: set[str]) -> tuple:
    raw = c.child("draws", c.get("draws", dict, {}))
    drawn = {a.name for a in args if a.role in ("in", "inout")}
    found = []
    for name, value in raw.data.items():
        if name not in drawn:
            raw.fail("not an input buffer of the signature", str(name))
        found.append((str(name), _build_draw(raw.child(str(name), value), sizes)))
    return tuple(found)


def _case_inputs(c: Reader, directory: Path) -> str:
    given = c.get("inputs", str, "").strip()
    if not given:
        return ""
    path = Path(given)
    if path.is_absolute() or ".." in path.parts or path.suffix != ".npz":
        c.fail(f"{given!r}: expected a .npz file inside the puzzle's folder", "inputs")
    if not (directory / path).is_file():
        c.fail(f"{given!r}: no such file beside puzzle.yaml", "inputs")
    return given


def _case_scalars(c: Reader, args: tuple[Arg, ...]) -> tuple:
    raw = c.child("scalars", c.get("scalars", dict, {}))
    names = {a.name for a in args if a.role == "scalar"}
    found = []
    for name in raw.data:
        if name not in names:
            raw.fail("not a scalar of the signature", str(name))
        found.append((str(name), raw.get(str(name), float)))
    return tuple(found)


def _build_hints(r: Reader) -> tuple[str, ...]:
    found = r.get("hints", list, [])
    if len(found) > 6:
        r.fail(f"{len(found)} hints: a ladder has at most 6 steps", "hints")
    for i, hint in enumerate(found):
        if not isinstance(hint, str) or not hint.strip():
            r.fail("expected a sentence", f"hints[{i}]")
    return tuple(" ".join(h.split()) for h in found)


def _build_mistakes(r: Reader) -> tuple[Mistake, ...]:
    found = []
    for i, raw in enumerate(r.get("mistakes", list, [])):
        m = r.child(f"mistakes[{i}]", raw)
        name = m.get("name", str)
        if not name.isidentifier():
            m.fail(f"{name!r} is not an identifier (reference.py defines mistake_<name>)", "name")
        found.append(Mistake(name, " ".join(m.get("hint", str).split())))
    names = [m.name for m in found]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice:
        r.fail(f"two mistakes are named {twice!r}", "mistakes")
    return tuple(found)


def _build_requires(r: Reader) -> Requires:
    if "requires" not in r.data:
        return Requires()
    q = r.child("requires", r.get("requires", dict))
    text = str(q.get("capability", (str, float), "0.0"))
    parts = text.split(".")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        q.fail(f"{text!r}: expected MAJOR.MINOR, e.g. '8.0'", "capability")
    kb = q.get("shared_memory_kb", int, 0)
    if kb < 0:
        q.fail("expected KiB >= 0", "shared_memory_kb")
    return Requires(
        capability=(int(parts[0]), int(parts[1])),
        bf16=q.get("bf16", bool, False),
        fp16_tensor_cores=q.get("fp16_tensor_cores", bool, False),
        shared_memory_kb=kb,
    )


def _build_source(r: Reader) -> Source:
    s = r.child("source", r.get("source", dict))
    return Source(
        kind=s.get("kind", str),
        repository=s.get("repository", str, ""),
        commit=s.get("commit", str, ""),
        path=s.get("path", str, ""),
        licence=s.get("licence", str, ""),
    )


def _build_sol(r: Reader, sizes: set[str]) -> SpeedOfLight:
    measures = [m for m in ("bytes", "flop") if m in r.data]
    if len(measures) != 1:
        r.fail("give exactly one of 'bytes' or 'flop'")
    formula = str(r.get(measures[0], (str, int)))
    try:
        evaluate(formula, dict.fromkeys(sizes, 1))
    except ValueError as exc:
        r.fail(str(exc), measures[0])
    default_peak = "copy_bandwidth" if measures[0] == "bytes" else "matmul_tf32"
    return SpeedOfLight(
        measure=measures[0], formula=formula, peak=r.choice("peak", PEAKS, default_peak)
    )
