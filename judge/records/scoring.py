"""Points: a graded class under a grading policy, as one mark per student, puzzle and case group.

A puzzle's correctness points are shared among its cases by weight and graded per case group
(the cases' own `group`, else one group per visibility); a rejected submission earns none, and
neither does one that answered wrong on a judged call outside its cases (the benchmark's re-check,
a timed call): a wrong answer there is a wrong answer, not a slip of the timing. Its
speed points are earned in proportion to how close the ranked score comes to the policy's target;
a run that was not timed and verified earns none. Lateness scales what a file earned.

Every course platform's format (records.platforms) and the gradebook are written from these marks.

Pure: graded reports, specs and a policy in, frozen values out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from judge.core import visibility
from judge.core.results import CaseResult, RunReport, Verdict
from judge.core.spec import Case, PuzzleSpec
from judge.records.grading import Graded, Submission
from judge.records.policy import Lateness, Policy, lateness, parse_time

GROUP_NAMES = {
    visibility.VISIBLE: "cases",
    visibility.AFTER_DUE_DATE: "cases shown after the due date",
    visibility.HIDDEN: "hidden cases",
}
NOT_SUBMITTED = "not submitted"


@dataclass(frozen=True)
class CaseMark:
    """One case as graded."""

    name: str
    status: str  # passed | failed | error | skipped | not run
    weight: float
    visibility: str
    result: CaseResult | None  # None when the case was not run


@dataclass(frozen=True)
class Part:
    """One test of a course platform: a puzzle's case group, or its speed."""

    puzzle: str
    name: str  # e.g. "vector_add: cases" or "vector_add: speed"
    kind: str  # "cases" or "speed"
    score: float
    max_score: float
    visibility: str  # the strictest of its cases' (speed: visible)
    cases: tuple[CaseMark, ...] = ()  # kind "cases"
    detail: str = ""  # kind "speed": how the points were reached

    @property
    def passed(self) -> bool:
        return self.score >= self.max_score - 1e-9


@dataclass(frozen=True)
class PuzzleMark:
    """One student's puzzle: its parts, its lateness and the points it earns."""

    puzzle: str
    parts: tuple[Part, ...]
    late: Lateness
    graded: Graded | None  # None: the student submitted no file for it

    @property
    def earned(self) -> float:
        """The parts' points before lateness."""
        return sum(p.score for p in self.parts)

    @property
    def max_score(self) -> float:
        return sum(p.max_score for p in self.parts)

    @property
    def score(self) -> float:
        """The points after lateness."""
        return round(self.earned * self.late.factor, 4)

    @property
    def report(self) -> RunReport | None:
        return self.graded.report if self.graded else None

    @property
    def verdict(self) -> str:
        return self.report.verdict.value if self.report else NOT_SUBMITTED


@dataclass(frozen=True)
class StudentMark:
    """One student's assignment."""

    student: str
    puzzles: tuple[PuzzleMark, ...]

    @property
    def score(self) -> float:
        return round(sum(p.score for p in self.puzzles), 4)

    @property
    def max_score(self) -> float:
        return round(sum(p.max_score for p in self.puzzles), 4)

    @property
    def wall_s(self) -> float:
        return sum(p.report.wall_s for p in self.puzzles if p.report)


def assess(
    graded: Iterable[Graded],
    specs: Mapping[str, PuzzleSpec],
    policy: Policy,
    secret: bool = False,
) -> list[StudentMark]:
    """Every student's mark, by student; each covers the policy's puzzles, or (when it lists
    none) every puzzle submitted by anyone. `secret`: the cases were drawn with a secret seed."""
    items = list(graded)
    by_student: dict[str, dict[str, Graded]] = {}
    for g in items:
        by_student.setdefault(g.submission.student, {})[g.submission.puzzle] = g
    puzzles = policy.listed or tuple(sorted({g.submission.puzzle for g in items}))
    return [
        StudentMark(
            student,
            tuple(mark(specs[p], files.get(p), policy, secret) for p in puzzles if p in specs),
        )
        for student, files in sorted(by_student.items())
    ]


def mark(spec: PuzzleSpec, graded: Graded | None, policy: Policy, secret: bool) -> PuzzleMark:
    """One puzzle of one student (graded None: nothing submitted)."""
    rules = policy.of(spec.id)
    report = graded.report if graded else None
    cases = _case_marks(spec, report, rules.weight, secret)
    correctness = round(rules.points * rules.correctness, 4)
    groups = _groups(spec, cases)
    shares = _split(correctness, [sum(c.weight for c in g) for g in groups.values()])
    parts = [
        _group_part(spec.id, name, members, share, report)
        for (name, members), share in zip(groups.items(), shares, strict=True)
    ]
    speed_points = round(rules.points - correctness, 4)
    if speed_points > 0:
        parts.append(_speed_part(spec.id, report, speed_points, rules.speed))
    when = submitted_at(graded.submission) if graded else None
    return PuzzleMark(spec.id, tuple(parts), lateness(policy, when), graded)


