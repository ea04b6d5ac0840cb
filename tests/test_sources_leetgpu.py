"""`tpuzzle import leetgpu`: a small checkout in LeetGPU's layout (tests/fixtures/leetgpu, written
for these tests) converted into puzzles, the skipped challenges with their reasons, the written
specs, statements and files, and the converted puzzles judged."""

import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from typer.testing import CliRunner

from judge.cli.app import app
from judge.core import inputs, registry
from judge.core.results import Verdict
from judge.core.spec import Arg, Case, Draw, Source, Tolerance, evaluate
from judge.core.spec_reader import load_spec
from judge.errors import JudgeError
from judge.judging import runner
from judge.sources import checkouts, convert, importer, runtime

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "leetgpu"
NOT_GIT = "unknown (not a git checkout)"
LICENCE = "Test Fixture Licence 1.0"

SCALE_ADD = "leetgpu_1_scale_add"
SHIFT = "leetgpu_2_shift_in_place"
BYTES = "leetgpu_3_bytes_to_unit"
WORDS = "leetgpu_6_unsigned_words"
CONVERTED = [SCALE_ADD, SHIFT, BYTES, WORDS]


def _raise_line() -> int:
    """The line of the fixture's generator that raises (the skip reason names it)."""
    text = (FIXTURE / "challenges/medium/9_broken_generator/challenge.py").read_text()
    return next(i for i, line in enumerate(text.splitlines(), 1) if "raise ValueError" in line)


# Every challenge of the fixture, in the catalogue's order (by number, whatever its difficulty),
# with the puzzle it becomes or the reason it is skipped.
EXPECTED = [
    ("challenges/easy/1_scale_add", SCALE_ADD, ""),
    ("challenges/medium/2_shift_in_place", SHIFT, ""),
    ("challenges/hard/3_bytes_to_unit", BYTES, ""),
    ("challenges/easy/4_pair_of_gpus", "", "needs 2 GPUs"),
    (
        "challenges/medium/5_premium_only",
        "",
        "a 'premium' challenge, outside LeetGPU's free tier",
    ),
    ("challenges/medium/6_unsigned_words", WORDS, ""),
    ("challenges/hard/7_sideways", "", "argument 'X': unknown direction 'sideways'"),
    ("challenges/easy/8_no_class", "", "challenge.py defines no Challenge class"),
    (
        "challenges/medium/9_broken_generator",
        "",
        f"its code raised ValueError: no sizes to test (challenge.py:{_raise_line()})",
    ),
    (
        "challenges/hard/10_failing_reference",
        "",
        "its reference fails on the converted case: RuntimeError: this reference runs on a GPU "
        "only",
    ),
    ("challenges/easy/11_padded_shape", "", "the shape of 'B' follows from no expression in ['N']"),
    (
        "challenges/hard/12_missing_library",
        "",
        "its code raised ModuleNotFoundError: No module named 'tpuzzle_fixture_absent_library' "
        "(challenge.py:4)",
    ),
]
SUMMARY_REASONS = (
    "2 other reasons, 1 need several GPUs, 1 outside the free tier, "
    "1 code that failed on the CPU, 1 a reference that fails on the CPU, "
    "1 a shape not in its sizes, 1 a library not installed"
)

UNIFORM_DEFAULT = Draw(dist="uniform", low=-1.0, high=1.0)  # an input's draw outside its cases
INT32_DEFAULT = Draw(dist="randint", low=-1000.0, high=1000.0)  # integers: never all zeros
UINT8_DEFAULT = Draw(dist="randint", low=0.0, high=256.0)


