"""The course platforms' files of a grading: what `grade` and `merge` were asked to write
(Gradescope's results.json, GitHub Classroom's reporter results, Canvas's gradebook), read and
checked before any submission is judged, and written once every result is in.

Gradescope hands its autograder `/autograder/submission_metadata.json`; given with
`--submission-metadata`, its submission time dates every file of the submission and its
assignment's due date stands in for a policy without one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from judge.core.spec import PuzzleSpec
from judge.errors import JudgeError
from judge.records import canvas, platforms, policy, scoring
from judge.records.escape import one_line
from judge.records.grading import Graded, Submission


@dataclass(frozen=True)
class Metadata:
    """What Gradescope's submission_metadata.json says of one submission."""

    submitted: str = ""  # created_at, ISO 8601
    due: datetime | None = None  # the assignment's due_date
    student: str = ""  # the submitters' names


@dataclass(frozen=True)
class Course:
    """The platform files asked for, with the inputs they need."""

    rules: policy.Policy = policy.DEFAULT
    gradescope: Path | None = None  # results.json (one student) or a folder of them
    classroom: bool = False  # print the reporter's base64 result
    canvas: Path | None = None  # the gradebook CSV to import
    roster: tuple[canvas.RosterEntry, ...] = ()  # who is who in Canvas
    metadata: Metadata | None = None  # Gradescope's submission metadata

    @property
    def asked(self) -> bool:
        return bool(self.gradescope or self.classroom or self.canvas)


def prepare(
    rules_file: Path | None,
    puzzle_ids: set[str],
    gradescope: Path | None = None,
    classroom: bool = False,
    canvas_file: Path | None = None,
    roster_file: Path | None = None,
    metadata_file: Path | None = None,
) -> Course:
    """The course outputs, every input read and checked now (a usage error is raised before
    anything is judged, so no result waits on a typo)."""
    if (canvas_file is None) != (roster_file is None):
        raise JudgeError("--canvas needs --roster (who each submitter is in Canvas), and back")
    rules = policy.load(rules_file, puzzle_ids)
    metadata = read_metadata(metadata_file) if metadata_file else None
    if metadata is not None and rules.due is None and metadata.due is not None:
        rules = replace(rules, due=metadata.due)
    roster = canvas.read_roster(roster_file) if roster_file else ()
    return Course(rules, gradescope, classroom, canvas_file, roster, metadata)


def read_metadata(path: Path) -> Metadata:
    """Gradescope's submission metadata: its time, due date and submitters."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise JudgeError(f"--submission-metadata {path}: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise JudgeError(f"--submission-metadata {path}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise JudgeError(f"--submission-metadata {path}: expected a JSON object")
    created = _when(path, "created_at", data.get("created_at"))
    assignment = data.get("assignment") if isinstance(data.get("assignment"), dict) else {}
    due = _when(path, "assignment.due_date", assignment.get("due_date"))
    users = data.get("users") if isinstance(data.get("users"), list) else []
    names = [str(u.get("name") or u.get("email") or "") for u in users if isinstance(u, dict)]
    return Metadata(created.isoformat() if created else "", due, ", ".join(n for n in names if n))


def _when(path: Path, key: str, value) -> datetime | None:
    if value in (None, ""):
        return None
    when = policy.parse_time(str(value))
    if when is None or when.tzinfo is None:
        raise JudgeError(f"--submission-metadata {path}: {key} {value!r} is not an ISO 8601 time")
    return when


def dated(subs: Sequence[Submission], course: Course) -> list[Submission]:
    """The submissions with the metadata's submission time where they have none."""
    meta = course.metadata
    if meta is None:
        return list(subs)
    return [replace(s, submitted=s.submitted or meta.submitted) for s in subs]


def write(
    graded: Sequence[Graded],
    specs: Mapping[str, PuzzleSpec],
    course: Course,
    secret: bool,
    one_student: bool,
    now: datetime | None = None,
    marks: Sequence[scoring.StudentMark] | None = None,
) -> tuple[list[str], list[str]]:
    """Every platform file asked for: (warnings, lines for stdout: GitHub Classroom's results,
    `student<TAB>BASE64` per student of a class or the bare BASE64 of one student's
    repository). `marks`: the class's marks under the course's policy, when the caller has
    assessed them already."""
    if marks is None:
        marks = scoring.assess(graded, specs, course.rules, secret)
    warnings: list[str] = []
    if course.gradescope is not None:
        write_gradescope(marks, specs, course.gradescope, secret, one_student)
    if course.canvas is not None:
        text, missed = canvas.to_csv(marks, course.roster, course.rules)
        write_text(course.canvas, text)
        warnings += missed
    lines = []
    if course.classroom:
        moment = now or datetime.now(timezone.utc)
        for m in marks:
            result = platforms.classroom(m, specs, moment, course.rules.due, secret)
            encoded = platforms.encode(result)
            lines.append(encoded if one_student else f"{one_line(m.student)}\t{encoded}")
    return warnings, lines


def write_gradescope(
    marks: Sequence[scoring.StudentMark],
    specs: Mapping[str, PuzzleSpec],
    out: Path,
    secret: bool,
    one_student: bool,
) -> None:
    """OUT itself for one student's folder, else OUT/<student>/results.json for each student (a
    folder name two students would share gets a digest of each name)."""
    folders = [_folder(m.student) for m in marks]
    for m, folder in zip(marks, folders, strict=True):
        text = json.dumps(platforms.gradescope(m, specs, secret), indent=2, allow_nan=False)
        if folders.count(folder) > 1:
            folder += "-" + hashlib.sha256(m.student.encode()).hexdigest()[:10]
        path = out if one_student else out / folder / "results.json"
        write_text(path, text + "\n", make_folder=not one_student)


def _folder(student: str) -> str:
    """A student's name as one folder name: plain text, no separators, not '.' or '..'."""
    name = "".join("_" if c in "/\\" else c for c in one_line(student))
    return name if name not in ("", ".", "..") else f"_{name}"


def write_text(path: Path, text: str, make_folder: bool = False) -> None:
    """Write a file of results (with `make_folder`, into a folder made for it); a JudgeError
    naming it when that fails."""
    try:
        if make_folder:
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise JudgeError(f"{path}: cannot write: {exc.strerror or exc}") from None
