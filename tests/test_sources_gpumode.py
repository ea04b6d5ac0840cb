"""`tpuzzle import gpumode`: the fixture checkout in GPU MODE's reference-kernels format
(tests/fixtures/gpumode, written for these tests) converted into puzzles, their specs read back,
their references tried by the judge, and the command line's summary.

One import of the whole checkout serves the module (`imported`); it runs on a copy of the
fixture outside any git repository, so that the recorded commit is the one for a folder that is
no checkout.
"""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from typer.testing import CliRunner

from judge.cli.app import app
from judge.core.results import Verdict
from judge.core.spec import Arg, Case, Draw, Source, Tolerance
from judge.core.spec_reader import load_spec
from judge.core.truth import load_reference
from judge.judging.runner import RunOptions, judge
from judge.sources import checkouts, importer

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "gpumode"
LICENCE = "Tiny Kernels Fixture Licence (MIT terms)"
UNKNOWN_COMMIT = "unknown (not a git checkout)"

CONVERTED = {
    "problems/Byte-Ops/Invert_U8": "gpumode_byte_ops_invert_u8",
    "problems/tiny/blend": "gpumode_tiny_blend",
    "problems/tiny/custom_check": "gpumode_tiny_custom_check",
    "problems/tiny/dict_input": "gpumode_tiny_dict_input",
    "problems/tiny/double": "gpumode_tiny_double",
    "problems/tiny/factor": "gpumode_tiny_factor",
    "problems/tiny/fp8_upcast": "gpumode_tiny_fp8_upcast",
    "problems/tiny/minmax": "gpumode_tiny_minmax",
    "problems/tiny/nested": "gpumode_tiny_nested",
    "problems/tiny/relu-bias": "gpumode_tiny_relu_bias",
    "problems/tiny/rowsum": "gpumode_tiny_rowsum",
    "problems/tiny/scaled_check": "gpumode_tiny_scaled_check",
    "problems/tiny/split": "gpumode_tiny_split",
    "problems/tiny/vectoradd": "gpumode_tiny_vectoradd",
}
SKIPPED = {
    "problems/tiny/config_object": (
        "generate_input gives a Settings: only tensors, numbers, and tuples, lists and dicts of "
        "them are mapped"
    ),
    "problems/tiny/lenient_check": "its check_implementation compares no output and accepts zeros",
    "problems/tiny/multi_gpu_add": "needs several GPUs (multi_gpu)",
    "problems/tiny/no_generator": "reference.py has no generate_input()",
    "problems/tiny/ragged": (
        "generate_input lays the data out otherwise for {'n': 16, 'parts': 3, 'seed': 22}"
    ),
}
ORDER = sorted([*CONVERTED, *SKIPPED])  # the checkout's order: its task.yml paths, sorted


def copy_checkout(base):
    checkout = base / "reference-kernels"
    shutil.copytree(FIXTURE, checkout)
    return checkout


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """(Imported, the outcomes in the order on_outcome saw them) of the whole fixture."""
    base = tmp_path_factory.mktemp("gpumode")
    checkout = copy_checkout(base)
    seen = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GIT_CEILING_DIRECTORIES", str(base))  # no repository above the copy either
        done = importer.run("gpumode", checkout, base / "puzzles", on_outcome=seen.append)
    return done, seen


@pytest.fixture(scope="module")
def specs(imported):
    done, _ = imported
    return {puzzle: load_spec(done.into / puzzle / "puzzle.yaml") for puzzle in CONVERTED.values()}


# ------------------------------------------------------------------------------- what is converted


def test_exactly_the_good_problems_are_converted_with_their_ids(imported):
    done, seen = imported
    assert done.kind == "gpumode"
    assert [o.problem for o in done.outcomes] == ORDER
    assert {o.problem: o.puzzle for o in done.converted} == CONVERTED
    assert all(o.notes == () for o in done.converted)
    assert sorted(p.name for p in done.into.iterdir()) == sorted(CONVERTED.values())  # no staging
    assert sorted(o.problem for o in seen) == ORDER  # every outcome was reported, once


def test_skipped_problems_say_why_in_one_line(imported):
    done, _ = imported
    assert {o.problem: o.reason for o in done.skipped} == SKIPPED
    assert all(o.puzzle == "" and not o.converted for o in done.skipped)


# ------------------------------------------------------------------------------- the specs

NORMAL = Draw("normal", mean=0.0, std=1.0)
DEFAULT_DRAW = Draw("uniform", low=-1.0, high=1.0)  # an input's own, which each case overrides
NOTE = "the source's own tolerance (gpumode)"
TWOS = Draw("full", value=2.0)  # torch.full(..., 2.0)
ROWSUM_DRAWS = {"x_ptr": Draw("uniform", low=0.0, high=1.0), "w_ptr": Draw("uniform", 0.5, 2.0)}


INTEGER_DRAWS = {"uint8": Draw("randint", low=0.0, high=256.0)}  # never all zeros


def buffer(name, role, dtype, *shape):
    draw = INTEGER_DRAWS.get(dtype, DEFAULT_DRAW)
    return Arg(name, role, dtype, tuple(shape), None if role == "out" else draw)


def size(name):
    return Arg(name, "size")