def _copy(target: Path) -> Path:
    """The fixture copied outside any git repository (where it lies, in tpuzzle's own tree, git
    would answer for tpuzzle's repository)."""
    shutil.copytree(FIXTURE, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target.resolve()


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    return _copy(tmp_path_factory.mktemp("leetgpu") / "checkout")


@pytest.fixture(scope="module")
def imported(checkout, tmp_path_factory):
    """One import of the whole fixture, shared by the module's tests (each import starts probe
    and verify processes): the result and the outcomes as on_outcome heard them."""
    heard = []
    out = tmp_path_factory.mktemp("imported") / "out"
    done = importer.run("leetgpu", checkout, into=out, jobs=1, on_outcome=heard.append)
    return done, heard


@pytest.fixture(scope="module")
def out(imported) -> Path:
    return imported[0].into


def _spec(out: Path, puzzle: str):
    return load_spec(out / puzzle / "puzzle.yaml")


def _raw(out: Path, puzzle: str) -> dict:
    return yaml.safe_load((out / puzzle / "puzzle.yaml").read_text(encoding="utf-8"))


def _source(checkout: Path, path: str) -> Source:
    return Source(
        kind="leetgpu", repository=str(checkout), commit=NOT_GIT, path=path, licence=LICENCE
    )


# ------------------------------------------------------------------------------- the import


def test_import_converts_the_good_challenges_and_skips_the_others(imported, checkout, out):
    done, heard = imported
    assert [(o.problem, o.puzzle, o.reason) for o in done.outcomes] == EXPECTED
    assert all(o.notes == () for o in done.outcomes)
    assert heard == list(done.outcomes)  # each outcome told once, as it came
    assert (done.kind, done.checkout, done.into) == ("leetgpu", checkout, out)
    assert [o.puzzle for o in done.converted] == CONVERTED
    assert len(done.skipped) == 8 and all(o.reason and not o.converted for o in done.skipped)
    assert all("\n" not in o.reason for o in done.outcomes)
    # Only the converted puzzles are left: the one whose reference failed is removed, and so is
    # the staging folder.
    assert sorted(p.name for p in out.iterdir()) == CONVERTED


def test_the_checkout_is_read_in_catalogue_order(checkout):
    assert checkouts.problems("leetgpu", checkout) == [problem for problem, _, _ in EXPECTED]
    assert checkouts.about(checkout) == {
        "repository": str(checkout),
        "commit": NOT_GIT,
        "licence": LICENCE,
    }


def test_scale_add_spec(out, checkout):
    spec = _spec(out, SCALE_ADD)
    assert (spec.id, spec.title, spec.difficulty) == (SCALE_ADD, "Scale and Add", "easy")
    assert spec.tags == ("imported", "leetgpu")
    assert spec.signature == "solve(A_ptr, B_ptr, C_ptr, N, alpha)"
    assert spec.args == (
        Arg("A_ptr", "in", "float32", ("N",), UNIFORM_DEFAULT),
        Arg("B_ptr", "in", "float32", ("N",), UNIFORM_DEFAULT),
        Arg("C_ptr", "out", "float32", ("N",)),
        Arg("N", "size"),
        Arg("alpha", "scalar", value=2.0),  # the first case's (the example's) value
    )
    assert spec.limits == (("N", 1, 4096),)
    assert spec.tolerance == Tolerance(1e-05, 1e-05, "the source's own tolerance (leetgpu)")
    filled = Draw(dist="uniform", low=-2.0, high=2.0)
    assert spec.tests == (
        Case(
            "example: N=4",
            (("N", 4),),
            1000,
            draw="test:example: N=4",
            inputs="cases/0.npz",
        ),
        Case(
            "test 1: N=1",
            (("N", 1),),
            1001,
            draw="test:test 1: N=1",
            draws=(("A_ptr", filled), ("B_ptr", filled)),
            scalars=(("alpha", 0.5),),
        ),
        Case(  # alpha as in the example: no scalar of its own
            "test 2: N=100",
            (("N", 100),),
            1002,
            draw="test:test 2: N=100",
            draws=(("A_ptr", filled), ("B_ptr", filled)),
        ),
        Case(
            "test 3: N=1000",
            (("N", 1000),),
            1003,
            draw="test:test 3: N=1000",
            draws=(("A_ptr", filled), ("B_ptr", filled)),
            scalars=(("alpha", -1.5),),
        ),
    )
    assert spec.benchmarks == (
        Case(
            "benchmark 1: N=4096",
            (("N", 4096),),
            1004,
            draw="benchmark:benchmark 1: N=4096",
            interpret=False,
            draws=(
                ("A_ptr", Draw(dist="uniform", low=-1.0, high=1.0)),  # RandTensor(low, high)
                ("B_ptr", Draw(dist="uniform", low=0.0, high=1.0)),  # RandTensor's defaults
            ),
            scalars=(("alpha", 1.25),),
        ),
    )
    assert spec.source == _source(checkout, "challenges/easy/1_scale_add")
    assert _raw(out, SCALE_ADD)["source"] == {
        "kind": "leetgpu",
        "path": "challenges/easy/1_scale_add",
        "repository": str(checkout),
        "commit": NOT_GIT,
        "licence": LICENCE,
    }
    assert (spec.speed_of_light.measure, spec.speed_of_light.peak) == ("bytes", "copy_bandwidth")
    # The example's explicit values, stored as the challenge made them.
    with np.load(out / SCALE_ADD / "cases/0.npz") as stored:
        assert sorted(stored.files) == ["A_ptr", "B_ptr"]
        assert stored["A_ptr"].dtype == np.float32
        assert stored["A_ptr"].tolist() == [1.0, 2.0, 3.0, 4.0]
        assert stored["B_ptr"].tolist() == [0.5, -0.5, 1.5, -1.5]
    assert sorted(p.name for p in (out / SCALE_ADD / "cases").iterdir()) == ["0.npz"]


def test_shift_in_place_spec(out, checkout):
    spec = _spec(out, SHIFT)
    assert (spec.title, spec.difficulty) == ("Shift Rows In Place", "medium")
    assert spec.signature == "solve(X_ptr, H_ptr, G_ptr, Y_ptr, M, N)"
    assert spec.args == (
        Arg("X_ptr", "inout", "int32", ("M", "N"), INT32_DEFAULT),
        Arg("H_ptr", "in", "float16", ("M", "N"), UNIFORM_DEFAULT),  # declared c_uint16
        Arg("G_ptr", "in", "float32", ("N",), UNIFORM_DEFAULT),
        Arg("Y_ptr", "out", "float32", ("M", "N")),
        Arg("M", "size"),
        Arg("N", "size"),
    )
    assert spec.limits == (("M", 1, 32), ("N", 1, 64))
    assert spec.tolerance == Tolerance(0.001, 0.002, "the source's own tolerance (leetgpu)")
    assert [(c.name, c.sizes, c.seed, c.interpret) for c in spec.tests] == [
        ("example: M=2 N=3", (("M", 2), ("N", 3)), 1000, True),
        ("test 1: M=1 N=1", (("M", 1), ("N", 1)), 1001, True),
        ("test 2: M=3 N=4", (("M", 3), ("N", 4)), 1002, True),
        ("test 3: M=16 N=64", (("M", 16), ("N", 64)), 1003, True),
    ]
    assert [dict(c.draws) for c in spec.tests] == [
        {
            "X_ptr": Draw(dist="randint", low=0.0, high=10.0),
            "H_ptr": Draw(dist="full", value=0.5),
            "G_ptr": Draw(dist="full", value=1.0),
        },
        {
            "X_ptr": Draw(dist="randint", low=-5.0, high=5.0),
            "H_ptr": Draw(dist="normal", mean=0.0, std=1.0),
            "G_ptr": Draw(dist="full", value=0.0),
        },
        {},  # made by code: stored
        {
            "X_ptr": Draw(dist="randint", low=0.0, high=100.0),
            "H_ptr": Draw(dist="normal", mean=1.0, std=0.5),
            "G_ptr": Draw(dist="uniform", low=-1.0, high=1.0),
        },
    ]
    assert [c.inputs for c in spec.tests] == ["", "", "cases/2.npz", ""]
    assert all(c.scalars == () for c in spec.tests + spec.benchmarks)
    (bench,) = spec.benchmarks
    assert (bench.name, bench.sizes, bench.interpret) == (
        "benchmark 1: M=32 N=64",
        (("M", 32), ("N", 64)),
        False,
    )
    assert dict(bench.draws) == {  # RandIntTensor, RandnTensor, FullTensor
        "X_ptr": Draw(dist="randint", low=-50.0, high=50.0),
        "H_ptr": Draw(dist="normal", mean=0.0, std=0.5),
        "G_ptr": Draw(dist="full", value=0.75),
    }
    assert spec.source == _source(checkout, "challenges/medium/2_shift_in_place")
    assert sorted(p.name for p in (out / SHIFT / "cases").iterdir()) == ["2.npz"]


def test_shift_in_place_inputs_come_from_the_cases(out):
    """The judge's inputs of a case: its stored arrays (the code-made int32 rows, and the filled
    inputs beside them drawn at import), or its own draws."""
    spec = _spec(out, SHIFT)
    stored_case, example = spec.tests[2], spec.tests[0]
    given = inputs.pristine(spec, stored_case.size_map, stored_case.seed, stored_case.draw)
    assert sorted(given) == ["G_ptr", "H_ptr", "X_ptr"]
    assert given["X_ptr"].tolist() == [0, 1, 2, 3, -4, -5, -6, -7, 8, 9, 10, 11]
    assert given["G_ptr"].tolist() == [0.25] * 4  # torch.full(..., 0.25)
    assert str(given["H_ptr"].dtype) == "torch.float16" and given["H_ptr"].numel() == 12
    assert given["H_ptr"].isfinite().all() and given["H_ptr"].unique().numel() > 1  # normal_
    with np.load(out / SHIFT / stored_case.inputs) as arrays:
        assert {k: str(arrays[k].dtype) for k in arrays.files} == {
            "X_ptr": "int32",
            "H_ptr": "float16",
            "G_ptr": "float32",
        }
    drawn = inputs.pristine(spec, example.size_map, example.seed, example.draw)
    assert drawn["H_ptr"].tolist() == [0.5] * 6 and drawn["G_ptr"].tolist() == [1.0] * 3
    assert str(drawn["X_ptr"].dtype) == "torch.int32"
    assert all(0 <= x < 10 for x in drawn["X_ptr"].tolist())


def test_bytes_to_unit_spec(out, checkout):
    spec = _spec(out, BYTES)
    assert spec.difficulty == "hard"
    assert spec.args == (
        Arg("P_ptr", "in", "uint8", ("N",), UINT8_DEFAULT),
        Arg("Q_ptr", "out", "float32", ("N",)),
        Arg("N", "size"),
    )
    assert spec.limits == (("N", 3, 2048),)
    assert spec.tolerance == Tolerance(1e-06, 0.0, "the source's own tolerance (leetgpu)")
    byte = Draw(dist="randint", low=0.0, high=256.0)
    assert [(c.name, c.inputs, dict(c.draws)) for c in spec.tests] == [
        ("example: N=3", "cases/0.npz", {}),
        ("test 1: N=10", "", {"P_ptr": byte}),
        ("test 2: N=300", "", {"P_ptr": byte}),
    ]
    assert [(c.name, dict(c.draws), c.interpret) for c in spec.benchmarks] == [
        ("benchmark 1: N=2048", {"P_ptr": byte}, False)
    ]
    with np.load(out / BYTES / "cases/0.npz") as stored:
        assert stored["P_ptr"].dtype == np.uint8 and stored["P_ptr"].tolist() == [0, 51, 255]
    assert spec.source == _source(checkout, "challenges/hard/3_bytes_to_unit")


def test_the_statement_is_the_html_as_plain_text(out):
    assert _spec(out, SCALE_ADD).statement == "\n".join(
        [
            "Write a program that computes C = alpha * A + B for two vectors A and B of N 32-bit "
            "floats.",
            "",
            "Implementation Requirements",
            "",
            "- Only the solve function's signature is fixed.",
            "",
            "- Write the result into C.",
            "",
            "Example",
            "",
            "Input:  A = [1.0, 2.0, 3.0, 4.0]",
            "        B = [0.5, -0.5, 1.5, -1.5], alpha = 2.0",
            "Output: C = [2.5, 3.5, 7.5, 6.5]",
            "",
            "Constraints",
            "",
            "- 1 \u2264 N \u2264 100,000,000",
        ]
    )
    shift = _spec(out, SHIFT).statement
    assert "<" not in shift and "&" not in shift
    assert shift.splitlines()[-2:] == [
        "X = [[1, 2, 3],      becomes  [[1, 2, 3],",
        "     [4, 5, 6]]                [5, 6, 7]]",
    ]
    assert _spec(out, BYTES).statement == "Map each byte P[i] to the float P[i] / 255 in Q[i]."


def test_the_puzzle_keeps_the_sources_files(out):
    folder = out / SCALE_ADD
    assert sorted(str(p.relative_to(folder)) for p in (folder / "source").rglob("*.py")) == [
        "source/challenge.py",
        "source/core/__init__.py",
        "source/core/challenge_base.py",
    ]
    assert (folder / "source/challenge.py").read_text() == (
        FIXTURE / "challenges/easy/1_scale_add/challenge.py"
    ).read_text()
    assert (folder / "source/core/challenge_base.py").read_text() == (
        FIXTURE / "challenges/core/challenge_base.py"
    ).read_text()
    reference = (folder / "reference.py").read_text()
    assert "from judge.sources.runtime import leetgpu_reference" in reference
    assert "reference = leetgpu_reference(__file__, SIGNATURE)" in reference
    template = (folder / "template.py").read_text()
    assert "def solve(A_ptr: int, B_ptr: int, C_ptr: int, N: int, alpha: float):" in template
    assert "    A_ptr = A_ptr.to(tl.pointer_type(tl.float32))" in template
    shift = (out / SHIFT / "template.py").read_text()
    assert "    X_ptr,  # int32, shape [M, N], inout" in shift
    assert "    H_ptr = H_ptr.to(tl.pointer_type(tl.float16))" in shift
    assert "tl.pointer_type(tl.uint8)" in (out / BYTES / "template.py").read_text()


def test_the_speed_of_light_is_the_output_bytes(out):
    """As the README says: the bytes of the outputs (out and inout), written once."""
    assert _spec(out, SCALE_ADD).speed_of_light.formula == "4 * N"
    shift = _spec(out, SHIFT).speed_of_light
    assert shift.formula == "4 * M * N + 4 * M * N"  # X (int32, inout) and Y (float32)
    assert evaluate(shift.formula, {"M": 3, "N": 4}) == 96
    assert _spec(out, BYTES).speed_of_light.formula == "4 * N"  # Q only, not the bytes of P


# ------------------------------------------------------------------------------- judging

SCALE_ADD_SOLUTION = """
import triton
import triton.language as tl


@triton.jit
def scale_add_kernel(a_ptr, b_ptr, c_ptr, N, alpha, BLOCK: tl.constexpr):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(c_ptr + offs, ALPHA * a + b, mask=mask)


def solve(A_ptr: int, B_ptr: int, C_ptr: int, N: int, alpha: float):
    scale_add_kernel[(triton.cdiv(N, 256),)](A_ptr, B_ptr, C_ptr, N, alpha, BLOCK=256)
"""

# Right only where the inputs are the example's stored ones: it writes the example's answer
# whenever N is 4, and computes the others.
KNOWS_THE_EXAMPLE = """
import triton
import triton.language as tl


@triton.jit
def answer_kernel(c_ptr):
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    tl.store(c_ptr + 0, 2.5)
    tl.store(c_ptr + 1, 3.5)
    tl.store(c_ptr + 2, 7.5)
    tl.store(c_ptr + 3, 6.5)
"""

SHIFT_SOLUTION = """
import triton
import triton.language as tl


@triton.jit
def shift_kernel(x_ptr, h_ptr, g_ptr, y_ptr, M, N, BLOCK: tl.constexpr):
    x_ptr = x_ptr.to(tl.pointer_type(tl.int32))
    h_ptr = h_ptr.to(tl.pointer_type(tl.float16))
    g_ptr = g_ptr.to(tl.pointer_type(tl.float32))
    y_ptr = y_ptr.to(tl.pointer_type(tl.float32))
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < M * N
    row = offs // N
    col = offs % N
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x + row, mask=mask)
    h = tl.load(h_ptr + offs, mask=mask).to(tl.float32)
    g = tl.load(g_ptr + col, mask=mask)
    tl.store(y_ptr + offs, h * 2.0 + g, mask=mask)


def solve(X_ptr: int, H_ptr: int, G_ptr: int, Y_ptr: int, M: int, N: int):
    shift_kernel[(triton.cdiv(M * N, 256),)](X_ptr, H_ptr, G_ptr, Y_ptr, M, N, BLOCK=256)
"""

BYTES_SOLUTION = """
import triton
import triton.language as tl


@triton.jit
def unit_kernel(p_ptr, q_ptr, N, BLOCK: tl.constexpr):
    p_ptr = p_ptr.to(tl.pointer_type(tl.uint8))
    q_ptr = q_ptr.to(tl.pointer_type(tl.float32))
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    p = tl.load(p_ptr + offs, mask=mask)
    tl.store(q_ptr + offs, p.to(tl.float32) / 255.0, mask=mask)


def solve(P_ptr: int, Q_ptr: int, N: int):
    unit_kernel[(triton.cdiv(N, 128),)](P_ptr, Q_ptr, N, BLOCK=128)
"""


def _judge(out: Path, puzzle: str, path: Path):
    return runner.judge(_spec(out, puzzle), path, runner.RunOptions(interpret=True, timeout_s=60))


def _statuses(report) -> list[tuple[str, str]]:
    return [(c.name, c.status) for c in report.cases]


SCALE_ADD_CASES = ["example: N=4", "test 1: N=1", "test 2: N=100", "test 3: N=1000"]


def test_a_correct_scale_add_passes_every_case(out, write_submission):
    solution = SCALE_ADD_SOLUTION.replace("ALPHA * a", "alpha * a")
    report = _judge(out, SCALE_ADD, write_submission(solution))
    assert report.verdict is Verdict.PASSED, report.message
    # Every test is judged (the stored example and the cases with their own alpha among them);
    # the benchmark is not, in the interpreter.
    assert _statuses(report) == [(name, "passed") for name in SCALE_ADD_CASES]


def test_a_scale_add_that_ignores_the_cases_alpha_fails_where_it_differs(out, write_submission):
    report = _judge(out, SCALE_ADD, write_submission(SCALE_ADD_SOLUTION.replace("ALPHA", "2.0")))
    assert report.verdict is Verdict.FAILED
    assert _statuses(report) == [
        ("example: N=4", "passed"),  # alpha 2.0
        ("test 1: N=1", "failed"),  # alpha 0.5
        ("test 2: N=100", "passed"),  # alpha 2.0
        ("test 3: N=1000", "failed"),  # alpha -1.5
    ]
    assert report.message == "case test 1: N=1 (seed 1001): C_ptr: 1 of 1 elements wrong"


def test_the_example_is_judged_on_its_stored_inputs(out, write_submission):
    solution = SCALE_ADD_SOLUTION.replace("ALPHA * a", "alpha * a") + KNOWS_THE_EXAMPLE
    solution = solution.replace(
        "def solve(A_ptr: int, B_ptr: int, C_ptr: int, N: int, alpha: float):\n",
        "def solve(A_ptr: int, B_ptr: int, C_ptr: int, N: int, alpha: float):\n"
        "    if N == 4:\n"
        "        return answer_kernel[(1,)](C_ptr)\n",
    )
    report = _judge(out, SCALE_ADD, write_submission(solution))
    assert report.verdict is Verdict.PASSED, report.message
    assert _statuses(report) == [(name, "passed") for name in SCALE_ADD_CASES]


def test_a_correct_in_place_shift_passes(out, write_submission):
    report = _judge(out, SHIFT, write_submission(SHIFT_SOLUTION))
    assert report.verdict is Verdict.PASSED, report.message
    assert _statuses(report) == [
        ("example: M=2 N=3", "passed"),
        ("test 1: M=1 N=1", "passed"),
        ("test 2: M=3 N=4", "passed"),  # the stored case
        ("test 3: M=16 N=64", "passed"),
    ]


def test_a_shift_that_forgets_the_in_place_update_fails(out, write_submission):
    forgets = SHIFT_SOLUTION.replace("x + row", "x")
    report = _judge(out, SHIFT, write_submission(forgets))
    assert report.verdict is Verdict.FAILED
    # Row 0 is unchanged by the shift: the one-row case passes all the same.
    assert _statuses(report) == [
        ("example: M=2 N=3", "failed"),
        ("test 1: M=1 N=1", "passed"),
        ("test 2: M=3 N=4", "failed"),
        ("test 3: M=16 N=64", "failed"),
    ]


def test_a_correct_byte_conversion_passes(out, write_submission):
    report = _judge(out, BYTES, write_submission(BYTES_SOLUTION))
    assert report.verdict is Verdict.PASSED, report.message
    assert [name for name, _ in _statuses(report)] == [
        "example: N=3",
        "test 1: N=10",
        "test 2: N=300",
    ]


def test_a_case_of_ones_own_sizes_draws_bytes_that_are_not_all_zero(out, write_submission):
    writes_zeros = BYTES_SOLUTION.replace("p.to(tl.float32) / 255.0", "p.to(tl.float32) * 0.0")
    case = Case("N=500", (("N", 500),), seed=7)  # as `tpuzzle run --size N=500` makes it
    report = runner.judge(
        _spec(out, BYTES),
        write_submission(writes_zeros),
        runner.RunOptions(interpret=True, timeout_s=60, cases=(case,)),
    )
    assert report.verdict is Verdict.FAILED


def test_the_template_runs_and_fails(out):
    report = _judge(out, SCALE_ADD, out / SCALE_ADD / "template.py")
    assert report.verdict is Verdict.FAILED
    assert _statuses(report) == [(name, "failed") for name in SCALE_ADD_CASES]
    assert all(
        c.hints[0].startswith("nothing was written to C_ptr") and c.max_error == float("inf")
        for c in report.cases
    )


# ------------------------------------------------------------------------------- importing again


def test_only_selects_by_folder_and_reimporting_replaces(checkout, tmp_path):
    # Without --into: the user's imported folder (TPUZZLE_IMPORTED, set per test), found beside
    # the bundled catalogue.
    folder = registry.imported_root() / "leetgpu"
    first = importer.run("leetgpu", checkout, only=["scale_add", "bytes"], max_stored_mb=0)
    assert first.into == folder
    assert [(o.problem, o.puzzle) for o in first.outcomes] == [
        ("challenges/easy/1_scale_add", SCALE_ADD),
        ("challenges/hard/3_bytes_to_unit", BYTES),
    ]
    # Nothing may be stored: the examples made by code are left out, and said so.
    assert [o.notes for o in first.outcomes] == [
        ("example: N=4: left out, its inputs are made by code and over the 0 MiB stored",),
        ("example: N=3: left out, its inputs are made by code and over the 0 MiB stored",),
    ]
    spec = registry.get(SCALE_ADD, registry.puzzles_root())
    assert spec.directory == folder / SCALE_ADD
    assert [c.name for c in spec.tests] == SCALE_ADD_CASES[1:]
    assert not (folder / SCALE_ADD / "cases").exists()
    (folder / SCALE_ADD / "stray.txt").write_text("left by an earlier import")

    again = importer.run("leetgpu", checkout, only=["easy/1_"])
    assert [(o.problem, o.puzzle, o.notes) for o in again.outcomes] == [
        ("challenges/easy/1_scale_add", SCALE_ADD, ())
    ]
    assert sorted(p.name for p in folder.iterdir()) == [SCALE_ADD, BYTES]  # the other stays
    assert not (folder / SCALE_ADD / "stray.txt").exists()
    assert [c.name for c in registry.get(SCALE_ADD, registry.puzzles_root()).tests] == (
        SCALE_ADD_CASES
    )
    assert (folder / SCALE_ADD / "cases/0.npz").is_file()


def test_imports_at_the_same_time_into_one_folder_leave_each_other_alone(
    checkout, tmp_path, monkeypatch
):
    # The first import is held in the middle of writing its puzzle while a second one writes
    # the same puzzle into the same folder and tidies up after itself; the first then finishes.
    # Sharing a staging folder, the second removed the first's half-written files.
    into = tmp_path / "shared"
    held, released = threading.Event(), threading.Event()
    real = convert._cases

    def cases(*args):
        made = real(*args)
        if not held.is_set():
            held.set()
            assert released.wait(600)
        return made

    monkeypatch.setattr(convert, "_cases", cases)
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(importer.run, "leetgpu", checkout, into=into, only=["1_scale_add"])
        assert held.wait(600)
        try:
            second = importer.run("leetgpu", checkout, into=into, only=["1_scale_add"])
        finally:
            released.set()
        first = first.result()
    for done in (first, second):
        assert [(o.problem, o.puzzle, o.reason) for o in done.outcomes] == [
            ("challenges/easy/1_scale_add", SCALE_ADD, "")
        ]
    assert sorted(p.name for p in into.iterdir()) == [SCALE_ADD]  # no staging folder is left
    assert [c.name for c in registry.get(SCALE_ADD, into).tests] == SCALE_ADD_CASES


def test_a_reference_that_kills_the_process_trying_it_is_skipped_with_why(tmp_path):
    folder = tmp_path / "imported"
    shutil.copytree(registry.puzzles_root() / "vector_add", folder / "vector_add")
    (folder / "vector_add" / "reference.py").write_text(
        "import os, sys\nprint('the reference ends its process', file=sys.stderr)\nos._exit(3)\n"
    )
    made = [importer.Outcome("challenges/easy/1_vector_add", puzzle="vector_add")]
    assert importer.verified(made, folder) == [
        importer.Outcome(
            "challenges/easy/1_vector_add",
            reason="its reference could not be tried: the process that tries it ended with "
            "code 3: the reference ends its process",
        )
    ]
    assert list(folder.iterdir()) == []  # the puzzle is removed


def test_only_matches_a_substring_of_the_folder(checkout, tmp_path):
    done = importer.run("leetgpu", checkout, into=tmp_path / "medium", only=["medium/"], jobs=2)
    assert [(o.problem, o.puzzle, o.reason) for o in done.outcomes] == [
        entry for entry in EXPECTED if "/medium/" in entry[0]
    ]
    assert sorted(p.name for p in (tmp_path / "medium").iterdir()) == [SHIFT, WORDS]
    with pytest.raises(JudgeError) as raised:
        importer.run("leetgpu", checkout, into=tmp_path / "none", only=["no_such_challenge"])
    assert str(raised.value) == f"{checkout}: no problem matches no_such_challenge"
    assert not (tmp_path / "none").exists()


def _own_puzzle(folder: Path, statement: str = "My own.") -> Path:
    (folder / "mine").mkdir(parents=True)
    spec = folder / "mine" / "puzzle.yaml"
    spec.write_text(f"id: mine\ntitle: Mine\nstatement: {statement}\n")
    return spec


def test_a_folder_of_ones_own_puzzles_is_refused(checkout, tmp_path):
    spec = _own_puzzle(tmp_path / "mixed")
    with pytest.raises(JudgeError) as raised:
        importer.run("leetgpu", checkout, into=tmp_path / "mixed")
    message = str(raised.value)
    assert message == (
        f"--into {tmp_path / 'mixed'}: holds puzzles of its own (mine); import into a folder of "
        "imported puzzles only"
    )
    assert "\n" not in message
    assert sorted(p.name for p in (tmp_path / "mixed").iterdir()) == ["mine"]
    assert spec.read_text() == "id: mine\ntitle: Mine\nstatement: My own.\n"
    (tmp_path / "a-file").write_text("")
    with pytest.raises(JudgeError, match="not a directory"):
        importer.run("leetgpu", checkout, into=tmp_path / "a-file")


def test_a_puzzle_that_only_mentions_a_source_is_still_ones_own(tmp_path):
    _own_puzzle(tmp_path / "mixed", statement="'Open source: yes, and yours to change.'")
    with pytest.raises(JudgeError, match="holds puzzles of its own"):
        importer.destination("leetgpu", tmp_path / "mixed")


def test_a_checkout_inside_another_repository_is_not_a_git_checkout(tmp_path):
    outer = tmp_path / "project"
    inner = _copy(outer / "vendor" / "leetgpu")
    git = ["git", "-C", str(outer), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for args in (
        ["init", "-q"],
        ["remote", "add", "origin", "https://example.invalid/someone/project.git"],
        ["add", "-A"],
        ["commit", "-q", "-m", "a project that vendors the checkout"],
    ):
        subprocess.run([*git, *args], check=True, capture_output=True)
    assert checkouts.about(inner) == {
        "repository": str(inner),
        "commit": NOT_GIT,
        "licence": LICENCE,
    }


# ------------------------------------------------------------------------------- the CLI


@pytest.fixture
def cli():
    runner_ = CliRunner()

    def invoke(*args):
        return runner_.invoke(app, [str(a) for a in args], terminal_width=120)

    return invoke


def test_cli_import_says_what_it_did(cli, checkout, tmp_path):
    into = tmp_path / "cli"
    result = cli("import", "leetgpu", checkout, "--into", into, "--jobs", 2)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        f"4 of 12 leetgpu problems converted into {into}; 8 skipped ({SUMMARY_REASONS})\n"
    ), result.stderr  # a line a problem: which one went another way, and why
    lines = result.stderr.splitlines()
    assert sorted(lines) == sorted(
        [f"converted {problem} -> {puzzle}" for problem, puzzle, _ in EXPECTED if puzzle]
        + [f"skipped {problem}: {reason}" for problem, puzzle, reason in EXPECTED if not puzzle]
    )
    assert sorted(p.name for p in into.iterdir()) == CONVERTED


def test_cli_import_errors_are_one_line_and_exit_2(cli, checkout, tmp_path):
    missing = tmp_path / "no-checkout"
    done = subprocess.run(
        [sys.executable, "-m", "judge", "import", "leetgpu", str(missing)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f"error: {missing}: no such directory (a checkout of the leetgpu problem set)\n"
    )
    unknown = cli("import", "codeforces", checkout, "--into", tmp_path / "x")
    assert unknown.exit_code == 2
    assert unknown.stderr == (
        "error: unknown source 'codeforces' (expected one of: leetgpu, gpumode)\n"
    )
    assert not (tmp_path / "x").exists()
    jobs = cli("import", "leetgpu", checkout, "--jobs", 0)
    assert (jobs.exit_code, jobs.stderr) == (2, "error: --jobs 0: expected at least 1\n")
    _own_puzzle(tmp_path / "mixed")
    refused = cli("import", "leetgpu", checkout, "--into", tmp_path / "mixed")
    assert refused.exit_code == 2
    assert refused.stderr.count("\n") == 1
    assert refused.stderr.startswith("error: --into ") and "(mine)" in refused.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    none = cli("import", "leetgpu", empty)
    assert none.exit_code == 2
    assert none.stderr == (
        f"error: {empty}: no challenges/<difficulty>/<n>_<name>/challenge.py here; is it a "
        "checkout of the leetgpu set?\n"
    )


def test_cli_show_prints_the_source_and_licence(cli, out, checkout):
    result = cli("show", SCALE_ADD, "--puzzles", out)
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.replace("\u2502", " ").split())  # the panels' text, unwrapped
    assert "def solve(A_ptr, B_ptr, C_ptr, N, alpha): ..." in text
    assert "tolerance: atol 1e-05, rtol 1e-05. the source's own tolerance (leetgpu)" in text
    assert (
        f"imported from leetgpu: challenges/easy/1_scale_add repository {checkout}, commit "
        f"{NOT_GIT} licence: {LICENCE} A private adaptation made on this machine" in text
    )


def test_cli_list_has_a_source_column(cli, out):
    result = cli("list", "--puzzles", out)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("\u2503"))
    assert [cell.strip() for cell in header.strip("\u2503").split("\u2503")] == [
        "id",
        "difficulty",
        "title",
        "source",
        "your best",
    ]
    rows = [line.strip("\u2502").split("\u2502") for line in lines if line.startswith("\u2502")]
    assert [[cell.strip() for cell in row] for row in rows] == [
        [SCALE_ADD, "easy", "Scale and Add", "leetgpu", "-"],
        [SHIFT, "medium", "Shift Rows In Place", "leetgpu", "-"],
        [WORDS, "medium", "Swap Halves of Words", "leetgpu", "-"],
        [BYTES, "hard", "Bytes to Unit Floats", "leetgpu", "-"],
    ]


