"""Who may see a test case: the visibility of a case, and a report with its hidden cases reduced
to pass or fail.

A puzzle's case may be `visible` (the default), `after_due_date` or `hidden`. Cases drawn with an
instructor's secret seed count as `after_due_date` at least: their inputs are the instructor's.
A student's own `tpuzzle run` never shows a hidden case's inputs, sizes, seed, expected values or
hints (`conceal`); the formats of the course platforms map each visibility to the platform's own
notion (records.platforms).

Pure: specs and reports in, values out.
"""

from __future__ import annotations

import re
from dataclasses import replace

from judge.core.results import CaseResult, RunReport, Verdict
from judge.core.spec import VISIBILITIES, Case, PuzzleSpec

VISIBLE, AFTER_DUE_DATE, HIDDEN = VISIBILITIES
HIDDEN_REASON = "hidden-case"  # a run decided by a hidden case says only that


def stricter(a: str, b: str) -> str:
    """The less visible of two visibilities."""
    return max(a, b, key=VISIBILITIES.index)


def of_case(case: Case, secret: bool) -> str:
    """A case's visibility in a grading; with a secret seed, no case is less than after_due_date."""
    return stricter(case.visibility, AFTER_DUE_DATE) if secret else case.visibility


def of_cases(spec: PuzzleSpec, secret: bool) -> dict[str, str]:
    """Each test case's name -> its visibility in a grading."""
    return {c.name: of_case(c, secret) for c in spec.tests}


def label(visibility: str, index: int) -> str:
    """What a student sees of the index-th (from 1) case of a visibility concealed from them."""
    if visibility == HIDDEN:
        return f"hidden case {index}"
    return f"case {index} shown after the due date"


def conceal(
    report: RunReport,
    spec: PuzzleSpec,
    concealed: frozenset[str] = frozenset({HIDDEN}),
    secret: bool = False,
) -> RunReport:
    """The report as a student may see it: each case whose visibility (with `secret`, in a
    grading with a secret seed) is `concealed` shown by its status alone, and a verdict that such
    a case decided told without naming it."""
    labels = _labels(spec, concealed, secret)
    if not labels:
        return report
    cases = tuple(_concealed(c, labels[c.name]) if c.name in labels else c for c in report.cases)
    reason, message = report.reason, report.message
    deciding = _deciding(report)
    if deciding is not None and deciding.name in labels:
        reason = HIDDEN_REASON if report.verdict is Verdict.FAILED else reason
        message = _told(report.verdict, labels[deciding.name], deciding.status)
    else:
        message = _scrubbed(message, [c.name for c in spec.tests], labels)
    return replace(report, cases=cases, reason=reason, message=message)


def _labels(spec: PuzzleSpec, concealed: frozenset[str], secret: bool) -> dict[str, str]:
    """Each concealed case's name -> its label, numbered per visibility in spec order."""
    labels: dict[str, str] = {}
    counts: dict[str, int] = {}
    for case in spec.tests:
        seen = of_case(case, secret)
        if seen in concealed:
            counts[seen] = counts.get(seen, 0) + 1
            labels[case.name] = label(seen, counts[seen])
    return labels


def _concealed(case: CaseResult, shown_as: str) -> CaseResult:
    return CaseResult(name=shown_as, sizes={}, seed=0, status=case.status, hidden=True)


def _deciding(report: RunReport) -> CaseResult | None:
    """The case that decided a run that did not pass: the first one not passed or skipped."""
    if report.verdict is Verdict.PASSED:
        return None
    return next((c for c in report.cases if c.status not in ("passed", "skipped")), None)


def _told(verdict: Verdict, shown_as: str, status: str) -> str:
    what = "went wrong" if status == "failed" else f"ended in {status}"
    return f"{shown_as} {what} ({verdict.value}); its inputs and expected values are not shown"


def _scrubbed(message: str, names: list[str], labels: dict[str, str]) -> str:
    """The message with each concealed case named by its label instead, and the `(seed S)` that
    follows its name dropped. Every case name is matched whole, longest first, so a visible
    `N=4099 mixed` is never taken for a concealed `N=4099`, nor `N=30` for `N=3`."""
    ordered = sorted(set(names), key=len, reverse=True)
    alternatives = "|".join(re.escape(n) for n in ordered)
    pattern = re.compile(rf"(?<![\w=])({alternatives})(?![\w=])( \(seed -?[0-9]+\))?")

    def replace_one(match: re.Match) -> str:
        return labels.get(match[1], match[0])

    return pattern.sub(replace_one, message) if ordered else message


def progress_detail(case: Case, spec: PuzzleSpec, reveal: bool) -> str:
    """A case's name as progress may show it."""
    if reveal or case.visibility != HIDDEN:
        return case.name
    return _labels(spec, frozenset({HIDDEN}), False).get(case.name, "hidden case")
