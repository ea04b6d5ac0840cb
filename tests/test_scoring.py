"""Points: a puzzle's cases graded by group, its speed by the policy's target, lateness on top.
Every report is built by hand; no kernel runs."""

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from judge.core.results import CaseResult, EnvInfo, RunReport, Score, Timing, Verdict
from judge.core.spec import PuzzleSpec
from judge.core.spec_reader import load_spec
from judge.records import scoring
from judge.records.grading import Graded, Submission
from judge.records.policy import Late, Policy, PuzzlePolicy, SpeedTarget, parse_time
from judge.records.scoring import NOT_SUBMITTED, assess

GPU = EnvInfo(
    mode="gpu",
    device="NVIDIA H100",
    driver="580",
    cuda="13.0",
    triton="3.6.0",
    torch="2.11.0",
    python="3.12.3",
)
CPU = replace(GPU, mode="interpreter", device="cpu (Triton interpreter)", driver="", cuda="")
# 100 us, 40% of speed of light, half the library's speed
LIBRARY = SpeedTarget("library")
SCORE = Score(ms=0.1, p20_ms=0.098, p80_ms=0.102, shapes=1, sol_pct=40.0, speedup_vs_library=0.5)

FOUR = """tests:
  - {sizes: {N: 1}, seed: 101}
  - {sizes: {N: 2}, seed: 102}
  - {sizes: {N: 3}, seed: 103}
  - {sizes: {N: 127}, seed: 104}
"""
VISIBILITIES = """tests:
  - {sizes: {N: 1}, seed: 101}
  - {sizes: {N: 2}, seed: 102, visibility: visible}
  - {sizes: {N: 3}, seed: 103, visibility: after_due_date}
  - {sizes: {N: 127}, seed: 104, visibility: hidden}
"""
GROUPS = """tests:
  - {sizes: {N: 1}, seed: 101, group: edges}
  - {sizes: {N: 2}, seed: 102}
  - {sizes: {N: 3}, seed: 103, visibility: hidden, group: edges}
  - {sizes: {N: 127}, seed: 104, visibility: after_due_date, group: big}
  - {sizes: {N: 128}, seed: 105, group: big}
"""
INTERPRETED = """tests:
  - {sizes: {N: 1}, seed: 101}
  - {sizes: {N: 2}, seed: 102, interpret: false}
  - {sizes: {N: 3}, seed: 103}
  - {sizes: {N: 127}, seed: 104, interpret: false, visibility: hidden}
"""


def spec_with(tmp_path: Path, puzzles_root: Path, tests: str) -> PuzzleSpec:
    """vector_add, copied under tmp_path, with `tests` in place of its test cases."""
    target = tmp_path / "catalogue" / "vector_add"
    shutil.copytree(puzzles_root / "vector_add", target)
    path = target / "puzzle.yaml"
    head, rest = path.read_text().split("tests:\n", 1)
    path.write_text(head + tests + rest[rest.index("benchmarks:") :])
    return load_spec(path)


def report(
    spec: PuzzleSpec,
    failed: tuple[str, ...] = (),
    verdict: Verdict | None = None,
    env: EnvInfo = GPU,
    score: Score | None = SCORE,
    ranked: bool | None = None,
    only: tuple[str, ...] | None = None,
    timing: tuple[Timing, ...] = (),
) -> RunReport:
    """A report on `spec` with every case passed but those in `failed`; `only`: the cases run."""
    names = only if only is not None else tuple(c.name for c in spec.tests)
    cases = tuple(
        CaseResult(name, {}, 0, "failed" if name in failed else "passed") for name in names
    )
    if verdict is None:
        verdict = Verdict.FAILED if failed else Verdict.PASSED
    passed = verdict is Verdict.PASSED
    return RunReport(
        puzzle=spec.id,
        submission=f"class/{spec.id}.py",
        verdict=verdict,
        reason="ok" if passed else "wrong-answer",
        message="",
        cases=cases,
        timing=timing,
        env=env,
        ranked=passed and env.mode == "gpu" if ranked is None else ranked,
        wall_s=1.5,
        score=score if passed and env.mode == "gpu" else None,
    )


def graded(student: str, rep: RunReport, submitted: str = "") -> Graded:
    path = Path(f"class/{student}/{rep.puzzle}.py")
    return Graded(Submission(student, rep.puzzle, path, "ab" * 32, submitted), rep)


