"""The pieces every rendering shares: colours, number formats, and tables that narrow to fit
the terminal (a column at a time, as `Fitted` tries them). No decisions are made here."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

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


class VerdictMark:
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
            if all(fit(t, console, options) for t in parts if isinstance(t, Table)):
                break
        yield from parts


def narrowing(build: Callable[[frozenset[str]], list], steps: Iterable[tuple[str, ...]]) -> Fitted:
    """build(omit) for nothing omitted, then with each step's columns left out as well."""
    omits = [frozenset()]
    for step in steps:
        omits.append(omits[-1] | set(step))
    return Fitted(*(partial(build, omit) for omit in omits))


def left_out(omit: frozenset[str], columns: Iterable[str]) -> list[Text]:
    """The line under a table that says which of its columns did not fit."""
    gone = [c for c in columns if c in omit]
    if not gone:
        return []
    return [Text(f"not shown at this width: {', '.join(gone)}", style="dim")]


def fit(table: Table, console: Console, options: ConsoleOptions) -> bool:
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


def add_columns(table: Table, names: Iterable[str], left: set[str], wrap: set[str]) -> None:
    """Right-aligned figures unless named in `left`; only the columns in `wrap` may wrap."""
    for name in names:
        table.add_column(
            name, justify="left" if name in left else "right", no_wrap=name not in wrap
        )


def versus(ratio: float | None, library: str) -> str:
    return fmt(ratio, "{:.2f}x") + (f" {library}" if ratio is not None and library else "")


def dim(cell: RenderableType) -> RenderableType:
    return Text(cell, style="dim") if isinstance(cell, str) else cell


def console(width: int | None = None, stderr: bool = False) -> Console:
    return Console(width=width, highlight=False, stderr=stderr)
