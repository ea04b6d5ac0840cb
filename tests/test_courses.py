"""The course platforms' files of a grading: Gradescope's submission metadata, the inputs read
before grading, and Gradescope's, GitHub Classroom's and Canvas's files written after it
(judge.records.courses)."""

import base64
import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from judge.core.results import CaseResult, EnvInfo, RunReport, Verdict
from judge.core.spec import PuzzleSpec
from judge.errors import JudgeError, SpecError
from judge.records import courses, policy
from judge.records.canvas import RosterEntry
from judge.records.courses import Course, Metadata
from judge.records.grading import Graded, Submission

IDS = {"vector_add", "relu"}
PST = timezone(timedelta(hours=-8))
NOW = datetime(2026, 12, 5, tzinfo=timezone.utc)
CPU = EnvInfo(
    mode="interpreter",
    device="cpu (Triton interpreter)",
    driver="",
    cuda="",
    triton="3.6.0",
    torch="2.11.0",
    python="3.12.3",
)
# what Gradescope writes to /autograder/submission_metadata.json for a group of two
METADATA = {
    "id": 123456789,
    "created_at": "2026-11-30T18:22:32.365935-08:00",
    "assignment": {
        "course_id": 6665,
        "group_submission": True,
        "group_size": 2,
        "id": 25828,
        "title": "Triton lab 1",
        "total_points": "20.0",
        "release_date": "2026-11-01T00:00:00.000000-07:00",
        "due_date": "2026-12-01T23:59:00.000000-08:00",
        "late_due_date": None,
        "outline": [],
    },
    "submission_method": "upload",
    "users": [
        {"email": "ada@uni.edu", "id": 1, "name": "Ada Lovelace", "assignments": []},
        {"email": "grace@uni.edu", "id": 2, "name": "Grace Hopper", "assignments": []},
    ],
    "previous_submissions": [
        {"submission_time": "2026-11-29T10:00:00.000000-08:00", "score": 4.0, "results": {}}
    ],
}


# the interpreter runs 11 of vector_add's 13 cases (two are marked interpret: false): a file
# failing one of them earns 10/11 of the 8 points for correctness
ONE_WRONG = round(8 * 10 / 11, 4)


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data))
    return path


def graded(spec: PuzzleSpec, student: str, failed: tuple[str, ...] = (), submitted: str = ""):
    """A student's file judged on every case of the spec, those in `failed` failing."""
    cases = tuple(
        CaseResult(c.name, c.size_map, c.seed, "failed" if c.name in failed else "passed")
        for c in spec.tests
    )
    verdict = Verdict.FAILED if failed else Verdict.PASSED
    report = RunReport(
        puzzle=spec.id,
        submission=f"class/{student}/{spec.id}.py",
        verdict=verdict,
        reason="wrong-answer" if failed else "ok",
        message=f"case {failed[0]} went wrong" if failed else "every case passed",
        cases=cases,
        timing=(),
        env=CPU,
        ranked=False,
        wall_s=2.0,
    )
    sub = Submission(student, spec.id, Path(report.submission), "ab" * 32, submitted)
    return Graded(sub, report)


# ------------------------------------------------------------------------------- metadata


def test_read_metadata_of_a_gradescope_group_submission(tmp_path):
    meta = courses.read_metadata(write_json(tmp_path / "submission_metadata.json", METADATA))
    assert meta == Metadata(
        submitted="2026-11-30T18:22:32.365935-08:00",
        due=datetime(2026, 12, 1, 23, 59, tzinfo=PST),
        student="Ada Lovelace, Grace Hopper",
    )
    assert meta.due.utcoffset() == timedelta(hours=-8)


def test_read_metadata_takes_an_email_for_a_missing_name_and_z_for_utc(tmp_path):
    data = {
        "created_at": "2026-11-30T10:00:00Z",
        "assignment": {"due_date": None},
        "users": [{"email": "ada@uni.edu", "name": ""}, {"name": None}, "junk", {"id": 3}],
    }
    meta = courses.read_metadata(write_json(tmp_path / "m.json", data))
    assert meta == Metadata("2026-11-30T10:00:00+00:00", None, "ada@uni.edu")


