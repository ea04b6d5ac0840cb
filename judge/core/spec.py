"""A puzzle as data: frozen dataclasses and `load_spec(path)`.

A puzzle.yaml is validated here once; every error names the file and the key, so a typo in a spec
is a one-line message, never a traceback.
"""

from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from judge.errors import SpecError

DTYPES = ("float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2",
          "int8", "uint8", "int16", "int32", "uint32", "int64")  # fmt: skip
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2")
ROLES = ("in", "out", "inout", "size", "scalar")
DIFFICULTIES = ("easy", "medium", "hard")
DISTS = ("uniform", "normal", "randint", "mixed", "full")
PEAKS = ("copy_bandwidth", "matmul_fp32", "matmul_tf32", "matmul_fp16")
# Who may see a test case's inputs and expected values, least hidden first: everyone; students
# once the due date has passed; instructors only (a student sees pass or fail, never the case).
VISIBILITIES = ("visible", "after_due_date", "hidden")


@dataclass(frozen=True)
class Draw:
    """How the values of one input buffer are drawn."""

    dist: str  # one of DISTS
    low: float | str = -1.0  # uniform / randint: lower bound (inclusive); may use the sizes
    high: float | str = 1.0  # uniform / randint: upper bound (exclusive for randint)
    mean: float = 0.0  # normal: mean
    std: float = 1.0  # normal: standard deviation
    value: float = 0.0  # full: every element's value


@dataclass(frozen=True)
class Arg:
    """One parameter of `solve()`, in signature order."""

    name: str  # the parameter's name in the signature, e.g. "a_ptr" or "N"
    role: str  # in | out | inout (buffers), size (an int), scalar (a float such as eps)
    dtype: str = ""  # element type of a buffer, one of DTYPES; empty for sizes and scalars
    shape: tuple[str, ...] = ()  # a buffer's shape as expressions in the sizes, e.g. ("M", "K")
    draw: Draw | None = None  # how an input buffer is filled
    value: float | None = None  # a scalar's value

    @property
    def is_buffer(self) -> bool:
        return self.role in ("in", "out", "inout")


@dataclass(frozen=True)
class Tolerance:
    """Accepted error: |got - expected| <= atol + rtol * |expected|, element by element."""

    atol: float | str  # a number, or an expression in the sizes such as "1e-6 * sqrt(N)"
    rtol: float | str
    note: str = ""  # why these numbers (precision accepted, reduction length)

    def at(self, sizes: dict[str, int]) -> Tolerance:
        """The tolerance with its expressions evaluated for one case's sizes."""
        return Tolerance(
            float(evaluate(self.atol, sizes)), float(evaluate(self.rtol, sizes)), self.note
        )


@dataclass(frozen=True)
class Case:
    """One judged input: sizes and a seed; tests and benchmarks are lists of these."""

    name: str  # short label shown in reports, e.g. "N=1025"
    sizes: tuple[tuple[str, int], ...]  # every size argument with its value
    seed: int  # the spec's seed (an instructor's secret seed is mixed in by the runner)
    draw: str = ""  # override for every float input: "" (each arg's own draw) or "mixed"
    interpret: bool = True  # also run in interpreter (CPU) mode
    visibility: str = "visible"  # one of VISIBILITIES
    group: str = ""  # the case group it is graded in ("" for its visibility's group)
    draws: tuple[tuple[str, Draw], ...] = ()  # this case's own draw of some inputs
    inputs: str = ""  # a .npz beside puzzle.yaml holding this case's inputs, by argument name
    scalars: tuple[tuple[str, float], ...] = ()  # this case's own value of some scalars

    @property
    def size_map(self) -> dict[str, int]:
        return dict(self.sizes)

    @property
    def own(self) -> bool:
        """The case brings its own draws, stored inputs or scalars: its `draw` names it."""
        return bool(self.draws or self.inputs or self.scalars)


VARIANT_KINDS = ("test", "benchmark")  # a case with its own inputs is named "test:NAME" in `draw`