def case(kind, n, sizes, seed, draws=None, inputs="", scalars=None):
    shown = " ".join(f"{k}={v}" for k, v in sizes.items())
    name = f"{kind} {n}: {shown}"
    return Case(
        name=name,
        sizes=tuple(sizes.items()),
        seed=seed,
        draw=f"{kind}:{name}",
        interpret=kind == "test",
        draws=tuple((draws or {}).items()),
        inputs=inputs,
        scalars=tuple((scalars or {}).items()),
    )


NESTED_DRAWS = {
    "x_ptr": NORMAL,
    "params_scale_ptr": Draw("uniform", low=0.0, high=1.0),
    "params_shift_ptr": Draw("full", value=0.25),
}
SQRT_N = "1e-05 * sqrt(n)"  # scaled_check's tolerance: 1e-5 times the root of n


EXPECTED = {
    "gpumode_tiny_vectoradd": dict(
        title="vectoradd-tiny",
        args=(
            buffer("a_ptr", "in", "float16", "size", "size"),
            buffer("b_ptr", "in", "float16", "size", "size"),
            buffer("out_ptr", "out", "float16", "size", "size"),
            size("size"),
        ),
        tolerance=Tolerance(atol=1e-3, rtol=1e-3, note=NOTE),
        limits=(("size", 16, 64),),
        tests=(
            case("test", 1, {"size": 16}, 11, {"a_ptr": NORMAL, "b_ptr": NORMAL}),
            case("test", 2, {"size": 40}, 12, {"a_ptr": NORMAL, "b_ptr": NORMAL}),
        ),
        benchmarks=(case("benchmark", 1, {"size": 64}, 13, {"a_ptr": NORMAL, "b_ptr": NORMAL}),),
    ),
    "gpumode_tiny_rowsum": dict(  # a new output: a buffer `output` after the data's
        title="weighted row sums",
        args=(
            buffer("x_ptr", "in", "float32", "rows", "cols"),
            buffer("w_ptr", "in", "float32", "cols"),
            buffer("output_ptr", "out", "float32", "rows"),
            size("rows"),
            size("cols"),
        ),
        tolerance=Tolerance(atol=1e-5, rtol=1e-4, note=NOTE),
        limits=(("rows", 5, 64), ("cols", 32, 64)),
        tests=(
            case("test", 1, {"rows": 8, "cols": 32}, 5, ROWSUM_DRAWS),
            case("test", 2, {"rows": 5, "cols": 48}, 6, ROWSUM_DRAWS),
        ),
        benchmarks=(case("benchmark", 1, {"rows": 64, "cols": 64}, 7, ROWSUM_DRAWS),),
    ),
    "gpumode_tiny_blend": dict(  # a new output where `output` names an input: `result`
        title="blend",
        args=(
            buffer("x_ptr", "in", "float32", "n"),
            buffer("output_ptr", "in", "float32", "n"),
            buffer("result_ptr", "out", "float32", "n"),
            size("n"),
        ),
        tolerance=Tolerance(atol=1e-5, rtol=1e-05, note=NOTE),  # rtol: utils' default
        limits=(("n", 500, 4000),),
        tests=(
            case("test", 1, {"n": 500}, 31, {"x_ptr": NORMAL, "output_ptr": TWOS}),
            case("test", 2, {"n": 1500}, 32, {"x_ptr": NORMAL, "output_ptr": TWOS}),
        ),
        benchmarks=(case("benchmark", 1, {"n": 4000}, 33, {"x_ptr": NORMAL, "output_ptr": TWOS}),),
    ),
    "gpumode_tiny_double": dict(  # one tensor, not a tuple, doubled in place
        title="double in place",
        args=(buffer("data_ptr", "inout", "float32", "n"), size("n")),
        tolerance=Tolerance(atol=1e-08, rtol=1e-05, note=NOTE),  # the defaults of utils
        limits=(("n", 1000, 4096),),
        tests=(
            case("test", 1, {"n": 1000}, 1, {"data_ptr": NORMAL}),
            case("test", 2, {"n": 2500}, 2, {"data_ptr": NORMAL}),
        ),
        benchmarks=(case("benchmark", 1, {"n": 4096}, 3, {"data_ptr": NORMAL}),),
    ),
    "gpumode_tiny_relu_bias": dict(  # x is changed after its draw: every case stored
        title="relu with a bias",
        args=(
            buffer("x_ptr", "in", "float32", "rows", "cols"),
            buffer("b_ptr", "in", "float32", "cols"),
            buffer("y_ptr", "out", "float32", "rows", "cols"),
            size("rows"),
            size("cols"),
        ),
        tolerance=Tolerance(atol=1e-6, rtol=1e-05, note=NOTE),
        limits=(("rows", 4, 16), ("cols", 33, 128)),
        tests=(
            case("test", 1, {"rows": 4, "cols": 50}, 21, inputs="cases/0.npz"),
            case("test", 2, {"rows": 7, "cols": 33}, 22, inputs="cases/1.npz"),
        ),
        benchmarks=(case("benchmark", 1, {"rows": 16, "cols": 128}, 23, inputs="cases/2.npz"),),
    ),
    "gpumode_tiny_dict_input": dict(  # the data is a dict: its tensors by their keys
        title="negate, from a dict",
        args=(
            buffer("x_ptr", "in", "float32", "n"),
            buffer("out_ptr", "out", "float32", "n"),
            size("n"),
        ),
        tolerance=Tolerance(atol=1e-08, rtol=1e-05, note=NOTE),
        limits=(("n", 128, 2048),),
        tests=(case("test", 1, {"n": 128}, 71, {"x_ptr": NORMAL}),),
        benchmarks=(case("benchmark", 1, {"n": 2048}, 72, {"x_ptr": NORMAL}),),
    ),
    "gpumode_tiny_fp8_upcast": dict(  # float8 made by .to(): stored, as its bits
        title="float8 to float32",
        args=(
            buffer("x_ptr", "in", "float8_e4m3fn", "n"),
            buffer("out_ptr", "out", "float32", "n"),
            size("n"),
        ),
        tolerance=Tolerance(atol=1e-2, rtol=1e-2, note=NOTE),
        limits=(("n", 256, 4096),),
        tests=(case("test", 1, {"n": 256}, 91, inputs="cases/0.npz"),),
        benchmarks=(case("benchmark", 1, {"n": 4096}, 92, inputs="cases/1.npz"),),
    ),
    "gpumode_tiny_minmax": dict(  # two outputs of their own, each checked by torch.allclose
        title="row minimum and maximum",
        args=(
            buffer("x_ptr", "in", "float32", "rows", "cols"),
            buffer("output0_ptr", "out", "float32", "rows"),
            buffer("output1_ptr", "out", "float32", "rows"),
            size("rows"),
            size("cols"),
        ),
        tolerance=Tolerance(atol=1e-6, rtol=1e-5, note=NOTE),
        limits=(("rows", 4, 32), ("cols", 16, 64)),
        tests=(case("test", 1, {"rows": 4, "cols": 16}, 51, {"x_ptr": NORMAL}),),
        benchmarks=(case("benchmark", 1, {"rows": 32, "cols": 64}, 52, {"x_ptr": NORMAL}),),
    ),
    "gpumode_tiny_nested": dict(  # a tuple of a tensor, a dict of tensors, a dict of numbers
        title="scale, shift and clip, with the parameters in dicts",
        args=(
            buffer("x_ptr", "in", "float32", "n"),
            buffer("params_scale_ptr", "in", "float32", "n"),
            buffer("params_shift_ptr", "in", "float32", "n"),
            buffer("output_ptr", "out", "float32", "n"),
            size("n"),
            Arg("settings_limit", "scalar", value=1.5),  # a float that changes: a scalar
            size("settings_bins"),  # an int that is no generator argument: a size of its own
        ),
        tolerance=Tolerance(atol=1e-6, rtol=1e-5, note=NOTE),
        limits=(("n", 64, 1024), ("settings_bins", 16, 256)),
        tests=(
            case("test", 1, {"n": 64, "settings_bins": 16}, 41, NESTED_DRAWS),
            case(
                "test",
                2,
                {"n": 200, "settings_bins": 50},
                42,
                NESTED_DRAWS,
                scalars={"settings_limit": 0.75},
            ),
        ),  # fmt: skip
        benchmarks=(
            case(
                "benchmark",
                1,
                {"n": 1024, "settings_bins": 256},
                43,
                NESTED_DRAWS,
                scalars={"settings_limit": 1.0},
            ),
        ),  # fmt: skip
    ),
    "gpumode_tiny_scaled_check": dict(  # the check's tolerance grows with sqrt(n)
        title="running sum, checked within a tolerance that grows with n",
        args=(
            buffer("data_ptr", "in", "float32", "n"),
            buffer("output_ptr", "out", "float32", "n"),
            size("n"),
        ),
        tolerance=Tolerance(atol=SQRT_N, rtol=SQRT_N, note=NOTE),
        limits=(("n", 100, 2500),),
        tests=(
            case("test", 1, {"n": 100}, 81, {"data_ptr": NORMAL}),
            case("test", 2, {"n": 400}, 82, {"data_ptr": NORMAL}),
            case("test", 3, {"n": 900}, 83, {"data_ptr": NORMAL}),
        ),
        benchmarks=(case("benchmark", 1, {"n": 2500}, 84, {"data_ptr": NORMAL}),),
    ),
    "gpumode_tiny_split": dict(  # two outputs into the data's own empty tensors, exactly
        title="negative and positive parts",
        args=(
            buffer("x_ptr", "in", "float32", "n"),
            buffer("lo_ptr", "out", "float32", "n"),
            buffer("hi_ptr", "out", "float32", "n"),
            size("n"),
        ),
        tolerance=Tolerance(atol=0.0, rtol=0.0, note=NOTE),
        limits=(("n", 50, 4000),),
        tests=(
            case("test", 1, {"n": 50}, 61, {"x_ptr": NORMAL}),
            case("test", 2, {"n": 700}, 62, {"x_ptr": NORMAL}),
        ),
        benchmarks=(case("benchmark", 1, {"n": 4000}, 63, {"x_ptr": NORMAL}),),
    ),
    "gpumode_byte_ops_invert_u8": dict(  # uint8; `contention` is the generator's alone
        title="invert bytes",
        args=(
            buffer("x_ptr", "in", "uint8", "n"),
            buffer("out_ptr", "out", "uint8", "n"),
            size("n"),
        ),
        tolerance=Tolerance(atol=0.0, rtol=0.0, note=NOTE),
        limits=(("n", 1000, 4096),),
        tests=(
            case("test", 1, {"n": 1000}, 3, {"x_ptr": Draw("randint", low=0, high=65)}),
            case("test", 2, {"n": 3000}, 4, {"x_ptr": Draw("randint", low=0, high=192)}),
        ),
        benchmarks=(case("benchmark", 1, {"n": 4096}, 5, {"x_ptr": Draw("randint", 0, 256)}),),
    ),
}


