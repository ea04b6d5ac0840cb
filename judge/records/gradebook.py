"""The files of a graded class: one JSON document (and `merge`, which joins the documents of
several shards), JUnit XML for CI systems, a Markdown summary and a CSV gradebook with credit per
case.

Pure: graded reports in, text out.
"""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from judge import __version__
from judge.core.results import RunReport, Verdict, finite
from judge.errors import JudgeError
from judge.records import escape
from judge.records.grading import (
    Graded,
    Row,
    Submission,
    by_puzzle,
    cases_passed,
    class_table,
    headline,
    in_order,
    student_order,
)
from judge.records.scoring import PuzzleMark, StudentMark

FORMAT = "tpuzzle-grading"  # the "format" key of a grading document
FORMAT_VERSION = 1
CASES_SHOWN = 5  # failing cases spelled out in a JUnit failure


# ------------------------------------------------------------------------------- JSON and merging


def grading_meta(secret_seed: bool, shard: tuple[int, int] | None = None) -> dict[str, Any]:
    """The usual meta of a grading document: judge version, secret-seed flag, shard "K/N"."""
    return {
        "judge_version": __version__,
        "secret_seed": secret_seed,
        "shard": f"{shard[0]}/{shard[1]}" if shard else None,
    }


def to_json(graded: Iterable[Graded], meta: Mapping[str, Any] | None = None) -> str:
    """One grading document; entries sorted by (student, puzzle); NaN and Infinity as null."""
    document = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "meta": dict(meta or {}),
        "entries": [_entry(g) for g in in_order(graded)],
    }
    return json.dumps(finite(document), indent=2, allow_nan=False) + "\n"


def _entry(g: Graded) -> dict[str, Any]:
    s = g.submission
    return {
        "student": s.student,
        "puzzle": s.puzzle,
        "path": str(s.path),
        "sha256": s.sha256,
        "submitted": s.submitted or None,
        "report": g.report.to_dict(),
    }


def merge(documents: list[str | dict], labels: list[str] | None = None) -> list[Graded]:
    """The entries of several grading documents (the shards of a CI matrix), sorted by (student,
    puzzle). Identical duplicates merge; differing ones are an error. `labels` name the documents
    in errors (file names), else "document I of N"."""
    names = labels or [f"document {i + 1} of {len(documents)}" for i in range(len(documents))]
    merged: dict[tuple[str, str], tuple[str, Graded, str]] = {}
    for name, document in zip(names, documents, strict=True):
        for i, entry in enumerate(_entries(document, name)):
            g = _graded(entry, f"{name}, entry {i + 1}")
            key = student_order(g.submission)
            canonical = json.dumps(finite(_entry(g)), sort_keys=True)
            if key in merged and merged[key][0] != canonical:
                raise JudgeError(_conflict(name, g, merged[key][1], merged[key][2]))
            merged.setdefault(key, (canonical, g, name))
    return [merged[key][1] for key in sorted(merged)]


def _entries(document: str | dict, name: str) -> list:
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except ValueError as exc:
            raise JudgeError(f"{name}: not JSON ({exc})") from None
    if (
        not isinstance(document, dict)
        or document.get("format") != FORMAT
        or not isinstance(document.get("entries"), list)
    ):
        raise JudgeError(f'{name}: not a tpuzzle grading document (no "format": "{FORMAT}")')
    if document.get("format_version") != FORMAT_VERSION:
        raise JudgeError(
            f"{name}: grading document version {document.get('format_version')!r}, "
            f"this judge reads version {FORMAT_VERSION}"
        )
    return document["entries"]


