"""Who may see a test case: visibilities, a report with its concealed cases reduced to their
status, the labels progress shows, and the spec keys that set them (judge.core.visibility)."""

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from judge.core import visibility
from judge.core.results import BufferCheck, CaseResult, EnvInfo, Mismatch, RunReport, Verdict
from judge.core.spec import Case, PuzzleSpec
from judge.core.spec_reader import load_spec
from judge.errors import SpecError

BOTH = frozenset({visibility.AFTER_DUE_DATE, visibility.HIDDEN})
ENV = EnvInfo(
    mode="interpreter",
    device="cpu (Triton interpreter)",
    driver="",
    cuda="",
    triton="3.6.0",
    torch="2.11.0",
    python="3.12.3",
)
# vector_add's first cases with two hidden ones (one in a group of its own) and two shown after
# the due date; the rest of its cases are left out
TESTS = """tests:
  - {sizes: {N: 1}, seed: 101}
  - {sizes: {N: 2}, seed: 102}
  - {sizes: {N: 3}, seed: 103, visibility: hidden, group: edges}
  - {sizes: {N: 127}, seed: 104, visibility: after_due_date}
  - {sizes: {N: 128}, seed: 105, visibility: hidden}
  - {name: "N=129 late", sizes: {N: 129}, seed: 106, visibility: after_due_date}
  - {sizes: {N: 1023}, seed: 107, visibility: visible}
"""
NAMES = ("N=1", "N=2", "N=3", "N=127", "N=128", "N=129 late", "N=1023")


def spec_with(tmp_path: Path, puzzles_root: Path, tests: str) -> PuzzleSpec:
    """vector_add, copied under tmp_path, with `tests` in place of its test cases."""
    target = tmp_path / "catalogue" / "vector_add"
    shutil.copytree(puzzles_root / "vector_add", target)
    path = target / "puzzle.yaml"
    head, rest = path.read_text().split("tests:\n", 1)
    path.write_text(head + tests + rest[rest.index("benchmarks:") :])
    return load_spec(path)


@pytest.fixture
def spec(tmp_path, puzzles_root) -> PuzzleSpec:
    return spec_with(tmp_path, puzzles_root, TESTS)


def result(case: Case, status: str = "passed", **fields) -> CaseResult:
    """A case's result as the runner writes it, with every detail a hidden case must lose."""
    if status != "passed":
        n = case.size_map["N"]
        defaults = dict(
            max_error=2.5,
            buffers=(
                BufferCheck(
                    "c_ptr",
                    ok=False,
                    mismatches=1,
                    total=n,
                    max_error=2.5,
                    max_error_index=0,
                    first=(Mismatch(0, 1.5, -1.0, 2.5),),
                ),
            ),
            hints=("a store is missing its mask",),
            reproduce=f"tpuzzle run vector_add s.py --size N={n} --seed {case.seed}",
            message=f"{case.name} went wrong",
        )
        fields = {**defaults, **fields}
    return CaseResult(case.name, case.size_map, case.seed, status, **fields)


def report(
    spec: PuzzleSpec,
    statuses: dict[str, str],
    verdict: Verdict,
    reason: str,
    message: str,
) -> RunReport:
    """A report on every case of the spec (passed unless `statuses` says otherwise)."""
    cases = tuple(result(c, statuses.get(c.name, "passed")) for c in spec.tests)
    return RunReport(
        puzzle=spec.id,
        submission="s.py",
        verdict=verdict,
        reason=reason,
        message=message,
        cases=cases,
        timing=(),
        env=ENV,
        ranked=False,
        notes=("interpreter mode",),
        output="printed\n",
        wall_s=1.5,
    )


def by_name(spec: PuzzleSpec, name: str) -> Case:
    return next(c for c in spec.tests if c.name == name)


# ------------------------------------------------------------------------------- visibilities