def test_read_metadata_with_nothing_known(tmp_path):
    assert courses.read_metadata(write_json(tmp_path / "m.json", {})) == Metadata("", None, "")
    odd = {"assignment": "lab", "users": {"name": "x"}, "created_at": ""}
    assert courses.read_metadata(write_json(tmp_path / "o.json", odd)) == Metadata("", None, "")


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("[1, 2]", "{path}: expected a JSON object"),
        ('"2026-11-30"', "{path}: expected a JSON object"),
        (
            json.dumps({**METADATA, "created_at": "yesterday"}),
            "{path}: created_at 'yesterday' is not an ISO 8601 time",
        ),
        (
            json.dumps({**METADATA, "created_at": "2026-11-30T18:22:32"}),
            "{path}: created_at '2026-11-30T18:22:32' is not an ISO 8601 time",
        ),
        (
            json.dumps({**METADATA, "assignment": {"due_date": "Dec 1"}}),
            "{path}: assignment.due_date 'Dec 1' is not an ISO 8601 time",
        ),
        (
            json.dumps({**METADATA, "assignment": {"due_date": 1764662340}}),
            "{path}: assignment.due_date 1764662340 is not an ISO 8601 time",
        ),
    ],
)
def test_read_metadata_errors(tmp_path, content, error):
    path = tmp_path / "m.json"
    path.write_text(content)
    with pytest.raises(JudgeError) as raised:
        courses.read_metadata(path)
    assert str(raised.value) == "--submission-metadata " + error.format(path=path)


def test_read_metadata_of_a_file_that_is_not_json_or_not_there(tmp_path):
    missing = tmp_path / "none.json"
    with pytest.raises(JudgeError) as raised:
        courses.read_metadata(missing)
    assert str(raised.value) == f"--submission-metadata {missing}: No such file or directory"

    for text in (b"{not json", b"", b'{"created_at": "\xff"}'):
        path = tmp_path / "bad.json"
        path.write_bytes(text)
        with pytest.raises(JudgeError) as raised:
            courses.read_metadata(path)
        message = str(raised.value)
        assert message.startswith(f"--submission-metadata {path}: not JSON (")
        assert message.endswith(")") and "\n" not in message


# ------------------------------------------------------------------------------- prepare


def test_prepare_with_nothing_asked():
    course = courses.prepare(None, IDS)
    assert course == Course()
    assert course.rules is policy.DEFAULT
    assert not course.asked


def test_prepare_takes_the_metadata_due_date_when_the_policy_has_none(tmp_path):
    meta = write_json(tmp_path / "submission_metadata.json", METADATA)
    course = courses.prepare(None, IDS, metadata_file=meta)
    assert course.rules == replace(policy.DEFAULT, due=datetime(2026, 12, 1, 23, 59, tzinfo=PST))
    assert course.metadata == courses.read_metadata(meta)

    rules = tmp_path / "policy.yaml"
    rules.write_text("assignment: Lab 1\npoints: 5\n")
    course = courses.prepare(rules, IDS, metadata_file=meta)
    assert (course.rules.assignment, course.rules.default.points) == ("Lab 1", 5.0)
    assert course.rules.due == datetime(2026, 12, 1, 23, 59, tzinfo=PST)


def test_prepare_keeps_the_policy_due_date(tmp_path):
    meta = write_json(tmp_path / "submission_metadata.json", METADATA)
    rules = tmp_path / "policy.yaml"
    rules.write_text("due: 2026-12-03T12:00:00-05:00\n")
    course = courses.prepare(rules, IDS, metadata_file=meta)
    assert course.rules.due == datetime(2026, 12, 3, 12, tzinfo=timezone(timedelta(hours=-5)))
    assert course.metadata.due == datetime(2026, 12, 1, 23, 59, tzinfo=PST)


def test_prepare_keeps_the_policy_when_the_metadata_has_no_due_date(tmp_path):
    meta = write_json(tmp_path / "m.json", {"created_at": "2026-11-30T10:00:00Z"})
    course = courses.prepare(None, IDS, metadata_file=meta)
    assert course.rules is policy.DEFAULT
    assert course.metadata == Metadata("2026-11-30T10:00:00+00:00", None, "")