def policy(
    points: float = 10.0,
    correctness: float = 0.8,
    speed: SpeedTarget = LIBRARY,
    weights: dict[str, float] | None = None,
    puzzles: tuple[str, ...] = (),
    **fields,
) -> Policy:
    rules = PuzzlePolicy(points, correctness, speed, tuple((weights or {}).items()))
    return Policy(default=rules, puzzles=tuple((p, rules) for p in puzzles), **fields)


def one(spec: PuzzleSpec, rep: RunReport, rules: Policy, secret: bool = False):
    """The one puzzle mark of one student."""
    (student,) = assess([graded("alice", rep)], {spec.id: spec}, rules, secret)
    assert student.student == "alice"
    (mark,) = student.puzzles
    return mark


def summary(mark) -> list[tuple[str, str, float, float, str]]:
    return [(p.name, p.kind, p.score, p.max_score, p.visibility) for p in mark.parts]


# ------------------------------------------------------------------------------- splitting


def test_points_split_between_cases_and_speed(vector_add):
    mark = one(vector_add, report(vector_add), policy(points=20, correctness=0.8))
    assert summary(mark) == [
        ("vector_add: cases", "cases", 16.0, 16.0, "visible"),
        ("vector_add: speed", "speed", 2.0, 4.0, "visible"),  # half the library's speed
    ]
    assert [c.name for c in mark.parts[0].cases] == [c.name for c in vector_add.tests]
    assert {c.status for c in mark.parts[0].cases} == {"passed"}
    assert (mark.earned, mark.max_score, mark.score) == (18.0, 20.0, 18.0)
    assert mark.verdict == "passed"
    assert mark.parts[0].passed and not mark.parts[1].passed


def test_the_default_policy_gives_8_and_2(vector_add):
    mark = one(vector_add, report(vector_add, failed=("N=1",)), Policy())
    assert summary(mark) == [
        ("vector_add: cases", "cases", round(8 * 12 / 13, 4), 8.0, "visible"),
        ("vector_add: speed", "speed", 0.0, 2.0, "visible"),
    ]
    assert mark.parts[1].detail == "not timed: its verdict is failed"


def test_all_correctness_leaves_no_speed_part(vector_add):
    mark = one(vector_add, report(vector_add), policy(points=5, correctness=1.0))
    assert summary(mark) == [("vector_add: cases", "cases", 5.0, 5.0, "visible")]


def test_no_correctness_leaves_a_zero_cases_part(vector_add):
    mark = one(vector_add, report(vector_add), policy(points=5, correctness=0.0))
    assert summary(mark) == [
        ("vector_add: cases", "cases", 0.0, 0.0, "visible"),
        ("vector_add: speed", "speed", 2.5, 5.0, "visible"),
    ]


def test_a_failed_report_earns_its_passed_cases_by_weight(tmp_path, puzzles_root):
    spec = spec_with(tmp_path, puzzles_root, FOUR)
    rules = policy()
    assert one(spec, report(spec, failed=("N=2",)), rules).parts[0].score == 6.0
    assert one(spec, report(spec, failed=("N=2", "N=3")), rules).parts[0].score == 4.0
    weighted = policy(weights={"N=1": 3})  # weights 3, 1, 1, 1: total 6
    assert one(spec, report(spec, failed=("N=1",)), weighted).parts[0].score == 4.0
    assert one(spec, report(spec, failed=("N=2",)), weighted).parts[0].score == 6.6667
    zero = policy(weights={"N=127": 0})  # N=127 counts for nothing
    assert one(spec, report(spec, failed=("N=127",)), zero).parts[0].score == 8.0
    assert one(spec, report(spec, failed=("N=1",)), zero).parts[0].score == 5.3333


def test_case_weights_change_each_groups_share(tmp_path, puzzles_root):
    spec = spec_with(tmp_path, puzzles_root, VISIBILITIES)
    weighted = policy(points=10, correctness=1.0, weights={"N=127": 6})  # groups 2, 1, 6 of 9
    mark = one(spec, report(spec), weighted)
    assert [p.max_score for p in mark.parts] == [2.2222, 1.1111, 6.6667]
    assert mark.max_score == pytest.approx(10.0, abs=1e-9)