def test_the_spec_sets_each_case_visibility_and_group(spec):
    assert [c.name for c in spec.tests] == list(NAMES)
    assert [c.visibility for c in spec.tests] == [
        "visible",
        "visible",
        "hidden",
        "after_due_date",
        "hidden",
        "after_due_date",
        "visible",
    ]
    assert [c.group for c in spec.tests] == ["", "", "edges", "", "", "", ""]
    assert visibility.VISIBILITIES == ("visible", "after_due_date", "hidden")


@pytest.mark.parametrize(
    ("a", "b", "stricter"),
    [
        ("visible", "visible", "visible"),
        ("visible", "after_due_date", "after_due_date"),
        ("after_due_date", "visible", "after_due_date"),
        ("visible", "hidden", "hidden"),
        ("hidden", "visible", "hidden"),
        ("after_due_date", "hidden", "hidden"),
        ("hidden", "after_due_date", "hidden"),
        ("hidden", "hidden", "hidden"),
    ],
)
def test_stricter_is_the_less_visible(a, b, stricter):
    assert visibility.stricter(a, b) == stricter


def test_of_case_without_and_with_a_secret_seed(spec):
    assert [visibility.of_case(c, secret=False) for c in spec.tests] == [
        "visible",
        "visible",
        "hidden",
        "after_due_date",
        "hidden",
        "after_due_date",
        "visible",
    ]
    # a secret seed's inputs are the instructor's: no case is less than after_due_date
    assert [visibility.of_case(c, secret=True) for c in spec.tests] == [
        "after_due_date",
        "after_due_date",
        "hidden",
        "after_due_date",
        "hidden",
        "after_due_date",
        "after_due_date",
    ]


def test_of_cases_maps_every_test_case(spec):
    assert visibility.of_cases(spec, secret=False) == dict(
        zip(
            NAMES,
            [
                "visible",
                "visible",
                "hidden",
                "after_due_date",
                "hidden",
                "after_due_date",
                "visible",
            ],
            strict=True,
        )
    )
    assert set(visibility.of_cases(spec, secret=True).values()) == {"after_due_date", "hidden"}
    assert visibility.of_cases(spec, secret=True)["N=3"] == "hidden"


def test_labels():
    assert visibility.label("hidden", 1) == "hidden case 1"
    assert visibility.label("hidden", 12) == "hidden case 12"
    assert visibility.label("after_due_date", 2) == "case 2 shown after the due date"
    assert visibility.HIDDEN_REASON == "hidden-case"


# ------------------------------------------------------------------------------- conceal


def test_conceal_leaves_a_report_alone_when_nothing_is_concealed(spec, vector_add):
    plain = report(vector_add, {"N=1": "failed"}, Verdict.FAILED, "wrong-answer", "case N=1 bad")
    assert visibility.conceal(plain, vector_add) is plain  # no case of vector_add is hidden
    assert visibility.conceal(plain, vector_add, BOTH, secret=False) is plain
    mixed = report(spec, {"N=3": "failed"}, Verdict.FAILED, "wrong-answer", "case N=3 bad")
    assert visibility.conceal(mixed, spec, frozenset()) is mixed


def test_a_passing_report_keeps_everything_but_the_hidden_cases(spec):
    passed = report(spec, {}, Verdict.PASSED, "ok", "every case passed")
    shown = visibility.conceal(passed, spec)
    assert [c.name for c in shown.cases] == [
        "N=1",
        "N=2",
        "hidden case 1",
        "N=127",  # after_due_date is not concealed by default
        "hidden case 2",
        "N=129 late",
        "N=1023",
    ]
    assert [c.hidden for c in shown.cases] == [False, False, True, False, True, False, False]
    assert shown.cases[2] == CaseResult("hidden case 1", {}, 0, "passed", hidden=True)
    assert shown.cases[4] == CaseResult("hidden case 2", {}, 0, "passed", hidden=True)
    for i in (0, 1, 3, 5, 6):
        assert shown.cases[i] is passed.cases[i]
    assert shown == replace(passed, cases=shown.cases)  # verdict, message, output... as they were


