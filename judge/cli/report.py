"""Rich rendering of results: tables, panels, colours. No decisions are made here."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.panel import Panel
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


class _Verdict:
    """A verdict and, in parentheses, why: on one line where it fits, else the why whole on the
    next line."""

    def __init__(self, verdict: str, why: str = "") -> None:
        self.verdict, self.why = verdict, f"({why})" if why else ""

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        whole = len(self.verdict) + (len(self.why) + 1 if self.why else 0)
        return Measurement(max(len(self.verdict), len(self.why)), whole)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = Text(self.verdict, style=COLOURS.get(self.verdict, ""))
        if self.why:
            fits = self.__rich_measure__(console, options).maximum <= options.max_width
            text.append((" " if fits else "\n") + self.why, style="dim")
        yield text


def fmt(value: float | None, pattern: str = "{:.3g}", missing: str = "-") -> str:
    return missing if value is None else pattern.format(value)


# ----------------------------------------------------------------------------------- width


class Fitted:
    """Tables laid out for the width they are printed at: the first of `layouts` in which every
    table fits, its ids, names and figures (its no_wrap columns) whole and its text columns
    wrapped between words; the last layout when none fits. A layout is a list of renderables
    (tables, and the lines under them), built anew at each print."""

    def __init__(self, *layouts: Callable[[], list[RenderableType]]) -> None:
        self.layouts = layouts

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for layout in self.layouts:
            parts = layout()
            if all(_fit(t, console, options) for t in parts if isinstance(t, Table)):
                break
        yield from parts


def _narrowing(build: Callable[[frozenset[str]], list], steps: Iterable[tuple[str, ...]]) -> Fitted:
    """build(omit) for nothing omitted, then with each step's columns left out as well."""
    omits = [frozenset()]
    for step in steps:
        omits.append(omits[-1] | set(step))
    return Fitted(*(partial(build, omit) for omit in omits))


def _left_out(omit: frozenset[str], columns: Iterable[str]) -> list[Text]:
    """The line under a table that says which of its columns did not fit."""
    gone = [c for c in columns if c in omit]
    if not gone:
        return []
    return [Text(f"not shown at this width: {', '.join(gone)}", style="dim")]


def _fit(table: Table, console: Console, options: ConsoleOptions) -> bool:
    """Give the columns that may wrap widths that fit the terminal, each at least its longest
    word; False when the columns that may not wrap leave too little room."""
    free = options.update_width(10_000)
    wrapping = [column for column in table.columns if not column.no_wrap]
    cells = [
        [Measurement.get(console, free, cell) for cell in (column.header, *column.cells)]
        for column in wrapping
    ]
    natural = Measurement.get(console, free, table).maximum  # every cell, padding and borders
    room = options.max_width - natural + sum(max(m.maximum for m in c) for c in cells)
    widths = [max(m.minimum for m in c) for c in cells]
    if room < sum(widths):
        return False
    while sum(widths) < room:  # a column more to the one with the most cells wrapped
        wrapped = [sum(m.maximum > w for m in c) for c, w in zip(cells, widths, strict=True)]
        most = max(range(len(widths)), key=lambda i: (wrapped[i], -widths[i]), default=None)
        if most is None or not wrapped[most]:
            break
        widths[most] += 1
    for column, width in zip(wrapping, widths, strict=True):
        column.max_width = width
    return True


def _add_columns(table: Table, names: Iterable[str], left: set[str], wrap: set[str]) -> None:
    """Right-aligned figures unless named in `left`; only the columns in `wrap` may wrap."""
    for name in names:
        table.add_column(
            name, justify="left" if name in left else "right", no_wrap=name not in wrap
        )


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


def _cases_table(cases: tuple[CaseResult, ...]) -> Fitted:
    return Fitted(lambda: [_cases_rows(cases)])


def _cases_rows(cases: tuple[CaseResult, ...]) -> Table:
    table = Table(title="cases", title_justify="left", expand=False)
    _add_columns(table, ("case", "seed", "status", "max error"), {"case", "status"}, {"case"})
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
    _add_columns(table, ("benchmark", *columns), {"benchmark"}, {"benchmark", "vs library"})
    for t in report.timing:
        cells = {
            "median": f"{t.median_ms * 1e3:.1f} us",
            "p20-p80": f"{t.p20_ms * 1e3:.1f}-{t.p80_ms * 1e3:.1f} us",
            "host/launches": _host(t),
            "throughput": t.throughput or "-",
            "copy %": fmt(t.copy_pct, "{:.1f}%"),
            "peak %": fmt(t.sol_pct, "{:.1f}%") + (" (above!)" if t.above_speed_of_light else ""),
            "vs library": _versus(t.speedup_vs_library, t.library if named else ""),
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
            "vs library": _versus(sc.speedup_vs_library, ""),
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
                "speed-of-light time; what the run ranks on",
                style="dim",
            )
        )
    if report.method:
        lines.append(Text(f"timed: {report.method}", style="dim"))
    return lines


