"""A class graded for the course platforms: correct, wrong, crashing and endless files and two
written to get past the hidden cases, under student names made of terminal escapes and XML, CSV
and Markdown metacharacters. Every format must follow its platform's schema, escape what the
students wrote, and show no hidden case to a student."""

import csv
import html
import io
import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hostile import ROOT, expected, grade_command, run_judge

sys.path.insert(0, str(ROOT / "tests"))
from formats import check_canvas, check_classroom, check_gradescope  # noqa: E402

HERE = Path(__file__).parent / "course"
SOLUTIONS = ROOT / "puzzles" / "vector_add" / "solutions"
HOSTILE_NAME = '=HYPERLINK("http://evil")<b>&amp;\x1b[31m]]>|x|'
CLASS = {
    "alice": SOLUTIONS / "correct" / "plain.py",
    "bob": SOLUTIONS / "wrong" / "failed_no_mask.py",
    "carol": SOLUTIONS / "wrong" / "error_segfault.py",
    "dave": SOLUTIONS / "wrong" / "error_infinite_loop.py",
    HOSTILE_NAME: HERE / "prints_its_inputs.py",
    "mallory": HERE / "wrong_only_on_hidden.py",
}
TESTS = """tests:
  - {sizes: {N: 1}, seed: 101}
  - {sizes: {N: 129}, seed: 102, visibility: after_due_date}
  - {name: "N=1500 kept back", sizes: {N: 1500}, seed: 4242, visibility: hidden}
"""
SECRETS = ("1500", "4242", "kept back", "LEAK")  # what no student may see of the hidden case
POLICY = """assignment: Lab 2
canvas_id: 9001
due: 2026-12-01T23:59:00Z
late: {per_day: 0.5, max_days: 1}
puzzles:
  vector_add: {points: 20, correctness: 1.0, cases: {"N=1500 kept back": 2}}
"""


