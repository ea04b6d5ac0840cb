"""Grading a class: what `tpuzzle grade ROOT` finds and how it ranks.

Submissions live at ROOT/<student>/<puzzle id>.py (or are listed in a CSV manifest). The CLI judges
each one with `runner.judge` and hands the reports back here, where they are ranked per puzzle and
device; `gradebook` writes them out. A CI matrix grades disjoint shards of the class (`shard`).

Pure: paths and RunReports in, values and text out.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from judge import __version__
from judge.core.bench import is_tie
from judge.core.loader import file_sha256
from judge.core.results import RunReport, Score
from judge.core.spec import PuzzleSpec
from judge.errors import JudgeError, SubmissionNotFound, UnknownPuzzle
from judge.records.policy import parse_time

MANIFEST_COLUMNS = ("student", "puzzle", "path")
SUBMITTED_COLUMN = "submitted"  # optional: the submission time, ISO 8601 with its UTC offset
LAYOUT = "ROOT/<student>/<puzzle>.py"


@dataclass(frozen=True)
class Submission:
    """One student's file for one puzzle."""

    student: str  # the student's directory name, or the manifest's student column
    puzzle: str  # puzzle id
    path: Path  # the file to judge
    sha256: str = ""  # hash of the file when it was found ("" when it could not be read)
    submitted: str = ""  # when it was submitted, ISO 8601 ("" when not known)


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
    median_ms: float | None  # the score over every benchmark shape; None when not timed/passed
    p20_ms: float | None  # the score's spread
    p80_ms: float | None
    sol_pct: float | None  # percent of the device's measured peak (mean over shapes)
    speedup: float | None  # ratio to the best library call (mean over shapes)
    ranked: bool  # the report may enter a leaderboard


# ------------------------------------------------------------------------------- finding files


def discover(
    root: Path, puzzle_ids: Collection[str], student: str = ""
) -> tuple[list[Submission], list[str]]:
    """Every ROOT/<student>/<puzzle>.py, sorted by (student, puzzle), and one warning per file
    skipped. Hidden entries and __pycache__ are ignored silently.

    A ROOT that holds <puzzle>.py files itself is one student's folder (a Gradescope submission,
    a GitHub Classroom repository): its files are that student's, named `student` or after ROOT.
    """
    if not root.exists():
        raise SubmissionNotFound(f"{root}: no such directory (expected {LAYOUT})")
    if not root.is_dir():
        raise SubmissionNotFound(f"{root}: not a directory (expected {LAYOUT})")
    ids = set(puzzle_ids)
    if is_one_student(root, ids):
        return one_student(root, ids, student or root.resolve().name)
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
    return sorted(found, key=student_order), warnings


def is_one_student(root: Path, puzzle_ids: Collection[str]) -> bool:
    """ROOT holds <puzzle>.py files itself: one student's folder."""
    ids = set(puzzle_ids)
    return any(p.is_file() and p.suffix == ".py" and p.stem in ids for p in _visible(root))


def one_student(root: Path, ids: set[str], student: str) -> tuple[list[Submission], list[str]]:
    """The <puzzle>.py files of one student's folder; other .py files are warned about, other
    entries (a repository's README, workflows, tests) left alone."""
    subs, warnings = _student_files(root, ids, student, quiet_dirs=True)
    return sorted(subs, key=student_order), warnings


def _student_files(
    directory: Path, ids: set[str], student: str = "", quiet_dirs: bool = False
) -> tuple[list[Submission], list[str]]:
    subs: list[Submission] = []
    warnings: list[str] = []
    for entry in _visible(directory):
        if entry.is_dir():
            if not quiet_dirs:
                warnings.append(f"{entry}: a directory, skipped (expected {LAYOUT})")
        elif entry.suffix == ".py" and entry.stem in ids:
            name = student or directory.name
            subs.append(Submission(name, entry.stem, entry, file_sha256(entry)))
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
                raise JudgeError(f"{path}:{reader.reader.line_num}: {exc}") from None
    except UnicodeDecodeError:
        raise JudgeError(f"{path}: not UTF-8 text") from None
    return sorted(subs, key=student_order)


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
    return Submission(student, puzzle, file, file_sha256(file), _submitted(where, row))