@pytest.mark.parametrize("puzzle", sorted(EXPECTED))
def test_each_spec_is_the_problem_on_the_raw_pointer_abi(specs, puzzle):
    spec, expected = specs[puzzle], EXPECTED[puzzle]
    assert spec.id == puzzle
    assert spec.title == expected["title"]
    assert (spec.difficulty, spec.tags) == ("medium", ("imported", "gpumode"))
    assert spec.args == expected["args"]
    assert spec.tolerance == expected["tolerance"]
    assert spec.limits == expected["limits"]
    assert spec.tests == expected["tests"]
    assert spec.benchmarks == expected["benchmarks"]


def test_the_signature_of_the_preallocated_output(specs):
    assert specs["gpumode_tiny_vectoradd"].signature == "solve(a_ptr, b_ptr, out_ptr, size)"
    assert specs["gpumode_tiny_rowsum"].signature == "solve(x_ptr, w_ptr, output_ptr, rows, cols)"
    assert specs["gpumode_tiny_blend"].signature == "solve(x_ptr, output_ptr, result_ptr, n)"


@pytest.mark.parametrize("problem", sorted(CONVERTED))
def test_each_spec_records_its_source_and_statement(imported, specs, problem):
    done, _ = imported
    spec = specs[CONVERTED[problem]]
    assert spec.source == Source(
        kind="gpumode",
        repository=str(done.checkout),
        commit=UNKNOWN_COMMIT,
        path=problem,
        licence=LICENCE,
    )
    task = yaml.safe_load((FIXTURE / problem / "task.yml").read_text())
    assert spec.statement == task["description"].strip()