def test_a_case_not_in_the_report_earns_nothing(tmp_path, puzzles_root):
    spec = spec_with(tmp_path, puzzles_root, FOUR)
    mark = one(spec, report(spec, only=("N=1", "N=2", "N=3")), policy())
    assert mark.parts[0].score == 6.0
    assert [c.status for c in mark.parts[0].cases] == ["passed", "passed", "passed", "not run"]
    assert mark.parts[0].cases[3].result is None


# ------------------------------------------------------------------------------- groups


def test_visibilities_make_three_parts(tmp_path, puzzles_root):
    spec = spec_with(tmp_path, puzzles_root, VISIBILITIES)
    mark = one(spec, report(spec, failed=("N=127",)), policy())
    assert summary(mark) == [
        ("vector_add: cases", "cases", 4.0, 4.0, "visible"),
        ("vector_add: cases shown after the due date", "cases", 2.0, 2.0, "after_due_date"),
        ("vector_add: hidden cases", "cases", 0.0, 2.0, "hidden"),
        ("vector_add: speed", "speed", 0.0, 2.0, "visible"),
    ]
    assert [[c.name for c in p.cases] for p in mark.parts] == [
        ["N=1", "N=2"],
        ["N=3"],
        ["N=127"],
        [],
    ]
    assert [c.visibility for c in mark.parts[0].cases] == ["visible", "visible"]
    assert mark.parts[2].cases[0].status == "failed"


def test_a_secret_seed_shows_visible_cases_after_the_due_date(tmp_path, puzzles_root):
    spec = spec_with(tmp_path, puzzles_root, VISIBILITIES)
    mark = one(spec, report(spec), policy(), secret=True)
    assert summary(mark) == [
        ("vector_add: cases shown after the due date", "cases", 6.0, 6.0, "after_due_date"),
        ("vector_add: hidden cases", "cases", 2.0, 2.0, "hidden"),
        ("vector_add: speed", "speed", 1.0, 2.0, "visible"),
    ]
    assert {c.visibility for c in mark.parts[0].cases} == {"after_due_date"}


def test_a_custom_group_names_a_part_with_its_strictest_visibility(tmp_path, puzzles_root):
    spec = spec_with(tmp_path, puzzles_root, GROUPS)
    mark = one(spec, report(spec, failed=("N=3",)), policy(points=10, correctness=1.0))
    assert summary(mark) == [
        ("vector_add: edges", "cases", 2.0, 4.0, "hidden"),
        ("vector_add: cases", "cases", 2.0, 2.0, "visible"),
        ("vector_add: big", "cases", 4.0, 4.0, "after_due_date"),
    ]
    assert [c.name for c in mark.parts[0].cases] == ["N=1", "N=3"]
    assert [c.visibility for c in mark.parts[0].cases] == ["visible", "hidden"]
    assert [c.name for c in mark.parts[2].cases] == ["N=127", "N=128"]


def test_group_shares_add_up_to_the_correctness_points(tmp_path, puzzles_root):
    spec = spec_with(tmp_path, puzzles_root, VISIBILITIES.replace("\n  - {sizes: {N: 2}", "\n#"))
    assert [c.name for c in spec.tests] == ["N=1", "N=3", "N=127"]
    mark = one(spec, report(spec), policy(points=10, correctness=0.8))
    cases = [p.max_score for p in mark.parts if p.kind == "cases"]
    assert sum(cases) == pytest.approx(8.0, abs=1e-9)
    assert sorted(cases) == [2.6666, 2.6667, 2.6667]
    assert [p.score for p in mark.parts if p.kind == "cases"] == cases
    (student,) = assess(
        [graded("a", report(spec, score=replace(SCORE, speedup_vs_library=1)))],
        {spec.id: spec},
        policy(),
    )
    assert (student.score, student.max_score) == (10.0, 10.0)


def test_cases_that_all_weigh_nothing_earn_nothing(tmp_path, puzzles_root):
    spec = spec_with(tmp_path, puzzles_root, FOUR)
    rules = policy(weights={"N=1": 0, "N=2": 0, "N=3": 0, "N=127": 0})
    failing = report(spec, failed=("N=1", "N=2", "N=3", "N=127"))
    assert one(spec, failing, rules).parts[0].score == 0.0


# ------------------------------------------------------------------------------- verdicts


