from dataclasses import replace

from rich.console import Console
from test_results import sample_report

from judge.cli import pages, report, tables
from judge.core.results import Verdict
from judge.records.batches import Tick
from judge.records.store import Entry


def render(renderable) -> str:
    console = Console(width=120, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_run_report_shows_verdict_failure_and_timing():
    text = render(report.run_report(sample_report(), rank=(2, 5)))
    for expected in (
        "FAILED",
        "wrong-answer",
        "N=3",
        "hint: a hint",
        "reproduce: tpuzzle run",
        "100.0 us",
        "3000 GB/s",
        "95.0%",
        "97.0%",
        "1.20x torch.add",
        "48 us / 1",
        "score (1 shape)",
        "device time per call: the method in words",
        "rank 2 of 5",
        "NVIDIA H100",
    ):
        assert expected in text


def test_run_report_shows_what_one_call_launched_as_replayed():
    sample = sample_report()
    lines = tuple(f"kernel_{i} grid {i}x1x1" for i in range(8))
    timed = replace(sample, timing=(replace(sample.timing[0], replayed=lines),))
    text = render(report.run_report(timed, rank=None))
    assert "launched: kernel_0 grid 0x1x1; kernel_1 grid 1x1x1" in text
    assert "kernel_5 grid 5x1x1; and 2 more" in text and "kernel_6" not in text
    assert "launched:" not in render(report.run_report(sample, rank=None))


def test_a_shape_faster_than_the_measured_peak_says_what_the_score_counts_it_at():
    """A median under its shape's speed-of-light time counts at that time in the score, so the
    score reads slower than the median: the report says which shape and what it counts."""
    sample = sample_report()
    t = sample.timing[0]
    beyond = replace(sample, timing=(replace(t, floor_ms=t.median_ms * 1.02),))
    text = " ".join(render(report.run_report(beyond, rank=None)).split())
    assert f"{t.case} ran faster than the device's measured peak and counts 102.0 us" in text
    within = replace(sample, timing=(replace(t, floor_ms=t.median_ms * 0.98),))
    assert "faster than the device's measured peak" not in render(
        report.run_report(within, rank=None)
    )


def test_catalogue_and_puzzle_page(vector_add):
    assert "vector_add" in render(pages.puzzle_list([vector_add], {}))
    page = render(pages.puzzle_page(vector_add))
    for expected in ("solve(a_ptr, b_ptr, c_ptr, N)", "1 <= N <= 100,000,000", "example"):
        assert expected in page


def entry(submitter, rank, tie=False, **fields):
    base = dict(
        puzzle="vector_add",
        device="NVIDIA H100",
        submitter=submitter,
        median_ms=0.2,
        p20_ms=0.19,
        p80_ms=0.21,
        samples=100,
        gbps=3000.0,
        tflops=None,
        sol_pct=95.0,
        speedup=1.2,
        copy_pct=97.5,
        shapes=2,
        submission_sha256="ab" * 32,
        created_at="2025-03-04T05:06:07+00:00",
        run_id=1,
        rank=rank,
        tie=tie,
    )
    return Entry(**{**base, **fields})


def cells(text: str, word: str) -> list[str]:
    """The cells of the table row that contains word."""
    line = next(line for line in text.splitlines() if f" {word} " in line)
    return [c.strip() for c in line.strip("│ ").split("│")]


def test_leaderboard_table_one_table_per_puzzle_and_device():
    text = render(
        tables.leaderboard_table(
            [
                entry("ada", 1, tie=True),
                entry("bob", 1, tie=True, median_ms=0.205, speedup=None),
                entry("cyd", 3, median_ms=0.5, p20_ms=0.45, p80_ms=0.55, gbps=1234.4),
                entry("dan", 1, device="NVIDIA H200", median_ms=0.1),
                entry("eve", 1, puzzle="matmul", gbps=None, tflops=612.34, median_ms=2.0),
            ]
        )
    )
    assert "vector_add · NVIDIA H100" in text and "vector_add · NVIDIA H200" in text
    assert "matmul · NVIDIA H100" in text
    for name in ("rank", "submitter", "score", "p20-p80", "copy %", "peak %", "vs library"):
        assert name in text
    expected = ["1=", "ada", "200.0 us", "190.0-210.0 us", "2", "3000 GB/s", "97.5%", "95.0%"]
    assert cells(text, "ada") == [*expected, "1.20x", "2025-03-04"]
    assert cells(text, "bob")[:3] == ["1=", "bob", "205.0 us"] and cells(text, "bob")[8] == "-"
    assert cells(text, "cyd")[:6] == ["3", "cyd", "500.0 us", "450.0-550.0 us", "2", "1234 GB/s"]
    assert cells(text, "dan")[:3] == ["1", "dan", "100.0 us"]
    assert cells(text, "eve")[5] == "612.3 TFLOP/s"
    assert text.count("marks a tie") == 1  # the caption explains "=" only under a table with ties


def test_empty_leaderboard_says_how_to_get_ranked():
    text = render(tables.leaderboard_table([]))
    assert "No ranked results yet." in text
    assert "CPU interpreter are never ranked" in text and "`tpuzzle run PUZZLE FILE`" in text
    one = render(tables.leaderboard_table([], "vector_add"))
    assert "No ranked results yet for vector_add." in one
    assert "`tpuzzle run vector_add FILE` on a GPU" in one


def test_class_tables_rank_ties_and_drop_timing_columns_when_nothing_was_timed():
    from test_grading import graded

    from judge.records import grading

    timed = grading.class_table(
        [
            graded("ada", median=0.100),
            graded("bob", median=0.101),
            graded("cyd", verdict=report.Verdict.FAILED, reason="wrong-answer"),
        ]
    )
    text = render(tables.class_tables(timed))
    assert "vector_add · 3 submission(s)" in text and "1=" in text and "100.0 us" in text
    assert "failed (wrong-answer)" in text and "tie" in text
    untimed = render(tables.class_tables(grading.class_table([graded("ada")])))
    assert "score" not in untimed and "not ranked" not in untimed
    assert "No submissions graded." in render(tables.class_tables({}))


def test_bench_table_shows_the_score_and_each_shape_under_it(vector_add):
    from dataclasses import replace

    from test_results import sample_report

    from judge.core import bench
    from judge.records import catalogue

    base = sample_report()
    small = replace(base.timing[0], case="N=small", median_ms=0.01, floor_ms=None)
    large = replace(base.timing[0], case="N=large", median_ms=1.0, floor_ms=None, copy_pct=88.0)
    two = replace(base, timing=(small, large), score=bench.score((small, large)))
    text = render(tables.catalogue_table([catalogue.row(vector_add, two)], interpreted=False))
    assert "100.0 us (2 shapes)" in text  # the geometric mean of 10 us and 1000 us
    assert "N=small" in text and "N=large" in text and "88.0%" in text
    one = render(tables.catalogue_table([catalogue.row(vector_add, base)], interpreted=False))
    assert "N=25M" not in one  # a single shape is the score: no row of its own


def tick(done=3, report=None, **fields):
    return Tick(done=done, total=27, elapsed_s=12.34, label="softmax", report=report, **fields)


def test_progress_line_says_what_was_decided_and_when():
    failed = sample_report()  # failed, wrong-answer
    passed = replace(failed, verdict=Verdict.PASSED, reason="ok")
    untimed = replace(passed, timing=(), score=None)
    assert tables.progress_line(tick(0)) == "judging 27 submission(s)"
    assert tables.progress_line(tick(3, passed)) == (
        "[3/27] softmax: passed 100.0 us, 12.3 s elapsed"
    )
    assert tables.progress_line(tick(4, failed)) == (
        "[4/27] softmax: failed (wrong-answer), 12.3 s elapsed"
    )
    assert tables.progress_line(tick(5, untimed, resumed=True)) == (
        "[5/27] softmax: passed, from the database, 12.3 s elapsed"
    )


def test_batch_progress_off_a_terminal_prints_one_line_per_tick(capsys):
    with tables.batch_progress() as show:
        show(tick(0))
        show(tick(1, sample_report()))
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "judging 27 submission(s)",
        "[1/27] softmax: failed (wrong-answer), 12.3 s elapsed",
    ]


def test_batch_progress_on_a_terminal_draws_a_bar(capsys, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich takes stderr for a terminal
    with tables.batch_progress() as show:
        show(tick(0))
        show(tick(1, sample_report()))
    captured = capsys.readouterr()
    assert captured.out == "" and "[1/27]" not in captured.err
    assert "softmax: failed" in captured.err and "1/27" in captured.err
