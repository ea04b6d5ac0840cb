"""Grading a class: what `tpuzzle grade ROOT` finds, ranks and writes.

Submissions live at ROOT/<student>/<puzzle id>.py (or are listed in a CSV manifest). The CLI judges
each one with `runner.judge` and hands the reports back here, where they are ranked per puzzle and
device and written as one JSON document, JUnit XML, a Markdown summary and a CSV gradebook. A CI
matrix grades disjoint shards of the class (`shard`) and joins their JSON documents (`merge`).

Pure: paths and RunReports in, values and text out.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import io
import json
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge import __version__
from judge.bench import is_tie
from judge.errors import JudgeError, SubmissionNotFound, UnknownPuzzle
from judge.results import RunReport, Timing, Verdict
from judge.spec import PuzzleSpec
from judge.store import file_sha256

FORMAT = "tpuzzle-grading"  # the "format" key of a grading document
FORMAT_VERSION = 1
MANIFEST_COLUMNS = ("student", "puzzle", "path")
LAYOUT = "ROOT/<student>/<puzzle>.py"
CASES_SHOWN = 5  # failing cases spelled out in a JUnit failure
_XML_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass(frozen=True)
class Submission:
    """One student's file for one puzzle."""

    student: str  # the student's directory name, or the manifest's student column
    puzzle: str  # puzzle id
    path: Path  # the file to judge
    sha256: str = ""  # hash of the file when it was found ("" when it could not be read)


@dataclass(frozen=True)
class Graded:
    """A submission and the judge's report on it."""

    submission: Submission
    report: RunReport


@dataclass(frozen=True)
class Row:
    """One line of a puzzle's class table."""

    rank: int | None  # competition rank (1, 1, 3) within the device; None when not ranked
    tie: bool  # shares its rank with a neighbour
    student: str
    verdict: str  # passed | failed | rejected | error
    reason: str  # e.g. "ok", "wrong-answer", "timeout"
    cases_passed: int  # test cases with status "passed"
    cases_total: int  # every test case of the run, skipped ones included
    device: str  # where it ran (ranks compare only results of one device)
    median_ms: float | None  # first benchmark's median; None when not timed or not passed
    p20_ms: float | None
    p80_ms: float | None
    sol_pct: float | None  # percent of the device's measured peak
    speedup: float | None  # PyTorch reference median / this median
    ranked: bool  # the report may enter a leaderboard


# ------------------------------------------------------------------------------- finding files


def discover(root: Path, puzzle_ids: Collection[str]) -> tuple[list[Submission], list[str]]:
    """Every ROOT/<student>/<puzzle>.py, sorted by (student, puzzle), and one warning per file
    skipped. Hidden entries and __pycache__ are ignored silently."""
    if not root.exists():
        raise SubmissionNotFound(f"{root}: no such directory (expected {LAYOUT})")
    if not root.is_dir():
        raise SubmissionNotFound(f"{root}: not a directory (expected {LAYOUT})")
    ids = set(puzzle_ids)
    found: list[Submission] = []
    warnings: list[str] = []
    loose = [p for p in _visible(root) if p.is_file() and p.suffix == ".py"]
    for entry in _visible(root):
        if entry.is_dir():
            subs, notes = _student_files(entry, ids)
            found += subs
            warnings += notes
        elif entry in loose:
            warnings.append(f"{entry}: not in a student's directory, skipped (expected {LAYOUT})")
    if not found:
        hint = " (.py files lie directly in ROOT: is it one student's directory?)" * bool(loose)
        raise JudgeError(f"{root}: no submissions found, expected {LAYOUT}{hint}")
    return sorted(found, key=_order), warnings


def _student_files(directory: Path, ids: set[str]) -> tuple[list[Submission], list[str]]:
    subs: list[Submission] = []
    warnings: list[str] = []
    for entry in _visible(directory):
        if entry.is_dir():
            warnings.append(f"{entry}: a directory, skipped (expected {LAYOUT})")
        elif entry.suffix == ".py" and entry.stem in ids:
            subs.append(Submission(directory.name, entry.stem, entry, file_sha256(entry)))
        elif entry.suffix == ".py":
            hint = _did_you_mean(entry.stem, ids)
            warnings.append(f"{entry}: {entry.stem!r} is not a puzzle id, skipped{hint}")
    if not subs and not warnings:
        warnings.append(f"{directory}: no file named after a puzzle")
    return subs, warnings