def test_prepare_reads_the_roster_for_canvas(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("submitter,Student,ID\nalice,Alice,101\n")
    course = courses.prepare(
        None,
        IDS,
        gradescope=tmp_path / "gs",
        classroom=True,
        canvas_file=tmp_path / "c.csv",
        roster_file=roster,
    )
    assert course == Course(
        policy.DEFAULT,
        tmp_path / "gs",
        True,
        tmp_path / "c.csv",
        (RosterEntry("alice", ("Alice", "101", "", "", "")),),
        None,
    )
    assert course.asked


@pytest.mark.parametrize("which", ["canvas", "roster"])
def test_prepare_rejects_canvas_without_roster_and_back(tmp_path, which):
    roster = tmp_path / "roster.csv"
    roster.write_text("submitter,Student,ID\nalice,Alice,101\n")
    given = {"canvas_file": tmp_path / "c.csv"} if which == "canvas" else {"roster_file": roster}
    with pytest.raises(JudgeError) as raised:
        # the policy file is not there: the usage error comes first
        courses.prepare(tmp_path / "no-policy.yaml", IDS, **given)
    assert str(raised.value) == (
        "--canvas needs --roster (who each submitter is in Canvas), and back"
    )


def test_prepare_reads_every_input_before_grading(tmp_path):
    rules = tmp_path / "policy.yaml"
    rules.write_text("puzzles: {vectr_add: {}}\n")
    with pytest.raises(SpecError, match=r"puzzles\.vectr_add: not a puzzle id of the catalogue"):
        courses.prepare(rules, IDS)
    bad_roster = tmp_path / "roster.csv"
    bad_roster.write_text("Student,ID\nAlice,1\n")
    with pytest.raises(JudgeError, match=r"roster\.csv: no column 'submitter'"):
        courses.prepare(None, IDS, canvas_file=tmp_path / "c.csv", roster_file=bad_roster)
    with pytest.raises(JudgeError, match="^--submission-metadata .*: No such file or directory$"):
        courses.prepare(None, IDS, metadata_file=tmp_path / "none.json")


# ------------------------------------------------------------------------------- dated


def test_dated_fills_only_an_empty_submission_time(tmp_path):
    meta = write_json(tmp_path / "m.json", METADATA)
    course = courses.prepare(None, IDS, metadata_file=meta)
    subs = [
        Submission("s", "vector_add", Path("s/vector_add.py"), "ab", ""),
        Submission("s", "relu", Path("s/relu.py"), "cd", "2026-11-01T00:00:00Z"),
    ]
    assert courses.dated(subs, course) == [
        replace(subs[0], submitted="2026-11-30T18:22:32.365935-08:00"),
        subs[1],
    ]
    assert courses.dated(subs, Course()) == subs
    assert courses.dated((), course) == []


# ------------------------------------------------------------------------------- write


def test_write_gradescope_for_a_class_writes_a_folder_per_student(tmp_path, vector_add):
    out = tmp_path / "gradescope" / "results"
    names = ["alice", "../evil", "a/b", "..", " "]
    class_ = [graded(vector_add, n, failed=("N=1",) * (n == "alice")) for n in names]
    warnings, lines = courses.write(
        class_, {"vector_add": vector_add}, Course(gradescope=out), False, False, NOW
    )
    assert (warnings, lines) == ([], [])
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == [
        "gradescope/results/.._evil/results.json",
        "gradescope/results/_../results.json",
        "gradescope/results/_/results.json",
        "gradescope/results/a_b/results.json",
        "gradescope/results/alice/results.json",
    ]
    alice = json.loads((out / "alice" / "results.json").read_text())
    assert alice["score"] == ONE_WRONG
    assert [(t["name"], t["max_score"]) for t in alice["tests"]] == [
        ("vector_add: cases", 8.0),
        ("vector_add: speed", 2.0),
    ]
    evil = json.loads((out / ".._evil" / "results.json").read_text())
    assert evil["score"] == 8.0
    assert (out / "alice" / "results.json").read_text().endswith("}\n")


def test_folder_names(tmp_path):
    assert courses._folder("alice") == "alice"
    assert courses._folder("../evil") == ".._evil"
    assert courses._folder("a/b\\c\0d") == "a_b_cd"  # control characters dropped
    assert courses._folder("..") == "_.."
    assert courses._folder(".") == "_."
    assert courses._folder("  ") == "_"
    assert courses._folder("\x1b[31m") == "_"
    assert courses._folder(" Ada\t Lovelace\n") == "Ada Lovelace"
    assert courses._folder("\x1b[31m..\x1b[0m") == "_.."


def test_two_students_never_share_a_results_file(tmp_path, vector_add):
    out = tmp_path / "out"
    class_ = [graded(vector_add, "a/b", failed=("N=1",)), graded(vector_add, "a_b")]
    courses.write(class_, {"vector_add": vector_add}, Course(gradescope=out), False, False, NOW)
    assert len(list(out.rglob("results.json"))) == 2


def test_write_gradescope_for_one_student_writes_out_itself(tmp_path, vector_add):
    out = tmp_path / "results.json"
    courses.write(
        [graded(vector_add, "ada")],
        {"vector_add": vector_add},
        Course(gradescope=out),
        False,
        True,
        NOW,
    )
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]
    data = json.loads(out.read_text())
    assert data["score"] == 8.0
    assert data["tests"][0]["name"] == "vector_add: cases"


def test_write_names_a_file_it_cannot_write(tmp_path, vector_add):
    out = tmp_path / "missing" / "results.json"
    with pytest.raises(JudgeError) as raised:
        courses.write(
            [graded(vector_add, "ada")],
            {"vector_add": vector_add},
            Course(gradescope=out),
            False,
            True,
            NOW,
        )
    assert str(raised.value) == f"{out}: cannot write: No such file or directory"


