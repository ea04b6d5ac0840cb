"""Every table the CLI prints, at 80 columns (a CI log, a laptop terminal) and at 200: puzzle ids,
student names and figures stay whole, and no line is wider than the terminal."""

import io
import re
from dataclasses import replace

import pytest
from rich.console import Console
from test_results import ENV, sample_report

from judge.cli import pages, report, tables
from judge.cli.render import console as make_console
from judge.core import bench, registry
from judge.core.results import CaseResult, RunReport, Timing
from judge.core.spec import Source
from judge.records.catalogue import Row
from judge.records.grading import Row as ClassRow
from judge.records.store import Best, Entry

H100 = "NVIDIA H100 80GB HBM3"
H200 = "NVIDIA H200 NVL"
STUDENTS = ("alexandra_konstantinopoulou", "bartholomew.featherstonehaugh", "chen_xiaoming_2024")
SUBMITTERS = ("Alexandra Konstantinopoulou", "bartholomew.featherstonehaugh", "chen")
LONG_IDS = ("mean_squared_error", "fused_mul_add_sqrt", "causal_attention", "softmax_attention")


def render(renderable, width: int) -> str:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


UNIT_ALONE = re.compile(r"│ +(us|GB/s|TFLOP/s|%)[ │]")  # a figure's unit under its number


def assert_fits(text: str, width: int, *whole: str) -> None:
    """No line wider than the terminal, every string of `whole` on one line, nothing cut short
    and no figure broken over two lines."""
    too_wide = [line for line in text.splitlines() if len(line) > width]
    assert not too_wide, "\n".join(too_wide)
    missing = [w for w in whole if w not in text]
    assert not missing, f"cut or broken: {missing}\n{text}"
    assert "…" not in text and not UNIT_ALONE.search(text), text


# ------------------------------------------------------------------------------- realistic values


def timing(case: str, median_us: float, **fields) -> Timing:
    values = dict(
        sizes={},
        median_ms=median_us / 1e3,
        p20_ms=median_us * 0.98 / 1e3,
        p80_ms=median_us * 1.03 / 1e3,
        samples=200,
        input_sets=3,
        gbps=3012.4,
        sol_pct=91.7,
        copy_pct=96.4,
        library="F.scaled_dot_product_attention (causal)",
        speedup_vs_library=1.07,
        launches=3,
        host_ms=0.0412,
    )
    return Timing(case=case, **{**values, **fields})


SHAPES = (
    timing("M=4096 N=4096 d=128", 1234.5, gbps=None, tflops=612.3),
    timing("M=1024 N=16384 d=64", 987.6, gbps=None, tflops=587.9, sol_pct=None),
    timing("input_rows=3072 input_cols=3072 kernel_rows=15 kernel_cols=15", 12345.6),
)


def run(puzzle: str = "causal_attention", timings=SHAPES) -> RunReport:
    base = sample_report()
    passed = CaseResult(name="N=8192 d=128", sizes={}, seed=123456789, status="passed")
    return replace(
        base,
        puzzle=puzzle,
        submission=f"submissions/{puzzle}.py",
        cases=(*base.cases, passed),
        timing=timings,
        score=bench.score(timings),
        env=replace(ENV, device=H100, driver="580.65.06", cuda="13.0"),
    )


def bench_row(puzzle: str, difficulty: str, verdict="passed", reason="ok", **fields) -> Row:
    values = dict(
        submission=f"puzzles/{puzzle}/solutions/correct/{puzzle}.py",
        device=H100,
        median_ms=0.8123 if verdict == "passed" else None,
        throughput="3012 GB/s" if verdict == "passed" else "",
        sol_pct=91.7 if verdict == "passed" else None,
        speedup=1.07 if verdict == "passed" else None,
        ranked=verdict == "passed",
        copy_pct=96.4 if verdict == "passed" else None,
        shapes=1 if verdict == "passed" else 0,
    )
    return Row(puzzle, difficulty, verdict=verdict, reason=reason, **{**values, **fields})


def bench_rows() -> list[Row]:
    return [
        bench_row("histogram", "medium", median_ms=12.3456, speedup=12.34),
        bench_row("layer_norm", "medium"),
        bench_row("mean_squared_error", "medium", copy_pct=101.2),
        bench_row("reduction", "medium", shapes=2, per_shape=SHAPES[:2]),
        bench_row("fused_mul_add_sqrt", "easy", "failed", "wrong-answer"),
        bench_row("causal_attention", "hard", "error", "compile-error"),
        bench_row(
            "softmax_attention", "hard", throughput="612.3 TFLOP/s", shapes=3, per_shape=SHAPES
        ),
        bench_row("sort", "hard", "rejected", "faster-than-light"),
    ]