def _host(t: Timing) -> str:
    """Host time of one call and the device work it launches, e.g. "48 us / 1"."""
    if t.host_ms is None:
        return "-"
    launches = f" / {t.launches:g}" if t.launches is not None else ""
    return f"{t.host_ms * 1e3:.0f} us{launches}"


def _versus(ratio: float | None, library: str) -> str:
    return fmt(ratio, "{:.2f}x") + (f" {library}" if ratio is not None and library else "")


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


# ----------------------------------------------------------------------------------- catalogue


# what a narrow terminal does without: the source (the id's prefix names it), then a best result
# on one line (its verdict goes above its time)
LIST_NARROWER = (("source",), ("one line",))


def puzzle_list(specs: list[PuzzleSpec], best: dict[str, Best]) -> Fitted:
    return _narrowing(partial(_puzzle_rows, specs, best), LIST_NARROWER)


def _puzzle_rows(specs: list[PuzzleSpec], best: dict[str, Best], omit: frozenset[str]) -> list:
    table = Table(title="tpuzzle puzzles", title_justify="left")
    imported = any(s.source for s in specs) and "source" not in omit
    columns = ["id", "difficulty", "title", *(["source"] * imported), "your best"]
    _add_columns(table, columns, set(columns), {"title"})
    for s in specs:
        b = best.get(s.id)
        mine = Text("-", style="dim")
        if b is not None:
            timed = f" {b.median_ms * 1e3:.1f} us" if b.median_ms is not None else ""
            if "one line" in omit:
                timed = timed.replace(" ", "\n", 1)
            mine = Text(f"{b.verdict}{timed}", style=COLOURS.get(b.verdict, ""))
        source = [Text(s.source.kind if s.source else "tpuzzle", style="dim")] * imported
        table.add_row(
            s.id, Text(s.difficulty, style=DIFFICULTY_COLOURS[s.difficulty]), s.title, *source, mine
        )
    return [table, *_left_out(omit, ["source"] * any(s.source for s in specs))]


def puzzle_page(spec: PuzzleSpec) -> Group:
    from rich.markdown import Markdown  # with Pygments: only for the pages that show code
    from rich.syntax import Syntax

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


BENCH = ("puzzle", "difficulty", "verdict", "score", "throughput", "copy %", "peak %", "vs library")
# what a narrow terminal does without, a step at a time ("shapes": the count beside the score)
BENCH_NARROWER = (("difficulty", "shapes"), ("copy %",), ("throughput",), ("vs library",))


def catalogue_table(rows, interpreted: bool) -> Group:
    """`tpuzzle bench`: one row per puzzle, and one per benchmark shape under a score of several."""
    devices = sorted({r.device for r in rows})
    parts = [
        _narrowing(partial(_catalogue, rows), BENCH_NARROWER),
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
    _add_columns(table, columns, {"puzzle", "difficulty", "verdict"}, {"puzzle", "verdict"})
    for r in rows:
        verdict = _Verdict(r.verdict, r.reason if r.verdict != "passed" else "")
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
                "vs library": _versus(t.speedup_vs_library, ""),
            }
            table.add_row(*(_dim(cells.get(c, "")) for c in columns))
    return [table, *_left_out(omit, BENCH)]


def _dim(cell: RenderableType) -> RenderableType:
    return Text(cell, style="dim") if isinstance(cell, str) else cell


# ----------------------------------------------------------------------------------- leaderboard


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
        return [*tables, *_left_out(omit, LEADERBOARD)]

    return Group(_narrowing(layout, LEADERBOARD_NARROWER))


def _leaderboard_group(
    puzzle: str, device: str, entries: list[Entry], omit: frozenset[str]
) -> Table:
    columns = [c for c in LEADERBOARD if c not in omit]
    table = Table(title=f"{puzzle} · {device}", title_justify="left")
    _add_columns(table, columns, {"submitter", "date"}, set())
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
        return [*shown, *_left_out(omit - {"GPU"}, CLASS)]

    return Group(_narrowing(layout, CLASS_NARROWER))


def _class_table(puzzle: str, rows: list, omit: frozenset[str]) -> Table:
    several = len({r.device for r in rows if r.rank is not None}) > 1
    timed = any(r.median_ms is not None for r in rows)
    table = Table(title=f"{puzzle} · {len(rows)} submission(s)", title_justify="left")
    columns = [c for c in CLASS[:5] if c not in omit and (c != "GPU" or several)]
    columns += [c for c in CLASS[5:] if c not in omit] if timed else []
    _add_columns(table, columns, {"student", "GPU", "verdict"}, {"GPU", "verdict"})
    for r in rows:
        why = r.reason if r.verdict != "passed" else ("not ranked" if r.rank is None else "")
        verdict = _Verdict(r.verdict, why if timed or r.verdict != "passed" else "")
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


def console(width: int | None = None, stderr: bool = False) -> Console:
    return Console(width=width, highlight=False, stderr=stderr)
