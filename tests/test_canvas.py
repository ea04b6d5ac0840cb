"""Canvas's gradebook: the roster that maps submitters to Canvas students, and the CSV that
Canvas's Grades > Import reads (judge.records.canvas)."""

import csv
import io
from pathlib import Path

import pytest

from judge.errors import JudgeError
from judge.records import canvas
from judge.records.canvas import RosterEntry
from judge.records.policy import Lateness, Policy, PuzzlePolicy, SpeedTarget
from judge.records.scoring import Part, PuzzleMark, StudentMark

HEADER = "submitter,Student,ID,SIS User ID,SIS Login ID,Section"
ON_TIME = Lateness(None, 0, 1.0)


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def student(name: str, *puzzles: tuple[float, float], factor: float = 1.0) -> StudentMark:
    """A student's mark: one puzzle per (points earned, points possible)."""
    late = ON_TIME if factor == 1.0 else Lateness(None, 1, factor)
    marks = tuple(
        PuzzleMark(
            f"p{i}",
            (Part(f"p{i}", f"p{i}: cases", "cases", score, most, "visible"),),
            late,
            None,
        )
        for i, (score, most) in enumerate(puzzles)
    )
    return StudentMark(name, marks)


def rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


# ------------------------------------------------------------------------------- the roster


def test_read_roster(tmp_path):
    path = write(
        tmp_path / "roster.csv",
        f"{HEADER}\n"
        'alice,"Liddell, Alice",101,S101,alice@uni.edu,Lab A\n'
        " bob ,Bob Builder,,S102,,\n"
        "carol,Carol,,,carol@uni.edu,\n",
    )
    assert canvas.read_roster(path) == (
        RosterEntry("alice", ("Liddell, Alice", "101", "S101", "alice@uni.edu", "Lab A")),
        RosterEntry("bob", ("Bob Builder", "", "S102", "", "")),
        RosterEntry("carol", ("Carol", "", "", "carol@uni.edu", "")),
    )


def test_read_roster_needs_only_one_id_column_and_strips_the_header(tmp_path):
    path = write(tmp_path / "roster.csv", " submitter , SIS Login ID \nalice,alice@uni.edu\n")
    assert canvas.read_roster(path) == (RosterEntry("alice", ("", "", "", "alice@uni.edu", "")),)


def test_read_roster_of_a_canvas_export_skips_its_points_possible_row(tmp_path):
    # Canvas's own export, a submitter column added: its first column's name carries a BOM
    export = (
        '"Student","ID","SIS User ID","SIS Login ID","Section","Lab 1 (48213)","submitter"\n'
        '"    Points Possible","","","","","10.00",""\n'
        '"Lovelace, Ada","4711","A1","ada","Section 1","","ada"\n'
        '"Hopper, Grace","4712","A2","grace","Section 2","7.5","grace"\n'
    )
    path = write(tmp_path / "export.csv", export, encoding="utf-8-sig")
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    assert canvas.read_roster(path) == (
        RosterEntry("ada", ("Lovelace, Ada", "4711", "A1", "ada", "Section 1")),
        RosterEntry("grace", ("Hopper, Grace", "4712", "A2", "grace", "Section 2")),
    )


def test_read_roster_with_a_bom_before_the_submitter_column(tmp_path):
    path = write(tmp_path / "roster.csv", f"{HEADER}\nalice,Alice,1,,,\n", encoding="utf-8-sig")
    assert canvas.read_roster(path) == (RosterEntry("alice", ("Alice", "1", "", "", "")),)


