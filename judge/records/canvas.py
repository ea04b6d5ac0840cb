"""Canvas's gradebook CSV: what Canvas's Grades > Import reads, from the class's marks and a
roster that maps each submitter to a Canvas student.

The roster is a CSV whose `submitter` column holds the names `grade` knows (the folders of ROOT,
or the manifest's student column) and whose other columns are Canvas's own identity columns
(`Student`, `ID`, `SIS User ID`, `SIS Login ID`, `Section`), as in a gradebook exported from
Canvas with a `submitter` column added. At least one of `ID`, `SIS User ID` or `SIS Login ID`
must be there: Canvas matches a row to a student by them.

The file written: those five columns and one for the assignment (`Name (id)`, or `Name` to make a
new assignment), a `Points Possible` row, then one row per roster student. A student of the
roster who submitted nothing gets 0; a submitter not on the roster is left out and named in a
warning. Lateness is already in the points.

Pure: paths and marks in, text and warnings out.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from judge.errors import JudgeError
from judge.records.escape import csv_text, plain
from judge.records.policy import Policy
from judge.records.scoring import StudentMark

KEY = "submitter"
IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MATCHED_BY = ("ID", "SIS User ID", "SIS Login ID")
POINTS_POSSIBLE = "    Points Possible"  # as Canvas writes the row in its own exports


@dataclass(frozen=True)
class RosterEntry:
    submitter: str
    identity: tuple[str, ...]  # the IDENTITY columns, in order ("" where not given)


def read_roster(path: Path) -> tuple[RosterEntry, ...]:
    """The roster; JudgeError naming the file and line for anything malformed."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            try:
                return _entries(path, reader)
            except csv.Error as exc:
                raise JudgeError(f"{path}:{reader.reader.line_num}: {exc}") from None
    except FileNotFoundError:
        raise JudgeError(f"--roster {path}: no such file") from None
    except OSError as exc:
        raise JudgeError(f"--roster {path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise JudgeError(f"--roster {path}: not UTF-8 text") from None


def _entries(path: Path, reader: csv.DictReader) -> tuple[RosterEntry, ...]:
    header = [name.strip() for name in reader.fieldnames or []]
    if KEY not in header:
        raise JudgeError(
            f"{path}: no column {KEY!r} (the names in ROOT or the manifest), "
            f"beside Canvas's {', '.join(IDENTITY)}"
        )
    if not any(c in header for c in MATCHED_BY):
        raise JudgeError(f"{path}: none of the columns {', '.join(MATCHED_BY)} (Canvas needs one)")
    reader.fieldnames = header
    entries: dict[str, RosterEntry] = {}
    for row in reader:
        where = f"{path}:{reader.line_num}"
        name = (row.get(KEY) or "").strip()
        if not name:
            if (row.get("Student") or "").strip().endswith("Points Possible"):
                continue  # the row a Canvas export carries
            raise JudgeError(f"{where}: empty {KEY}")
        if name in entries:
            raise JudgeError(f"{where}: {name} is listed twice")
        identity = tuple((row.get(c) or "").strip() for c in IDENTITY)
        if not any(identity[IDENTITY.index(c)] for c in MATCHED_BY):
            raise JudgeError(f"{where}: {name} has none of {', '.join(MATCHED_BY)}")
        entries[name] = RosterEntry(name, identity)
    if not entries:
        raise JudgeError(f"{path}: no students listed")
    return tuple(entries.values())


def to_csv(
    marks: Sequence[StudentMark], roster: Sequence[RosterEntry], policy: Policy
) -> tuple[str, list[str]]:
    """(the gradebook CSV, warnings about submitters not on the roster)."""
    by_name = {m.student: m for m in marks}
    possible = _possible(marks, policy)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*IDENTITY, csv_text(policy.canvas_column)])
    writer.writerow([POINTS_POSSIBLE, "", "", "", "", f"{possible:g}"])
    for entry in roster:
        mark = by_name.get(entry.submitter)
        writer.writerow([*_identity(entry), f"{mark.score if mark else 0:g}"])
    known = {e.submitter for e in roster}
    missing = [m.student for m in marks if m.student not in known]
    warnings = [
        f"{name}: graded, but not on the roster: left out of the Canvas file" for name in missing
    ]
    return buffer.getvalue(), warnings


def _identity(entry: RosterEntry) -> list[str]:
    """The roster's identity cells: a name or section made safe for a spreadsheet; the ids as
    Canvas issued them (a leading ' would stop Canvas matching them), control characters gone."""
    return [
        csv_text(value) if column in ("Student", "Section") else plain(value)
        for column, value in zip(IDENTITY, entry.identity, strict=True)
    ]


def _possible(marks: Sequence[StudentMark], policy: Policy) -> float:
    """The assignment's points: the policy's puzzles', else the most any student could earn."""
    if policy.listed:
        return sum(policy.of(p).points for p in policy.listed)
    return max((m.max_score for m in marks), default=0.0)
