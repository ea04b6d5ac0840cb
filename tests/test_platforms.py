import base64
import json
import shutil
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from formats import check_classroom, check_gradescope
from test_grading import H100, make_report

from judge.core.results import BufferCheck, CaseResult, Score, Verdict
from judge.core.spec_reader import load_spec
from judge.records import platforms, policy, scoring
from judge.records.grading import Graded, Submission

DUE = datetime(2026, 12, 1, 23, 59, tzinfo=timezone.utc)
TESTS = """tests:
  - {name: "N=1", sizes: {N: 1}, seed: 1}
  - {name: "N=129", sizes: {N: 129}, seed: 2, visibility: after_due_date}
  - {name: "N=4099 secret", sizes: {N: 4099}, seed: 3, visibility: hidden}
"""


@pytest.fixture
def spec(tmp_path, puzzles_root):
    """vector_add with a visible, an after-due-date and a hidden case."""
    shutil.copytree(puzzles_root / "vector_add", tmp_path / "vector_add")
    path = tmp_path / "vector_add" / "puzzle.yaml"
    head, rest = path.read_text().split("tests:\n", 1)
    path.write_text(head + TESTS + rest[rest.index("benchmarks:") :])
    return load_spec(path)


def result(name: str, seed: int, status: str = "passed", **fields) -> CaseResult:
    n = int(name.split("=")[1].split()[0])
    return CaseResult(name=name, sizes={"N": n}, seed=seed, status=status, **fields)


HIDDEN_FAIL = result(
    "N=4099 secret",
    3,
    "failed",
    buffers=(BufferCheck("c_ptr", ok=False, mismatches=7, total=4099),),
    hints=("wrote 17 elements past the end of c_ptr",),
    reproduce="tpuzzle run vector_add s.py --size N=4099 --seed 3",
)
SCORE = Score(0.1, 0.098, 0.102, 1, sol_pct=85.0, speedup_vs_library=0.5)


def student(*reports, name: str = "ada", submitted: str = "", rules=policy.DEFAULT, spec=None):
    graded = [
        Graded(Submission(name, r.puzzle, Path(f"{name}/{r.puzzle}.py"), "ab", submitted), r)
        for r in reports
    ]
    return scoring.assess(graded, {"vector_add": spec}, rules)[0]


def passing(**fields):
    cases = (result("N=1", 1), result("N=129", 2), result("N=4099 secret", 3))
    return make_report(cases=cases, score=SCORE, ranked=True, env=H100, **fields)


def failing_hidden(**fields):
    cases = (result("N=1", 1), result("N=129", 2), HIDDEN_FAIL)
    message = "case N=4099 secret (seed 3): c_ptr: 7 of 4099 elements wrong"
    return make_report(
        verdict=Verdict.FAILED, reason="out-of-bounds", message=message, cases=cases, **fields
    )


# ------------------------------------------------------------------------------- Gradescope


def test_gradescope_results_follow_the_specification(spec):
    mark = student(passing(output="hello\n"), spec=spec)
    document = check_gradescope(platforms.gradescope(mark, {"vector_add": spec}))
    tests = {t["name"]: t for t in document["tests"]}
    assert list(tests) == [
        "vector_add: cases",
        "vector_add: cases shown after the due date",
        "vector_add: hidden cases",
        "vector_add: speed",
    ]
    assert [t["visibility"] for t in tests.values()] == [
        "visible",
        "after_due_date",
        "hidden",
        "visible",
    ]
    assert [t["max_score"] for t in tests.values()] == [2.6667, 2.6667, 2.6666, 2.0]
    assert tests["vector_add: speed"]["score"] == 1.0  # half the library's speed: half the share
    assert "0.50x the library" in tests["vector_add: speed"]["output"]
    assert document["score"] == 9.0
    assert document["leaderboard"] == [
        {"name": "vector_add time (us)", "value": 100.0, "order": "asc"},
        {"name": "vector_add % of speed of light", "value": 85.0, "order": "desc"},
    ]
    assert document["stdout_visibility"] == "hidden"
    # what the submission printed goes with the least visible group only
    assert "hello" in tests["vector_add: hidden cases"]["output"]
    assert all("hello" not in t["output"] for n, t in tests.items() if "hidden" not in n)


def test_gradescope_summary_names_no_case_a_student_may_not_see(spec):
    mark = student(failing_hidden(), spec=spec)
    document = check_gradescope(platforms.gradescope(mark, {"vector_add": spec}))
    assert "4099" not in document["output"] and "seed 3" not in document["output"]
    assert "hidden case 1 went wrong (failed)" in document["output"]
    tests = {t["name"]: t for t in document["tests"]}
    hidden = tests["vector_add: hidden cases"]
    # the hidden test itself, which Gradescope shows instructors only, says everything
    assert hidden["status"] == "failed" and hidden["score"] == 0
    assert "N=4099 secret: failed" in hidden["output"]
    assert "hint: wrote 17 elements past the end" in hidden["output"]
    assert tests["vector_add: cases"]["status"] == "passed"
    assert tests["vector_add: speed"]["output"].endswith("not timed: its verdict is failed")


