"""A student's marks in the formats of the course platforms that read them: Gradescope's
autograder `results.json` and GitHub Classroom's autograding reporter result. (Canvas's
gradebook is `records.canvas`.)

Each maps a case's visibility to the platform's own notion:
- Gradescope has it: a test's `visibility` is the strictest of its cases' (a secret seed makes
  every case after_due_date at least); the summary in `output`, which every student sees, names no
  case that is not visible.
- GitHub Classroom has none: its messages appear in the student's Actions log at once. A hidden
  case is told there by its status alone, and an after_due_date case too until the due date has
  passed (or always, with no due date).

Every text is plain: terminal escapes and control characters removed (records.escape).

Pure: marks in, JSON-ready dicts and text out.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from datetime import datetime

from judge.core import visibility
from judge.core.results import Verdict
from judge.core.spec import PuzzleSpec
from judge.records.escape import plain
from judge.records.scoring import CaseMark, Part, PuzzleMark, StudentMark

CASES_SHOWN = 8  # failing cases spelled out in one test's output
NOT_VISIBLE = frozenset({visibility.AFTER_DUE_DATE, visibility.HIDDEN})


# ------------------------------------------------------------------------------- Gradescope


def gradescope(student: StudentMark, specs: Mapping[str, PuzzleSpec], secret: bool = False) -> dict:
    """Gradescope's results.json for one student: one test per puzzle and case group, one per
    puzzle for speed, the score after lateness, and the ranked figures as a leaderboard."""
    tests = []
    for pm in student.puzzles:
        strictest = _strictest(pm.parts)
        for part in pm.parts:
            tests.append(
                {
                    "name": plain(part.name),
                    "score": part.score,
                    "max_score": part.max_score,
                    "status": "passed" if part.passed else "failed",
                    "visibility": part.visibility,
                    "output": plain(_part_output(pm, part, with_output=part is strictest)),
                    "output_format": "text",
                    "tags": [pm.puzzle, part.kind],
                }
            )
    return {
        "score": student.score,
        "execution_time": round(student.wall_s),
        "output": plain(_summary(student, specs, NOT_VISIBLE, secret)),
        "output_format": "text",
        "stdout_visibility": "hidden",
        "tests": tests,
        "leaderboard": _leaderboard(student),
    }


def _strictest(parts: tuple[Part, ...]) -> Part | None:
    """The puzzle's least visible case group, where what the submission printed goes (it may
    print the inputs it was given)."""
    groups = [p for p in parts if p.kind == "cases"]
    order = visibility.VISIBILITIES.index
    return max(groups, key=lambda p: order(p.visibility), default=None)


def _part_output(pm: PuzzleMark, part: Part, with_output: bool) -> str:
    lines = [f"{part.score:g} of {part.max_score:g} points"]
    if part.kind == "speed":
        lines.append(part.detail)
    else:
        lines += _case_lines(part.cases, pm)
    report = pm.report
    if with_output and report is not None and report.output.strip():
        lines += ["", "what the submission printed:", report.output.rstrip()]
    return "\n".join(lines)


def _case_lines(cases: tuple[CaseMark, ...], pm: PuzzleMark) -> list[str]:
    """Each case's status, and for the first failing ones what went wrong and how to rerun it."""
    if pm.report is None:
        return ["nothing was submitted for this puzzle"]
    lines = []
    if pm.report.verdict is Verdict.REJECTED:
        lines.append(f"rejected ({pm.report.reason}): no points for correctness")
    shown = 0
    for c in cases:
        lines.append(f"{c.name}: {c.status}")
        r = c.result
        if r is None or c.status in ("passed", "skipped") or shown >= CASES_SHOWN:
            continue
        shown += 1
        lines.append(f"  seed {r.seed}" + (f": {r.message}" if r.message else ""))
        lines += [f"  hint: {h}" for h in r.hints]
        lines += [f"  reproduce: {r.reproduce}"] if r.reproduce else []
    return lines