def test_an_imported_puzzle_has_no_shipped_solution_to_bench(tmp_path, puzzles_root):
    """`tpuzzle bench ID` of an imported puzzle says how to bench one's own file instead."""
    import shutil

    from judge.errors import JudgeError
    from judge.records import catalogue

    folder = tmp_path / "imported" / "leetgpu" / "leetgpu_9_copy"
    shutil.copytree(puzzles_root / "vector_add", folder)
    shutil.rmtree(folder / "solutions")
    spec = folder / "puzzle.yaml"
    spec.write_text(spec.read_text().replace("id: vector_add", "id: leetgpu_9_copy"))
    with pytest.raises(JudgeError, match="no shipped solution to bench .* DIR/leetgpu_9_copy.py"):
        catalogue.select(puzzles_root, "leetgpu_9_copy", [])


# ------------------------------------------------------------------------------- uint32

WORDS_SOLUTION = """
import triton
import triton.language as tl


@triton.jit
def words_kernel(w_ptr, z_ptr, N, BLOCK: tl.constexpr):
    w_ptr = w_ptr.to(tl.pointer_type(tl.uint32))
    z_ptr = z_ptr.to(tl.pointer_type(tl.uint32))
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    w = tl.load(w_ptr + offs, mask=mask)
    tl.store(z_ptr + offs, RESULT, mask=mask)


def solve(W_ptr: int, Z_ptr: int, N: int):
    words_kernel[(triton.cdiv(N, 128),)](W_ptr, Z_ptr, N, BLOCK=128)
"""