@dataclass(frozen=True)
class Mistake:
    """A mistake learners make on this puzzle: when a failing call's outputs match what
    reference.py's `mistake_<name>` computes (the same arguments as `reference`), the hint says
    so."""

    name: str  # an identifier: reference.py defines mistake_<name>
    hint: str  # what the learner did, and what to do instead


@dataclass(frozen=True)
class Requires:
    """What the GPU must have for a puzzle; refused before anything runs where it lacks it."""

    capability: tuple[int, int] = (0, 0)  # the least compute capability, e.g. (8, 0)
    bf16: bool = False  # bfloat16 arithmetic (compute capability 8.0 and later)
    fp16_tensor_cores: bool = False  # float16 tensor cores (7.0 and later)
    shared_memory_kb: int = 0  # shared memory one block may use, in KiB

    @property
    def any(self) -> bool:
        return self != Requires()


@dataclass(frozen=True)
class Source:
    """Where an imported puzzle came from (`tpuzzle import`), shown by `tpuzzle show`."""

    kind: str  # "leetgpu" or "gpumode"
    repository: str  # the checkout's origin (or its path)
    commit: str  # the checkout's commit
    path: str  # the problem's folder in the checkout
    licence: str  # the source's licence, as its checkout states it


@dataclass(frozen=True)
class SpeedOfLight:
    """The work a call must do, and the device peak it is measured against."""

    measure: str  # "bytes" or "flop"
    formula: str  # expression in the sizes, e.g. "12 * N"
    peak: str  # one of PEAKS


@dataclass(frozen=True)
class PuzzleSpec:
    """Everything the judge knows about one puzzle."""

    id: str
    title: str
    difficulty: str
    tags: tuple[str, ...]
    statement: str
    example: str
    args: tuple[Arg, ...]
    tolerance: Tolerance
    limits: tuple[tuple[str, int, int], ...]  # (size, min, max) for every size argument
    constraints: tuple[str, ...]  # conditions between sizes, e.g. "kernel_size <= input_size"
    tests: tuple[Case, ...]
    benchmarks: tuple[Case, ...]
    speed_of_light: SpeedOfLight
    library: str  # the library call reference.py makes, e.g. "torch.cumsum" ("" when a composite)
    timeout_s: float  # wall-clock limit of one phase (import, one case, one benchmark)
    directory: Path  # the puzzle's directory (template.py, reference.py, solutions/)
    source: Source | None = None  # the problem set it was imported from; None for our own
    hints: tuple[str, ...] = ()  # `tpuzzle hint`'s ladder: from the idea to the kernel's shape
    mistakes: tuple[Mistake, ...] = ()  # recognised in a failing call's outputs
    requires: Requires = Requires()  # what the GPU must have
    best: str = ""  # the fastest shipped solution's file in solutions/correct ("": the first)

    @property
    def buffers(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if a.is_buffer)

    @property
    def size_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.args if a.role == "size")

    @property
    def signature(self) -> str:
        return f"solve({', '.join(a.name for a in self.args)})"

    def arg(self, name: str) -> Arg:
        return next(a for a in self.args if a.name == name)

    def variant(self, draw: str) -> Case | None:
        """The case a `draw` of "test:NAME" or "benchmark:NAME" names (its own inputs), or
        None for "" and "mixed"."""
        kind, _, name = draw.partition(":")
        cases = {"test": self.tests, "benchmark": self.benchmarks}.get(kind, ())
        return next((c for c in cases if c.name == name and c.own), None)