def read_manifest(path: Path, puzzle_ids: Collection[str]) -> list[Submission]:
    """Submissions listed in a CSV with the header student,puzzle,path, sorted by (student,
    puzzle). A relative path is relative to the manifest's directory."""
    if not path.is_file():
        raise SubmissionNotFound(f"{path}: no such manifest file")
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            try:
                subs = _manifest_rows(path, reader, set(puzzle_ids))
            except csv.Error as exc:
                raise JudgeError(f"{path}:{reader.line_num}: {exc}") from None
    except UnicodeDecodeError:
        raise JudgeError(f"{path}: not UTF-8 text") from None
    return sorted(subs, key=_order)


def _manifest_rows(path: Path, reader: csv.DictReader, ids: set[str]) -> list[Submission]:
    header = [name.strip() for name in reader.fieldnames or []]
    expected = ",".join(MANIFEST_COLUMNS)
    if not header:
        raise JudgeError(f"{path}: empty, expected the header {expected}")
    missing = [c for c in MANIFEST_COLUMNS if c not in header]
    if missing:
        raise JudgeError(f"{path}:{reader.line_num}: no column {missing[0]!r} (header {expected})")
    reader.fieldnames = header
    first_line: dict[tuple[str, str], int] = {}
    subs = []
    for row in reader:
        sub = _manifest_entry(f"{path}:{reader.line_num}", path.parent, row, ids)
        key = (sub.student, sub.puzzle)
        if key in first_line:
            raise JudgeError(
                f"{path}:{reader.line_num}: {sub.student}/{sub.puzzle} is listed twice "
                f"(first on line {first_line[key]})"
            )
        first_line[key] = reader.line_num
        subs.append(sub)
    if not subs:
        raise JudgeError(f"{path}: no submissions listed")
    return subs


def _manifest_entry(where: str, base: Path, row: dict, ids: set[str]) -> Submission:
    student, puzzle, given = ((row.get(c) or "").strip() for c in MANIFEST_COLUMNS)
    if not student:
        raise JudgeError(f"{where}: empty student name")
    if puzzle not in ids:
        raise UnknownPuzzle(f"{where}: unknown puzzle {puzzle!r}{_did_you_mean(puzzle, ids)}")
    if not given:
        raise JudgeError(f"{where}: empty path")
    file = Path(given).expanduser()
    file = file if file.is_absolute() else base / file
    if not file.is_file():
        raise SubmissionNotFound(f"{where}: {file}: no such file")
    return Submission(student, puzzle, file, file_sha256(file))


def _visible(directory: Path) -> list[Path]:
    return sorted(
        p for p in directory.iterdir() if not p.name.startswith(".") and p.name != "__pycache__"
    )


def _did_you_mean(word: str, ids: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, sorted(ids), n=3, cutoff=0.5)
    return f"; did you mean {' or '.join(close)}?" if close else ""


def _order(sub: Submission) -> tuple[str, str]:
    return sub.student, sub.puzzle


def context(spec: PuzzleSpec, interpret: bool, timing: bool, secret: str) -> str:
    """What a result is judged under: the judge's version, the puzzle's files, the mode, timing
    and the secret seed (as a digest). A file graded again under the same context may take its
    stored result (`tpuzzle grade --resume`)."""
    digest = hashlib.sha256()
    for name in ("puzzle.yaml", "reference.py"):
        digest.update(file_sha256(spec.directory / name).encode())
    seed = hashlib.sha256(f"tpuzzle-secret:{secret}".encode()).hexdigest()[:16] if secret else "-"
    mode = "interpreter" if interpret else "gpu"
    return f"tpuzzle {__version__}|{digest.hexdigest()[:16]}|{mode}|timing={int(timing)}|{seed}"


# ------------------------------------------------------------------------------- sharding