def test_a_uint32_challenge_becomes_uint32_buffers(out):
    spec = _spec(out, WORDS)
    assert spec.args == (
        Arg("W_ptr", "in", "uint32", ("N",), Draw("randint", low=0.0, high=float(1 << 32))),
        Arg("Z_ptr", "out", "uint32", ("N",)),
        Arg("N", "size"),
    )
    with np.load(out / WORDS / "cases/0.npz") as stored:
        assert stored["W_ptr"].dtype == np.uint32 and stored["W_ptr"].tolist() == [1, 65536]
    assert "tl.pointer_type(tl.uint32)" in (out / WORDS / "template.py").read_text()
    assert _spec(out, WORDS).speed_of_light.formula == "4 * N"


def test_a_uint32_kernel_is_judged_bit_for_bit(out, write_submission):
    swapped = "(w << 16) | (w >> 16)"
    right = _judge(out, WORDS, write_submission(WORDS_SOLUTION.replace("RESULT", swapped)))
    assert right.verdict is Verdict.PASSED, right.message
    wrong = _judge(out, WORDS, write_submission(WORDS_SOLUTION.replace("RESULT", "w << 16")))
    assert (wrong.verdict, wrong.reason) == (Verdict.FAILED, "wrong-answer"), wrong.message


@pytest.mark.gpu
def test_a_uint32_kernel_is_judged_and_timed_bit_for_bit_on_the_gpu(out, write_submission):
    """On the device, where the timer replays each case and checks uint32 buffers itself."""
    options = runner.RunOptions(interpret=False, timeout_s=120)
    spec = _spec(out, WORDS)
    swapped = write_submission(WORDS_SOLUTION.replace("RESULT", "(w << 16) | (w >> 16)"))
    right = runner.judge(spec, swapped, options)
    assert right.verdict is Verdict.PASSED, right.message
    assert right.timing and right.timing[0].median_ms > 0
    wrong = runner.judge(
        spec, write_submission(WORDS_SOLUTION.replace("RESULT", "w << 16")), options
    )
    assert (wrong.verdict, wrong.reason) == (Verdict.FAILED, "wrong-answer"), wrong.message