def test_a_rejected_report_earns_no_correctness(tmp_path, puzzles_root):
    spec = spec_with(tmp_path, puzzles_root, VISIBILITIES)
    mark = one(spec, report(spec, verdict=Verdict.REJECTED), policy())
    assert [c.status for p in mark.parts for c in p.cases] == ["passed"] * 4
    assert summary(mark) == [
        ("vector_add: cases", "cases", 0.0, 4.0, "visible"),
        ("vector_add: cases shown after the due date", "cases", 0.0, 2.0, "after_due_date"),
        ("vector_add: hidden cases", "cases", 0.0, 2.0, "hidden"),
        ("vector_add: speed", "speed", 0.0, 2.0, "visible"),
    ]
    assert mark.parts[-1].detail == "not timed: its verdict is rejected"
    assert (mark.score, mark.verdict) == (0.0, "rejected")


@pytest.mark.parametrize("reason", ["recheck-failed", "timed-call-wrong"])
def test_a_wrong_answer_outside_the_cases_earns_no_correctness(tmp_path, puzzles_root, reason):
    """Every case passed, then a wrong answer on the re-check or a timed call: a wrong answer,
    so nothing for correctness (8 of 10 before, the same as a correct file)."""
    spec = spec_with(tmp_path, puzzles_root, VISIBILITIES)
    caught = replace(report(spec, verdict=Verdict.FAILED), reason=reason)
    mark = one(spec, caught, policy(points=10, correctness=0.8))
    assert [c.status for p in mark.parts for c in p.cases] == ["passed"] * 4
    assert [p.score for p in mark.parts] == [0.0, 0.0, 0.0, 0.0]
    assert mark.score == 0.0
    wrong_on_a_case = report(spec, failed=("N=1",))  # a case's own wrong answer: partial credit
    assert one(spec, wrong_on_a_case, policy(points=10, correctness=0.8)).score > 0


def test_an_error_report_earns_the_cases_it_passed(tmp_path, puzzles_root):
    spec = spec_with(tmp_path, puzzles_root, FOUR)
    crashed = report(spec, verdict=Verdict.ERROR, only=("N=1",))
    mark = one(spec, crashed, policy())
    assert [p.score for p in mark.parts] == [2.0, 0.0]
    assert mark.parts[1].detail == "not timed: its verdict is error"


def test_the_interpreter_counts_only_its_cases(tmp_path, puzzles_root):
    spec = spec_with(tmp_path, puzzles_root, INTERPRETED)
    interpreted = report(spec, env=CPU, failed=("N=2", "N=127"))  # not the interpreter's cases
    interpreted = replace(interpreted, verdict=Verdict.PASSED, ranked=False)
    mark = one(spec, interpreted, policy())
    assert summary(mark) == [
        ("vector_add: cases", "cases", 8.0, 8.0, "visible"),  # no hidden part: N=127 not run
        ("vector_add: speed", "speed", 0.0, 2.0, "visible"),
    ]
    assert [c.name for c in mark.parts[0].cases] == ["N=1", "N=3"]
    assert mark.parts[1].detail == "not timed in this grading (Triton's interpreter)"
    half = one(spec, report(spec, env=CPU, failed=("N=3",)), policy())
    assert half.parts[0].score == 4.0


def test_on_a_gpu_every_case_counts(tmp_path, puzzles_root):
    spec = spec_with(tmp_path, puzzles_root, INTERPRETED)
    mark = one(spec, report(spec, only=("N=1", "N=3")), policy())
    assert [p.name for p in mark.parts] == [
        "vector_add: cases",
        "vector_add: hidden cases",
        "vector_add: speed",
    ]
    assert [p.score for p in mark.parts] == [4.0, 0.0, 1.0]  # passed, half the speed
    assert [p.max_score for p in mark.parts] == [6.0, 2.0, 2.0]


# ------------------------------------------------------------------------------- speed


def speed_of(spec: PuzzleSpec, rep: RunReport, target: SpeedTarget = LIBRARY):
    part = one(spec, rep, policy(points=10, correctness=0.5, speed=target)).parts[-1]
    assert (part.name, part.kind, part.max_score, part.visibility, part.cases) == (
        f"{spec.id}: speed",
        "speed",
        5.0,
        "visible",
        (),
    )
    return part.score, part.detail


def test_speed_from_the_library_target(vector_add):
    assert speed_of(vector_add, report(vector_add)) == (
        2.5,
        "score 100.0 us, 40.0% of speed of light, 0.50x the library on NVIDIA H100; "
        "the target is the library's time: 50% of the points",
    )
    faster = report(vector_add, score=replace(SCORE, speedup_vs_library=1.7))
    assert speed_of(vector_add, faster)[0] == 5.0  # capped at the speed points


