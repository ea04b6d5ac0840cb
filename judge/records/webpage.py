"""A class leaderboard as one static, self-contained web page: `tpuzzle leaderboard --html` and
`tpuzzle grade --html`.

A page is a list of boards (one per puzzle and GPU model for the leaderboard, one per puzzle for a
graded class), each a table whose rows come in rank order and whose columns sort on a click. Every
row folds its benchmark shapes' own figures under its "shapes" cell. The page loads nothing: its
style and its one script are inline, and its Content-Security-Policy allows those two alone (by
hash), so that neither an injected script nor a request to the network would run.

Text from students (names) and from the judge is made plain (`escape.one_line`) and then
HTML-escaped; sort keys are JSON in an escaped attribute, which the script parses and never runs.

Pure: entries and reports in, a string out.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from judge.core.results import Timing
from judge.records import grading
from judge.records.escape import one_line, xml_text
from judge.records.store import Entry

TIE_NOTE = '"=" marks a tie: scores within each other\'s p20-p80 spread'
NUMERIC = frozenset(
    {"rank", "cases", "score", "median", "p20-p80", "shapes", "throughput", "copy %", "peak %"}
    | {"vs library"}
)


@dataclass(frozen=True)
class Cell:
    """One cell of a board."""

    text: str  # what it shows (escaped when written)
    key: float | str | None = None  # what its column sorts on; None sorts last either way
    shapes: tuple[Timing, ...] = ()  # the benchmark shapes folded under it (the shapes column)


@dataclass(frozen=True)
class Board:
    """One table of the page: its rows in rank order."""

    title: str  # e.g. "vector_add · NVIDIA H100"
    columns: tuple[str, ...]  # column names
    rows: tuple[tuple[Cell, ...], ...]  # one cell per column
    ties: bool = False  # some rows share a rank (the page says what "=" means)


# ------------------------------------------------------------------------------- the boards


def leaderboard_boards(
    entries: Sequence[Entry], shapes: Mapping[int, Sequence[Timing]] | None = None
) -> list[Board]:
    """One board per (puzzle, GPU model), in the entries' order; `shapes` holds each entry's
    benchmark shapes by run id (an entry without them shows its count alone)."""
    groups: dict[tuple[str, str], list[Entry]] = {}
    for e in entries:
        groups.setdefault((e.puzzle, e.device), []).append(e)
    columns = ("rank", "submitter", "score", "p20-p80", "shapes", "throughput", "copy %")
    columns += ("peak %", "vs library", "date")
    return [
        Board(
            f"{puzzle} · {device}",
            columns,
            tuple(_entry_cells(e, tuple((shapes or {}).get(e.run_id, ()))) for e in group),
            any(e.tie for e in group),
        )
        for (puzzle, device), group in groups.items()
    ]


def _entry_cells(e: Entry, timing: tuple[Timing, ...]) -> tuple[Cell, ...]:
    return (
        _rank(e.rank, e.tie),
        _name(e.submitter),
        _us(e.median_ms),
        _spread(e.p20_ms, e.p80_ms),
        Cell(_fmt(e.shapes, "{}"), _number(e.shapes), timing if len(timing) > 1 else ()),
        _rate(e.gbps, e.tflops),
        _pct(e.copy_pct),
        _pct(e.sol_pct),
        _ratio(e.speedup),
        Cell(one_line(e.created_at)[:10], one_line(e.created_at)),
    )


def class_boards(graded: Iterable[grading.Graded]) -> list[Board]:
    """One board per puzzle of a graded class, rows as `grading.class_table` ranks them (within
    each GPU model); the timing columns only where something was timed."""
    graded = list(graded)
    reports = {(g.submission.puzzle, g.submission.student): g.report for g in graded}
    boards = []
    for puzzle, rows in grading.class_table(graded).items():
        timed = any(r.median_ms is not None for r in rows)
        columns = ("rank", "student", "GPU", "verdict", "cases")
        columns += ("score", "p20-p80", "shapes", "copy %", "peak %", "vs library") * timed
        cells = []
        for r in rows:
            report = reports[(puzzle, r.student)]
            timing = report.timing if r.median_ms is not None else ()
            cells.append(_class_cells(r, timing, report.figure, timed))
        title = f"{puzzle} · {len(rows)} submission(s)"
        boards.append(Board(title, columns, tuple(cells), any(r.tie for r in rows)))
    return boards


def _class_cells(r: grading.Row, timing, figure, timed: bool) -> tuple[Cell, ...]:
    verdict = r.verdict if r.verdict == "passed" else f"{r.verdict} ({r.reason})"
    if r.verdict == "passed" and r.rank is None and timed:
        verdict += " (not ranked)"
    done = r.cases_passed / r.cases_total if r.cases_total else None
    cells = (
        _rank(r.rank, r.tie),
        _name(r.student),
        _name(r.device),
        Cell(one_line(verdict), one_line(r.verdict)),
        Cell(f"{r.cases_passed}/{r.cases_total}", done),
    )
    if not timed:
        return cells
    count = len(timing) if timing else None
    copy_pct = figure.copy_pct if timing else None  # a timed pass always has a figure
    return cells + (
        _us(r.median_ms),
        _spread(r.p20_ms, r.p80_ms),
        Cell(_fmt(count, "{}"), count, tuple(timing) if len(timing) > 1 else ()),
        _pct(copy_pct),
        _pct(r.sol_pct),
        _ratio(r.speedup),
    )


# ------------------------------------------------------------------------------- cells


def _number(value) -> float | None:
    """A finite number, else None (JSON has no NaN, and it sorts last)."""
    if value is None or isinstance(value, bool):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _fmt(value, pattern: str) -> str:
    number = _number(value)
    return "-" if number is None else pattern.format(value)


def _rank(rank: int | None, tie: bool) -> Cell:
    return Cell("-" if rank is None else f"{rank}{'=' if tie else ''}", rank)


def _name(text: str) -> Cell:
    shown = one_line(text)
    return Cell(shown, shown)


def _us(ms: float | None) -> Cell:
    us = None if _number(ms) is None else ms * 1e3
    return Cell(_fmt(us, "{:.1f} us"), _number(us))


def _spread(p20: float | None, p80: float | None) -> Cell:
    if _number(p20) is None or _number(p80) is None:
        return Cell("-")
    return Cell(f"{p20 * 1e3:.1f}-{p80 * 1e3:.1f} us", p20 * 1e3)


def _rate(gbps: float | None, tflops: float | None) -> Cell:
    if _number(gbps) is not None:
        return Cell(f"{gbps:.0f} GB/s", gbps)
    return Cell(_fmt(tflops, "{:.1f} TFLOP/s"), _number(tflops))


def _pct(value: float | None) -> Cell:
    return Cell(_fmt(value, "{:.1f}%"), _number(value))


def _ratio(value: float | None) -> Cell:
    return Cell(_fmt(value, "{:.2f}x"), _number(value))


# ------------------------------------------------------------------------------- the page


def leaderboard_page(
    entries: Sequence[Entry],
    shapes: Mapping[int, Sequence[Timing]] | None = None,
    puzzle: str | None = None,
    generated: str = "",
) -> str:
    """`tpuzzle leaderboard --html`: every (puzzle, GPU model), fastest first."""
    empty = (
        f"No ranked results yet{f' for {puzzle}' if puzzle else ''}. Runs on the CPU interpreter "
        f"are never ranked; run `tpuzzle run {puzzle or 'PUZZLE'} FILE` on a GPU to enter the "
        "leaderboard."
    )
    title = f"tpuzzle leaderboard{f' · {puzzle}' if puzzle else ''}"
    return page(title, leaderboard_boards(entries, shapes), empty, generated)


def class_page(
    graded: Iterable[grading.Graded], assignment: str = "tpuzzle", generated: str = ""
) -> str:
    """`tpuzzle grade --html`: a table per puzzle of the class."""
    graded = list(graded)
    notes = [generated] if generated else []
    if graded and all(g.report.env.mode == "interpreter" for g in graded):
        notes.append("Interpreter mode: correctness only; nothing is timed or ranked.")
    title = f"{assignment} · class results"
    return page(title, class_boards(graded), "No submissions graded.", " ".join(notes))


def page(title: str, boards: Sequence[Board], empty: str, note: str = "") -> str:
    """The whole document: a heading, a note, each board (or `empty` without one), the script."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_text(title)}</title>",
        f"<style>{STYLE}</style>",
        "</head>",
        "<body>",
        f"<h1>{_text(title)}</h1>",
    ]
    if note:
        parts.append(f'<p class="note">{_text(note)}</p>')
    parts += [_board(b) for b in boards] or [f'<p class="empty">{_text(empty)}</p>']
    parts += [f"<script>{SCRIPT}</script>", "</body>", "</html>", ""]
    return "\n".join(parts)