def parse_shard(text: str) -> tuple[int, int]:
    """(K, N) from "K/N" with 1 <= K <= N."""
    match = re.fullmatch(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*", text)
    if match and 1 <= int(match[1]) <= int(match[2]):
        return int(match[1]), int(match[2])
    raise JudgeError(f"shard {text!r}: expected K/N with 1 <= K <= N, e.g. 1/4")


def shard_of(submission: Submission, n: int) -> int:
    """The shard (1..n) a submission belongs to, from a hash of student and puzzle alone, so that
    adding or removing a student moves no one else."""
    key = f"{submission.student}/{submission.puzzle}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % n + 1


def shard(submissions: Iterable[Submission], k: int, n: int) -> list[Submission]:
    """The submissions of shard k of n, in their given order."""
    if not 1 <= k <= n:
        raise JudgeError(f"shard {k}/{n}: expected K/N with 1 <= K <= N, e.g. 1/4")
    return [s for s in submissions if shard_of(s, n) == k]


# ------------------------------------------------------------------------------- the class table


def class_table(graded: Iterable[Graded]) -> dict[str, list[Row]]:
    """Rows per puzzle (sorted by id): ranked passes by median, ranked within each device (devices
    by name); then passes that are not ranked; then failed, rejected and error; both by student."""
    by_puzzle = _by_puzzle(graded)
    return {puzzle: _puzzle_rows(items) for puzzle, items in by_puzzle.items()}


def _puzzle_rows(items: list[Graded]) -> list[Row]:
    by_device: dict[str, list[Graded]] = {}
    for g in sorted(filter(_rankable, items), key=lambda g: (_headline(g).median_ms, _student(g))):
        by_device.setdefault(g.report.env.device, []).append(g)
    rows = [row for device in sorted(by_device) for row in _ranked_rows(by_device[device])]
    rest = sorted(
        (g for g in items if not _rankable(g)), key=lambda g: (not g.report.passed, _student(g))
    )
    return rows + [_row(g, None, False) for g in rest]


def _ranked_rows(group: list[Graded]) -> list[Row]:
    """Competition ranking of one device's results sorted by median: a result tied with the one
    before it shares that one's rank, so a chain of ties shares one rank."""
    spreads = [(t.median_ms, t.p20_ms, t.p80_ms) for t in map(_headline, group)]
    tied = [i > 0 and is_tie(spreads[i - 1], spreads[i]) for i in range(len(group))] + [False]
    rows: list[Row] = []
    for i, g in enumerate(group):
        rank = rows[-1].rank if tied[i] else i + 1
        rows.append(_row(g, rank, tied[i] or tied[i + 1]))
    return rows


def _row(g: Graded, rank: int | None, tie: bool) -> Row:
    r, t = g.report, _headline(g)
    return Row(
        rank=rank,
        tie=tie,
        student=g.submission.student,
        verdict=r.verdict.value,
        reason=r.reason,
        cases_passed=_cases_passed(r),
        cases_total=len(r.cases),
        device=r.env.device,
        median_ms=t.median_ms if t else None,
        p20_ms=t.p20_ms if t else None,
        p80_ms=t.p80_ms if t else None,
        sol_pct=t.sol_pct if t else None,
        speedup=t.speedup_vs_reference if t else None,
        ranked=r.ranked,
    )


def _rankable(g: Graded) -> bool:
    return g.report.ranked and g.report.passed and bool(g.report.timing)


def _headline(g: Graded) -> Timing | None:
    """The first benchmark of a pass; None when not timed or not passed (no time to show)."""
    return g.report.timing[0] if g.report.timing and g.report.passed else None


def _student(g: Graded) -> str:
    return g.submission.student


def _cases_passed(report: RunReport) -> int:
    return sum(c.status == "passed" for c in report.cases)


def _by_puzzle(graded: Iterable[Graded]) -> dict[str, list[Graded]]:
    groups: dict[str, list[Graded]] = {}
    for g in graded:
        groups.setdefault(g.submission.puzzle, []).append(g)
    return {p: sorted(groups[p], key=_student) for p in sorted(groups)}


def _sorted(graded: Iterable[Graded]) -> list[Graded]:
    return sorted(graded, key=lambda g: _order(g.submission))


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
        "entries": [_entry(g) for g in _sorted(graded)],
    }
    return json.dumps(_finite(document), indent=2, allow_nan=False) + "\n"


def _entry(g: Graded) -> dict[str, Any]:
    s = g.submission
    return {
        "student": s.student,
        "puzzle": s.puzzle,
        "path": str(s.path),
        "sha256": s.sha256,
        "report": g.report.to_dict(),
    }