def test_write_text(tmp_path):
    path = tmp_path / "a" / "b" / "f.txt"
    courses.write_text(path, "x\n", make_folder=True)
    assert path.read_text() == "x\n"
    with pytest.raises(JudgeError) as raised:
        courses.write_text(tmp_path / "c" / "f.txt", "x")
    assert (
        str(raised.value) == f"{tmp_path / 'c' / 'f.txt'}: cannot write: No such file or directory"
    )


def decode(encoded: str) -> dict:
    return json.loads(base64.b64decode(encoded, validate=True))


def test_write_classroom_lines_for_a_class(tmp_path, vector_add):
    class_ = [graded(vector_add, "bob", failed=("N=2",)), graded(vector_add, "alice")]
    warnings, lines = courses.write(
        class_, {"vector_add": vector_add}, Course(classroom=True), False, False, NOW
    )
    assert warnings == []
    # student<TAB>BASE64 (a name may hold '=')
    assert [line.split("\t")[0] for line in lines] == ["alice", "bob"]
    assert all(len(line.split("\t")) == 2 for line in lines)
    alice, bob = (decode(line.split("\t")[1]) for line in lines)
    assert alice["version"] == 1 and bob["version"] == 1
    assert (alice["status"], alice["max_score"]) == ("fail", 10.0)  # no speed points untimed
    assert [(t["name"], t["status"], t["score"]) for t in alice["tests"]] == [
        ("vector_add: cases", "pass", 8.0),
        ("vector_add: speed", "fail", 0.0),
    ]
    assert [(t["name"], t["status"], t["score"]) for t in bob["tests"]] == [
        ("vector_add: cases", "fail", ONE_WRONG),
        ("vector_add: speed", "fail", 0.0),
    ]
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_write_classroom_names_are_one_line_of_plain_text(vector_add):
    names = ["a=b", "Ada\tLovelace\n", "\x1b[31mred\x1b[0m"]
    class_ = [graded(vector_add, n) for n in names]
    _, lines = courses.write(
        class_, {"vector_add": vector_add}, Course(classroom=True), False, False, NOW
    )
    assert len(lines) == 3 and all("\n" not in line for line in lines)
    assert [line.split("\t")[0] for line in lines] == ["red", "Ada Lovelace", "a=b"]
    assert all(decode(line.split("\t")[1])["version"] == 1 for line in lines)


def test_write_classroom_line_for_one_student_is_bare_base64(vector_add):
    _, lines = courses.write(
        [graded(vector_add, "ada")],
        {"vector_add": vector_add},
        Course(classroom=True),
        False,
        True,
        NOW,
    )
    assert len(lines) == 1 and "=" not in lines[0].rstrip("=")
    data = decode(lines[0])
    assert (data["version"], data["max_score"]) == (1, 10.0)
    assert [t["name"] for t in data["tests"]] == ["vector_add: cases", "vector_add: speed"]


def test_write_classroom_applies_lateness_from_the_metadata_time(tmp_path, vector_add):
    rules = tmp_path / "policy.yaml"
    rules.write_text("late: {per_day: 0.25}\n")
    meta = write_json(tmp_path / "m.json", {**METADATA, "created_at": "2026-12-02T08:00:00-08:00"})
    course = courses.prepare(rules, IDS, classroom=True, metadata_file=meta)
    subs = courses.dated([graded(vector_add, "ada").submission], course)
    late = Graded(subs[0], graded(vector_add, "ada").report)
    _, lines = courses.write([late], {"vector_add": vector_add}, course, False, True, NOW)
    assert decode(lines[0])["tests"][0]["score"] == 6.0  # one day late: 8 * 0.75


def test_write_canvas_returns_its_warnings(tmp_path, vector_add):
    target = tmp_path / "canvas.csv"
    roster = (
        RosterEntry("alice", ("Alice", "101", "", "", "")),
        RosterEntry("carol", ("=Carol", "103", "", "", "")),
    )
    course = Course(
        rules=replace(policy.DEFAULT, assignment="Lab 1", canvas_id="77"),
        canvas=target,
        roster=roster,
    )
    class_ = [graded(vector_add, "alice"), graded(vector_add, "bob", failed=("N=1",))]
    warnings, lines = courses.write(class_, {"vector_add": vector_add}, course, False, False, NOW)
    assert warnings == ["bob: graded, but not on the roster: left out of the Canvas file"]
    assert lines == []
    assert target.read_text() == (
        "Student,ID,SIS User ID,SIS Login ID,Section,Lab 1 (77)\n"
        "    Points Possible,,,,,10\n"
        "Alice,101,,,,8\n"
        "'=Carol,103,,,,0\n"
    )


def test_write_with_nothing_asked_writes_nothing(tmp_path, vector_add):
    assert courses.write(
        [graded(vector_add, "ada")], {"vector_add": vector_add}, Course(), False, False, NOW
    ) == ([], [])
    assert list(tmp_path.iterdir()) == []