def test_gradescope_with_a_secret_seed_shows_nothing_before_the_due_date(spec):
    graded = [Graded(Submission("ada", "vector_add", Path("a.py")), failing_hidden())]
    mark = scoring.assess(graded, {"vector_add": spec}, policy.DEFAULT, secret=True)[0]
    document = check_gradescope(platforms.gradescope(mark, {"vector_add": spec}, secret=True))
    visibilities = {t["name"]: t["visibility"] for t in document["tests"]}
    assert visibilities == {
        "vector_add: cases shown after the due date": "after_due_date",
        "vector_add: hidden cases": "hidden",
        "vector_add: speed": "visible",
    }
    assert "N=1" not in document["output"]


def test_gradescope_late_penalty_is_in_the_score_and_said(spec):
    rules = replace(policy.DEFAULT, due=DUE, late=policy.Late(per_day=0.25))
    late = (DUE + timedelta(hours=30)).isoformat()
    mark = student(passing(), spec=spec, submitted=late, rules=rules)
    document = check_gradescope(platforms.gradescope(mark, {"vector_add": spec}))
    assert sum(t["score"] for t in document["tests"]) == pytest.approx(9.0)
    assert document["score"] == pytest.approx(9.0 * 0.5)
    assert "2 days late: -50%" in document["output"]


def test_gradescope_text_is_plain(spec):
    hostile = passing(output="\x1b[31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07\u202e")
    mark = student(hostile, spec=spec, name="\x1b[2Jeve")
    text = json.dumps(platforms.gradescope(mark, {"vector_add": spec}))
    assert "\\u001b" not in text and "\\u202e" not in text and "\\u0007" not in text
    assert "red link" in text


# ------------------------------------------------------------------------------- GitHub Classroom


def test_classroom_result_follows_the_reporters_format(spec):
    mark = student(failing_hidden(), spec=spec)
    now = DUE - timedelta(days=1)
    encoded = platforms.encode(platforms.classroom(mark, {"vector_add": spec}, now, DUE))
    document = check_classroom(encoded)
    assert document["status"] == "fail"
    assert document["max_score"] == 10.0
    tests = {t["name"]: t for t in document["tests"]}
    assert [t["status"] for t in tests.values()] == ["pass", "pass", "fail", "fail"]
    assert sum(t["score"] for t in tests.values()) == pytest.approx(2.6667 + 2.6667)
    every_message = "\n".join(t["message"] for t in tests.values())
    for secret in ("4099", "seed 3", "17 elements", "N=129"):
        assert secret not in every_message
    assert "0 of 1 cases passed; these are hidden" in tests["vector_add: hidden cases"]["message"]
    after = tests["vector_add: cases shown after the due date"]["message"]
    assert "1 of 1 cases passed; these are shown after the due date" in after


def test_classroom_shows_after_due_date_cases_once_the_due_date_has_passed(spec):
    cases = (
        result("N=1", 1),
        result("N=129", 2, "failed", message="boom"),
        result("N=4099 secret", 3),
    )
    report = make_report(verdict=Verdict.FAILED, reason="wrong-answer", cases=cases)
    mark = student(report, spec=spec)
    before = platforms.classroom(mark, {"vector_add": spec}, DUE - timedelta(seconds=1), DUE)
    after = platforms.classroom(mark, {"vector_add": spec}, DUE, DUE)
    name = "vector_add: cases shown after the due date"
    message = {t["name"]: t["message"] for t in before["tests"]}[name]
    assert "N=129" not in message and "boom" not in message
    message = {t["name"]: t["message"] for t in after["tests"]}[name]
    assert "N=129: failed" in message and "seed 2: boom" in message
    never = platforms.classroom(mark, {"vector_add": spec}, DUE + timedelta(days=9), None)
    assert "N=129" not in {t["name"]: t["message"] for t in never["tests"]}[name]


def test_classroom_status_is_error_when_nothing_ran(spec):
    report = make_report(
        verdict=Verdict.ERROR,
        reason="syntax-error",
        cases=(),
        message="SyntaxError at line 3",
    )
    document = platforms.classroom(student(report, spec=spec), {"vector_add": spec}, DUE, DUE)
    assert document["status"] == "error"
    assert {t["status"] for t in document["tests"]} == {"error"}
    assert "SyntaxError at line 3" in document["tests"][0]["message"]
    passed = platforms.classroom(student(passing(), spec=spec), {"vector_add": spec}, DUE, DUE)
    assert passed["status"] == "fail"  # half the library's speed: not every point
    rules = replace(policy.DEFAULT, default=replace(policy.DEFAULT.default, correctness=1.0))
    full = student(passing(), spec=spec, rules=rules)
    assert platforms.classroom(full, {"vector_add": spec}, DUE, DUE)["status"] == "pass"


def test_encode_is_base64_of_compact_json():
    text = platforms.encode({"version": 1, "status": "pass", "max_score": 0, "tests": []})
    assert json.loads(base64.b64decode(text)) == {
        "version": 1,
        "status": "pass",
        "max_score": 0,
        "tests": [],
    }
    with pytest.raises(ValueError):
        platforms.encode({"score": float("nan")})
