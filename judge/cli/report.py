"""Rich rendering of results: tables, panels, colours. No decisions are made here."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console, Group
from rich.markdown import Markdown
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from judge.core.results import CaseResult, RunReport, Timing, Verdict
from judge.core.spec import PuzzleSpec
from judge.records.batches import Tick
from judge.records.store import Best, Entry

COLOURS = {
    "passed": "green",
    "failed": "red",
    "rejected": "magenta",
    "error": "yellow",
    "skipped": "dim",
}
DIFFICULTY_COLOURS = {"easy": "green", "medium": "yellow", "hard": "red"}


def verdict_text(verdict: str) -> Text:
    return Text(verdict.upper(), style=f"bold {COLOURS.get(verdict, 'white')}")


def fmt(value: float | None, pattern: str = "{:.3g}", missing: str = "-") -> str:
    return missing if value is None else pattern.format(value)


# ----------------------------------------------------------------------------------- run


def run_report(
    report: RunReport, rank: tuple[int, int] | None = None, show_output: bool = False
) -> Group:
    parts = [_headline(report), _cases_table(report.cases)]
    failing = next((c for c in report.cases if c.status in ("failed", "error")), None)
    if failing is not None:
        parts.append(_failure_panel(failing))
    if report.timing:
        parts.append(_timing_table(report, rank))
    parts.append(_env_line(report))
    parts += [Text(f"note: {n}", style="italic dim") for n in report.notes]
    if report.output.strip() and (show_output or report.verdict is Verdict.ERROR):
        parts.append(
            Panel(
                Text(report.output.strip()[-4000:]), title="submission output", border_style="dim"
            )
        )
    return Group(*parts)


def _headline(report: RunReport) -> Panel:
    passed = sum(c.status == "passed" for c in report.cases)
    body = Text.assemble(
        verdict_text(report.verdict.value),
        f"  {report.reason}\n",
        f"{report.message}\n",
        (
            f"{passed}/{len(report.cases)} cases passed · {report.wall_s:.1f} s"
            + (f" ({_phases(report.phases)})" if report.phases else ""),
            "dim",
        ),
    )
    return Panel(
        body,
        title=f"{report.puzzle} · {report.submission}",
        border_style=COLOURS[report.verdict.value],
    )


def _phases(phases: dict[str, float]) -> str:
    return ", ".join(f"{name} {seconds:.1f} s" for name, seconds in phases.items())


def _cases_table(cases: tuple[CaseResult, ...]) -> Table:
    table = Table(title="cases", title_justify="left", expand=False)
    for name in ("case", "seed", "status", "max error"):
        table.add_column(name, justify="right" if name in ("seed", "max error") else "left")
    for c in cases:
        table.add_row(
            c.name,
            "-" if c.hidden else str(c.seed),
            Text(c.status, style=COLOURS.get(c.status, "")),
            fmt(c.max_error, "{:.2e}"),
        )
    return table


def _failure_panel(case: CaseResult) -> Panel:
    if case.hidden:
        note = "a hidden case: its inputs, expected values and hints are not shown"
        return Panel(Text(note), title=f"first failing case: {case.name}", border_style="red")
    lines: list = []
    if case.message:
        lines.append(Text(case.message))
    for b in (b for b in case.buffers if not b.ok):
        lines.append(Text(_buffer_summary(b), style="bold"))
        if b.first:
            mism = Table(box=None, padding=(0, 2))
            for col in ("index", "got", "expected", "error"):
                mism.add_column(col, justify="right")
            for m in b.first:
                mism.add_row(str(m.index), f"{m.got:.7g}", f"{m.expected:.7g}", f"{m.error:.3g}")
            lines.append(mism)
    lines += [Text(f"hint: {h}", style="cyan") for h in case.hints]
    if case.reproduce:
        lines.append(Text.assemble(("reproduce: ", "dim"), case.reproduce))
    return Panel(
        Group(*lines),
        title=f"first failing case: {case.name} (seed {case.seed})",
        border_style="red",
    )


def _buffer_summary(b) -> str:
    if b.input_changed:
        return f"{b.name}: input changed in {b.input_changed} of {b.total} elements"
    parts = [
        f"{b.name}: {b.mismatches} of {b.total} elements wrong "
        f"({100.0 * b.mismatches / max(b.total, 1):.1f}%)"
    ]
    if b.mismatches:
        parts.append(f"max error {b.max_error:.3g} at index {b.max_error_index}")
    for count, what in (
        (b.unwritten, "never written"),
        (b.nan_count, "NaN"),
        (b.inf_count, "Inf"),
        (b.guard_before, "written before the start"),
        (b.guard_after, "written past the end"),
    ):
        if count:
            parts.append(f"{count} {what}")
    return ", ".join(parts)


SHOWN_LAUNCHES = 6  # lines of a shape's replayed sequence shown


def _launched(report: RunReport) -> list[Text]:
    """What one call of solve() launched, per shape, as the timer replayed it."""
    lines = []
    for t in report.timing:
        shown = list(t.replayed[:SHOWN_LAUNCHES])
        if len(t.replayed) > SHOWN_LAUNCHES:
            shown.append(f"and {len(t.replayed) - SHOWN_LAUNCHES} more")
        if shown:
            lines.append(Text(f"{t.case} launched: " + "; ".join(shown), style="dim"))
    return lines


def _timing_table(report: RunReport, rank: tuple[int, int] | None) -> Group:
    """A row per benchmark shape, then the score over every shape, and how the times were
    taken."""
    table = Table(title="timing (device time per call, replayed)", title_justify="left")
    for name in (
        "benchmark",
        "median",
        "p20-p80",
        "host/launches",
        "throughput",
        "copy %",
        "peak %",
        "vs library",
    ):
        table.add_column(name, justify="left" if name == "benchmark" else "right")
    for t in report.timing:
        table.add_row(
            t.case,
            f"{t.median_ms * 1e3:.1f} us",
            f"{t.p20_ms * 1e3:.1f}-{t.p80_ms * 1e3:.1f} us",
            _host(t),
            t.throughput or "-",
            fmt(t.copy_pct, "{:.1f}%"),
            fmt(t.sol_pct, "{:.1f}%") + (" (above!)" if t.above_speed_of_light else ""),
            _versus(t.speedup_vs_library, t.library),
        )
    if report.score is not None:
        sc = report.score
        table.add_section()
        table.add_row(
            Text(f"score ({sc.shapes} shape{'s' if sc.shapes > 1 else ''})", style="bold"),
            Text(f"{sc.ms * 1e3:.1f} us", style="bold"),
            f"{sc.p20_ms * 1e3:.1f}-{sc.p80_ms * 1e3:.1f} us",
            "",
            "",
            fmt(sc.copy_pct, "{:.1f}%"),
            fmt(sc.sol_pct, "{:.1f}%"),
            _versus(sc.speedup_vs_library, ""),
        )
    if rank is not None:
        table.caption = f"rank {rank[0]} of {rank[1]} on this GPU model (local results)"
    lines = [
        table,
        Text(
            "host/launches: the replay's host time for one call and the kernels it "
            "launches; copy %: of a device copy moving the same bytes; peak %: of the device's "
            "measured peak; vs library: the fastest library call for the same work",
            style="dim",
        ),
        *_launched(report),
    ]
    if report.score is not None:
        lines.append(
            Text(
                "score: the geometric mean of the shapes' medians, each at least its "
                "speed-of-light time; what the run ranks on",
                style="dim",
            )
        )
    if report.method:
        lines.append(Text(f"timed: {report.method}", style="dim"))
    return Group(*lines)


def _host(t: Timing) -> str:
    """Host time of one call and the device work it launches, e.g. "48 us / 1"."""
    if t.host_ms is None:
        return "-"
    launches = f" / {t.launches:g}" if t.launches is not None else ""
    return f"{t.host_ms * 1e3:.0f} us{launches}"


def _versus(ratio: float | None, library: str) -> str:
    return fmt(ratio, "{:.2f}x") + (f" {library}" if ratio is not None and library else "")


def _env_line(report: RunReport) -> Text:
    e = report.env
    bits = [
        e.device,
        f"driver {e.driver}" if e.driver else "",
        f"Triton {e.triton}",
        f"PyTorch {e.torch}",
        f"CUDA {e.cuda}" if e.cuda else "",
    ]
    if e.copy_gbps:
        bits.append(f"measured copy {e.copy_gbps:.0f} GB/s")
    line = Text(" · ".join(b for b in bits if b), style="dim")
    if e.unconfined:
        line.append("\n" + unconfined_line(e.unconfined), style="yellow")
    return line


def unconfined_line(missing: dict[str, str]) -> str:
    """One line naming what the workers ran without (see judge.isolation.confine)."""
    said = "; ".join(f"{name}: {why}" for name, why in missing.items())
    return f"the submission's worker ran unconfined in part ({said})"


# ----------------------------------------------------------------------------------- catalogue


def puzzle_list(specs: list[PuzzleSpec], best: dict[str, Best]) -> Table:
    table = Table(title="tpuzzle puzzles", title_justify="left")
    imported = any(s.source for s in specs)
    for name in ("id", "difficulty", "title", *(["source"] * imported), "your best"):
        table.add_column(name)
    for s in specs:
        b = best.get(s.id)
        mine = Text("-", style="dim")
        if b is not None:
            timed = f" {b.median_ms * 1e3:.1f} us" if b.median_ms is not None else ""
            mine = Text(f"{b.verdict}{timed}", style=COLOURS.get(b.verdict, ""))
        source = [Text(s.source.kind if s.source else "tpuzzle", style="dim")] * imported
        table.add_row(
            s.id, Text(s.difficulty, style=DIFFICULTY_COLOURS[s.difficulty]), s.title, *source, mine
        )
    return table


def puzzle_page(spec: PuzzleSpec) -> Group:
    args = Table(title="solve() arguments, in order", title_justify="left")
    for name in ("name", "role", "dtype", "shape"):
        args.add_column(name)
    for a in spec.args:
        kind = a.dtype or ("int" if a.role == "size" else "float")
        args.add_row(a.name, a.role, kind, " x ".join(a.shape) if a.shape else "")
    limits = ", ".join(f"{lo:,} <= {n} <= {hi:,}" for n, lo, hi in spec.limits)
    tol = spec.tolerance
    parts = [
        Panel(
            Markdown(spec.statement),
            title=f"{spec.id} · {spec.title}",
            subtitle=spec.difficulty,
            border_style=DIFFICULTY_COLOURS[spec.difficulty],
        ),
        Syntax(f"def {spec.signature}: ...", "python", theme="ansi_dark"),
        args,
        Text(f"limits: {limits}"),
        Text(f"tolerance: atol {_num(tol.atol)}, rtol {_num(tol.rtol)}. {tol.note}".strip()),
        Text(
            f"benchmark: {', '.join(c.name for c in spec.benchmarks) or '-'}; speed of light: "
            f"{spec.speed_of_light.formula} {spec.speed_of_light.measure}"
        ),
    ]
    if spec.example:
        parts.append(Panel(Text(spec.example), title="example", border_style="dim"))
    if spec.requires.any:
        parts.append(Text(f"requires: {_requires(spec)}"))
    if spec.hints:
        parts.append(Text(f"stuck? {len(spec.hints)} hints, one at a time: tpuzzle hint {spec.id}"))
    if spec.source is not None:
        parts.append(_source_panel(spec))
    return Group(*parts)


def _requires(spec: PuzzleSpec) -> str:
    needs = spec.requires
    said = [f"compute capability {needs.capability[0]}.{needs.capability[1]}"]
    said += ["bfloat16"] * needs.bf16 + ["float16 tensor cores"] * needs.fp16_tensor_cores
    said += [f"{needs.shared_memory_kb} KiB of shared memory per block"] * bool(
        needs.shared_memory_kb
    )
    return ", ".join(said)


def hint_panels(spec: PuzzleSpec, shown: int) -> Group:
    """The first `shown` hints of the puzzle's ladder, the newest last and brightest."""
    total = len(spec.hints)
    panels = [
        Panel(
            Text(h),
            title=f"{spec.id} · hint {i + 1} of {total}",
            border_style="cyan" if i == shown - 1 else "dim",
        )
        for i, h in enumerate(spec.hints[:shown])
    ]
    if not panels:
        panels.append(Text(f"no hint seen yet: `tpuzzle hint {spec.id}` shows the first"))
    elif shown < total:
        panels.append(Text(f"{total - shown} more: `tpuzzle hint {spec.id}` again", style="dim"))
    return Group(*panels)


