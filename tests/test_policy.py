"""The grading policy: YAML read into frozen values, every error naming the file and the key,
the speed targets' credit and the lateness of a submission."""

import math
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from judge.core.yaml_reader import Reader
from judge.errors import JudgeError, SpecError
from judge.records import policy
from judge.records.policy import Late, Policy, PuzzlePolicy, SpeedTarget, lateness

IDS = {"vector_add", "softmax", "relu"}
EST = timezone(timedelta(hours=-5))

FULL = """\
assignment: Triton lab 1
canvas_id: 48213
points: 12
correctness: 0.75
speed: "120 us"
due: 2026-12-01T23:59:00-05:00
late: {grace_minutes: 15, per_day: 0.1, max_days: 5}
puzzles:
  vector_add: {}
  softmax: {points: 20, speed: "60% sol", cases: {"N=1M": 3, "N=1": 0.5}}
  relu: {correctness: 1, speed: library}
"""


def write(tmp_path: Path, text: str, name: str = "policy.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_text(tmp_path: Path, text: str) -> Policy:
    return policy.load(write(tmp_path, text), IDS)


# ------------------------------------------------------------------------------- defaults


def test_no_file_is_the_default_policy():
    p = policy.load(None, IDS)
    assert p is policy.DEFAULT
    assert p.assignment == "tpuzzle"
    assert p.canvas_id == ""
    assert p.default == PuzzlePolicy(10.0, 0.8, SpeedTarget("library", 1.0), ())
    assert p.puzzles == () and p.listed == ()
    assert p.due is None
    assert p.late == Late(0.0, 0.0, None)
    assert p.source == "the default policy"
    assert p.of("softmax") is p.default
    assert p.canvas_column == "tpuzzle"


def test_an_empty_file_is_the_default_policy_from_that_file(tmp_path):
    path = write(tmp_path, "# nothing here\n")
    p = policy.load(path, IDS)
    assert p.default == policy.DEFAULT.default
    assert p.puzzles == () and p.due is None and p.late == Late()
    assert p.source == str(path)


def test_a_full_policy(tmp_path):
    path = write(tmp_path, FULL)
    p = policy.load(path, IDS)
    assert p.assignment == "Triton lab 1"
    assert p.canvas_id == "48213"
    assert p.canvas_column == "Triton lab 1 (48213)"
    assert p.default == PuzzlePolicy(12.0, 0.75, SpeedTarget("us", 120.0), ())
    assert p.listed == ("vector_add", "softmax", "relu")
    assert p.of("vector_add") == p.default
    softmax = p.of("softmax")
    assert softmax == PuzzlePolicy(
        20.0, 0.75, SpeedTarget("sol", 60.0), (("N=1M", 3.0), ("N=1", 0.5))
    )
    assert (softmax.weight("N=1M"), softmax.weight("N=1"), softmax.weight("N=2")) == (3.0, 0.5, 1)
    assert p.of("relu") == PuzzlePolicy(12.0, 1.0, SpeedTarget("library", 1.0), ())
    assert p.of("not listed") == p.default
    assert p.due == datetime(2026, 12, 1, 23, 59, tzinfo=EST)
    assert p.due.utcoffset() == timedelta(hours=-5)
    assert p.late == Late(15.0, 0.1, 5)
    assert p.source == str(path)
    assert policy.as_dict(p) == {
        "source": str(path),
        "assignment": "Triton lab 1",
        "due": "2026-12-01T23:59:00-05:00",
        "late": {"grace_minutes": 15.0, "per_day": 0.1, "max_days": 5},
    }


def test_the_default_policy_as_a_dict():
    assert policy.as_dict(policy.DEFAULT) == {
        "source": "the default policy",
        "assignment": "tpuzzle",
        "due": None,
        "late": {"grace_minutes": 0.0, "per_day": 0.0, "max_days": None},
    }


@pytest.mark.parametrize(
    "due",
    [
        "2026-12-02T04:59:00Z",
        '"2026-12-02T04:59:00Z"',
        '"2026-12-02T04:59:00z"',
        '"2026-12-01T23:59:00-05:00"',
        '"2026-12-02 04:59:00+00:00"',
    ],
)
def test_due_dates_with_an_offset_or_z(tmp_path, due):
    p = load_text(tmp_path, f"due: {due}\n")
    assert p.due == datetime(2026, 12, 2, 4, 59, tzinfo=timezone.utc)
    assert p.due.tzinfo is not None


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("library", SpeedTarget("library", 1.0)),
        ("LIBRARY", SpeedTarget("library", 1.0)),
        ("80% sol", SpeedTarget("sol", 80.0)),
        (" 80 %  SOL ", SpeedTarget("sol", 80.0)),
        ("62.5%sol", SpeedTarget("sol", 62.5)),
        ("120 us", SpeedTarget("us", 120.0)),
        ("0.5us", SpeedTarget("us", 0.5)),
    ],
)
def test_parse_speed(text, target):
    assert policy.parse_speed(text, Reader(Path("p.yaml"), {})) == target