def test_a_roster_cell_spanning_lines(tmp_path):
    path = write(tmp_path / "roster.csv", f'{HEADER}\nalice,"Alice\nLiddell",1,,,\n')
    assert canvas.read_roster(path) == (RosterEntry("alice", ("Alice\nLiddell", "1", "", "", "")),)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            "Student,ID\nAlice,1\n",
            "{path}: no column 'submitter' (the names in ROOT or the "
            "manifest), beside Canvas's Student, ID, SIS User ID, SIS Login ID, Section",
        ),
        (
            "",
            "{path}: no column 'submitter' (the names in ROOT or the manifest), beside "
            "Canvas's Student, ID, SIS User ID, SIS Login ID, Section",
        ),
        (
            "submitter,Student,Section\nalice,Alice,A\n",
            "{path}: none of the columns ID, SIS User ID, SIS Login ID (Canvas needs one)",
        ),
        (f"{HEADER}\nalice,Alice,1,,,\n,Bob,2,,,\n", "{path}:3: empty submitter"),
        (f"{HEADER}\nalice,Alice,1,,,\n  ,Bob,2,,,\n", "{path}:3: empty submitter"),
        (
            f"{HEADER}\nalice,Alice,1,,,\nbob,Bob,2,,,\nalice,Alice 2,3,,,\n",
            "{path}:4: alice is listed twice",
        ),
        (
            f"{HEADER}\nalice,Alice,1,,,\nbob,Bob, , ,,Lab A\n",
            "{path}:3: bob has none of ID, SIS User ID, SIS Login ID",
        ),
        (f"{HEADER}\n", "{path}: no students listed"),
        (f'{HEADER}\n,"    Points Possible",,,,\n', "{path}: no students listed"),
        (f'{HEADER}\nalice,"Alice\nLiddell",1,,,\n,Bob,2,,,\n', "{path}:4: empty submitter"),
    ],
)
def test_a_malformed_roster_is_a_judge_error_naming_file_and_line(tmp_path, text, error):
    path = write(tmp_path / "roster.csv", text)
    with pytest.raises(JudgeError) as raised:
        canvas.read_roster(path)
    assert str(raised.value) == error.format(path=path)


def test_a_roster_that_cannot_be_read(tmp_path):
    missing = tmp_path / "nowhere.csv"
    with pytest.raises(JudgeError) as raised:
        canvas.read_roster(missing)
    assert str(raised.value) == f"--roster {missing}: no such file"

    with pytest.raises(JudgeError) as raised:
        canvas.read_roster(tmp_path)
    assert str(raised.value) == f"--roster {tmp_path}: cannot read: Is a directory"

    latin = tmp_path / "latin1.csv"
    latin.write_bytes(f"{HEADER}\nzoe,Zo\xe9,1,,,\n".encode("latin-1"))
    with pytest.raises(JudgeError) as raised:
        canvas.read_roster(latin)
    assert str(raised.value) == f"--roster {latin}: not UTF-8 text"


def huge_cell_roster(tmp_path: Path) -> Path:
    """A roster whose line 3 has a cell longer than the csv module reads (a csv.Error)."""
    return write(tmp_path / "roster.csv", f"{HEADER}\nalice,Alice,1,,,\nbob,{'x' * 200_000},2,,,\n")


def test_a_csv_error_is_a_judge_error_naming_the_file(tmp_path):
    path = huge_cell_roster(tmp_path)
    with pytest.raises(JudgeError) as raised:
        canvas.read_roster(path)
    where, problem = str(raised.value).rsplit(": ", 1)
    assert where.startswith(f"{path}:")
    assert problem == "field larger than field limit (131072)"


def test_a_csv_error_names_the_line_it_is_on(tmp_path):
    path = huge_cell_roster(tmp_path)
    with pytest.raises(JudgeError) as raised:
        canvas.read_roster(path)
    assert str(raised.value) == f"{path}:3: field larger than field limit (131072)"


# ------------------------------------------------------------------------------- the gradebook


ROSTER = (
    RosterEntry("alice", ("Liddell, Alice", "101", "S101", "alice@uni.edu", "Lab A")),
    RosterEntry("bob", ("Bob", "102", "", "", "")),
    RosterEntry("carol", ("Carol", "103", "S103", "", "Lab B")),
)


def test_to_csv_writes_canvas_columns_points_possible_and_one_row_per_roster_student():
    marks = [
        student("alice", (8, 10), (2.5, 10)),
        student("bob", (10, 10), (10, 10), factor=0.5),
    ]
    text, warnings = canvas.to_csv(marks, ROSTER, Policy(assignment="Triton lab 1"))
    assert text == (
        "Student,ID,SIS User ID,SIS Login ID,Section,Triton lab 1\n"
        "    Points Possible,,,,,20\n"
        '"Liddell, Alice",101,S101,alice@uni.edu,Lab A,10.5\n'
        "Bob,102,,,,10\n"
        "Carol,103,S103,,Lab B,0\n"
    )
    assert warnings == []


def test_the_assignment_column_carries_the_canvas_id():
    policy = Policy(assignment="Triton lab 1", canvas_id="48213")
    text, _ = canvas.to_csv([student("alice", (3.25, 10))], ROSTER[:1], policy)
    assert rows(text) == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Triton lab 1 (48213)"],
        ["    Points Possible", "", "", "", "", "10"],
        ["Liddell, Alice", "101", "S101", "alice@uni.edu", "Lab A", "3.25"],
    ]