def _source_panel(spec: PuzzleSpec) -> Panel:
    src = spec.source
    lines = [
        f"imported from {src.kind}: {src.path}",
        f"repository {src.repository}, commit {src.commit}",
        f"licence: {src.licence}",
        "A private adaptation made on this machine by `tpuzzle import`: the source's licence "
        "governs it; do not share it where that licence does not allow.",
    ]
    return Panel(Text("\n".join(lines)), title="source", border_style="yellow")


def _num(value: float | str) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def catalogue_table(rows, interpreted: bool) -> Group:
    """`tpuzzle bench`: one row per puzzle."""
    table = Table(title="tpuzzle bench", title_justify="left")
    for name in (
        "puzzle",
        "difficulty",
        "verdict",
        "score",
        "throughput",
        "copy %",
        "peak %",
        "vs library",
    ):
        table.add_column(
            name, justify="left" if name in ("puzzle", "difficulty", "verdict") else "right"
        )
    for r in rows:
        verdict = Text(r.verdict, style=COLOURS.get(r.verdict, ""))
        if r.verdict != "passed":
            verdict.append(f" ({r.reason})", style="dim")
        table.add_row(
            r.puzzle,
            Text(r.difficulty, style=DIFFICULTY_COLOURS[r.difficulty]),
            verdict,
            fmt(r.median_ms and r.median_ms * 1e3, "{:.1f} us")
            + (f" ({r.shapes} shapes)" if r.shapes > 1 else ""),
            r.throughput or "-",
            fmt(r.copy_pct, "{:.1f}%"),
            fmt(r.sol_pct, "{:.1f}%"),
            fmt(r.speedup, "{:.2f}x"),
        )
        for t in r.per_shape:  # the shapes the score is the geometric mean of
            table.add_row(
                Text(f"  {t.case}", style="dim"),
                "",
                "",
                Text(f"{t.median_ms * 1e3:.1f} us", style="dim"),
                Text(t.throughput or "-", style="dim"),
                Text(fmt(t.copy_pct, "{:.1f}%"), style="dim"),
                Text(fmt(t.sol_pct, "{:.1f}%"), style="dim"),
                Text(_versus(t.speedup_vs_library, ""), style="dim"),
            )
    devices = sorted({r.device for r in rows})
    parts = [table, Text(f"device: {', '.join(devices)}", style="dim")]
    if interpreted:
        parts.append(
            Text(
                "Interpreter mode: correctness only; no timings are taken and nothing is ranked.",
                style="italic",
            )
        )
    return Group(*parts)


