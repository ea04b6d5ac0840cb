"""`tpuzzle import gpumode`: the fixture checkout in GPU MODE's reference-kernels format
(tests/fixtures/gpumode, written for these tests) converted into puzzles, their specs read back,
their references tried by the judge, and the command line's summary.

One import of the whole checkout serves the module (`imported`); it runs on a copy of the
fixture outside any git repository, so that the recorded commit is the one for a folder that is
no checkout.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from typer.testing import CliRunner

from judge.cli import app
from judge.core.results import Verdict
from judge.core.spec import Arg, Case, Draw, Source, Tolerance, load_spec
from judge.core.truth import load_reference
from judge.isolation.runner import RunOptions, judge
from judge.sources import checkouts, importer

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "gpumode"
LICENCE = "Tiny Kernels Fixture Licence (MIT terms)"
UNKNOWN_COMMIT = "unknown (not a git checkout)"

CONVERTED = {
    "problems/Byte-Ops/Invert_U8": "gpumode_byte_ops_invert_u8",
    "problems/tiny/blend": "gpumode_tiny_blend",
    "problems/tiny/double": "gpumode_tiny_double",
    "problems/tiny/relu-bias": "gpumode_tiny_relu_bias",
    "problems/tiny/rowsum": "gpumode_tiny_rowsum",
    "problems/tiny/vectoradd": "gpumode_tiny_vectoradd",
}
SKIPPED = {
    "problems/tiny/custom_check": "check_implementation is custom code, not make_match_reference",
    "problems/tiny/dict_input": "generate_input gives a dict: only tensors have pointers",
    "problems/tiny/fp8_upcast": "a tensor of float8_e4m3fn, a type tpuzzle lacks",
    "problems/tiny/minmax": "ref_kernel returns other than one tensor",
    "problems/tiny/multi_gpu_add": "needs several GPUs (multi_gpu)",
    "problems/tiny/no_generator": "reference.py has no generate_input()",
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
    reasons = {o.problem: o.reason for o in done.skipped}
    if not hasattr(torch, "float8_e4m3fn"):  # then the fixture's float8 problem fails otherwise
        reasons.pop("problems/tiny/fp8_upcast")
    expected = {k: v for k, v in SKIPPED.items() if k in reasons}
    assert reasons == expected
    assert all(o.puzzle == "" and not o.converted for o in done.skipped)


def test_a_float8_tensor_is_a_type_tpuzzle_lacks(imported):
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this torch has no float8_e4m3fn")
    done, _ = imported
    [outcome] = [o for o in done.outcomes if o.problem == "problems/tiny/fp8_upcast"]
    assert outcome.reason == "a tensor of float8_e4m3fn, a type tpuzzle lacks"


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


def case(kind, n, sizes, seed, draws=None, inputs=""):
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
    )


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


@pytest.mark.parametrize(
    "puzzle, call",
    [
        ("gpumode_tiny_vectoradd", "'out', as_tuple=True, new_output=False"),
        ("gpumode_tiny_rowsum", "'output', as_tuple=True, new_output=True"),
        ("gpumode_tiny_blend", "'result', as_tuple=True, new_output=True"),
        ("gpumode_tiny_double", "'data', as_tuple=False, new_output=False"),
    ],
)
def test_the_reference_calls_the_problems_own(imported, puzzle, call):
    done, _ = imported
    text = (done.into / puzzle / "reference.py").read_text()
    assert f"reference = gpumode_reference(__file__, SIGNATURE, {call})\n" in text


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
        f"6 of 12 gpumode problems converted into {into}; 6 skipped "
        "(1 a check of their own, 1 inputs that are not tensors, 1 an unmapped type, "
        "1 several outputs, 1 need several GPUs, 1 other reasons)\n"
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
    result = invoke("--into", str(into), "--only", "minmax")
    assert result.exit_code == 1
    assert result.stdout == (
        f"0 of 1 gpumode problems converted into {into}; 1 skipped (1 several outputs)\n"
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