# ------------------------------------------------------------------------------- both constructors

WITHOUT_DEVICE = Path(__file__).resolve().parent / "fixtures" / "leetgpu_without_device"


@pytest.fixture(scope="module")
def without_device(tmp_path_factory):
    """The checkout whose Challenge() takes no device, imported whole."""
    base = tmp_path_factory.mktemp("without-device")
    checkout = base / "checkout"
    shutil.copytree(WITHOUT_DEVICE, checkout, ignore=shutil.ignore_patterns("__pycache__"))
    return importer.run("leetgpu", checkout.resolve(), into=base / "out", jobs=1)


def test_both_forms_of_the_challenge_constructor_are_converted(imported, without_device):
    """LeetGPU's challenge_base has had both: Challenge(device=...) with metadata as class
    attributes (the fixture `leetgpu`), and Challenge() handing its metadata to the base class,
    its generators asking for "cuda" or taking a device of their own (`leetgpu_without_device`)."""
    assert [o.puzzle for o in imported[0].converted] == CONVERTED
    assert [(o.problem, o.puzzle, o.reason, o.notes) for o in without_device.outcomes] == [
        ("challenges/easy/1_add_one", "leetgpu_1_add_one", "", ()),
        ("challenges/medium/2_negate_in_place", "leetgpu_2_negate_in_place", "", ()),
        ("challenges/medium/3_xor_words", "leetgpu_3_xor_words", "", ()),
        ("challenges/hard/4_weighted_sum", "leetgpu_4_weighted_sum", "", ()),
    ]
    add_one = _spec(without_device.into, "leetgpu_1_add_one")
    assert (add_one.title, add_one.tolerance.atol, add_one.tolerance.rtol) == (
        "Add One",
        1e-5,
        1e-5,
    )
    assert [c.name for c in add_one.tests] == [
        "example: N=3", "test 1: N=1", "test 2: N=100", "test 3: N=1000",
    ]  # fmt: skip
    negate = _spec(without_device.into, "leetgpu_2_negate_in_place")
    assert [(a.name, a.role) for a in negate.args] == [("X_ptr", "inout"), ("N", "size")]
    weighted = _spec(without_device.into, "leetgpu_4_weighted_sum")
    assert [dict(c.draws) for c in weighted.tests[1:]] == [
        {"X_ptr": Draw("uniform", 0.0, 1.0), "W_ptr": Draw("uniform", 0.0, 1.0)}
    ] * 2