def _finite(value: Any) -> Any:
    """JSON has no NaN or Infinity: such numbers become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def merge(documents: list[str | dict], labels: list[str] | None = None) -> list[Graded]:
    """The entries of several grading documents (the shards of a CI matrix), sorted by (student,
    puzzle). Identical duplicates merge; differing ones are an error. `labels` name the documents
    in errors (file names), else "document I of N"."""
    names = labels or [f"document {i + 1} of {len(documents)}" for i in range(len(documents))]
    merged: dict[tuple[str, str], tuple[str, Graded, str]] = {}
    for name, document in zip(names, documents, strict=True):
        for i, entry in enumerate(_entries(document, name)):
            g = _graded(entry, f"{name}, entry {i + 1}")
            key = _order(g.submission)
            canonical = json.dumps(_finite(_entry(g)), sort_keys=True)
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
    for puzzle, items in _by_puzzle(graded).items():
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
    t = report.timing[0] if report.timing else None
    where = f"on {report.env.device}"
    if t is None:
        return f"passed {_cases_passed(report)}/{len(report.cases)} cases {where}; not timed"
    parts = [f"median {_us(t.median_ms)} (p20-p80 {_us(t.p20_ms)} to {_us(t.p80_ms)})"]
    parts += [t.throughput] if t.throughput else []
    parts += [f"{t.sol_pct:.1f}% of speed of light"] if t.sol_pct is not None else []
    if t.speedup_vs_reference is not None:
        parts.append(f"{t.speedup_vs_reference:.2f}x PyTorch")
    return ", ".join(parts) + f" {where}" + ("" if report.ranked else " (not ranked)")


def _xml(text: str) -> str:
    """Text without the characters XML 1.0 forbids (ElementTree escapes the rest)."""
    return _XML_FORBIDDEN.sub("", text)


# ------------------------------------------------------------------------------- Markdown and CSV


def to_markdown(graded: Iterable[Graded]) -> str:
    """One GitHub-flavoured table per puzzle, for a CI job summary."""
    sections = [_markdown_table(p, rows) for p, rows in class_table(graded).items()]
    return "\n\n".join(sections) + "\n" if sections else "_No submissions graded._\n"


def _markdown_table(puzzle: str, rows: list[Row]) -> str:
    devices = len({r.device for r in rows if r.rank is not None}) > 1
    head = ["rank", "student", *(["GPU"] * devices), "verdict", "cases", "median", "speed of light"]
    align = ["---:", "---", *(["---"] * devices), "---", "---:", "---:", "---:"]
    lines = [f"### {_cell(puzzle)}", "", _summary(rows), "", _md_line(head), _md_line(align)]
    for r in rows:
        cells = [
            str(r.rank) if r.rank is not None else "-",
            _cell(r.student),
            *([_cell(r.device)] * devices),
            _cell(_verdict_text(r)),
            f"{r.cases_passed}/{r.cases_total}",
            _us(r.median_ms) if r.median_ms is not None else "-",
            f"{r.sol_pct:.1f}%" if r.sol_pct is not None else "-",
        ]
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
    """Text safe inside a Markdown table cell: one line, no bare '|' and no HTML tags."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def to_csv(graded: Iterable[Graded]) -> str:
    """A gradebook: one row per (student, puzzle) with partial credit and one column per case.

    credit is the fraction of cases passed, and 0 for a rejected submission (it broke the rules,
    whatever its answers) or one without cases. case_<i> is 1 when case i (spec order) passed."""
    items = _sorted(graded)
    width = max((len(g.report.cases) for g in items), default=0)
    head = ["student", "puzzle", "path", "verdict", "reason", "cases_passed", "cases_total"]
    head += ["credit", "median_ms", *(f"case_{i}" for i in range(1, width + 1))]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(head)
    for g in items:
        r, t = g.report, _headline(g)
        cases = [int(c.status == "passed") for c in r.cases]
        writer.writerow(
            [g.submission.student, g.submission.puzzle, str(g.submission.path), r.verdict.value]
            + [r.reason, sum(cases), len(cases), _credit(r), t.median_ms if t else ""]
            + cases
            + [""] * (width - len(cases))
        )
    return buffer.getvalue()


def credit(report: RunReport) -> float:
    """Partial credit in [0, 1]: cases passed / cases, 0 when rejected or without cases."""
    if report.verdict is Verdict.REJECTED or not report.cases:
        return 0.0
    return _cases_passed(report) / len(report.cases)


def _credit(report: RunReport) -> str:
    return f"{credit(report):.4g}"


def _us(ms: float) -> str:
    return f"{ms * 1e3:.1f} us"