def test_speed_targets_in_words():
    assert str(SpeedTarget("library")) == "the library's time"
    assert str(SpeedTarget("sol", 80.0)) == "80% of speed of light"
    assert str(SpeedTarget("us", 120.0)) == "120 us"
    assert str(SpeedTarget("us", 2.5)) == "2.5 us"


@pytest.mark.parametrize(
    ("text", "when"),
    [
        ("2026-12-01T23:59:00-05:00", datetime(2026, 12, 1, 23, 59, tzinfo=EST)),
        (" 2026-12-02T04:59:00Z ", datetime(2026, 12, 2, 4, 59, tzinfo=timezone.utc)),
        ("2026-12-01T23:59:00", datetime(2026, 12, 1, 23, 59)),
        ("tomorrow", None),
        ("", None),
        ("Z", None),
    ],
)
def test_parse_time(text, when):
    got = policy.parse_time(text)
    assert got == when
    if when is not None:
        assert (got.tzinfo is None) == (when.tzinfo is None)


def test_canvas_column_without_and_with_an_id(tmp_path):
    assert load_text(tmp_path, "assignment: Lab 2\n").canvas_column == "Lab 2"
    assert load_text(tmp_path, "assignment: Lab 2\ncanvas_id: ' 77 '\n").canvas_column == (
        "Lab 2 (77)"
    )
    assert Policy(assignment="x", canvas_id="9").canvas_column == "x (9)"


# ------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        ("pionts: 10\n", "pionts", "unknown key (expected one of: assignment, canvas_id, "),
        ("puzzles: {softmx: {}}\n", "puzzles.softmx", "not a puzzle id of the catalogue"),
        ("correctness: 1.5\n", "correctness", "between 0 and 1, got 1.5"),
        ("correctness: -0.1\n", "correctness", "between 0 and 1"),
        ("puzzles: {relu: {correctness: 2}}\n", "puzzles.relu.correctness", "between 0 and 1"),
        ("points: -1\n", "points", "points >= 0, got -1.0"),
        ("points: .inf\n", "points", "points >= 0"),
        ("puzzles: {relu: {points: -3}}\n", "puzzles.relu.points", "points >= 0"),
        ("points: ten\n", "points", "expected float"),
        ('puzzles: {relu: {cases: {"N=1": -1}}}\n', "puzzles.relu.cases.N=1", "weight >= 0"),
        ('puzzles: {relu: {cases: {"N=1": "two"}}}\n', "puzzles.relu.cases.N=1", "weight >= 0"),
        ('puzzles: {relu: {cases: {"N=1": true}}}\n', "puzzles.relu.cases.N=1", "weight >= 0"),
        ("puzzles: {relu: {wieght: 1}}\n", "puzzles.relu.wieght", "unknown key"),
        ("speed: fast\n", "speed", "expected library, '<P>% sol' or '<T> us'"),
        ("speed: 80% speed of light\n", "speed", "expected library"),
        ('speed: "0 us"\n', "speed", "the target must be above 0"),
        ('speed: "0% sol"\n', "speed", "the target must be above 0"),
        ('puzzles: {relu: {speed: "80 ms"}}\n', "puzzles.relu.speed", "expected library"),
        ("due: 2026-12-01T23:59:00\n", "due", "give the UTC offset"),
        ('due: "2026-12-01T23:59:00"\n', "due", "give the UTC offset"),
        ("due: 2026-12-01\n", "due", "give the UTC offset"),
        ("due: next friday\n", "due", "expected an ISO 8601 time"),
        ("late: {per_day: 1.5}\n", "late.per_day", "between 0 and 1, got 1.5"),
        ("late: {per_day: -0.1}\n", "late.per_day", "between 0 and 1"),
        ("late: {grace_minutes: -5}\n", "late.grace_minutes", "minutes >= 0"),
        ("late: {max_days: -1}\n", "late.max_days", "days >= 0"),
        ("late: {max_days: 2.5}\n", "late.max_days", "expected int"),
        ("late: {per_week: 1}\n", "late.per_week", "unknown key"),
        ("assignment: '  '\n", "assignment", "must not be empty"),
        ("- a list\n", "(top level)", "expected a mapping"),
        ("puzzles: [relu]\n", "puzzles", "expected dict"),
    ],
)
def test_every_error_names_the_file_and_the_key(tmp_path, text, where, problem):
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as raised:
        policy.load(path, IDS)
    message = str(raised.value)
    assert isinstance(raised.value, JudgeError)
    assert message.startswith(f"{path}: {where}: "), message
    assert problem in message