ADD_ONE = """
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(a_ptr, b_ptr, N, BLOCK: tl.constexpr):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    tl.store(b_ptr + offs, tl.load(a_ptr + offs, mask=mask) + 1.0, mask=mask)


def solve(A_ptr: int, B_ptr: int, N: int):
    add_one_kernel[(triton.cdiv(N, 256),)](A_ptr, B_ptr, N, BLOCK=256)
"""


def test_a_challenge_without_a_device_is_judged_by_its_own_reference(
    without_device, write_submission
):
    report = _judge(without_device.into, "leetgpu_1_add_one", write_submission(ADD_ONE))
    assert report.verdict is Verdict.PASSED, report.message
    words = WORDS_SOLUTION.replace("RESULT", "w ^ 0xDEADBEEF")
    xor = _judge(without_device.into, "leetgpu_3_xor_words", write_submission(words))
    assert xor.verdict is Verdict.PASSED, xor.message


def test_on_cpu_passes_a_device_only_where_one_is_taken():
    class WithDevice:
        def __init__(self, device="cuda"):
            self.device = device

        def generate(self, device: str = "cuda"):
            return device

    class Without:
        def __init__(self):
            self.device = None

        def generate(self):
            return "cuda"

    assert runtime.on_cpu(WithDevice) == {"device": "cpu"}
    assert runtime.leetgpu_challenge(WithDevice).device == "cpu"
    assert runtime.on_cpu(Without) == {} and runtime.leetgpu_challenge(Without).device is None
    assert runtime.on_cpu(WithDevice().generate) == {"device": "cpu"}
    assert runtime.on_cpu(Without().generate) == {}
    assert runtime.on_cpu(len) == {}  # a builtin: nothing to pass


