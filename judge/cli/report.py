"""Rich rendering of one run: its verdict, cases, failures, timings and the machine. No decisions
are made here."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from judge.cli.render import (
    COLOURS,
    Fitted,
    add_columns,
    fmt,
    verdict_text,
    versus,
)
from judge.core.results import CaseResult, RunReport, Timing, Verdict


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


def _cases_table(cases: tuple[CaseResult, ...]) -> Fitted:
    return Fitted(lambda: [_cases_rows(cases)])


def _cases_rows(cases: tuple[CaseResult, ...]) -> Table:
    table = Table(title="cases", title_justify="left", expand=False)
    add_columns(table, ("case", "seed", "status", "max error"), {"case", "status"}, {"case"})
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
    if b.mismatches and b.max_error_index >= 0:  # none where the puzzle's own check judges
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


TIMES = ("median", "p20-p80", "host/launches")  # a shape's times
RATES = ("throughput", "copy %", "peak %", "vs library")  # and how they compare


def _timing_table(report: RunReport, rank: tuple[int, int] | None) -> Fitted:
    """A row per benchmark shape, then the score over every shape, and how the times were
    taken: one table where it fits, else the times and the comparisons in two."""
    caption = f"rank {rank[0]} of {rank[1]} on this GPU model (local results)" if rank else None
    title = "timing (device time per call, replayed)"
    libraries = sorted({t.library for t in report.timing if t.library})
    return Fitted(
        lambda: [
            _timing_rows(report, title, (*TIMES, *RATES), caption, named=True),
            *_timing_notes(report),
        ],
        lambda: [
            _timing_rows(report, title, TIMES, caption),
            _timing_rows(report, "against a copy, the peak and the library", RATES, None),
            *_timing_notes(report, libraries),
        ],
    )


def _timing_rows(
    report: RunReport,
    title: str,
    columns: tuple[str, ...],
    caption: str | None,
    named: bool = False,  # the library's name beside its ratio
) -> Table:
    table = Table(title=title, title_justify="left", caption=caption)
    add_columns(table, ("benchmark", *columns), {"benchmark"}, {"benchmark", "vs library"})
    for t in report.timing:
        cells = {
            "median": f"{t.median_ms * 1e3:.1f} us",
            "p20-p80": f"{t.p20_ms * 1e3:.1f}-{t.p80_ms * 1e3:.1f} us",
            "host/launches": _host(t),
            "throughput": t.throughput or "-",
            "copy %": fmt(t.copy_pct, "{:.1f}%"),
            "peak %": fmt(t.sol_pct, "{:.1f}%") + (" (above!)" if t.above_speed_of_light else ""),
            "vs library": versus(t.speedup_vs_library, t.library if named else ""),
        }
        table.add_row(t.case, *(cells[c] for c in columns))
    if report.score is not None:
        sc = report.score
        table.add_section()
        cells = {
            "median": Text(f"{sc.ms * 1e3:.1f} us", style="bold"),
            "p20-p80": f"{sc.p20_ms * 1e3:.1f}-{sc.p80_ms * 1e3:.1f} us",
            "copy %": fmt(sc.copy_pct, "{:.1f}%"),
            "peak %": fmt(sc.sol_pct, "{:.1f}%"),
            "vs library": versus(sc.speedup_vs_library, ""),
        }
        shapes = f"score ({sc.shapes} shape{'s' if sc.shapes > 1 else ''})"
        table.add_row(Text(shapes, style="bold"), *(cells.get(c, "") for c in columns))
    return table


def _timing_notes(report: RunReport, libraries: list[str] | None = None) -> list[Text]:
    """What the columns mean, what one call launched, and how the times were taken.
    `libraries`: the library calls, named here when their column has only the ratios."""
    versus = "the fastest library call for the same work"
    if libraries:
        versus += f": {', '.join(libraries)}"
    lines = [
        Text(
            "host/launches: the replay's host time for one call and the kernels it "
            "launches; copy %: of a device copy moving the same bytes; peak %: of the device's "
            f"measured peak; vs library: {versus}",
            style="dim",
        ),
        *_launched(report),
    ]
    if report.score is not None:
        lines.append(
            Text(
                "score: the geometric mean of the shapes' medians, each at least its "
                "speed-of-light time; what the run ranks on" + _floored(report),
                style="dim",
            )
        )
    if report.method:
        lines.append(Text(f"timed: {report.method}", style="dim"))
    return lines


def _floored(report: RunReport) -> str:
    """The shapes whose median beat the device's measured peak, which the score counts at their
    speed-of-light time instead: why a score can read slower than every median."""
    under = [t for t in report.timing if t.floor_ms and t.median_ms < t.floor_ms]
    return "".join(
        f"; {t.case} ran faster than the device's measured peak and counts "
        f"{t.floor_ms * 1e3:.1f} us"
        for t in under
    )


def _host(t: Timing) -> str:
    """Host time of one call and the device work it launches, e.g. "48 us / 1"."""
    if t.host_ms is None:
        return "-"
    launches = f" / {t.launches:g}" if t.launches is not None else ""
    return f"{t.host_ms * 1e3:.0f} us{launches}"


def _env_line(report: RunReport) -> Group:
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
    lines: list = [_Pieces([b for b in bits if b], style="dim")]
    if e.unconfined:
        lines.append(Text(unconfined_line(e.unconfined), style="yellow"))
    return Group(*lines)


class _Pieces:
    """Pieces joined by " · ", the line broken between pieces only (a GPU's name, a version and
    a figure stay whole)."""

    def __init__(self, pieces: list[str], style: str = "") -> None:
        self.pieces, self.style = pieces, style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = self.pieces[:1]
        for piece in self.pieces[1:]:
            if len(lines[-1]) + len(" · ") + len(piece) > options.max_width:
                lines.append(piece)
            else:
                lines[-1] += f" · {piece}"
        yield Text("\n".join(lines), style=self.style)


def unconfined_line(missing: dict[str, str]) -> str:
    """One line naming what the workers ran without (see judge.workers.confine)."""
    from judge.workers.confine import describe

    return f"the submission's worker ran unconfined in part ({describe(missing)})"