def test_the_statement_is_the_description_as_written(specs):
    assert specs["gpumode_tiny_relu_bias"].statement == (
        "relu(x + b) for a matrix x and a bias b added to every row, into y.\n"
        "Every other column of x is shifted down after it is drawn."
    )


def test_an_input_made_by_code_is_stored_as_the_generator_made_it(imported):
    """relu-bias: x is drawn, then changed, so stored; b, a plain randn, is drawn at import from
    the fixed seed of stored cases (convert.DRAW_SEED + the case's index)."""
    done, _ = imported
    folder = done.into / "gpumode_tiny_relu_bias"
    assert sorted(p.name for p in (folder / "cases").iterdir()) == ["0.npz", "1.npz", "2.npz"]
    for index, (rows, cols, seed) in enumerate([(4, 50, 21), (7, 33, 22), (16, 128, 23)]):
        gen = torch.Generator()
        gen.manual_seed(seed)
        x = torch.rand(rows, cols, generator=gen)
        x[:, ::2] -= 0.5
        with np.load(folder / f"cases/{index}.npz") as stored:
            assert sorted(stored.files) == ["b_ptr", "x_ptr"]
            assert stored["x_ptr"].dtype == np.float32 and stored["x_ptr"].shape == (rows * cols,)
            np.testing.assert_array_equal(stored["x_ptr"], x.reshape(-1).numpy())
            rng = np.random.default_rng(0x7A11 + index)
            np.testing.assert_array_equal(
                stored["b_ptr"], rng.normal(0.0, 1.0, cols).astype(np.float32)
            )


def test_the_source_files_the_reference_needs_are_copied(imported):
    done, _ = imported
    for puzzle in CONVERTED.values():
        source = done.into / puzzle / "source"
        assert sorted(p.name for p in source.iterdir()) == [
            "reference.py", "task.py", "task.yml", "utils.py",
        ]  # fmt: skip
    byte_ops = done.into / "gpumode_byte_ops_invert_u8" / "source" / "utils.py"
    assert byte_ops.read_bytes() == (FIXTURE / "problems/Byte-Ops/utils.py").read_bytes()


def _tensors(*names):
    return [{"tensor": n} for n in names]


