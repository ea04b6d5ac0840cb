"""Rich rendering of many runs: the catalogue's table, the leaderboard, a class's tables, and a
batch's progress. No decisions are made here."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial

from rich.console import Console, Group
from rich.padding import Padding
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from judge.cli.render import (
    DIFFICULTY_COLOURS,
    VerdictMark,
    add_columns,
    dim,
    fmt,
    left_out,
    narrowing,
    versus,
)
from judge.records.batches import Tick
from judge.records.store import Entry

BENCH = ("puzzle", "difficulty", "verdict", "score", "throughput", "copy %", "peak %", "vs library")
# what a narrow terminal does without, a step at a time ("shapes": the count beside the score)
BENCH_NARROWER = (("difficulty", "shapes"), ("copy %",), ("throughput",), ("vs library",))


def catalogue_table(rows, interpreted: bool) -> Group:
    """`tpuzzle bench`: one row per puzzle, and one per benchmark shape under a score of several."""
    devices = sorted({r.device for r in rows})
    parts = [
        narrowing(partial(_catalogue, rows), BENCH_NARROWER),
        Text(f"device: {', '.join(devices)}", style="dim"),
    ]
    if interpreted:
        parts.append(
            Text(
                "Interpreter mode: correctness only; no timings are taken and nothing is ranked.",
                style="italic",
            )
        )
    return Group(*parts)


def _catalogue(rows, omit: frozenset[str]) -> list:
    columns = [c for c in BENCH if c not in omit]
    table = Table(title="tpuzzle bench", title_justify="left")
    add_columns(table, columns, {"puzzle", "difficulty", "verdict"}, {"puzzle", "verdict"})
    for r in rows:
        verdict = VerdictMark(r.verdict, r.reason if r.verdict != "passed" else "")
        shapes = f" ({r.shapes} shapes)" if r.shapes > 1 and "shapes" not in omit else ""
        cells = {
            "puzzle": r.puzzle,
            "difficulty": Text(r.difficulty, style=DIFFICULTY_COLOURS[r.difficulty]),
            "verdict": verdict,
            "score": fmt(r.median_ms and r.median_ms * 1e3, "{:.1f} us") + shapes,
            "throughput": r.throughput or "-",
            "copy %": fmt(r.copy_pct, "{:.1f}%"),
            "peak %": fmt(r.sol_pct, "{:.1f}%"),
            "vs library": fmt(r.speedup, "{:.2f}x"),
        }
        table.add_row(*(cells[c] for c in columns))
        for t in r.per_shape:  # the shapes the score is the geometric mean of
            cells = {
                "puzzle": Padding(Text(t.case, style="dim"), (0, 0, 0, 2)),
                "score": f"{t.median_ms * 1e3:.1f} us",
                "throughput": t.throughput or "-",
                "copy %": fmt(t.copy_pct, "{:.1f}%"),
                "peak %": fmt(t.sol_pct, "{:.1f}%"),
                "vs library": versus(t.speedup_vs_library, ""),
            }
            table.add_row(*(dim(cells.get(c, "")) for c in columns))
    return [table, *left_out(omit, BENCH)]


LEADERBOARD = (
    "rank",
    "submitter",
    "score",
    "p20-p80",
    "shapes",
    "throughput",
    "copy %",
    "peak %",
    "vs library",
    "date",
)
LEADERBOARD_NARROWER = (("shapes",), ("p20-p80",), ("copy %",), ("date",), ("throughput",))


def leaderboard_table(entries: list[Entry], puzzle: str | None = None) -> Group:
    """`tpuzzle leaderboard`: one table per (puzzle, GPU model), fastest first."""
    if not entries:
        return Group(
            Text(f"No ranked results yet{f' for {puzzle}' if puzzle else ''}.", style="bold"),
            Text(
                "Runs on the CPU interpreter are never ranked; run "
                f"`tpuzzle run {puzzle or 'PUZZLE'} FILE` on a GPU to enter the leaderboard."
            ),
        )
    groups: dict[tuple[str, str], list[Entry]] = {}
    for e in entries:
        groups.setdefault((e.puzzle, e.device), []).append(e)

    def layout(omit: frozenset[str]) -> list:
        tables = [_leaderboard_group(p, d, rows, omit) for (p, d), rows in groups.items()]
        return [*tables, *left_out(omit, LEADERBOARD)]

    return Group(narrowing(layout, LEADERBOARD_NARROWER))


def _leaderboard_group(
    puzzle: str, device: str, entries: list[Entry], omit: frozenset[str]
) -> Table:
    columns = [c for c in LEADERBOARD if c not in omit]
    table = Table(title=f"{puzzle} · {device}", title_justify="left")
    add_columns(table, columns, {"submitter", "date"}, set())
    for e in entries:
        cells = {
            "rank": f"{e.rank}{'=' if e.tie else ''}",
            "submitter": e.submitter,
            "score": f"{e.median_ms * 1e3:.1f} us",
            "p20-p80": f"{e.p20_ms * 1e3:.1f}-{e.p80_ms * 1e3:.1f} us",
            "shapes": fmt(e.shapes, "{}"),
            "throughput": _rate(e.gbps, e.tflops),
            "copy %": fmt(e.copy_pct, "{:.1f}%"),
            "peak %": fmt(e.sol_pct, "{:.1f}%"),
            "vs library": fmt(e.speedup, "{:.2f}x"),
            "date": e.created_at[:10],
        }
        table.add_row(*(cells[c] for c in columns))
    if any(e.tie for e in entries):
        table.caption = '"=" marks a tie: scores within each other\'s p20-p80 spread'
    return table


# ----------------------------------------------------------------------------------- grading


CLASS = ("rank", "student", "GPU", "verdict", "cases", "score", "p20-p80", "peak %", "vs library")
# a narrow terminal puts the GPU under the student, then does without figures, a step at a time
CLASS_NARROWER = (("GPU",), ("p20-p80",), ("vs library",), ("peak %",), ("cases",))


def class_tables(tables: dict) -> Group:
    """`tpuzzle grade`: one table per puzzle, from grading.class_table (rows ranked per GPU)."""
    if not tables:
        return Group(Text("No submissions graded.", style="bold"))

    def layout(omit: frozenset[str]) -> list:
        shown = [_class_table(puzzle, rows, omit) for puzzle, rows in tables.items()]
        return [*shown, *left_out(omit - {"GPU"}, CLASS)]

    return Group(narrowing(layout, CLASS_NARROWER))


def _class_table(puzzle: str, rows: list, omit: frozenset[str]) -> Table:
    several = len({r.device for r in rows if r.rank is not None}) > 1
    timed = any(r.median_ms is not None for r in rows)
    table = Table(title=f"{puzzle} · {len(rows)} submission(s)", title_justify="left")
    columns = [c for c in CLASS[:5] if c not in omit and (c != "GPU" or several)]
    columns += [c for c in CLASS[5:] if c not in omit] if timed else []
    add_columns(table, columns, {"student", "GPU", "verdict"}, {"GPU", "verdict"})
    for r in rows:
        why = r.reason if r.verdict != "passed" else ("not ranked" if r.rank is None else "")
        verdict = VerdictMark(r.verdict, why if timed or r.verdict != "passed" else "")
        student = Text(r.student)
        if several and "GPU" in omit:  # the GPU under the name
            student.append(f"\n{r.device}", style="dim")
        cells = {
            "rank": "-" if r.rank is None else f"{r.rank}{'=' if r.tie else ''}",
            "student": student,
            "GPU": r.device,
            "verdict": verdict,
            "cases": f"{r.cases_passed}/{r.cases_total}",
            "score": fmt(r.median_ms and r.median_ms * 1e3, "{:.1f} us"),
            "p20-p80": "-" if r.p20_ms is None else f"{r.p20_ms * 1e3:.1f}-{r.p80_ms * 1e3:.1f} us",
            "peak %": fmt(r.sol_pct, "{:.1f}%"),
            "vs library": fmt(r.speedup, "{:.2f}x"),
        }
        table.add_row(*(cells[c] for c in columns))
    if any(r.tie for r in rows):
        table.caption = '"=" marks a tie: scores within each other\'s p20-p80 spread'
    return table


def _rate(gbps: float | None, tflops: float | None) -> str:
    if gbps is not None:
        return f"{gbps:.0f} GB/s"
    return f"{tflops:.1f} TFLOP/s" if tflops is not None else "-"


# ----------------------------------------------------------------------------------- progress


@contextmanager
def batch_progress() -> Iterator[Callable[[Tick], None]]:
    """Where a batch shows how far it got: on stderr in every mode, so that --json output on stdout
    stays clean. A live bar on a terminal; elsewhere (CI logs, pipes) one plain line per decided
    submission, printed as it is decided."""
    if not Console(stderr=True).is_terminal:
        yield _print_line
        return
    bar = _bar()
    tasks: list = []

    def show(tick: Tick) -> None:
        if not tasks:  # the bar appears once the batch starts, after every usage error
            bar.start()
            tasks.append(bar.add_task("judging", total=tick.total))
        described = f"{tick.label}: {tick.report.verdict.value}" if tick.report else "judging"
        bar.update(tasks[0], completed=tick.done, description=described)

    try:
        yield show
    finally:
        bar.stop()


def progress_line(tick: Tick) -> str:
    """One plain line for a log: "[3/27] softmax: passed 40.1 us, 12.3 s elapsed"."""
    r = tick.report
    if r is None:
        return f"judging {tick.total} submission(s)"
    if r.passed:
        outcome = "passed" + (f" {r.figure.ms * 1e3:.1f} us" if r.figure else "")
    else:
        outcome = f"{r.verdict.value} ({r.reason})"
    if tick.resumed:
        outcome += ", from the database"
    return f"[{tick.done}/{tick.total}] {tick.label}: {outcome}, {tick.elapsed_s:.1f} s elapsed"


def _print_line(tick: Tick) -> None:
    print(progress_line(tick), file=sys.stderr, flush=True)


def _bar() -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=False,
    )