def class_row(student: str, rank: int | None, verdict="passed", reason="ok", **fields):
    values = dict(
        tie=False,
        cases_passed=12,
        cases_total=12,
        device=H100,
        median_ms=1.2345 if rank else None,
        p20_ms=1.2101 if rank else None,
        p80_ms=1.2712 if rank else None,
        sol_pct=88.8 if rank else None,
        speedup=1.15 if rank else None,
        ranked=rank is not None,
    )
    return ClassRow(rank, student=student, verdict=verdict, reason=reason, **{**values, **fields})


def class_tables() -> dict[str, list[ClassRow]]:
    a, b, c = STUDENTS
    return {
        "mean_squared_error": [
            class_row(a, 1, tie=True),
            class_row(b, 1, tie=True, median_ms=1.2401),
            class_row(c, None, "failed", "wrong-answer", cases_passed=7),
        ],
        "softmax_attention": [
            class_row(a, 1, median_ms=123.4567, p20_ms=120.0, p80_ms=130.0),
            class_row(b, 1, device=H200),
            class_row(c, None, "passed", "ok", device=H200, median_ms=2.5, ranked=False),
        ],
        "causal_attention": [
            class_row(a, None, "error", "timeout", cases_passed=0),
            class_row(b, None, "rejected", "faster-than-light", cases_passed=12),
        ],
    }


def leaderboard() -> list[Entry]:
    def entry(puzzle, submitter, rank, **fields) -> Entry:
        values = dict(
            device=H100,
            median_ms=1.2345,
            p20_ms=1.2101,
            p80_ms=1.2712,
            samples=200,
            gbps=3012.4,
            tflops=None,
            sol_pct=91.7,
            speedup=1.07,
            copy_pct=96.4,
            shapes=3,
            submission_sha256="ab" * 32,
            created_at="2025-03-04T05:06:07+00:00",
            run_id=1,
            tie=False,
        )
        return Entry(puzzle, submitter=submitter, rank=rank, **{**values, **fields})

    a, b, c = SUBMITTERS
    return [
        entry("mean_squared_error", a, 1, tie=True),
        entry("mean_squared_error", b, 1, tie=True, median_ms=1.2401),
        entry("mean_squared_error", c, 3, median_ms=12.3456, speedup=0.12, copy_pct=None),
        entry("softmax_attention", b, 1, gbps=None, tflops=612.34, median_ms=123.4567),
        entry("softmax_attention", a, 1, device=H200, gbps=None, tflops=701.2, shapes=None),
    ]


def catalogue(puzzles_root) -> tuple[list, dict[str, Best]]:
    """The shipped puzzles, and one imported with a long id."""
    specs = registry.load_all(puzzles_root)
    source = Source("leetgpu", "github.com/AlphaGPU/leetgpu-challenges", "0123abc", "x", "MIT")
    specs.append(replace(specs[0], id="leetgpu_matrix_multiplication", source=source))
    best = {
        "mean_squared_error": Best("mean_squared_error", "passed", 0.8123, H100),
        "fused_mul_add_sqrt": Best("fused_mul_add_sqrt", "failed", None, H100),
        "causal_attention": Best("causal_attention", "passed", 1.2345678, H100),
        "softmax_attention": Best("softmax_attention", "rejected", None, H100),
    }
    return specs, best


# ------------------------------------------------------------------------------- the tables

WIDTHS = (80, 200)


@pytest.mark.parametrize("width", WIDTHS)
def test_puzzle_list(puzzles_root, width):
    specs, best = catalogue(puzzles_root)
    text = render(pages.puzzle_list(specs, best), width)
    assert_fits(text, width, *(s.id for s in specs), "812.3 us", "1234.6 us", "rejected")
    if width == 200:
        assert "source" in text and "passed 812.3 us" in text and "leetgpu " in text
        assert "not shown" not in text
    else:
        assert "not shown at this width: source" in text


@pytest.mark.parametrize("width", WIDTHS)
def test_puzzle_list_of_shipped_puzzles_keeps_every_column_at_80(puzzles_root, width):
    specs = registry.load_all(puzzles_root)
    best = catalogue(puzzles_root)[1]
    text = render(pages.puzzle_list(specs, best), width)
    assert_fits(text, width, *(s.id for s in specs), "passed 812.3 us", "passed 1234.6 us")
    assert "difficulty" in text and "not shown" not in text