@pytest.mark.parametrize(
    "puzzle, data, outputs",
    [
        ("gpumode_tiny_vectoradd", {"tuple": _tensors("a", "b", "out")}, ["out"]),
        ("gpumode_tiny_rowsum", {"tuple": _tensors("x", "w")}, ["output"]),
        ("gpumode_tiny_blend", {"tuple": _tensors("x", "output")}, ["result"]),
        ("gpumode_tiny_double", {"tensor": "data"}, ["data"]),
        ("gpumode_tiny_dict_input", {"dict": [["x", {"tensor": "x"}], ["out", {"tensor": "out"}]]},
         ["out"]),
        ("gpumode_tiny_minmax", {"tuple": _tensors("x")}, ["output0", "output1"]),
        ("gpumode_tiny_split", {"tuple": _tensors("x", "lo", "hi")}, ["lo", "hi"]),
        (
            "gpumode_tiny_nested",
            {
                "tuple": [
                    {"tensor": "x"},
                    {"dict": [["scale", {"tensor": "params_scale"}],
                              ["shift", {"tensor": "params_shift"}]]},
                    {"dict": [["n", {"size": "n"}], ["limit", {"scalar": "settings_limit"}],
                              ["clip", {"value": True}], ["bins", {"size": "settings_bins"}],
                              ["mode", {"value": "fast"}]]},
                ]
            },
            ["output"],
        ),
    ],
)  # fmt: skip
def test_the_reference_builds_the_problems_data_and_calls_its_own(imported, puzzle, data, outputs):
    done, _ = imported
    text = (done.into / puzzle / "reference.py").read_text()
    assert (
        "reference = gpumode_reference(__file__, SIGNATURE, data=DATA, outputs=OUTPUTS)\n" in text
    )
    constants = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in ast.parse(text).body
        if isinstance(node, ast.Assign) and node.targets[0].id in ("DATA", "OUTPUTS")
    }
    assert constants == {"DATA": data, "OUTPUTS": outputs}


def test_a_reference_written_for_one_output_still_runs(specs, tmp_path):
    """A puzzle imported before the data had a layout names its output and says whether the
    data is a tuple: such a reference.py still computes."""
    folder = tmp_path / "gpumode_tiny_vectoradd"
    shutil.copytree(specs["gpumode_tiny_vectoradd"].directory, folder)
    text = (folder / "reference.py").read_text()
    old = "gpumode_reference(__file__, SIGNATURE, 'out', as_tuple=True, new_output=False)"
    text = text.replace("gpumode_reference(__file__, SIGNATURE, data=DATA, outputs=OUTPUTS)", old)
    (folder / "reference.py").write_text(text)
    reference = load_reference(load_spec(folder / "puzzle.yaml"))
    a, b, out = torch.ones(4, dtype=torch.float64), torch.full((4,), 2.0), torch.zeros(4)
    reference(a, b, out, 2)
    assert out.tolist() == [3.0] * 4


# ------------------------------------------------------------------------------- judged

VECTORADD = """
import triton
import triton.language as tl


@triton.jit
def vectoradd_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float16))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float16))
    out_ptr = out_ptr.to(tl.pointer_type(tl.float16))
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, a {op} b, mask=mask)


def solve(a_ptr: int, b_ptr: int, out_ptr: int, size: int):
    n = size * size
    BLOCK_SIZE = 1024
    vectoradd_kernel[(triton.cdiv(n, BLOCK_SIZE),)](a_ptr, b_ptr, out_ptr, n, BLOCK_SIZE=BLOCK_SIZE)
"""

ROWSUM = """
import triton
import triton.language as tl


@triton.jit
def rowsum_kernel(x_ptr, w_ptr, output_ptr, cols, BLOCK: tl.constexpr):
    x_ptr = x_ptr.to(tl.pointer_type(tl.float32))
    w_ptr = w_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    row = tl.program_id(axis=0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * cols + offsets, mask=mask, other=0.0)
    w = tl.load(w_ptr + offsets, mask=mask, other=0.0)
    tl.store(output_ptr + row, tl.sum(x * w, axis=0))


def solve(x_ptr: int, w_ptr: int, output_ptr: int, rows: int, cols: int):
    rowsum_kernel[(rows,)](x_ptr, w_ptr, output_ptr, cols, BLOCK=triton.next_power_of_2(cols))
"""

RELU_BIAS = """
import triton
import triton.language as tl


@triton.jit
def relu_bias_kernel(x_ptr, b_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    x_ptr = x_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    y_ptr = y_ptr.to(tl.pointer_type(tl.float32))
    row = tl.program_id(axis=0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * cols + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(y_ptr + row * cols + offsets, {result}, mask=mask)


def solve(x_ptr: int, b_ptr: int, y_ptr: int, rows: int, cols: int):
    relu_bias_kernel[(rows,)](x_ptr, b_ptr, y_ptr, cols, BLOCK=triton.next_power_of_2(cols))
"""


def judged(spec, write_submission, source):
    return judge(spec, write_submission(source), RunOptions(interpret=True, timeout_s=60))


def test_a_correct_vectoradd_passes(specs, write_submission):
    report = judged(specs["gpumode_tiny_vectoradd"], write_submission, VECTORADD.format(op="+"))
    assert report.verdict is Verdict.PASSED, report.message
    assert [(c.name, c.seed, c.status) for c in report.cases] == [
        ("test 1: size=16", 11, "passed"),
        ("test 2: size=40", 12, "passed"),
    ]


def test_a_wrong_vectoradd_fails(specs, write_submission):
    report = judged(specs["gpumode_tiny_vectoradd"], write_submission, VECTORADD.format(op="-"))
    assert (report.verdict, report.reason) == (Verdict.FAILED, "wrong-answer"), report.message
    assert report.cases[0].status == "failed"


def test_a_correct_kernel_of_a_new_output_passes(specs, write_submission):
    report = judged(specs["gpumode_tiny_rowsum"], write_submission, ROWSUM)
    assert report.verdict is Verdict.PASSED, report.message
    assert [c.status for c in report.cases] == ["passed", "passed"]