def test_a_report_failing_on_a_hidden_case_names_only_its_label(spec):
    hidden = by_name(spec, "N=3")
    message = "case N=3 (seed 103): c_ptr: 1 of 3 elements wrong"
    failed = report(spec, {"N=3": "failed"}, Verdict.FAILED, "wrong-answer", message)
    assert failed.cases[2].buffers and failed.cases[2].hints  # there was something to hide
    shown = visibility.conceal(failed, spec)

    case = shown.cases[2]
    assert case.name == "hidden case 1"
    assert case.sizes == {}
    assert case.seed == 0
    assert case.status == "failed"
    assert case.buffers == ()
    assert case.hints == ()
    assert case.reproduce == ""
    assert case.message == ""
    assert case.max_error is None
    assert case.hidden is True

    assert shown.verdict is Verdict.FAILED
    assert shown.reason == "hidden-case"
    assert shown.message == (
        "hidden case 1 went wrong (failed); its inputs and expected values are not shown"
    )
    for secret in (hidden.name, "N=3", str(hidden.seed), "seed", "c_ptr"):
        assert secret not in shown.message
        assert secret not in shown.reason
    assert shown.cases[:2] == failed.cases[:2] and shown.cases[3:4] == failed.cases[3:4]
    assert (shown.output, shown.notes, shown.wall_s) == ("printed\n", ("interpreter mode",), 1.5)


def test_the_first_case_not_passed_decides_even_when_a_later_visible_one_fails(spec):
    statuses = {"N=128": "failed", "N=1023": "failed"}
    message = "case N=128 (seed 105): c_ptr: 1 of 128 elements wrong"
    shown = visibility.conceal(
        report(spec, statuses, Verdict.FAILED, "wrong-answer", message), spec
    )
    assert (shown.reason, shown.message) == (
        "hidden-case",
        "hidden case 2 went wrong (failed); its inputs and expected values are not shown",
    )
    assert shown.cases[6].name == "N=1023" and shown.cases[6].message == "N=1023 went wrong"


def test_a_visible_failure_is_told_intact_when_a_hidden_case_passed(spec):
    message = "case N=2 (seed 102): c_ptr: 1 of 2 elements wrong"
    failed = report(spec, {"N=2": "failed"}, Verdict.FAILED, "wrong-answer", message)
    shown = visibility.conceal(failed, spec)
    assert (shown.verdict, shown.reason, shown.message) == (Verdict.FAILED, "wrong-answer", message)
    assert shown.cases[1] is failed.cases[1]
    assert shown.cases[1].reproduce == "tpuzzle run vector_add s.py --size N=2 --seed 102"
    assert shown.cases[2] == CaseResult("hidden case 1", {}, 0, "passed", hidden=True)


def test_an_error_decided_by_a_hidden_case_keeps_its_reason(spec):
    cases = tuple(
        result(c, "error", message="timed out after 60 s") if c.name == "N=128" else result(c)
        for c in spec.tests[:5]
    )
    timed_out = replace(
        report(spec, {}, Verdict.ERROR, "timeout", "case N=128 (seed 105): timed out after 60 s"),
        cases=cases,
    )
    shown = visibility.conceal(timed_out, spec)
    assert shown.verdict is Verdict.ERROR
    assert shown.reason == "timeout"
    assert shown.message == (
        "hidden case 2 ended in error (error); its inputs and expected values are not shown"
    )
    assert shown.cases[4] == CaseResult("hidden case 2", {}, 0, "error", hidden=True)
    assert len(shown.cases) == 5


def test_a_message_naming_a_hidden_case_in_passing_is_scrubbed(spec):
    message = "case N=1 (seed 101): c_ptr: 1 of 1 elements wrong; N=3 also ran, N=30 did not"
    failed = report(spec, {"N=1": "failed"}, Verdict.FAILED, "wrong-answer", message)
    shown = visibility.conceal(failed, spec)
    assert shown.reason == "wrong-answer"
    assert shown.message == (
        "case N=1 (seed 101): c_ptr: 1 of 1 elements wrong; hidden case 1 also ran, N=30 did not"
    )