def _submitted(where: str, row: dict) -> str:
    """The row's submission time, checked: ISO 8601 with a UTC offset ("" when not given)."""
    text = (row.get(SUBMITTED_COLUMN) or "").strip()
    if not text:
        return ""
    when = parse_time(text)
    if when is None or when.tzinfo is None:
        raise JudgeError(
            f"{where}: submitted {text!r}: expected an ISO 8601 time with its UTC offset, "
            "e.g. 2026-12-01T22:15:00-05:00"
        )
    return when.isoformat()


def _visible(directory: Path) -> list[Path]:
    return sorted(
        p for p in directory.iterdir() if not p.name.startswith(".") and p.name != "__pycache__"
    )


def _did_you_mean(word: str, ids: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, sorted(ids), n=3, cutoff=0.5)
    return f"; did you mean {' or '.join(close)}?" if close else ""


def student_order(sub: Submission) -> tuple[str, str]:
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
    """Rows per puzzle (sorted by id): ranked passes by score, ranked within each device (devices
    by name); then passes that are not ranked; then failed, rejected and error; both by student."""
    return {puzzle: _puzzle_rows(items) for puzzle, items in by_puzzle(graded).items()}


def _puzzle_rows(items: list[Graded]) -> list[Row]:
    by_device: dict[str, list[Graded]] = {}
    for g in sorted(filter(_rankable, items), key=lambda g: (headline(g).ms, _student(g))):
        by_device.setdefault(g.report.env.device, []).append(g)
    rows = [row for device in sorted(by_device) for row in _ranked_rows(by_device[device])]
    rest = sorted(
        (g for g in items if not _rankable(g)), key=lambda g: (not g.report.passed, _student(g))
    )
    return rows + [_row(g, None, False) for g in rest]


def _ranked_rows(group: list[Graded]) -> list[Row]:
    """Competition ranking of one device's results sorted by median: a result tied with the one
    before it shares that one's rank, so a chain of ties shares one rank."""
    spreads = [f.spread for f in map(headline, group)]
    tied = [i > 0 and is_tie(spreads[i - 1], spreads[i]) for i in range(len(group))] + [False]
    rows: list[Row] = []
    for i, g in enumerate(group):
        rank = rows[-1].rank if tied[i] else i + 1
        rows.append(_row(g, rank, tied[i] or tied[i + 1]))
    return rows


def _row(g: Graded, rank: int | None, tie: bool) -> Row:
    r, t = g.report, headline(g)
    return Row(
        rank=rank,
        tie=tie,
        student=g.submission.student,
        verdict=r.verdict.value,
        reason=r.reason,
        cases_passed=cases_passed(r),
        cases_total=len(r.cases),
        device=r.env.device,
        median_ms=t.ms if t else None,
        p20_ms=t.p20_ms if t else None,
        p80_ms=t.p80_ms if t else None,
        sol_pct=t.sol_pct if t else None,
        speedup=t.speedup_vs_library if t else None,
        ranked=r.ranked,
    )


def _rankable(g: Graded) -> bool:
    return g.report.ranked and g.report.passed and bool(g.report.timing)


def headline(g: Graded) -> Score | None:
    """What a pass ranks on, its score over every benchmark shape; None when not timed or not
    passed (no time to show)."""
    return g.report.figure if g.report.passed else None


def _student(g: Graded) -> str:
    return g.submission.student


def cases_passed(report: RunReport) -> int:
    return sum(c.status == "passed" for c in report.cases)


def by_puzzle(graded: Iterable[Graded]) -> dict[str, list[Graded]]:
    groups: dict[str, list[Graded]] = {}
    for g in graded:
        groups.setdefault(g.submission.puzzle, []).append(g)
    return {p: sorted(groups[p], key=_student) for p in sorted(groups)}


def in_order(graded: Iterable[Graded]) -> list[Graded]:
    return sorted(graded, key=lambda g: student_order(g.submission))