@pytest.fixture
def course(tmp_path, puzzles_root):
    """The catalogue (vector_add with a visible, an after-due-date and a hidden case), the
    class, a policy, a roster and a manifest that dates every file."""
    catalogue = tmp_path / "catalogue"
    shutil.copytree(puzzles_root / "vector_add", catalogue / "vector_add")
    spec = catalogue / "vector_add" / "puzzle.yaml"
    head, rest = spec.read_text().split("tests:\n", 1)
    spec.write_text(head + TESTS + rest[rest.index("benchmarks:") :])
    rows = ["student,puzzle,path,submitted"]
    roster = ["submitter,Student,ID,SIS User ID,SIS Login ID,Section"]
    for i, (student, source) in enumerate(CLASS.items()):
        target = tmp_path / "class" / f"s{i}" / "vector_add.py"
        target.parent.mkdir(parents=True)
        shutil.copy(source, target)
        when = "2026-12-02T12:00:00Z" if student == "bob" else "2026-12-01T10:00:00Z"
        rows.append(_csv_row([student, "vector_add", str(target), when]))
        roster.append(_csv_row([student, student, str(100 + i), f"sis{i}", f"login{i}", "A"]))
    (tmp_path / "manifest.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "roster.csv").write_text("\n".join(roster) + "\n")
    (tmp_path / "policy.yaml").write_text(POLICY)
    return tmp_path, catalogue


def _csv_row(cells: list[str]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(cells)
    return buffer.getvalue()


def manifest_command(where: Path, catalogue: Path, *extra: str) -> list[str]:
    """`tpuzzle grade --manifest` of the course's class, in the interpreter."""
    command = grade_command(where / "class", catalogue, *extra)
    command[command.index(str(where / "class"))] = "--manifest"
    command.insert(command.index("--manifest") + 1, str(where / "manifest.csv"))
    return command


def test_every_format_of_a_hostile_class(course):
    where, catalogue = course
    out = where / "out"
    command = manifest_command(where, catalogue, "--timeout", "8", "--jobs", "2")
    command += ["--policy", str(where / "policy.yaml"), "--classroom"]
    command += ["--gradescope", str(out / "gradescope"), "--canvas", str(out / "canvas.csv")]
    command += ["--roster", str(where / "roster.csv"), "--json", str(out / "grades.json")]
    command += ["--junit", str(out / "grades.xml"), "--markdown", str(out / "grades.md")]
    command += ["--csv", str(out / "gradebook.csv"), "--html", str(out / "grades.html")]
    out.mkdir()
    done = run_judge(command, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr

    verdicts = {
        e["student"]: e["report"]["verdict"]
        for e in json.loads((out / "grades.json").read_text())["entries"]
    }
    assert verdicts == {name: expected(source)[0] for name, source in CLASS.items()} | {
        "mallory": "failed"
    }

    # GitHub Classroom: one student<TAB>BASE64 line per student on stdout, nothing else there
    lines = done.stdout.splitlines()
    assert len(lines) == len(CLASS)
    results = {}
    for line in lines:
        name, _, encoded = line.rpartition("\t")
        results[name] = check_classroom(encoded)
    assert set(results) == {n.replace("\x1b[31m", "") for n in CLASS}
    assert results["alice"]["status"] == "pass"
    assert results["dave"]["status"] == "error" and results["carol"]["status"] == "error"
    assert results["bob"]["status"] == "fail"
    for name, document in results.items():
        text = json.dumps(document)
        assert not any(s in text for s in SECRETS), (name, text)
        assert "\\u001b" not in text, name

    # Gradescope: one results.json per student, hidden detail only in hidden tests
    documents = {}
    for path in sorted((out / "gradescope").glob("*/results.json")):
        document = check_gradescope(json.loads(path.read_text()))
        documents[path.parent.name] = document
        shown = [document["output"]] + [
            t["output"] for t in document["tests"] if t["visibility"] == "visible"
        ]
        assert not any(s in "".join(shown) for s in SECRETS), path
        assert "\x1b" not in json.dumps(document, ensure_ascii=False)
    assert len(documents) == len(CLASS)
    assert all(Path(p).parent == out / "gradescope" for p in (out / "gradescope").glob("*"))
    leaky = next(d for d in documents.values() if "LEAK" in json.dumps(d))
    hidden = [t for t in leaky["tests"] if "LEAK" in t["output"]]
    assert [t["visibility"] for t in hidden] == ["hidden"]  # printed output: instructors only
    assert "]]> <b>&amp;" in hidden[0]["output"]  # kept as text: the escapes only are gone
    scores = {json.dumps(d["tests"][0]["name"]): d["score"] for d in documents.values()}
    assert len(scores) == 1  # every student's tests have the same names
    late_bob = documents[next(k for k in documents if k.startswith("bob"))]
    assert "1 day late: -50%" in late_bob["output"]

    # Canvas: the roster's identities, the policy's points, no formula
    rows = check_canvas((out / "canvas.csv").read_text())
    by_id = {r["ID"]: r for r in rows}
    column = "Lab 2 (9001)"
    assert by_id["100"][column] == "20"  # alice, every case
    assert by_id["104"]["Student"] == "'" + HOSTILE_NAME.replace("\x1b[31m", "")
    assert by_id["102"][column] == by_id["103"][column] == "0"  # crashed, hung
    assert float(by_id["105"][column]) == pytest.approx(20 * 2 / 4)  # mallory: 2 of 4 weights
    # bob fails a case, and is a day late: half of what he earned
    assert float(by_id["101"][column]) < 20 * 0.5

    # the instructor's files: the gradebook CSV, JUnit, Markdown
    text = (out / "gradebook.csv").read_text()
    assert "\x1b" not in text
    book = list(csv.DictReader(io.StringIO(text)))
    assert {r["student"] for r in book} >= {"'" + HOSTILE_NAME.replace("\x1b[31m", "")}
    bob = next(r for r in book if r["student"] == "bob")
    assert (bob["late_days"], bob["late_factor"]) == ("1", "0.5")
    junit = (out / "grades.xml").read_text()
    ET.fromstring(junit)
    assert "\x1b" not in junit
    markdown = (out / "grades.md").read_text()
    assert "\x1b" not in markdown and "<b>" not in markdown and "]]>\\|" not in markdown
    assert "&lt;b&gt;&amp;amp;" in markdown and "\\|x\\|" in markdown

    # the class's web page: names shown as text, no markup of theirs, no hidden case
    page = (out / "grades.html").read_text(encoding="utf-8")
    body = page[page.index("<body>") :]
    assert "\x1b" not in page and "<b>" not in page and "]]>|" not in page
    assert html.escape(HOSTILE_NAME.replace("\x1b[31m", "")) in body
    assert not any(s in body for s in SECRETS), body
    assert body.count("<script>") == 1 and body.count("<tr data-i=") == len(CLASS)


def test_a_students_run_names_nothing_of_a_hidden_case(course):
    where, catalogue = course
    submission = HERE / "wrong_only_on_hidden.py"
    base = [sys.executable, "-m", "judge", "run", "vector_add", str(submission)]
    base += ["--puzzles", str(catalogue), "--interpret", "--no-save"]
    shown = run_judge(base)
    as_json = run_judge(base + ["--json"])
    assert shown.returncode == as_json.returncode == 1, shown.stderr[-2000:]
    for text in (shown.stdout, shown.stderr, as_json.stdout):
        assert not any(s in text for s in SECRETS), text
    report = json.loads(as_json.stdout)
    verdict, reasons = expected(submission)
    assert report["verdict"] == verdict and report["reason"] in reasons
    hidden = report["cases"][2]
    assert hidden == {
        "name": "hidden case 1",
        "sizes": {},
        "seed": 0,
        "status": "failed",
        "max_error": None,
        "buffers": [],
        "hints": [],
        "reproduce": "",
        "message": "",
        "hidden": True,
    }
    assert report["message"].startswith("hidden case 1 went wrong (failed)")
    assert "hidden case 1" in shown.stdout
    # the cases a student may see keep every detail
    assert report["cases"][1]["name"] == "N=129" and report["cases"][1]["seed"] == 102


@pytest.mark.gpu
def test_a_class_graded_on_the_gpu_earns_speed_points_and_a_leaderboard(course):
    """Timed on the device: a correct kernel earns speed points against the library and enters
    Gradescope's leaderboard; the hidden case stays out of every text a student sees."""
    import os

    where, catalogue = course
    out = where / "gradescope"
    policy = where / "gpu_policy.yaml"
    policy.write_text("puzzles: {vector_add: {points: 10, correctness: 0.5}}\n")
    command = manifest_command(where, catalogue, "--gradescope", str(out), "--timeout", "20")
    command.remove("--interpret")
    command += ["--policy", str(policy), "--classroom", "--no-save"]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = run_judge(command, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    documents = {}
    for path in sorted(out.glob("*/results.json")):
        documents[path.parent.name] = check_gradescope(json.loads(path.read_text()))
    alice = documents["alice"]
    speed = next(t for t in alice["tests"] if t["name"] == "vector_add: speed")
    assert speed["max_score"] == 5.0 and speed["score"] > 0, speed
    assert "x the library" in speed["output"] and "% of speed of light" in speed["output"]
    names = [e["name"] for e in alice["leaderboard"]]
    assert names == ["vector_add time (us)", "vector_add % of speed of light"], alice
    assert alice["leaderboard"][0]["order"] == "asc" and alice["leaderboard"][0]["value"] > 0
    for name, document in documents.items():
        shown = [document["output"]] + [
            t["output"] for t in document["tests"] if t["visibility"] == "visible"
        ]
        assert not any(s in "".join(shown) for s in SECRETS), name
    for line in done.stdout.splitlines():
        text = json.dumps(check_classroom(line.rpartition("\t")[2]))
        assert not any(s in text for s in SECRETS)
