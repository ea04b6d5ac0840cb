"""A puzzle as data: frozen dataclasses (`PuzzleSpec`, `Arg`, `Case`, `Tolerance`, ...), the values
their fields take, and the size expressions they hold ("M * K", "cdiv(N, 2)"), evaluated without
eval. A puzzle.yaml is read into these by `judge.core.spec_reader`."""

from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass
from pathlib import Path

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


CHECKS = ("elementwise", "reference")
# elementwise: each output element against the reference's, within the tolerance.
# reference: reference.py's `check(*args)` judges the outputs (answers that are not unique, such
#   as eigenvectors, judged by their properties); the tolerance is then how far two calls of the
#   same kernel on the same inputs may differ (a timed call against the set's first call).


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
    check: str = "elementwise"  # how outputs are judged: one of CHECKS

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


def violated(constraints: tuple[str, ...], sizes: dict[str, int]) -> str | None:
    """The first constraint these sizes break, or None."""
    return next((c for c in constraints if not evaluate(c, sizes)), None)