def test_an_unknown_key_is_named(tmp_path):
    with pytest.raises(SpecError) as raised:
        load_text(tmp_path, "points: 1\ncorectness: 0.5\n")
    assert str(raised.value).startswith(f"{tmp_path / 'policy.yaml'}: corectness: unknown key")


def test_a_yaml_syntax_error_names_the_file_and_line(tmp_path):
    path = write(tmp_path, "points: 10\npuzzles: {relu: [\n")
    with pytest.raises(SpecError) as raised:
        policy.load(path, IDS)
    assert str(raised.value).startswith(f"{path}: line 3: YAML syntax error")


def test_a_missing_file_is_a_judge_error(tmp_path):
    path = tmp_path / "nope.yaml"
    with pytest.raises(JudgeError) as raised:
        policy.load(path, IDS)
    assert str(raised.value) == f"{path}: cannot read: No such file or directory"


def test_a_directory_is_a_judge_error(tmp_path):
    with pytest.raises(JudgeError) as raised:
        policy.load(tmp_path, IDS)
    assert str(raised.value) == f"{tmp_path}: cannot read: Is a directory"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_a_judge_error(tmp_path):
    path = write(tmp_path, "points: 1\n")
    path.chmod(0)
    try:
        with pytest.raises(JudgeError) as raised:
            policy.load(path, IDS)
    finally:
        path.chmod(0o644)
    assert str(raised.value) == f"{path}: cannot read: Permission denied"