def test_stored_inputs_are_what_a_kernel_is_judged_on(specs, write_submission):
    spec = specs["gpumode_tiny_relu_bias"]
    right = judged(spec, write_submission, RELU_BIAS.format(result="tl.maximum(x + b, 0.0)"))
    assert right.verdict is Verdict.PASSED, right.message
    wrong = judged(spec, write_submission, RELU_BIAS.format(result="x + b"))  # no relu
    assert (wrong.verdict, wrong.reason) == (Verdict.FAILED, "wrong-answer"), wrong.message


MINMAX = """
import triton
import triton.language as tl


@triton.jit
def minmax_kernel(x_ptr, lo_ptr, hi_ptr, cols, BLOCK: tl.constexpr):
    x_ptr = x_ptr.to(tl.pointer_type(tl.float32))
    lo_ptr = lo_ptr.to(tl.pointer_type(tl.float32))
    hi_ptr = hi_ptr.to(tl.pointer_type(tl.float32))
    row = tl.program_id(axis=0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    low = tl.load(x_ptr + row * cols + offsets, mask=mask, other=float("inf"))
    high = tl.load(x_ptr + row * cols + offsets, mask=mask, other=-float("inf"))
    tl.store(lo_ptr + row, tl.min(low, axis=0))
    tl.store(hi_ptr + row, tl.max(high, axis=0))


def solve(x_ptr: int, output0_ptr: int, output1_ptr: int, rows: int, cols: int):
    BLOCK = triton.next_power_of_2(cols)
    minmax_kernel[(rows,)](x_ptr, output0_ptr, output1_ptr, cols, BLOCK=BLOCK)
"""

SPLIT = """
import triton
import triton.language as tl


@triton.jit
def split_kernel(x_ptr, lo_ptr, hi_ptr, n, BLOCK: tl.constexpr):
    x_ptr = x_ptr.to(tl.pointer_type(tl.float32))
    lo_ptr = lo_ptr.to(tl.pointer_type(tl.float32))
    hi_ptr = hi_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(axis=0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(lo_ptr + offsets, tl.minimum(x, 0.0), mask=mask)
    STORE_HI


def solve(x_ptr: int, lo_ptr: int, hi_ptr: int, n: int):
    split_kernel[(triton.cdiv(n, 256),)](x_ptr, lo_ptr, hi_ptr, n, BLOCK=256)
"""

NESTED = """
import triton
import triton.language as tl


@triton.jit
def nested_kernel(x_ptr, scale_ptr, shift_ptr, out_ptr, n, limit, BLOCK: tl.constexpr):
    x_ptr = x_ptr.to(tl.pointer_type(tl.float32))
    scale_ptr = scale_ptr.to(tl.pointer_type(tl.float32))
    shift_ptr = shift_ptr.to(tl.pointer_type(tl.float32))
    out_ptr = out_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(axis=0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = x * tl.load(scale_ptr + offsets, mask=mask) + tl.load(shift_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, CLIPPED, mask=mask)


def solve(x_ptr: int, params_scale_ptr: int, params_shift_ptr: int, output_ptr: int, n: int,
          settings_limit: float, settings_bins: int):
    grid = (triton.cdiv(n, 256),)
    nested_kernel[grid](x_ptr, params_scale_ptr, params_shift_ptr, output_ptr, n,
                        settings_limit, BLOCK=256)
"""

RUNNING_SUM = """
import triton
import triton.language as tl


@triton.jit
def running_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    x_ptr = x_ptr.to(tl.pointer_type(tl.float32))
    out_ptr = out_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, tl.cumsum(x, axis=0), mask=mask)


def solve(data_ptr: int, output_ptr: int, n: int):
    running_sum_kernel[(1,)](data_ptr, output_ptr, n, BLOCK=triton.next_power_of_2(n))
"""

UPCAST = """
import triton
import triton.language as tl


@triton.jit
def upcast_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    x_ptr = x_ptr.to(tl.pointer_type(tl.float8e4nv))
    out_ptr = out_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(axis=0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask).to(tl.float32), mask=mask)


def solve(x_ptr: int, out_ptr: int, n: int):
    upcast_kernel[(triton.cdiv(n, 256),)](x_ptr, out_ptr, n, BLOCK=256)
"""


def test_several_outputs_of_their_own_are_judged_each(specs, write_submission):
    report = judged(specs["gpumode_tiny_minmax"], write_submission, MINMAX)
    assert report.verdict is Verdict.PASSED, report.message
    both_max = MINMAX.replace("lo_ptr + row, tl.min(low", "lo_ptr + row, tl.max(high")
    wrong = judged(specs["gpumode_tiny_minmax"], write_submission, both_max)
    assert wrong.verdict is Verdict.FAILED, wrong.message


def test_several_outputs_written_into_the_datas_tensors(specs, write_submission):
    store_hi = "tl.store(hi_ptr + offsets, tl.maximum(x, 0.0), mask=mask)"
    right = judged(
        specs["gpumode_tiny_split"], write_submission, SPLIT.replace("STORE_HI", store_hi)
    )
    assert right.verdict is Verdict.PASSED, right.message
    half = judged(specs["gpumode_tiny_split"], write_submission, SPLIT.replace("STORE_HI", ""))
    assert (half.verdict, half.reason) == (Verdict.FAILED, "unwritten"), half.message