@pytest.mark.parametrize("width", WIDTHS)
def test_run_report(width):
    text = render(report.run_report(run(), rank=(2, 17)), width)
    figures = ("1234.5 us", "1209.8-1271.5 us", "12098.7-12716.0 us", "2469.0 us", "41 us / 3")
    figures += ("612.3 TFLOP/s", "3012 GB/s", "96.4%", "91.7%", "1.07x", "123456789")
    shapes = ("M=4096 N=4096", "input_rows=3072", "kernel_cols=15", "N=8192 d=128")
    assert_fits(text, width, "causal_attention", H100, "CUDA 13.0", *figures, *shapes)
    assert "rank 2 of 17" in text and "F.scaled_dot_product_attention" in text
    if width == 200:  # one table, the library named beside each ratio
        assert "1.07x F.scaled_dot_product_attention (causal)" in text
        assert "input_rows=3072 input_cols=3072 kernel_rows=15 kernel_cols=15" in text
        assert "against a copy" not in text
    else:  # the times, then how they compare; the library named under them
        assert "against a copy, the peak and the library" in text
        assert text.index("host/launches") < text.index("against a copy") < text.index("peak %")


@pytest.mark.parametrize("width", WIDTHS)
def test_bench_table(width):
    text = render(tables.catalogue_table(bench_rows(), interpreted=False), width)
    ids = ("histogram", "layer_norm", "reduction", "sort", *LONG_IDS)
    figures = ("12345.6 us", "812.3 us", "1234.5 us", "987.6 us", "91.7%", "12.34x", "1.07x")
    reasons = ("(wrong-answer)", "(compile-error)", "(faster-than-light)")
    assert_fits(text, width, *ids, *figures, *reasons, "M=1024 N=16384", f"device: {H100}")
    if width == 200:
        assert "812.3 us (2 shapes)" in text and "812.3 us (3 shapes)" in text
        for figure in ("difficulty", "612.3 TFLOP/s", "3012 GB/s", "101.2%", "medium"):
            assert figure in text
        assert "rejected (faster-than-light)" in text and "not shown" not in text
    else:
        assert "not shown at this width: difficulty, throughput, copy %" in text
        assert "TFLOP/s" not in text and "shapes)" not in text


@pytest.mark.parametrize("width", WIDTHS)
def test_class_tables(width):
    text = render(tables.class_tables(class_tables()), width)
    figures = ("1234.5 us", "1240.1 us", "123456.7 us", "2500.0 us", "12/12", "7/12", "0/12")
    reasons = ("(wrong-answer)", "(not ranked)", "(timeout)", "(faster-than-light)")
    titles = ("mean_squared_error · 3 submission(s)", "causal_attention · 2 submission(s)")
    assert_fits(text, width, *STUDENTS, *figures, *reasons, *titles, H100, H200, "1=")
    if width == 200:
        for figure in ("GPU", "120000.0-130000.0 us", "1210.1-1271.2 us", "88.8%", "1.15x"):
            assert figure in text
        assert f"{STUDENTS[0]}   │ {H100} │" in text and "not shown" not in text
    else:  # the GPU under the student's name
        assert "GPU" not in text and f"│      │ {H100}" in text
        assert "not shown at this width: p20-p80, peak %, vs library" in text


@pytest.mark.parametrize("width", WIDTHS)
def test_leaderboard(width):
    text = render(tables.leaderboard_table(leaderboard()), width)
    titles = (f"mean_squared_error · {H100}", f"softmax_attention · {H100}")
    figures = ("1234.5 us", "1240.1 us", "12345.6 us", "123456.7 us", "91.7%", "0.12x", "1=")
    assert_fits(text, width, *SUBMITTERS, *titles, f"softmax_attention · {H200}", *figures)
    if width == 200:
        for figure in ("1210.1-1271.2 us", "612.3 TFLOP/s", "3012 GB/s", "96.4%", "2025-03-04"):
            assert figure in text
        assert "not shown" not in text
    else:
        assert "not shown at this width: p20-p80, shapes, throughput, copy %, date" in text


@pytest.fixture(scope="module")
def every_table(puzzles_root) -> dict:
    specs, best = catalogue(puzzles_root)
    return {
        "list": pages.puzzle_list(specs, best),
        "run": report.run_report(run(), rank=(2, 17)),
        "bench": tables.catalogue_table(bench_rows(), interpreted=False),
        "grade": tables.class_tables(class_tables()),
        "leaderboard": tables.leaderboard_table(leaderboard()),
    }


def test_every_width_from_80_to_200_keeps_ids_names_and_figures_whole(puzzles_root, every_table):
    ids = [s.id for s in catalogue(puzzles_root)[0]]
    whole = (*ids, *STUDENTS, *SUBMITTERS, H100, "12345.6 us", "123456.7 us", "1209.8-1271.5 us")
    for width in (*range(80, 201, 6), 80):  # the same tables printed again, at each width
        text = "".join(render(table, width) for table in every_table.values())
        assert_fits(text, width, *whole)


def test_a_terminal_narrower_than_80_still_gets_every_table(every_table):
    for name, table in every_table.items():
        assert render(table, 40).strip(), name


def test_the_cli_console_takes_the_terminal_width(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    make_console().print(tables.catalogue_table(bench_rows(), interpreted=False))
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "mean_squared_error" in out and "not shown at this width" in out