def _board(board: Board) -> str:
    head = "".join(
        f'<th scope="col"{_numeric(c)}><button type="button">{_text(c)}</button></th>'
        for c in board.columns
    )
    rows = "\n".join(
        f'<tr data-i="{i}">{"".join(map(_cell, cells, board.columns))}</tr>'
        for i, cells in enumerate(board.rows)
    )
    caption = f'\n<p class="caption">{_text(TIE_NOTE)}</p>' if board.ties else ""
    return (
        f'<section>\n<h2>{_text(board.title)}</h2>\n<table class="board">\n'
        f"<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n</tbody>\n</table>{caption}\n</section>"
    )


def _cell(cell: Cell, column: str) -> str:
    key = "" if cell.key is None else f' data-key="{_attr(_json_key(cell.key))}"'
    body = _text(cell.text)
    if cell.shapes:
        body = f"<details><summary>{body}</summary>{_shapes(cell.shapes)}</details>"
    return f"<td{_numeric(column)}{key}>{body}</td>"


def _json_key(key: float | str) -> str:
    if isinstance(key, str):
        return json.dumps(xml_text(one_line(key)))
    return json.dumps(_number(key), allow_nan=False)


def _shapes(timing: Sequence[Timing]) -> str:
    """The figures of each benchmark shape, a small table of its own."""
    columns = ("shape", "median", "p20-p80", "throughput", "copy %", "peak %", "vs library")
    head = "".join(f'<th scope="col"{_numeric(c)}>{_text(c)}</th>' for c in columns)
    rows = []
    for t in timing:
        cells = (
            _name(t.case),
            _us(t.median_ms),
            _spread(t.p20_ms, t.p80_ms),
            _rate(t.gbps, t.tflops),
            _pct(t.copy_pct),
            _pct(t.sol_pct),
            _ratio(t.speedup_vs_library),
        )
        tds = "".join(
            f"<td{_numeric(n)}>{_text(c.text)}</td>" for c, n in zip(cells, columns, strict=True)
        )
        rows.append(f"<tr>{tds}</tr>")
    body = "".join(rows)
    return f'<table class="shapes"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _numeric(column: str) -> str:
    return ' class="n"' if column in NUMERIC else ""