def test_nested_data_gives_its_numbers_as_sizes_and_scalars(specs, write_submission):
    clipped = "tl.minimum(tl.maximum(y, -limit), limit)"
    spec = specs["gpumode_tiny_nested"]
    right = judged(spec, write_submission, NESTED.replace("CLIPPED", clipped))
    assert right.verdict is Verdict.PASSED, right.message
    unclipped = judged(spec, write_submission, NESTED.replace("CLIPPED", "y"))
    assert (unclipped.verdict, unclipped.reason) == (Verdict.FAILED, "wrong-answer")


def test_a_tolerance_that_grows_with_the_size_is_the_checks(specs, write_submission):
    spec = specs["gpumode_tiny_scaled_check"]
    assert [spec.tolerance.at(c.size_map).atol for c in spec.tests] == pytest.approx(
        [1e-4, 2e-4, 3e-4]
    )
    report = judged(spec, write_submission, RUNNING_SUM)
    assert report.verdict is Verdict.PASSED, report.message


def test_a_float8_input_is_loaded_as_float8(specs, write_submission):
    spec = specs["gpumode_tiny_fp8_upcast"]
    with np.load(spec.directory / "cases/0.npz") as stored:
        bits = stored["x_ptr"]
    assert bits.dtype == np.uint8 and bits.shape == (256,)  # float8 is stored as its bits
    gen = torch.Generator()
    gen.manual_seed(91)
    made = torch.randn(256, generator=gen).to(torch.float8_e4m3fn)
    assert torch.equal(torch.from_numpy(bits), made.view(torch.uint8))
    report = judged(spec, write_submission, UPCAST)
    assert report.verdict is Verdict.PASSED, report.message


SCALE_REST = """
import triton
import triton.language as tl


@triton.jit
def factor_kernel(x_ptr, scale_ptr, rest_ptr, n, BLOCK: tl.constexpr):
    x_ptr = x_ptr.to(tl.pointer_type(tl.float32))
    scale_ptr = scale_ptr.to(tl.pointer_type(tl.float32))
    rest_ptr = rest_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(axis=0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(scale_ptr + offsets, tl.full([BLOCK], SCALE, tl.float32), mask=mask)
    tl.store(rest_ptr + offsets, x / SCALE, mask=mask)


def solve(data_ptr: int, output0_ptr: int, output1_ptr: int, n: int):
    factor_kernel[(triton.cdiv(n, 128),)](data_ptr, output0_ptr, output1_ptr, n, BLOCK=128)
"""

TIMES_THREE = """
import triton
import triton.language as tl


@triton.jit
def scaled_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    x_ptr = x_ptr.to(tl.pointer_type(tl.float32))
    out_ptr = out_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(axis=0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, FACTOR * tl.load(x_ptr + offsets, mask=mask), mask=mask)


def solve(x_ptr: int, out_ptr: int, n: int):
    scaled_kernel[(triton.cdiv(n, 128),)](x_ptr, out_ptr, n, BLOCK=128)
"""


@pytest.mark.parametrize("puzzle", ["gpumode_tiny_factor", "gpumode_tiny_custom_check"])
def test_a_check_that_compares_no_output_is_the_puzzles_own(specs, puzzle):
    spec = specs[puzzle]
    assert spec.check == "reference"
    assert (spec.tolerance.atol, spec.tolerance.rtol) == (1e-4, 1e-3)
    assert "the problem's own check judges the outputs" in spec.tolerance.note
    text = (spec.directory / "reference.py").read_text()
    assert "check = gpumode_check(__file__, SIGNATURE, data=DATA, outputs=OUTPUTS)" in text


def test_an_answer_the_reference_did_not_give_passes_its_check(specs, write_submission):
    spec = specs["gpumode_tiny_factor"]
    other = judged(spec, write_submission, SCALE_REST.replace("SCALE", "2.0"))
    assert other.verdict is Verdict.PASSED, other.message  # scale 2, not the reference's 1
    negative = judged(spec, write_submission, SCALE_REST.replace("SCALE", "-1.0"))
    assert (negative.verdict, negative.reason) == (Verdict.FAILED, "wrong-answer")
    assert "every scale must be positive" in negative.message


def test_a_wrong_answer_fails_with_the_problems_own_words(specs, write_submission):
    spec = specs["gpumode_tiny_custom_check"]
    right = judged(spec, write_submission, TIMES_THREE.replace("FACTOR", "3.0"))
    assert right.verdict is Verdict.PASSED, right.message
    wrong = judged(spec, write_submission, TIMES_THREE.replace("FACTOR", "2.0"))
    assert (wrong.verdict, wrong.reason) == (Verdict.FAILED, "wrong-answer")
    assert "off by" in wrong.message and wrong.message.startswith("case test 1: n=300")


@pytest.mark.gpu
def test_a_puzzle_judged_by_its_own_check_is_judged_and_timed_on_the_gpu(specs, write_submission):
    """On the device: the timer leaves each case's and each input set's buffers to the
    parent, which runs the problem's check; the timed calls are held to each set's first."""
    spec = specs["gpumode_tiny_factor"]
    options = RunOptions(interpret=False, timeout_s=120)
    report = judge(spec, write_submission(SCALE_REST.replace("SCALE", "2.0")), options)
    assert report.verdict is Verdict.PASSED, report.message
    assert report.timing and report.timing[0].median_ms > 0
    wrong = judge(spec, write_submission(SCALE_REST.replace("SCALE", "-1.0")), options)
    assert (wrong.verdict, wrong.reason) == (Verdict.FAILED, "wrong-answer"), wrong.message