# ----------------------------------------------------------------------------------- leaderboard


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
    return Group(*(_leaderboard_group(p, d, rows) for (p, d), rows in groups.items()))


def _leaderboard_group(puzzle: str, device: str, entries: list[Entry]) -> Table:
    table = Table(title=f"{puzzle} · {device}", title_justify="left")
    for name in (
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
    ):
        table.add_column(name, justify="left" if name in ("submitter", "date") else "right")
    for e in entries:
        table.add_row(
            f"{e.rank}{'=' if e.tie else ''}",
            e.submitter,
            f"{e.median_ms * 1e3:.1f} us",
            f"{e.p20_ms * 1e3:.1f}-{e.p80_ms * 1e3:.1f} us",
            fmt(e.shapes, "{}"),
            _rate(e.gbps, e.tflops),
            fmt(e.copy_pct, "{:.1f}%"),
            fmt(e.sol_pct, "{:.1f}%"),
            fmt(e.speedup, "{:.2f}x"),
            e.created_at[:10],
        )
    if any(e.tie for e in entries):
        table.caption = '"=" marks a tie: scores within each other\'s p20-p80 spread'
    return table


# ----------------------------------------------------------------------------------- grading


def class_tables(tables: dict) -> Group:
    """`tpuzzle grade`: one table per puzzle, from grading.class_table (rows ranked per GPU)."""
    if not tables:
        return Group(Text("No submissions graded.", style="bold"))
    return Group(*(_class_table(puzzle, rows) for puzzle, rows in tables.items()))