def test_a_hidden_case_seed_is_scrubbed_from_a_message(spec):
    message = "case N=1 (seed 101) went wrong as N=128 (seed 105) did; see N=1280 and N=128."
    failed = report(spec, {"N=1": "failed"}, Verdict.FAILED, "wrong-answer", message)
    shown = visibility.conceal(failed, spec)
    assert "(seed 105)" not in shown.message and "105" not in shown.message
    assert " ".join(shown.message.split()) == (
        "case N=1 (seed 101) went wrong as hidden case 2 did; see N=1280 and hidden case 2."
    )


def test_a_passed_report_message_is_scrubbed_too(spec):
    passed = report(spec, {}, Verdict.PASSED, "ok", "every case passed, N=128 the slowest")
    shown = visibility.conceal(passed, spec)
    assert (shown.reason, shown.message) == ("ok", "every case passed, hidden case 2 the slowest")


def test_after_due_date_cases_concealed_with_hidden_ones(spec):
    message = "case N=127 (seed 104): c_ptr: 1 of 127 elements wrong"
    failed = report(spec, {"N=127": "failed"}, Verdict.FAILED, "wrong-answer", message)
    assert visibility.conceal(failed, spec).message == message  # by default it is shown
    shown = visibility.conceal(failed, spec, BOTH)
    assert [c.name for c in shown.cases] == [
        "N=1",
        "N=2",
        "hidden case 1",
        "case 1 shown after the due date",
        "hidden case 2",
        "case 2 shown after the due date",
        "N=1023",
    ]
    assert shown.cases[3] == CaseResult(
        "case 1 shown after the due date", {}, 0, "failed", hidden=True
    )
    assert shown.reason == "hidden-case"
    assert shown.message == (
        "case 1 shown after the due date went wrong (failed); "
        "its inputs and expected values are not shown"
    )


def test_only_after_due_date_concealed_leaves_hidden_cases_shown(spec):
    passed = report(spec, {}, Verdict.PASSED, "ok", "every case passed")
    shown = visibility.conceal(passed, spec, frozenset({"after_due_date"}))
    assert [c.name for c in shown.cases] == [
        "N=1",
        "N=2",
        "N=3",
        "case 1 shown after the due date",
        "N=128",
        "case 2 shown after the due date",
        "N=1023",
    ]


def test_a_secret_seed_conceals_the_visible_cases_as_after_due_date(spec):
    message = "case N=1023 (seed 107): c_ptr: 1 of 1023 elements wrong"
    failed = report(spec, {"N=1023": "failed"}, Verdict.FAILED, "wrong-answer", message)
    assert visibility.conceal(failed, spec, secret=True).message == message  # hidden only
    shown = visibility.conceal(failed, spec, BOTH, secret=True)
    assert [c.name for c in shown.cases] == [
        "case 1 shown after the due date",
        "case 2 shown after the due date",
        "hidden case 1",
        "case 3 shown after the due date",
        "hidden case 2",
        "case 4 shown after the due date",
        "case 5 shown after the due date",
    ]
    assert all(c.hidden and c.sizes == {} and c.seed == 0 for c in shown.cases)
    assert shown.message == (
        "case 5 shown after the due date went wrong (failed); "
        "its inputs and expected values are not shown"
    )