def test_speed_from_a_speed_of_light_target(vector_add):
    assert speed_of(vector_add, report(vector_add), SpeedTarget("sol", 80.0)) == (
        2.5,
        "score 100.0 us, 40.0% of speed of light, 0.50x the library on NVIDIA H100; "
        "the target is 80% of speed of light: 50% of the points",
    )


def test_speed_from_a_time_target(vector_add):
    bare = report(vector_add, score=Score(0.2, 0.19, 0.21, 1))
    assert speed_of(vector_add, bare, SpeedTarget("us", 50.0)) == (
        1.25,
        "score 200.0 us on NVIDIA H100; the target is 50 us: 25% of the points",
    )


def test_speed_with_the_figure_missing_earns_nothing(vector_add):
    bare = report(vector_add, score=Score(0.2, 0.19, 0.21, 1))
    score, detail = speed_of(vector_add, bare)  # no library figure for a library target
    assert score == 0.0
    assert detail.endswith("the target is the library's time: 0% of the points")


def test_speed_from_a_report_stored_before_scores(vector_add):
    old = Timing(
        case="N=25000000",
        sizes={"N": 25_000_000},
        median_ms=0.08,
        p20_ms=0.079,
        p80_ms=0.081,
        samples=100,
        input_sets=3,
        sol_pct=50.0,
        speedup_vs_reference=0.8,
    )
    rep = replace(report(vector_add, score=None), timing=(old,))
    assert rep.figure == Score(0.08, 0.079, 0.081, 1, 50.0, None, 0.8)
    assert speed_of(vector_add, rep) == (
        4.0,
        "score 80.0 us, 50.0% of speed of light, 0.80x the library on NVIDIA H100; "
        "the target is the library's time: 80% of the points",
    )


def test_speed_unranked_earns_nothing(vector_add):
    assert speed_of(vector_add, report(vector_add, ranked=False)) == (
        0.0,
        "timed, but the times could not be verified: no speed points",
    )


def test_speed_of_a_run_not_timed(vector_add):
    untimed = replace(report(vector_add), score=None, ranked=False)
    assert speed_of(vector_add, untimed) == (0.0, "not timed in this grading (--no-timing)")


def test_speed_of_a_run_not_passed(vector_add):
    failed = replace(report(vector_add, failed=("N=2",)), score=SCORE, ranked=True)
    assert speed_of(vector_add, failed) == (0.0, "not timed: its verdict is failed")


def test_speed_of_the_interpreter(vector_add):
    interpreted = report(vector_add, env=CPU, only=tuple(c.name for c in vector_add.tests[:11]))
    assert speed_of(vector_add, interpreted) == (
        0.0,
        "not timed in this grading (Triton's interpreter)",
    )


# ------------------------------------------------------------------------------- the class


def relu_spec(puzzles_root: Path) -> PuzzleSpec:
    return load_spec(puzzles_root / "relu" / "puzzle.yaml")


def test_a_listed_puzzle_not_submitted_is_zero(vector_add, puzzles_root):
    specs = {"vector_add": vector_add, "relu": relu_spec(puzzles_root)}
    rules = policy(puzzles=("relu", "vector_add"))
    (student,) = assess([graded("bob", report(vector_add))], specs, rules)
    relu, va = student.puzzles
    assert (relu.puzzle, va.puzzle) == ("relu", "vector_add")
    assert relu.graded is None and relu.report is None
    assert relu.verdict == NOT_SUBMITTED == "not submitted"
    assert summary(relu) == [
        ("relu: cases", "cases", 0.0, 8.0, "visible"),
        ("relu: speed", "speed", 0.0, 2.0, "visible"),
    ]
    assert {c.status for c in relu.parts[0].cases} == {"not run"}
    assert len(relu.parts[0].cases) == 13
    assert relu.parts[1].detail == "nothing submitted"
    assert (relu.late.days, relu.late.factor, relu.score, relu.max_score) == (0, 1.0, 0.0, 10.0)
    assert (va.score, student.score, student.max_score) == (9.0, 9.0, 20.0)
    assert student.wall_s == 1.5