def submitted_at(sub: Submission) -> datetime | None:
    return parse_time(sub.submitted) if sub.submitted else None


def _case_marks(spec: PuzzleSpec, report: RunReport | None, weight, secret: bool) -> list[CaseMark]:
    """The cases of the mode the report was judged in (the interpreter runs only the cases
    marked for it), each with its status in the report."""
    interpreted = report is not None and report.env.mode == "interpreter"
    results = {c.name: c for c in report.cases} if report else {}
    marks = []
    for case in spec.tests:
        if interpreted and not case.interpret:
            continue
        result = results.get(case.name)
        status = result.status if result else "not run"
        marks.append(
            CaseMark(case.name, status, weight(case.name), visibility.of_case(case, secret), result)
        )
    return marks


def _split(points: float, weights: list[float]) -> list[float]:
    """`points` shared in proportion to `weights`, each share rounded to 4 places and the last
    taking what rounding left, so that the shares add up to the points."""
    total = sum(weights)
    if not total:  # every case weighs nothing: nothing to earn for correctness
        return [0.0] * len(weights)
    shares = [round(points * w / total, 4) for w in weights[:-1]]
    return [*shares, round(points - sum(shares), 4)] if weights else []


def _groups(spec: PuzzleSpec, cases: list[CaseMark]) -> dict[str, list[CaseMark]]:
    """Cases by group, in the order the groups first appear."""
    own = {c.name: c for c in spec.tests}
    groups: dict[str, list[CaseMark]] = {}
    for mark_ in cases:
        case: Case = own[mark_.name]
        groups.setdefault(case.group or GROUP_NAMES[mark_.visibility], []).append(mark_)
    return groups


# Wrong answers on calls other than the cases': they forfeit every case's points.
WRONG_OUTSIDE_CASES = frozenset({"recheck-failed", "timed-call-wrong"})


def forfeits(report: RunReport | None) -> bool:
    """Whether a report earns nothing for correctness: rejected, or wrong outside its cases."""
    if report is None:
        return False
    wrong = report.verdict is Verdict.FAILED and report.reason in WRONG_OUTSIDE_CASES
    return report.verdict is Verdict.REJECTED or wrong


def _group_part(
    puzzle: str, group: str, cases: list[CaseMark], points: float, report: RunReport | None
) -> Part:
    weight = sum(c.weight for c in cases)
    forfeit = forfeits(report)
    won = 0.0 if forfeit else sum(c.weight for c in cases if c.status == "passed")
    score = points if won == weight and weight and not forfeit else points * won / (weight or 1.0)
    shown = visibility.VISIBLE
    for c in cases:
        shown = visibility.stricter(shown, c.visibility)
    return Part(
        puzzle=puzzle,
        name=f"{puzzle}: {group}",
        kind="cases",
        score=round(score, 4),
        max_score=points,
        visibility=shown,
        cases=tuple(cases),
    )


def _speed_part(puzzle: str, report: RunReport | None, points: float, target) -> Part:
    figure = report.figure if report is not None and report.passed else None
    if report is None:
        credit, detail = 0.0, "nothing submitted"
    elif not report.passed:
        credit, detail = 0.0, f"not timed: its verdict is {report.verdict.value}"
    elif figure is None:
        credit, detail = (
            0.0,
            "not timed in this grading ("
            + ("Triton's interpreter)" if report.env.mode == "interpreter" else "--no-timing)"),
        )
    elif not report.ranked:
        credit, detail = 0.0, "timed, but the times could not be verified: no speed points"
    else:
        credit = target.credit(figure.speedup_vs_library, figure.sol_pct, figure.ms)
        detail = (
            f"score {figure.ms * 1e3:.1f} us"
            + (f", {figure.sol_pct:.1f}% of speed of light" if figure.sol_pct is not None else "")
            + (
                f", {figure.speedup_vs_library:.2f}x the library"
                if figure.speedup_vs_library is not None
                else ""
            )
            + f" on {report.env.device}; the target is {target}: {credit * 100:.0f}% of the points"
        )
    return Part(
        puzzle,
        f"{puzzle}: speed",
        "speed",
        round(points * credit, 4),
        round(points, 4),
        visibility.VISIBLE,
        detail=detail,
    )