def _text(value: str) -> str:
    """Text shown as text: plain, one line, nothing HTML may read as markup."""
    return html.escape(xml_text(one_line(value)), quote=True)


def _attr(value: str) -> str:
    return html.escape(value, quote=True)


# ------------------------------------------------------------------------------- style and script

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 80em; padding: 0 1em;
       color: #1b1f24; background: #fff; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; }
.note, .caption, .empty { color: #57606a; }
table { border-collapse: collapse; }
table.board { width: 100%; }
th, td { padding: 0.3em 0.6em; border-bottom: 1px solid #d0d7de; text-align: left;
         vertical-align: top; }
.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th button { font: inherit; font-weight: 600; border: 0; background: none; padding: 0;
            cursor: pointer; color: inherit; }
th[aria-sort=ascending] button::after { content: " \\25B2"; }
th[aria-sort=descending] button::after { content: " \\25BC"; }
table.shapes { margin: 0.3em 0 0.3em auto; font-size: 0.9em; }
table.shapes th, table.shapes td { border-bottom: 1px solid #eaeef2; }
summary { cursor: pointer; }
"""

SCRIPT = """
"use strict";
(function () {
  function key(row, column) {
    var text = row.cells[column].getAttribute("data-key");
    return text === null ? null : JSON.parse(text);
  }
  function compare(a, b, column, ascending) {
    var x = key(a, column), y = key(b, column), c = 0;
    if (x === null || y === null) {
      c = x === y ? 0 : (x === null ? 1 : -1);
    } else {
      c = typeof x === "number" && typeof y === "number" ? x - y
        : String(x).localeCompare(String(y));
      c = ascending ? c : -c;
    }
    return c || Number(a.getAttribute("data-i")) - Number(b.getAttribute("data-i"));
  }
  document.querySelectorAll("table.board").forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, column) {
      th.querySelector("button").addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var body = table.tBodies[0];
        Array.prototype.slice.call(body.rows)
          .sort(function (a, b) { return compare(a, b, column, ascending); })
          .forEach(function (row) { body.appendChild(row); });
      });
    });
  });
})();
"""


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


# Only the page's own style and script may run; nothing may be fetched, framed or submitted.
POLICY = (
    f"default-src 'none'; style-src {_digest(STYLE)}; script-src {_digest(SCRIPT)}; "
    "base-uri 'none'; form-action 'none'"
)