def test_without_listed_puzzles_the_puzzles_are_those_submitted(vector_add, puzzles_root):
    relu = relu_spec(puzzles_root)
    specs = {"vector_add": vector_add, "relu": relu}
    marks = assess(
        [graded("carol", report(relu)), graded("alice", report(vector_add, failed=("N=1",)))],
        specs,
        Policy(),
    )
    assert [m.student for m in marks] == ["alice", "carol"]
    assert [[p.puzzle for p in m.puzzles] for m in marks] == [
        ["relu", "vector_add"],
        ["relu", "vector_add"],
    ]
    alice, carol = marks
    assert [p.verdict for p in alice.puzzles] == ["not submitted", "failed"]
    assert [p.verdict for p in carol.puzzles] == ["passed", "not submitted"]
    assert (alice.score, carol.score) == (round(8 * 12 / 13, 4), 9.0)
    assert alice.max_score == carol.max_score == 20.0


def test_a_listed_puzzle_without_a_spec_is_left_out(vector_add):
    rules = policy(puzzles=("relu", "vector_add"))
    (student,) = assess([graded("bob", report(vector_add))], {"vector_add": vector_add}, rules)
    assert [p.puzzle for p in student.puzzles] == ["vector_add"]


def test_a_puzzle_not_listed_is_not_graded(vector_add, puzzles_root):
    relu = relu_spec(puzzles_root)
    rules = policy(puzzles=("vector_add",))
    (student,) = assess(
        [graded("bob", report(relu))], {"vector_add": vector_add, "relu": relu}, rules
    )
    assert [(p.puzzle, p.verdict, p.score) for p in student.puzzles] == [
        ("vector_add", "not submitted", 0.0)
    ]


def test_nothing_graded_is_no_marks(vector_add):
    assert assess([], {"vector_add": vector_add}, policy(puzzles=("vector_add",))) == []


# ------------------------------------------------------------------------------- lateness


def late_policy() -> Policy:
    return policy(
        puzzles=("vector_add",),
        due=parse_time("2026-12-01T23:59:00Z"),
        late=Late(grace_minutes=0, per_day=0.25, max_days=3),
    )


def test_lateness_scales_the_puzzle_and_student_but_not_the_parts(vector_add):
    sub = graded("dan", report(vector_add), submitted="2026-12-02T10:00:00+00:00")
    (student,) = assess([sub], {"vector_add": vector_add}, late_policy())
    (mark,) = student.puzzles
    assert [p.score for p in mark.parts] == [8.0, 1.0]  # as earned
    assert (mark.late.days, mark.late.factor, mark.late.note) == (1, 0.75, "1 day late: -25%")
    assert mark.late.submitted == parse_time("2026-12-02T10:00:00+00:00")
    assert (mark.earned, mark.score, mark.max_score) == (9.0, 6.75, 10.0)
    assert (student.score, student.max_score) == (6.75, 10.0)


def test_lateness_reads_the_submissions_time(vector_add):
    specs = {"vector_add": vector_add}
    cases = [
        ("", 1.0),  # no time known: never late
        ("2026-12-01T23:59:00Z", 1.0),
        ("2026-12-01T18:59:00-05:00", 1.0),  # the due date in another zone
        ("2026-12-01T19:00:00-05:00", 0.75),
        ("2026-12-03T23:59:01Z", 0.25),  # 2 days 1 s: 3 days
        ("2026-12-04T23:59:01Z", 0.0),  # past max_days
        ("2026-12-02T00:00:00", 0.75),  # naive: in the due date's zone (UTC)
    ]
    for when, factor in cases:
        (student,) = assess([graded("e", report(vector_add), when)], specs, late_policy())
        (mark,) = student.puzzles
        assert mark.late.factor == factor, when
        assert student.score == round(9.0 * factor, 4), when
    assert scoring.submitted_at(Submission("e", "vector_add", Path("x.py"))) is None


def test_each_puzzle_has_its_own_lateness(vector_add, puzzles_root):
    relu = relu_spec(puzzles_root)
    rules = replace(
        late_policy(),
        puzzles=(("vector_add", late_policy().default), ("relu", late_policy().default)),
    )
    on_time = graded("f", report(relu), "2026-12-01T12:00:00Z")
    late = graded("f", report(vector_add), "2026-12-03T12:00:00Z")
    (student,) = assess([late, on_time], {"vector_add": vector_add, "relu": relu}, rules)
    assert [(p.puzzle, p.late.factor, p.score) for p in student.puzzles] == [
        ("vector_add", 0.5, 4.5),
        ("relu", 1.0, 9.0),
    ]
    assert student.score == 13.5