def test_labels_are_numbered_per_visibility_in_spec_order(tmp_path, puzzles_root):
    tests = """tests:
  - {sizes: {N: 1}, seed: 1, visibility: hidden}
  - {sizes: {N: 2}, seed: 2, visibility: after_due_date}
  - {sizes: {N: 3}, seed: 3}
  - {sizes: {N: 4}, seed: 4, visibility: hidden}
  - {sizes: {N: 5}, seed: 5, visibility: after_due_date}
  - {sizes: {N: 6}, seed: 6, visibility: hidden}
"""
    spec = spec_with(tmp_path, puzzles_root, tests)
    run = report(spec, {}, Verdict.PASSED, "ok", "every case passed")
    # the report lists the cases in another order: the labels follow the spec's
    run = replace(run, cases=tuple(reversed(run.cases)))
    shown = visibility.conceal(run, spec, BOTH)
    assert [c.name for c in shown.cases] == [
        "hidden case 3",
        "case 2 shown after the due date",
        "hidden case 2",
        "N=3",
        "case 1 shown after the due date",
        "hidden case 1",
    ]


def test_a_visible_case_whose_name_starts_with_a_hidden_one_keeps_its_message(
    tmp_path, puzzles_root
):
    tests = """tests:
  - {sizes: {N: 4099}, seed: 120, visibility: hidden}
  - {name: "N=4099 mixed", sizes: {N: 4099}, seed: 110, draw: mixed}
"""
    spec = spec_with(tmp_path, puzzles_root, tests)
    message = "case N=4099 mixed (seed 110): c_ptr: 7 of 4099 elements wrong"
    failed = report(spec, {"N=4099 mixed": "failed"}, Verdict.FAILED, "wrong-answer", message)
    assert visibility.conceal(failed, spec).message == message


# ------------------------------------------------------------------------------- progress


def test_progress_detail_labels_hidden_cases_unless_revealed(spec):
    assert [visibility.progress_detail(c, spec, reveal=False) for c in spec.tests] == [
        "N=1",
        "N=2",
        "hidden case 1",
        "N=127",  # progress shows after_due_date cases: the run is the student's own
        "hidden case 2",
        "N=129 late",
        "N=1023",
    ]
    assert [visibility.progress_detail(c, spec, reveal=True) for c in spec.tests] == list(NAMES)
    stranger = Case("N=77", (("N", 77),), 77, visibility="hidden")  # not a case of the spec
    assert visibility.progress_detail(stranger, spec, reveal=False) == "hidden case"
    assert visibility.progress_detail(stranger, spec, reveal=True) == "N=77"


# ------------------------------------------------------------------------------- spec keys


def test_an_unknown_visibility_is_a_spec_error_naming_the_key(tmp_path, puzzles_root):
    tests = """tests:
  - {sizes: {N: 1}, seed: 1}
  - {sizes: {N: 2}, seed: 2, visibility: secret}
"""
    with pytest.raises(SpecError) as raised:
        spec_with(tmp_path, puzzles_root, tests)
    path = tmp_path / "catalogue" / "vector_add" / "puzzle.yaml"
    assert str(raised.value) == (
        f"{path}: tests[1].visibility: unknown value 'secret' "
        "(expected one of: visible, after_due_date, hidden)"
    )


def test_a_group_that_is_not_text_is_a_spec_error(tmp_path, puzzles_root):
    tests = """tests:
  - {sizes: {N: 1}, seed: 1, group: 5}
"""
    with pytest.raises(SpecError) as raised:
        spec_with(tmp_path, puzzles_root, tests)
    path = tmp_path / "catalogue" / "vector_add" / "puzzle.yaml"
    assert str(raised.value) == f"{path}: tests[0].group: expected str, got int 5"


def test_two_cases_of_one_name_are_a_spec_error(tmp_path, puzzles_root):
    tests = """tests:
  - {sizes: {N: 1}, seed: 1}
  - {name: "N=1", sizes: {N: 2}, seed: 2, visibility: hidden}
"""
    with pytest.raises(SpecError) as raised:
        spec_with(tmp_path, puzzles_root, tests)
    path = tmp_path / "catalogue" / "vector_add" / "puzzle.yaml"
    assert str(raised.value) == (
        f"{path}: tests: two cases are named 'N=1' (a case's name identifies it in grading)"
    )