def _graded(entry: Any, where: str) -> Graded:
    try:
        data = entry["report"]
        report = RunReport.from_dict(data)
        sub = Submission(
            str(entry["student"]),
            str(entry["puzzle"]),
            Path(entry["path"]),
            entry.get("sha256", ""),
            entry.get("submitted") or "",
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise JudgeError(f"{where}: malformed ({type(exc).__name__}: {exc})") from None
    return Graded(sub, report)


def _conflict(name: str, new: Graded, old: Graded, old_name: str) -> str:
    a, b = old.submission.sha256, new.submission.sha256
    what = f"a different file ({a[:12]} vs {b[:12]})" if a != b else "a different result"
    return f"{name}: {new.submission.student}/{new.submission.puzzle} is also in {old_name}, {what}"


# ------------------------------------------------------------------------------- JUnit XML


def to_junit(graded: Iterable[Graded]) -> str:
    """JUnit XML: one <testsuite> per puzzle, one <testcase> per student."""
    root = ET.Element("testsuites", name="tpuzzle")
    everything: list[Graded] = []
    for puzzle, items in by_puzzle(graded).items():
        suite = ET.SubElement(root, "testsuite", name=_xml(puzzle))
        for g in items:
            _testcase(suite, g)
        _counts(suite, items)
        everything += items
    _counts(root, everything)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _testcase(suite: ET.Element, g: Graded) -> None:
    r = g.report
    case = ET.SubElement(
        suite,
        "testcase",
        classname=_xml(g.submission.puzzle),
        name=_xml(g.submission.student),
        time=f"{r.wall_s:.3f}",
    )
    if r.verdict is Verdict.PASSED:
        ET.SubElement(case, "system-out").text = _xml(_timing_line(r))
    else:
        tag = "error" if r.verdict is Verdict.ERROR else "failure"
        child = ET.SubElement(case, tag, message=_xml(r.reason), type=r.verdict.value)
        child.text = _xml(_explain(r))
    if r.output:
        ET.SubElement(case, "system-err").text = _xml(r.output)


def _counts(element: ET.Element, items: list[Graded]) -> None:
    verdicts = [g.report.verdict for g in items]
    element.set("tests", str(len(items)))
    element.set("failures", str(sum(v in (Verdict.FAILED, Verdict.REJECTED) for v in verdicts)))
    element.set("errors", str(verdicts.count(Verdict.ERROR)))
    element.set("skipped", "0")
    element.set("time", f"{sum(g.report.wall_s for g in items):.3f}")


def _explain(report: RunReport) -> str:
    """The verdict's message, the failing cases with their hints, and how to reproduce them."""
    lines = [report.message]
    bad = [c for c in report.cases if c.status not in ("passed", "skipped")]
    for c in bad[:CASES_SHOWN]:
        detail = f": {c.message}" if c.message else ""
        lines.append(f"case {c.name} (seed {c.seed}): {c.status}{detail}")
        lines += [f"  hint: {hint}" for hint in c.hints]
        if c.reproduce:
            lines.append(f"  reproduce: {c.reproduce}")
    if len(bad) > CASES_SHOWN:
        lines.append(f"... and {len(bad) - CASES_SHOWN} more cases not passed")
    if not any(c.reproduce for c in bad):
        lines.append(f"reproduce: tpuzzle run {report.puzzle} {report.submission}")
    return "\n".join(lines)


def _timing_line(report: RunReport) -> str:
    """The score over every shape, then each shape's median and figures."""
    f = report.figure
    where = f"on {report.env.device}"
    if f is None:
        return f"passed {cases_passed(report)}/{len(report.cases)} cases {where}; not timed"
    parts = [f"score {_us(f.ms)} (p20-p80 {_us(f.p20_ms)} to {_us(f.p80_ms)}, {f.shapes} shapes)"]
    for t in report.timing:
        shape = [f"{t.case}: median {_us(t.median_ms)}"]
        shape += [t.throughput] if t.throughput else []
        shape += [f"{t.copy_pct:.1f}% of a same-size copy"] if t.copy_pct is not None else []
        shape += [f"{t.sol_pct:.1f}% of speed of light"] if t.sol_pct is not None else []
        if t.speedup_vs_library is not None:
            shape.append(f"{t.speedup_vs_library:.2f}x {t.library or 'library'}")
        parts.append(" ".join(shape[:1]) + (f" ({', '.join(shape[1:])})" if shape[1:] else ""))
    return "; ".join(parts) + f" {where}" + ("" if report.ranked else " (not ranked)")


def _xml(text: str) -> str:
    return escape.xml_text(text)


# ------------------------------------------------------------------------------- Markdown and CSV


def to_markdown(graded: Iterable[Graded], marks: Sequence[StudentMark] | None = None) -> str:
    """One GitHub-flavoured table per puzzle, for a CI job summary; with `marks`, each row's
    points under the policy, and its lateness."""
    found = _puzzle_marks(marks)
    sections = [
        _markdown_table(p, rows, {k[0]: v for k, v in found.items() if k[1] == p})
        for p, rows in class_table(graded).items()
    ]
    return "\n\n".join(sections) + "\n" if sections else "_No submissions graded._\n"


def _markdown_table(puzzle: str, rows: list[Row], points: Mapping[str, PuzzleMark]) -> str:
    devices = len({r.device for r in rows if r.rank is not None}) > 1
    head = ["rank", "student", *(["GPU"] * devices), "verdict", "cases", "median", "speed of light"]
    align = ["---:", "---", *(["---"] * devices), "---", "---:", "---:", "---:"]
    head, align = head + ["points"] * bool(points), align + ["---:"] * bool(points)
    lines = [f"### {_cell(puzzle)}", "", _summary(rows), "", _md_line(head), _md_line(align)]
    for r in rows:
        pm = points.get(r.student)
        cells = [
            str(r.rank) if r.rank is not None else "-",
            _cell(r.student),
            *([_cell(r.device)] * devices),
            _cell(_verdict_text(r)),
            f"{r.cases_passed}/{r.cases_total}",
            _us(r.median_ms) if r.median_ms is not None else "-",
            f"{r.sol_pct:.1f}%" if r.sol_pct is not None else "-",
        ]
        if points:
            late = f" ({_cell(pm.late.note)})" if pm and pm.late.note else ""
            cells.append(f"{pm.score:g}/{pm.max_score:g}{late}" if pm else "-")
        lines.append(_md_line(cells))
    return "\n".join(lines)


def _verdict_text(r: Row) -> str:
    if r.verdict != Verdict.PASSED.value:
        return f"{r.verdict} ({r.reason})"
    return "passed" if r.rank is not None else "passed (not ranked)"


def _summary(rows: list[Row]) -> str:
    counts = [(v.value, sum(r.verdict == v.value for r in rows)) for v in Verdict]
    found = ", ".join(f"{n} {name}" for name, n in counts if n)
    return f"{len(rows)} submission{'s' * (len(rows) != 1)}: {found}"


def _md_line(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _cell(text: str) -> str:
    return escape.markdown_cell(text)


def to_csv(graded: Iterable[Graded], marks: Sequence[StudentMark] | None = None) -> str:
    """A gradebook: one row per (student, puzzle) with partial credit and one column per case.

    credit is the fraction of cases passed, and 0 for a rejected submission (it broke the rules,
    whatever its answers) or one without cases. points and max_points are the policy's (with
    `marks`), after the late penalty, which late_days and late_factor show. case_<i> is 1 when
    case i (spec order) passed. Text cells cannot start a spreadsheet formula."""
    items = in_order(graded)
    found = _puzzle_marks(marks)
    width = max((len(g.report.cases) for g in items), default=0)
    head = ["student", "puzzle", "path", "verdict", "reason", "cases_passed", "cases_total"]
    head += ["credit", "median_ms", "points", "max_points", "submitted", "late_days"]
    head += ["late_factor", *(f"case_{i}" for i in range(1, width + 1))]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(head)
    for g in items:
        r, t, s = g.report, headline(g), g.submission
        cases = [int(c.status == "passed") for c in r.cases]
        pm = found.get((s.student, s.puzzle))
        text = [s.student, s.puzzle, str(s.path), r.verdict.value, r.reason]
        writer.writerow(
            [escape.csv_text(v) for v in text]
            + [sum(cases), len(cases), _credit(r), t.ms if t else ""]
            + (_points(pm) if pm else ["", "", s.submitted, "", ""])
            + cases
            + [""] * (width - len(cases))
        )
    return buffer.getvalue()


def _puzzle_marks(marks: Sequence[StudentMark] | None) -> dict[tuple[str, str], PuzzleMark]:
    return {(m.student, p.puzzle): p for m in marks or () for p in m.puzzles}


def _points(pm: PuzzleMark) -> list:
    when = pm.late.submitted.isoformat() if pm.late.submitted else ""
    return [f"{pm.score:g}", f"{pm.max_score:g}", when, pm.late.days, f"{pm.late.factor:g}"]


def credit(report: RunReport) -> float:
    """Partial credit in [0, 1]: cases passed / cases, 0 when rejected or without cases."""
    if report.verdict is Verdict.REJECTED or not report.cases:
        return 0.0
    return cases_passed(report) / len(report.cases)


def _credit(report: RunReport) -> str:
    return f"{credit(report):.4g}"


def _us(ms: float) -> str:
    return f"{ms * 1e3:.1f} us"