def test_points_are_written_with_g():
    marks = [student("alice", (1 / 3, 1)), student("bob", (0.0, 1.0))]
    text, _ = canvas.to_csv(marks, ROSTER[:2], Policy())
    assert rows(text)[1:] == [
        ["    Points Possible", "", "", "", "", "1"],
        ["Liddell, Alice", "101", "S101", "alice@uni.edu", "Lab A", "0.3333"],
        ["Bob", "102", "", "", "", "0"],
    ]


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+1", "'+1"),
        ("-2", "'-2"),
        ("@x", "'@x"),
        ("|cmd", "'|cmd"),
        ("%x", "'%x"),
        ("a=b", "a=b"),
        ("O'Brien", "O'Brien"),
    ],
)
def test_a_roster_student_that_would_start_a_formula_is_quoted(name, written):
    roster = (RosterEntry("s", (name, "1", "", "", "")),)
    text, _ = canvas.to_csv([student("s", (4, 10))], roster, Policy())
    assert rows(text)[2] == [written, "1", "", "", "", "4"]


def test_names_sections_and_the_column_are_escaped_and_ids_kept_as_canvas_issued_them():
    """A student's name and section are text a spreadsheet could run; the ids are Canvas's own,
    and a leading ' would stop Canvas matching the row: they lose control characters only."""
    roster = (RosterEntry("s", ("Eve", "1", "=1+1", "\x1b[31m@red\x1b[0m", "-Lab")),)
    text, _ = canvas.to_csv([student("s", (4, 10))], roster, Policy(assignment="=SUM(A1)"))
    assert rows(text) == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "'=SUM(A1)"],
        ["    Points Possible", "", "", "", "", "10"],
        ["Eve", "1", "=1+1", "@red", "'-Lab", "4"],
    ]


def test_commas_quotes_and_newlines_survive_a_round_trip():
    name = 'Smith, "Jo"\nJr.'
    roster = (RosterEntry("s", (name, "1", "a,b", 'say "hi"', "line\r\nbreak")),)
    text, _ = canvas.to_csv([student("s", (4, 10))], roster, Policy(assignment="Lab, 1"))
    assert text.splitlines()[0] == 'Student,ID,SIS User ID,SIS Login ID,Section,"Lab, 1"'
    assert '"Smith, ""Jo""\nJr."' in text
    assert rows(text) == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lab, 1"],
        ["    Points Possible", "", "", "", "", "10"],
        [name, "1", "a,b", 'say "hi"', "line\nbreak", "4"],  # \r\n made \n
    ]


def test_a_graded_student_not_on_the_roster_is_left_out_with_a_warning():
    marks = [student("alice", (5, 10)), student("mallory", (10, 10)), student("zed", (1, 10))]
    text, warnings = canvas.to_csv(marks, ROSTER[:1], Policy())
    assert rows(text)[2:] == [["Liddell, Alice", "101", "S101", "alice@uni.edu", "Lab A", "5"]]
    assert "mallory" not in text and "zed" not in text
    assert warnings == [
        "mallory: graded, but not on the roster: left out of the Canvas file",
        "zed: graded, but not on the roster: left out of the Canvas file",
    ]


def test_a_roster_without_marks_writes_zeros():
    text, warnings = canvas.to_csv([], ROSTER, Policy())
    assert text == (
        "Student,ID,SIS User ID,SIS Login ID,Section,tpuzzle\n"
        "    Points Possible,,,,,0\n"
        '"Liddell, Alice",101,S101,alice@uni.edu,Lab A,0\n'
        "Bob,102,,,,0\n"
        "Carol,103,S103,,Lab B,0\n"
    )
    assert warnings == []


def test_points_possible_from_the_policy_puzzles_else_the_most_of_the_marks():
    target = SpeedTarget("library")
    policy = Policy(
        puzzles=(
            ("vector_add", PuzzlePolicy(20, 0.8, target)),
            ("softmax", PuzzlePolicy(7.5, 1.0, target)),
        )
    )
    marks = [student("alice", (3, 4)), student("bob", (1, 2), (1, 2), (1, 2))]
    listed, _ = canvas.to_csv(marks, ROSTER[:1], policy)
    assert rows(listed)[1] == ["    Points Possible", "", "", "", "", "27.5"]
    unlisted, _ = canvas.to_csv(marks, ROSTER[:1], Policy())
    assert rows(unlisted)[1] == ["    Points Possible", "", "", "", "", "6"]