def test_references_of_both_forms_load_in_one_process(out, without_device):
    """A long-lived process (a batch, the server) loads puzzles of both checkouts: each finds its
    own copy of core/challenge_base.py."""
    from judge.core.truth import load_reference

    add_one = _spec(without_device.into, "leetgpu_1_add_one")
    for spec in (_spec(out, SCALE_ADD), add_one, _spec(out, SCALE_ADD)):
        load_reference(spec)
    reference = load_reference(add_one)
    a, b = torch.tensor([1.0, -2.0], dtype=torch.float64), torch.zeros(2, dtype=torch.float64)
    reference(a, b, 2)
    assert b.tolist() == [2.0, -1.0]


def test_a_reference_that_asserts_cuda_tensors_runs_on_the_cpu(tmp_path):
    """Older challenges assert that their tensors are CUDA tensors; the judge's reference runs
    on the CPU, without those asserts and with every other."""
    path = tmp_path / "challenge.py"
    path.write_text(
        "def reference(x, y):\n"
        "    assert x.device.type == 'cuda' and y.is_cuda\n"
        "    assert x.shape == y.shape, 'shapes differ'\n"
        "    y.copy_(x)\n"
    )
    module = runtime._module(path, "tpuzzle_test_off_cuda", [tmp_path], on_cpu=True)
    x, y = torch.ones(2), torch.zeros(2)
    module.reference(x, y)
    assert y.tolist() == [1.0, 1.0]
    with pytest.raises(AssertionError, match="shapes differ"):
        module.reference(x, torch.zeros(3))
    with pytest.raises(AssertionError):
        runtime._module(path, "tpuzzle_test_on_cuda", [tmp_path]).reference(x, y)