@pytest.mark.gpu
def test_a_float8_input_is_judged_and_timed_on_the_gpu(specs, write_submission):
    """On the device, where the timer replays each case and checks float8 inputs bit for bit."""
    spec = specs["gpumode_tiny_fp8_upcast"]
    options = RunOptions(interpret=False, timeout_s=120)
    report = judge(spec, write_submission(UPCAST), options)
    assert report.verdict is Verdict.PASSED, report.message
    halved = UPCAST.replace(".to(tl.float32), mask=mask)", ".to(tl.float32) * 0.5, mask=mask)")
    wrong = judge(spec, write_submission(halved), options)
    assert (wrong.verdict, wrong.reason) == (Verdict.FAILED, "wrong-answer"), wrong.message


# ------------------------------------------------------------------------------- the command line


@pytest.fixture
def cli(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    checkout = copy_checkout(tmp_path)
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(app, ["import", "gpumode", str(checkout), *args], terminal_width=120)

    return invoke, checkout


def test_the_command_imports_the_checkout_and_sums_up(cli, tmp_path):
    invoke, checkout = cli
    into = tmp_path / "mine"
    result = invoke("--into", str(into))
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"14 of 19 gpumode problems converted into {into}; 5 skipped "
        "(1 inputs that are not tensors, 1 a check that checks no output, 1 need several GPUs, "
        "1 other reasons, 1 data that changes from case to case)\n"
    )
    assert "converted problems/tiny/vectoradd -> gpumode_tiny_vectoradd\n" in result.stderr
    assert "skipped problems/tiny/multi_gpu_add: needs several GPUs (multi_gpu)\n" in (
        result.stderr
    )
    assert sorted(p.name for p in into.iterdir()) == sorted(CONVERTED.values())


def test_only_narrows_the_import(cli, tmp_path):
    invoke, _ = cli
    into = tmp_path / "mine"
    result = invoke("--into", str(into), "--only", "vectoradd", "--only", "multi_gpu")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"1 of 2 gpumode problems converted into {into}; 1 skipped (1 need several GPUs)\n"
    )
    assert [p.name for p in into.iterdir()] == ["gpumode_tiny_vectoradd"]


def test_only_matching_nothing_is_a_usage_error(cli, tmp_path):
    invoke, checkout = cli
    result = invoke("--into", str(tmp_path / "mine"), "--only", "no-such-problem")
    assert result.exit_code == 2
    assert result.stderr == f"error: {checkout}: no problem matches no-such-problem\n"
    assert not (tmp_path / "mine").exists()


def test_nothing_converted_exits_1(cli, tmp_path):
    invoke, _ = cli
    into = tmp_path / "mine"
    result = invoke("--into", str(into), "--only", "config_object")
    assert result.exit_code == 1
    assert result.stdout == (
        f"0 of 1 gpumode problems converted into {into}; 1 skipped "
        "(1 inputs that are not tensors)\n"
    )


# ------------------------------------------------------------------------------- found wrong


def test_a_folder_inside_another_repository_is_no_checkout_of_its_own(tmp_path, monkeypatch):
    if shutil.which("git") is None:
        pytest.skip("no git")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    outer = tmp_path / "my-project"
    outer.mkdir()
    git = ["git", "-C", str(outer), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run(
        [*git, "remote", "add", "origin", "https://example.invalid/mine.git"], check=True
    )
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    checkout = copy_checkout(outer)  # a plain copy of the problem set, not a git checkout
    about = checkouts.about(checkout)
    assert about["licence"] == LICENCE
    assert (about["repository"], about["commit"]) == (str(checkout), UNKNOWN_COMMIT)


def test_a_seed_of_zero_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    checkout = copy_checkout(tmp_path)
    task = checkout / "problems/tiny/vectoradd/task.yml"
    task.write_text(task.read_text().replace('"seed": 11}', '"seed": 0}'))
    done = importer.run("gpumode", checkout, tmp_path / "puzzles", only=["tiny/vectoradd"])
    spec = load_spec(done.into / "gpumode_tiny_vectoradd" / "puzzle.yaml")
    assert [c.seed for c in spec.tests] == [0, 12]


def test_a_reference_loaded_again_imports_its_own_sets_utils(specs, monkeypatch):
    imported_sources = [p for p in sys.path if (Path(p).parent / "puzzle.yaml").is_file()]
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in imported_sources])
    for name in ("utils", "task"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    byte_ops, tiny = specs["gpumode_byte_ops_invert_u8"], specs["gpumode_tiny_vectoradd"]
    load_reference(byte_ops)
    load_reference(tiny)
    reference = load_reference(byte_ops)  # as a long-lived process (a batch, the server) may
    x, out = torch.tensor([0.0, 7.0, 255.0]), torch.zeros(3)
    reference(x, out, 3)
    assert out.tolist() == [255.0, 248.0, 0.0]