def _class_table(puzzle: str, rows: list) -> Table:
    several = len({r.device for r in rows if r.rank is not None}) > 1
    timed = any(r.median_ms is not None for r in rows)
    table = Table(title=f"{puzzle} · {len(rows)} submission(s)", title_justify="left")
    columns = ["rank", "student", *(["GPU"] * several), "verdict", "cases"]
    columns += ["score", "p20-p80", "peak %", "vs library"] if timed else []
    for name in columns:
        table.add_column(name, justify="left" if name in ("student", "GPU", "verdict") else "right")
    for r in rows:
        verdict = Text(r.verdict, style=COLOURS.get(r.verdict, ""))
        if r.verdict != "passed":
            verdict.append(f" ({r.reason})", style="dim")
        elif r.rank is None and timed:
            verdict.append(" (not ranked)", style="dim")
        cells = ["-" if r.rank is None else f"{r.rank}{'=' if r.tie else ''}", r.student]
        cells += [r.device] * several + [verdict, f"{r.cases_passed}/{r.cases_total}"]
        if timed:
            cells += [
                fmt(r.median_ms and r.median_ms * 1e3, "{:.1f} us"),
                "-" if r.p20_ms is None else f"{r.p20_ms * 1e3:.1f}-{r.p80_ms * 1e3:.1f} us",
                fmt(r.sol_pct, "{:.1f}%"),
                fmt(r.speedup, "{:.2f}x"),
            ]
        table.add_row(*cells)
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


def console(width: int | None = None, stderr: bool = False) -> Console:
    return Console(width=width, highlight=False, stderr=stderr)