def _summary(
    student: StudentMark, specs: Mapping[str, PuzzleSpec], concealed: frozenset[str], secret: bool
) -> str:
    """One line per puzzle, naming no case of a concealed visibility."""
    lines = [f"{student.score:g} of {student.max_score:g} points"]
    for pm in student.puzzles:
        lines.append(_puzzle_line(pm, specs, concealed, secret))
    return "\n".join(lines)


def _puzzle_line(
    pm: PuzzleMark, specs: Mapping[str, PuzzleSpec], concealed: frozenset[str], secret: bool
) -> str:
    head = f"{pm.puzzle}: {pm.score:g}/{pm.max_score:g}"
    if pm.report is None:
        return f"{head}, not submitted"
    report = visibility.conceal(pm.report, specs[pm.puzzle], concealed, secret)
    said = report.verdict.value + ("" if report.passed else f" ({report.reason}): {report.message}")
    late = f"; {pm.late.note}" if pm.late.note else ""
    return f"{head}, {said}{late}"


def _leaderboard(student: StudentMark) -> list[dict]:
    """Each ranked puzzle's score (lower first) and percent of speed of light."""
    board = []
    for pm in student.puzzles:
        report = pm.report
        figure = report.figure if report is not None and report.passed and report.ranked else None
        if figure is None:
            continue
        board.append(
            {"name": f"{pm.puzzle} time (us)", "value": round(figure.ms * 1e3, 2), "order": "asc"}
        )
        if figure.sol_pct is not None:
            board.append(
                {
                    "name": f"{pm.puzzle} % of speed of light",
                    "value": round(figure.sol_pct, 2),
                    "order": "desc",
                }
            )
    return board


# ------------------------------------------------------------------------------- GitHub Classroom


def classroom(
    student: StudentMark,
    specs: Mapping[str, PuzzleSpec],
    now: datetime,
    due: datetime | None,
    secret: bool = False,
) -> dict:
    """The result one autograding runner hands GitHub Classroom's reporter: version, status
    (pass, fail or error), max_score and one test per puzzle part, with lateness in the scores."""
    shown_after_due = due is not None and now >= due
    concealed = frozenset({visibility.HIDDEN}) | (
        frozenset() if shown_after_due else {visibility.AFTER_DUE_DATE}
    )
    tests = []
    for pm in student.puzzles:
        for part in pm.parts:
            tests.append(
                {
                    "name": plain(part.name),
                    "status": _classroom_status(pm, part),
                    "message": plain(_classroom_message(pm, part, concealed, specs, secret)),
                    "score": round(part.score * pm.late.factor, 4),
                }
            )
    statuses = {t["status"] for t in tests}
    status = "pass" if statuses <= {"pass"} else "error" if statuses == {"error"} else "fail"
    return {"version": 1, "status": status, "max_score": student.max_score, "tests": tests}


def _classroom_status(pm: PuzzleMark, part: Part) -> str:
    if part.passed:
        return "pass"
    report = pm.report
    return "error" if report is None or report.verdict is Verdict.ERROR else "fail"


def _classroom_message(
    pm: PuzzleMark,
    part: Part,
    concealed: frozenset[str],
    specs: Mapping[str, PuzzleSpec],
    secret: bool,
) -> str:
    lines = [f"{part.score * pm.late.factor:g} of {part.max_score:g} points"]
    lines += [pm.late.note] if pm.late.note else []
    if part.kind == "speed":
        return "\n".join([*lines, part.detail])
    if part.visibility in concealed:
        passed = sum(c.status == "passed" for c in part.cases)
        when = "hidden" if part.visibility == visibility.HIDDEN else "shown after the due date"
        return "\n".join([*lines, f"{passed} of {len(part.cases)} cases passed; these are {when}"])
    if pm.report is not None and not pm.report.passed:
        lines.append(_puzzle_line(pm, specs, concealed, secret))
    lines += [line for line in _case_lines(part.cases, pm) if not line.endswith(": passed")]
    return "\n".join(lines)


def encode(result: dict) -> str:
    """A runner's result as the reporter reads it from `<RUNNER>_RESULTS`: base64 of JSON."""
    text = json.dumps(result, separators=(",", ":"), allow_nan=False)
    return base64.b64encode(text.encode()).decode()