def test_a_file_not_utf8_is_a_judge_error(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_bytes(b"assignment: caf\xe9\n")
    with pytest.raises(JudgeError) as raised:
        policy.load(path, IDS)
    assert str(raised.value) == f"{path}: not UTF-8 text (byte 15)"


@pytest.mark.parametrize("speed", ["1.2.3 us", ". us", "1..5% sol"])
def test_a_malformed_number_in_speed_is_a_spec_error(tmp_path, speed):
    path = write(tmp_path, f'speed: "{speed}"\n')
    with pytest.raises(SpecError, match=rf"^{path}: speed: "):
        policy.load(path, IDS)


@pytest.mark.parametrize("weight", [".nan", ".inf"])
def test_a_case_weight_that_is_not_finite_is_a_spec_error(tmp_path, weight):
    path = write(tmp_path, f'puzzles: {{relu: {{cases: {{"N=1": {weight}}}}}}}\n')
    with pytest.raises(SpecError, match=r"puzzles\.relu\.cases\.N=1: "):
        policy.load(path, IDS)


# ------------------------------------------------------------------------------- credit


def test_library_credit():
    target = SpeedTarget("library")
    assert target.credit(1.0, 50.0, 0.1) == 1.0
    assert target.credit(0.5, 50.0, 0.1) == 0.5
    assert target.credit(2.5, 50.0, 0.1) == 1.0  # capped at the whole share
    assert target.credit(None, 50.0, 0.1) == 0.0  # no library figure
    assert target.credit(math.nan, 50.0, 0.1) == 0.0
    assert target.credit(math.inf, 50.0, 0.1) == 0.0
    assert target.credit(-1.0, 50.0, 0.1) == 0.0


def test_speed_of_light_credit():
    target = SpeedTarget("sol", 80.0)
    assert target.credit(None, 80.0, 0.1) == 1.0
    assert target.credit(None, 40.0, 0.1) == 0.5
    assert target.credit(None, 20.0, 0.1) == 0.25
    assert target.credit(9.0, 95.0, 0.1) == 1.0  # capped
    assert target.credit(9.0, None, 0.1) == 0.0  # no speed-of-light figure
    assert target.credit(9.0, math.nan, 0.1) == 0.0


def test_time_credit():
    target = SpeedTarget("us", 120.0)
    assert target.credit(None, None, 0.12) == pytest.approx(1.0)
    assert target.credit(None, None, 0.24) == pytest.approx(0.5)
    assert target.credit(None, None, 0.48) == pytest.approx(0.25)
    assert target.credit(None, None, 0.06) == 1.0  # faster than the target: capped
    assert target.credit(None, None, 0.0) == 0.0  # no time
    assert target.credit(None, None, -1.0) == 0.0
    assert target.credit(None, None, math.nan) == 0.0
    assert target.credit(None, None, math.inf) == 0.0


# ------------------------------------------------------------------------------- lateness

DUE = datetime(2026, 12, 1, 23, 59, tzinfo=EST)


def late_policy(grace: float = 0.0, per_day: float = 0.1, max_days: int | None = None) -> Policy:
    return Policy(due=DUE, late=Late(grace, per_day, max_days))


def test_no_due_date_or_no_time_is_never_late():
    far = DUE + timedelta(days=100)
    assert lateness(Policy(late=Late(0, 0.5, 1)), far) == policy.Lateness(far, 0, 1.0)
    assert lateness(Policy(late=Late(0, 0.5, 1)), far).note == ""
    unknown = lateness(late_policy(), None)
    assert (unknown.submitted, unknown.days, unknown.factor, unknown.note) == (None, 0, 1.0, "")


def test_on_time():
    for when in (DUE - timedelta(days=3), DUE):
        got = lateness(late_policy(), when)
        assert (got.days, got.factor, got.note) == (0, 1.0, "")


def test_within_the_grace():
    p = late_policy(grace=15)
    assert lateness(p, DUE + timedelta(minutes=15)).days == 0
    assert lateness(p, DUE + timedelta(minutes=14, seconds=59)).factor == 1.0
    got = lateness(p, DUE + timedelta(minutes=15, seconds=1))
    assert (got.days, got.factor, got.note) == (1, 0.9, "1 day late: -10%")


def test_a_minute_late_is_a_day_late():
    got = lateness(late_policy(), DUE + timedelta(minutes=1))
    assert (got.days, got.factor, got.note) == (1, 0.9, "1 day late: -10%")


def test_started_days_count():
    p = late_policy()
    exactly = lateness(p, DUE + timedelta(days=1))
    assert (exactly.days, exactly.factor) == (1, 0.9)
    over = lateness(p, DUE + timedelta(days=1, seconds=1))
    assert (over.days, over.factor, over.note) == (2, 0.8, "2 days late: -20%")
    assert lateness(p, DUE + timedelta(days=2, hours=23)).days == 3


def test_the_grace_shifts_the_days():
    p = late_policy(grace=60)
    assert lateness(p, DUE + timedelta(days=1, minutes=60)).days == 1
    assert lateness(p, DUE + timedelta(days=1, minutes=61)).days == 2


def test_past_max_days_no_points():
    p = late_policy(per_day=0.1, max_days=5)
    five = lateness(p, DUE + timedelta(days=5))
    assert (five.days, five.factor, five.note) == (5, 0.5, "5 days late: -50%")
    six = lateness(p, DUE + timedelta(days=5, seconds=1))
    assert (six.days, six.factor, six.note) == (6, 0.0, "6 days late: no points")


def test_max_days_zero_takes_nothing_late():
    got = lateness(late_policy(per_day=0.0, max_days=0), DUE + timedelta(seconds=1))
    assert (got.days, got.factor, got.note) == (1, 0.0, "1 day late: no points")


def test_the_factor_does_not_go_below_zero():
    got = lateness(late_policy(per_day=0.3), DUE + timedelta(days=4))
    assert (got.days, got.factor, got.note) == (4, 0.0, "4 days late: no points")
    assert lateness(late_policy(per_day=0.3), DUE + timedelta(days=3)).factor == 0.1


def test_a_submission_in_another_zone():
    utc = datetime(2026, 12, 2, 4, 59, tzinfo=timezone.utc)  # the due date itself
    assert lateness(late_policy(), utc).days == 0
    assert lateness(late_policy(), utc + timedelta(seconds=1)).days == 1


def test_a_naive_submission_time_is_in_the_due_dates_zone():
    p = late_policy()
    on_time = lateness(p, datetime(2026, 12, 1, 23, 59))  # 23:59 at -05:00, not UTC
    assert (on_time.days, on_time.factor) == (0, 1.0)
    assert on_time.submitted == DUE
    late = lateness(p, datetime(2026, 12, 2, 0, 30))
    assert (late.days, late.factor) == (1, 0.9)
    assert late.submitted.utcoffset() == timedelta(hours=-5)


def test_lateness_from_a_loaded_policy(tmp_path):
    p = load_text(tmp_path, FULL)
    within = lateness(p, datetime(2026, 12, 3, 0, 14, tzinfo=EST))  # 1 day 15 min after
    assert (within.days, within.factor, within.note) == (1, 0.9, "1 day late: -10%")
    got = lateness(p, datetime(2026, 12, 3, 0, 15, tzinfo=EST))  # grace 15 min: 1 day 1 min
    assert (got.days, got.factor, got.note) == (2, 0.8, "2 days late: -20%")
    assert lateness(p, datetime(2026, 12, 7, 0, 14, tzinfo=EST)).factor == 0.5
    gone = lateness(p, datetime(2026, 12, 7, 0, 15, tzinfo=EST))
    assert (gone.days, gone.factor, gone.note) == (6, 0.0, "6 days late: no points")