# ---------------------------------------------------------------------------------------------
# Size expressions: "N", "M * K", "cdiv(N, 2)". Parsed with ast, never eval.

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.Pow: lambda a, b: _power(a, b),
}
_COMPARE = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_FUNCS = {"min": min, "max": max, "cdiv": lambda a, b: -(-a // b), "sqrt": math.sqrt}


MAX_EXPRESSION = 200  # characters: sizes and formulas are short


def evaluate(expr: str | int | float, env: dict[str, float]) -> float:
    """Value of an arithmetic expression over named sizes; raises ValueError when it is not one
    (bad syntax, an unknown name, a division by zero, a number too large)."""
    if isinstance(expr, (int, float)):
        return expr
    text = str(expr)
    if len(text) > MAX_EXPRESSION:
        raise ValueError(f"expression longer than {MAX_EXPRESSION} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ValueError(f"not an expression: {expr!r}") from exc
    try:
        return _eval_node(tree.body, env)
    except (ArithmeticError, TypeError, RecursionError) as exc:
        raise ValueError(f"{expr!r} cannot be computed: {exc}") from exc


def _power(base: float, exponent: float) -> float:
    if abs(exponent) > 64 or abs(base) > 2**64:
        raise ValueError("a power too large for a size")
    return base**exponent


def _eval_node(node: ast.AST, env: dict[str, float]) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise ValueError(f"unknown name {node.id!r}")
        return env[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval_node(node.left, env), _eval_node(node.right, env))
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        left, right = _eval_node(node.left, env), _eval_node(node.comparators[0], env)
        return _COMPARE[type(node.ops[0])](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval_node(node.operand, env)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS:
        return _FUNCS[node.func.id](*(_eval_node(a, env) for a in node.args))
    raise ValueError(f"unsupported syntax in {ast.unparse(node)!r}")


def numel(arg: Arg, sizes: dict[str, int]) -> int:
    """Number of elements of a buffer argument for the given sizes."""
    return math.prod(int(evaluate(dim, sizes)) for dim in arg.shape)


# ---------------------------------------------------------------------------------------------
# Loading and validation.


class Reader:
    """Typed access to a YAML mapping that reports `file: key: problem` on every error."""

    def __init__(self, path: Path, data: Any, where: str = ""):
        self.path, self.data, self.where = path, data, where
        if not isinstance(data, dict):
            self.fail(f"expected a mapping, got {type(data).__name__}")

    def fail(self, message: str, key: str = "") -> SpecError:
        location = ".".join(p for p in (self.where, key) if p) or "(top level)"
        raise SpecError(f"{self.path}: {location}: {message}")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
        if key not in self.data:
            if default is ...:
                self.fail("missing key", key)
            return default
        value = self.data[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            names = " or ".join(k.__name__ for k in kinds)
            self.fail(f"expected {names}, got {type(value).__name__} {value!r}", key)
        return value

    def child(self, key: str, value: Any) -> Reader:
        return Reader(self.path, value, f"{self.where}.{key}" if self.where else key)

    def expression(self, key: str, sizes: set[str], default: Any = ...) -> float | str:
        """A number, or an arithmetic expression in the sizes (checked now, evaluated per case)."""
        value = self.get(key, (float, str), default)
        if isinstance(value, str):
            try:
                evaluate(value, dict.fromkeys(sizes, 1))
            except (ValueError, ZeroDivisionError) as exc:
                self.fail(f"{value!r}: {exc}", key)
        return value

    def choice(self, key: str, options: tuple[str, ...], default: Any = ...) -> str:
        value = self.get(key, str, default)
        if value not in options:
            self.fail(f"unknown value {value!r} (expected one of: {', '.join(options)})", key)
        return value


def read_yaml(path: Path) -> Any:
    """The data of a YAML file; SpecError naming the file (and the line) when it cannot be read
    or parsed."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "(syntax)"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError(f"{path}: {where}: YAML syntax error: {problem}") from None


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
               "tolerance", "speed_of_light", "timeout_s", "requires")  # fmt: skip


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
    )
    if spec.id != directory.name:
        r.fail(f"id {spec.id!r} does not match the directory name {directory.name!r}", "id")
    if not spec.tests and not view:
        r.fail("at least one test case is needed", "tests")
    return spec


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


def violated(constraints: tuple[str, ...], sizes: dict[str, int]) -> str | None:
    """The first constraint these sizes break, or None."""
    return next((c for c in constraints if not evaluate(c, sizes)), None)


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
