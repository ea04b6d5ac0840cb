import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
from test_batches import Judge
from test_store import interpreted, timed
from typer.testing import CliRunner

from judge.cli.app import app
from judge.judging import batch
from judge.records import store

SOLUTIONS = "puzzles/vector_add/solutions"


@pytest.fixture
def cli(monkeypatch, puzzles_root):
    monkeypatch.chdir(puzzles_root.parent)
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(app, list(args), terminal_width=120)

    return invoke


def test_list_shows_the_catalogue_and_then_your_best(cli):
    result = cli("list")
    assert result.exit_code == 0
    assert "vector_add" in result.stdout and "Vector addition" in result.stdout
    assert (
        cli(
            "run", "vector_add", f"{SOLUTIONS}/correct/plain.py", "--interpret", "--size", "N=100"
        ).exit_code
        == 0
    )
    assert "passed" in cli("list").stdout


def test_show(cli):
    result = cli("show", "vector_add")
    assert result.exit_code == 0
    assert "solve(a_ptr, b_ptr, c_ptr, N)" in result.stdout
    assert "c = [6.0, 8.0, 10.0, 12.0]" in result.stdout


def test_init_writes_the_template_and_refuses_to_overwrite(cli, tmp_path):
    target = tmp_path / "subs" / "vector_add.py"
    assert cli("init", "vector_add", "--dir", str(tmp_path / "subs")).exit_code == 0
    assert "def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int)" in target.read_text()
    target.write_text("# my work")
    again = cli("init", "vector_add", "--dir", str(tmp_path / "subs"))
    assert again.exit_code == 2 and "already exists" in again.stderr
    assert target.read_text() == "# my work"
    assert cli("init", "vector_add", "--dir", str(tmp_path / "subs"), "--force").exit_code == 0
    assert target.read_text() != "# my work"


def test_run_json_prints_one_object_and_exit_code_0(cli):
    result = cli("run", "vector_add", f"{SOLUTIONS}/correct/plain.py", "--json", "--interpret")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["verdict"] == "passed" and data["reason"] == "ok"
    assert data["timing"] is None  # interpreter mode on this machine
    assert data["env"]["mode"] == "interpreter"
    assert {"sizes", "seed", "status", "max_error"} <= set(data["cases"][0])
    assert all(c["status"] == "passed" for c in data["cases"])


def test_run_wrong_submission_exit_code_1(cli):
    result = cli(
        "run", "vector_add", f"{SOLUTIONS}/wrong/failed_no_mask.py", "--json", "--interpret"
    )
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert (data["verdict"], data["reason"]) == ("failed", "out-of-bounds")
    failing = next(c for c in data["cases"] if c["status"] == "failed")
    assert failing["reproduce"].startswith("tpuzzle run vector_add")
    assert any("past the end of c_ptr" in h for h in failing["hints"])


def test_run_human_report(cli):
    result = cli(
        "run", "vector_add", f"{SOLUTIONS}/wrong/failed_grid_rounds_down.py", "--interpret"
    )
    assert result.exit_code == 1
    for expected in (
        "FAILED",
        "unwritten",
        "first failing case",
        "hint:",
        "reproduce:",
        "Interpreter mode",
    ):
        assert expected in result.stdout


@pytest.mark.parametrize(
    "args, words",
    [
        (("run", "vector_ad", "x.py"), "unknown puzzle 'vector_ad'; did you mean vector_add?"),
        (("run", "vector_add", "missing.py"), "missing.py: no such file"),
        (("show", "nope"), "unknown puzzle 'nope'"),
        (("leaderboard", "vector_ad"), "unknown puzzle 'vector_ad'; did you mean vector_add?"),
        (("leaderboard", "--db", "missing.db"), "--db missing.db: no such file"),
        (("list", "--db", "missing.db"), "--db missing.db: no such file"),
        (("run", "vector_add", f"{SOLUTIONS}/correct/plain.py", "--size", "M=3"), "--size 'M=3'"),
        (
            ("run", "vector_add", f"{SOLUTIONS}/correct/plain.py", "--size", "N=0"),
            "outside the limits",
        ),
    ],
)
def test_usage_errors_are_one_line_and_exit_code_2(cli, args, words):
    result = cli(*args)
    assert result.exit_code == 2
    assert words in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output


def test_bad_flag_exit_code_2(cli):
    assert cli("run", "vector_add", f"{SOLUTIONS}/correct/plain.py", "--bogus").exit_code == 2


def test_malformed_spec_is_one_line(cli, tmp_path, puzzles_root):
    shutil.copytree(puzzles_root / "vector_add", tmp_path / "vector_add")
    spec = tmp_path / "vector_add" / "puzzle.yaml"
    spec.write_text(
        spec.read_text().replace(
            "dtype: float32, shape: [N], draw", "dtype: float33, shape: [N], draw", 1
        )
    )
    result = cli("show", "vector_add", "--puzzles", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {spec}: args[0].dtype: unknown value 'float33' (expected "
        "one of: float16, bfloat16, float32, float64, float8_e4m3fn, float8_e5m2, int8, uint8, "
        "int16, int32, uint32, int64)\n"
    )


def test_python_dash_m_judge(puzzles_root):
    out = subprocess.run(
        [sys.executable, "-m", "judge", "--help"],
        cwd=puzzles_root.parent,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and "run" in out.stdout and "list" in out.stdout


def test_bench_json_and_markdown(cli, tmp_path, puzzles_root):
    shutil.copytree(puzzles_root / "vector_add", tmp_path / "cat" / "vector_add")
    table = tmp_path / "table.md"
    result = cli(
        "bench",
        "--puzzles",
        str(tmp_path / "cat"),
        "--json",
        "--interpret",
        "--markdown",
        str(table),
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["mode"] == "interpreter"
    assert [(r["puzzle"], r["verdict"]) for r in data["rows"]] == [("vector_add", "passed")]
    assert "| vector_add | easy | passed |" in table.read_text()


def test_bench_a_directory_reports_failures_with_exit_code_1(cli, tmp_path, puzzles_root):
    shutil.copytree(puzzles_root / "vector_add", tmp_path / "cat" / "vector_add")
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(puzzles_root / "vector_add" / "template.py", subs / "vector_add.py")
    result = cli("bench", str(subs), "--puzzles", str(tmp_path / "cat"), "--interpret")
    assert result.exit_code == 1
    assert "failed (unwritten)" in result.stdout and "correctness only" in result.stdout


def test_leaderboard_json_lists_the_ranked_entries(cli):
    conn = store.connect()  # TPUZZLE_DB of this test
    store.record(conn, timed(0.30), "ada")
    store.record(conn, timed(0.20), "bob")
    store.record(conn, timed(0.201), "cyd")  # within bob's spread
    store.record(conn, timed(0.10, device="NVIDIA H200"), "ada")
    store.record(conn, timed(1.0, puzzle="matmul", gbps=None, tflops=300.0), "ada")
    store.record(conn, interpreted(), "dan")
    result = cli("leaderboard", "vector_add", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [(d["device"], d["submitter"], d["rank"], d["tie"]) for d in data] == [
        ("NVIDIA H100", "bob", 1, True),
        ("NVIDIA H100", "cyd", 1, True),
        ("NVIDIA H100", "ada", 3, False),
        ("NVIDIA H200", "ada", 1, False),
    ]
    assert data[0]["median_ms"] == 0.2 and data[0]["gbps"] == 3000.0
    assert set(data[0]) == {f.name for f in dataclasses.fields(store.Entry)}
    everything = json.loads(cli("leaderboard", "--json").stdout)
    assert [d["puzzle"] for d in everything] == ["matmul"] + ["vector_add"] * 4


def test_leaderboard_table_and_db_option(cli, tmp_path):
    other = tmp_path / "other.db"
    store.record(store.connect(other), timed(0.2), "ada")
    result = cli("leaderboard", "--db", str(other))
    assert result.exit_code == 0
    assert "vector_add · NVIDIA H100" in result.stdout and "200.0 us" in result.stdout
    assert "No ranked results yet" in cli("leaderboard").stdout  # TPUZZLE_DB is still empty


def test_reading_commands_refuse_a_db_that_is_not_there_and_make_none(cli, tmp_path):
    typo = tmp_path / "clas.db"
    for args in (("leaderboard",), ("list",)):
        result = cli(*args, "--db", str(typo))
        assert (result.exit_code, result.stderr) == (2, f"error: --db {typo}: no such file\n")
    assert not typo.exists()
    # A command that stores results makes the database it is pointed at.
    hint = cli("hint", "vector_add", "--db", str(typo))
    assert hint.exit_code == 0, hint.output
    assert typo.is_file()
    assert cli("leaderboard", "--db", str(typo)).exit_code == 0


def test_leaderboard_of_an_empty_database(cli):
    result = cli("leaderboard", "vector_add")
    assert result.exit_code == 0
    assert "No ranked results yet for vector_add." in result.stdout
    assert "never ranked" in result.stdout
    empty = cli("leaderboard", "--json")
    assert (empty.exit_code, empty.stdout) == (0, "[]\n")


# ------------------------------------------------------------------------------ grade and merge


@pytest.fixture
def small_class(tmp_path, puzzles_root):
    """A one-puzzle catalogue whose only test is small, and three students."""
    catalogue = tmp_path / "cat"
    shutil.copytree(puzzles_root / "vector_add", catalogue / "vector_add")
    spec = catalogue / "vector_add" / "puzzle.yaml"
    text = spec.read_text()
    head, rest = text.split("tests:\n", 1)
    spec.write_text(
        head + "tests:\n  - {sizes: {N: 1500}, seed: 5}\n" + rest[rest.index("bench") :]
    )
    root = tmp_path / "class"
    for student, solution in (
        ("ada", "correct/plain.py"),
        ("bob", "wrong/failed_no_mask.py"),
        ("cyd", "wrong/error_os_exit.py"),
    ):
        (root / student).mkdir(parents=True)
        shutil.copy(
            puzzles_root / "vector_add" / "solutions" / solution, root / student / "vector_add.py"
        )
    return catalogue, root


def test_grade_writes_every_output_and_exits_0_whatever_the_verdicts(cli, small_class, tmp_path):
    catalogue, root = small_class
    out = {name: tmp_path / f"grades.{name}" for name in ("json", "xml", "md", "csv")}
    result = cli(
        "grade", str(root), "--puzzles", str(catalogue), "--interpret", "--jobs", "2",
        "--json", str(out["json"]), "--junit", str(out["xml"]),
        "--markdown", str(out["md"]), "--csv", str(out["csv"]),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(out["json"].read_text())
    verdicts = [
        (e["student"], e["report"]["verdict"], e["report"]["reason"]) for e in data["entries"]
    ]
    assert verdicts == [
        ("ada", "passed", "ok"),
        ("bob", "failed", "out-of-bounds"),
        ("cyd", "error", "exit"),
    ]
    assert data["meta"]["secret_seed"] is False
    assert "<testsuites" in out["xml"].read_text() and 'errors="1"' in out["xml"].read_text()
    assert "3 submissions: 1 passed, 1 failed, 1 error" in out["md"].read_text()
    assert out["csv"].read_text().splitlines()[1].startswith("ada,vector_add,")
    assert "vector_add · 3 submission(s)" in result.stdout
    runs = store.connect().execute("SELECT submitter, verdict FROM runs ORDER BY submitter")
    assert [tuple(r) for r in runs] == [("ada", "passed"), ("bob", "failed"), ("cyd", "error")]


def test_grade_resume_takes_stored_results_and_a_secret_seed_starts_afresh(
    cli, small_class, tmp_path, monkeypatch
):
    catalogue, root = small_class
    args = ["grade", str(root), "--puzzles", str(catalogue), "--interpret", "--resume"]
    assert cli(*args).exit_code == 0
    again = cli(*args, "--json", str(tmp_path / "again.json"))
    assert again.exit_code == 0 and "3 result(s) taken from the database" in again.stdout
    assert len(json.loads((tmp_path / "again.json").read_text())["entries"]) == 3
    (root / "ada" / "vector_add.py").write_text(
        (root / "ada" / "vector_add.py").read_text() + "\n# edited\n"
    )
    assert "2 result(s) taken" in cli(*args).stdout  # the edited file is judged again
    monkeypatch.setenv("TPUZZLE_SECRET_SEED", "instructor-only")
    secret = cli(*args, "--json", str(tmp_path / "secret.json"))
    assert "taken from the database" not in secret.stdout
    entries = json.loads((tmp_path / "secret.json").read_text())
    assert entries["meta"]["secret_seed"] is True
    assert entries["entries"][0]["report"]["cases"][0]["seed"] != 5
    assert "instructor-only" not in (tmp_path / "secret.json").read_text()


def test_shards_merge_into_the_whole_class(cli, small_class, tmp_path):
    catalogue, root = small_class
    common = ["--puzzles", str(catalogue), "--interpret", "--no-timing", "--no-save"]
    parts = []
    for k in (1, 2):
        part = tmp_path / f"shard{k}.json"
        assert (
            cli("grade", str(root), *common, "--shard", f"{k}/2", "--json", str(part)).exit_code
            == 0
        )
        parts.append(part)
    entries = [json.loads(p.read_text())["entries"] for p in parts]
    assert sorted(e["student"] for shard in entries for e in shard) == ["ada", "bob", "cyd"]
    merged = tmp_path / "merged.json"
    result = cli("merge", *map(str, parts), "--json", str(merged))
    assert result.exit_code == 0, result.output
    data = json.loads(merged.read_text())
    assert [e["student"] for e in data["entries"]] == ["ada", "bob", "cyd"]
    assert sorted(data["meta"]["merged"]) == ["1/2", "2/2"]
    assert "vector_add · 3 submission(s)" in result.stdout


@pytest.mark.parametrize(
    "args, words",
    [
        (("grade",), "give either ROOT"),
        (("grade", "nowhere"), "nowhere: no such directory"),
        (("grade", ".", "--manifest", "m.csv"), "give either ROOT"),
        (("grade", "puzzles", "--shard", "3/2"), "shard '3/2'"),
        (("grade", "puzzles", "--interpret", "--jobs", "0"), "--jobs 0"),
        (("merge", "missing.json"), "missing.json: cannot read"),
        (("grade", "puzzles", "--secret-file", "missing.txt"), "--secret-file missing.txt"),
    ],
)
def test_grade_usage_errors_are_one_line_and_exit_code_2(cli, args, words):
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert words in result.stderr and result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "args, words",
    [
        (("bench", "--plot", "x.png"), "--plot draws one puzzle"),
        (("bench", "vector_add", "--plot", "x.png", "--interpret"), "--plot needs timings"),
        (("bench", "vector_ad"), "did you mean vector_add?"),
    ],
)
def test_bench_usage_errors(cli, args, words):
    result = cli(*args)
    assert result.exit_code == 2 and words in result.stderr, result.output


def test_run_sanitize_says_what_is_missing_in_one_line(cli, monkeypatch, tmp_path):
    from judge.workers import sanitize

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    monkeypatch.delenv(sanitize.TOOL_ENV, raising=False)
    plain = f"{SOLUTIONS}/correct/plain.py"
    if not (sanitize.Path("/usr/local/cuda/bin/compute-sanitizer")).exists():
        missing = cli("run", "vector_add", plain, "--sanitize")
        assert missing.exit_code == 2 and "compute-sanitizer" in missing.stderr
        assert missing.stderr.count("\n") == 1
    tool = tmp_path / "compute-sanitizer"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    on_cpu = cli("run", "vector_add", plain, "--sanitize", "--interpret")
    assert on_cpu.exit_code == 2 and "CUDA device" in on_cpu.stderr


# ------------------------------------------------------------------------------ --jsonl, progress


def read_jsonl(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_bench_jsonl_streams_and_json_still_shows_progress_on_stderr(cli, tmp_path, puzzles_root):
    shutil.copytree(puzzles_root / "vector_add", tmp_path / "cat" / "vector_add")
    stream = tmp_path / "bench.jsonl"
    result = cli(
        "bench", "--puzzles", str(tmp_path / "cat"), "--json", "--interpret",
        "--jsonl", str(stream),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)  # stdout holds the JSON document only
    start, line, end = read_jsonl(stream)
    assert (start["kind"], start["command"], start["total"]) == ("start", "bench", 1)
    assert start["mode"] == "interpreter"
    assert (line["kind"], line["index"], line["puzzle"]) == ("result", 0, "vector_add")
    assert line["submission"] == document["reports"][0]["submission"]
    assert line["report"] == document["reports"][0]
    assert end == {"kind": "end", "done": 1, "total": 1}
    assert re.search(r"^\[1/1\] vector_add: passed, [0-9.]+ s elapsed$", result.stderr, re.M)


def test_grade_jsonl_has_a_line_per_submission_and_stderr_a_line_each(cli, small_class, tmp_path):
    catalogue, root = small_class
    stream = tmp_path / "grade.jsonl"
    args = ["grade", str(root), "--puzzles", str(catalogue), "--interpret", "--jsonl", str(stream)]
    result = cli(*args)
    assert result.exit_code == 0, result.output
    start, *lines, end = read_jsonl(stream)
    assert (start["command"], start["total"], start["secret_seed"]) == ("grade", 3, False)
    assert end == {"kind": "end", "done": 3, "total": 3}
    verdicts = [(d["index"], d["student"], d["puzzle"], d["report"]["verdict"]) for d in lines]
    assert sorted(verdicts) == [
        (0, "ada", "vector_add", "passed"),
        (1, "bob", "vector_add", "failed"),
        (2, "cyd", "vector_add", "error"),
    ]
    assert all(d["path"] == str(root / d["student"] / "vector_add.py") for d in lines)
    assert not any(d["resumed"] for d in lines)
    progress = [p for p in result.stderr.splitlines() if p.startswith("[")]
    assert len(progress) == 3 and progress[-1].startswith("[3/3] ")
    assert any("bob/vector_add: failed (out-of-bounds)" in p for p in progress)
    again = cli(*args, "--resume")
    assert again.exit_code == 0
    assert all(d["resumed"] for d in read_jsonl(stream)[1:-1])
    assert again.stderr.count(", from the database,") == 3


def test_bad_jsonl_path_is_one_line_and_exit_code_2(cli, tmp_path):
    result = cli("bench", "vector_add", "--interpret", "--jsonl", str(tmp_path / "no" / "b.jsonl"))
    assert result.exit_code == 2 and "b.jsonl: cannot write" in result.stderr
    assert result.stderr.count("\n") == 1


def test_an_interrupted_grade_keeps_what_finished_and_exits_130(
    cli, small_class, tmp_path, monkeypatch
):
    catalogue, root = small_class
    fake = Judge(interrupt_on=root / "bob" / "vector_add.py")  # Ctrl-C on the second file
    monkeypatch.setattr(batch, "judge_each", fake.each)
    stream, document = tmp_path / "grade.jsonl", tmp_path / "grade.json"
    result = cli(
        "grade", str(root), "--puzzles", str(catalogue), "--interpret",
        "--jsonl", str(stream), "--json", str(document),
    )  # fmt: skip
    assert result.exit_code == 130, result.output
    assert f"stopped after 1 of 3: results so far in {stream}\n" in result.stderr
    assert [(d["kind"], d.get("student")) for d in read_jsonl(stream)] == [
        ("start", None),
        ("result", "ada"),
        ("stopped", None),
    ]
    assert not document.exists()  # the grading document is for a finished grading only
    assert [tuple(r) for r in store.connect().execute("SELECT submitter FROM runs")] == [("ada",)]


def test_sigterm_stops_a_bench_as_ctrl_c_does(cli, tmp_path, monkeypatch):
    stream = tmp_path / "bench.jsonl"

    class Terminated(Judge):
        """At the second job: SIGTERM once the first job's line is written, then wait for the
        batch to kill this job's worker."""

        def judge(self, spec, path, options, worker):
            if spec.id == "silu":
                wait_for(lambda: '"kind": "result"' in stream.read_text())
                time.sleep(0.2)  # the judge's main thread is back waiting for reports
                os.kill(os.getpid(), signal.SIGTERM)
                wait_for(lambda: worker.stopped)
            return super().judge(spec, path, options, worker)

    monkeypatch.setattr(batch, "judge_each", Terminated().each)
    harmless = signal.signal(signal.SIGTERM, lambda signum, frame: None)  # should no handler be set
    try:
        result = cli(
            "bench", "-p", "relu", "-p", "silu", "-p", "vector_add", "--interpret", "--json",
            "--jsonl", str(stream),
        )  # fmt: skip
        restored = signal.getsignal(signal.SIGTERM)
    finally:
        signal.signal(signal.SIGTERM, harmless)
    assert result.exit_code == 130, result.output
    assert "stopped after 1 of 3" in result.stderr and result.stdout == ""
    assert [d["kind"] for d in read_jsonl(stream)] == ["start", "result", "stopped"]
    assert restored is not signal.SIG_DFL and restored.__name__ == "<lambda>"


def wait_for(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)


# ------------------------------------------------------------------------------ course platforms

GRADESCOPE_METADATA = {
    "id": 123456,
    "created_at": "2026-12-03T09:30:00.000000-08:00",
    "assignment": {"due_date": "2026-12-01T23:00:00.000000-08:00", "title": "Lab 1"},
    "users": [{"email": "ada@example.edu", "id": 1, "name": "Ada Lovelace"}],
}


def test_grade_one_students_folder_as_gradescope_and_github_classroom_see_it(
    cli, small_class, tmp_path
):
    from formats import check_classroom, check_gradescope

    catalogue, root = small_class
    folder = root / "ada"  # what /autograder/submission holds: the student's files
    (folder / "README.md").write_text("my lab\n")
    metadata = tmp_path / "submission_metadata.json"
    metadata.write_text(json.dumps(GRADESCOPE_METADATA))
    policy = tmp_path / "policy.yaml"
    policy.write_text("late: {per_day: 0.25}\npuzzles: {vector_add: {points: 4}}\n")
    out = tmp_path / "results.json"
    result = cli(
        "grade", str(folder), "--puzzles", str(catalogue), "--interpret", "--classroom",
        "--gradescope", str(out), "--submission-metadata", str(metadata), "--policy", str(policy),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = check_gradescope(json.loads(out.read_text()))
    assert [t["name"] for t in document["tests"]] == ["vector_add: cases", "vector_add: speed"]
    assert [t["score"] for t in document["tests"]] == [3.2, 0.0]  # untimed: no speed points
    assert document["score"] == pytest.approx(3.2 * 0.5)  # 1 day 10.5 hours late: 2 days
    assert "2 days late: -50%" in document["output"]
    classroom = check_classroom(result.stdout.strip())  # stdout holds the result alone
    assert classroom["max_score"] == 4.0
    assert [t["score"] for t in classroom["tests"]] == [1.6, 0.0]
    assert "vector_add · 1 submission(s)" in result.stderr
    runs = store.connect().execute("SELECT submitter FROM runs")
    assert [tuple(r) for r in runs] == [("Ada Lovelace",)]


def test_grade_and_merge_write_canvas_and_gradescope_files_for_a_class(cli, small_class, tmp_path):
    from formats import check_canvas, check_gradescope

    catalogue, root = small_class
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,submitter\n"
        "    Points Possible,,,,,\n"
        '"Lovelace, Ada",11,,ada1,S1,ada\n"Boole, George",12,,bob1,S1,bob\n'
        "Noether,13,,emmy,S2,emmy\n"
    )
    common = ["--puzzles", str(catalogue), "--interpret", "--no-save", "--roster", str(roster)]
    part = tmp_path / "grades.json"
    result = cli(
        "grade", str(root), *common, "--canvas", str(tmp_path / "canvas.csv"),
        "--gradescope", str(tmp_path / "gs"), "--json", str(part),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "cyd: graded, but not on the roster" in result.stderr
    rows = check_canvas((tmp_path / "canvas.csv").read_text())
    assert [(r["Student"], r["tpuzzle"]) for r in rows] == [
        ("Lovelace, Ada", "8"),
        ("Boole, George", "0"),
        ("Noether", "0"),
    ]
    assert sorted(p.parent.name for p in (tmp_path / "gs").glob("*/results.json")) == [
        "ada",
        "bob",
        "cyd",
    ]
    for path in (tmp_path / "gs").glob("*/results.json"):
        check_gradescope(json.loads(path.read_text()))
    merged = cli(
        "merge", str(part), "--puzzles", str(catalogue), "--roster", str(roster),
        "--canvas", str(tmp_path / "merged.csv"),
    )  # fmt: skip
    assert merged.exit_code == 0, merged.output
    assert (tmp_path / "merged.csv").read_text() == (tmp_path / "canvas.csv").read_text()


@pytest.mark.parametrize(
    "extra, words",
    [
        (("--policy", "missing.yaml"), "missing.yaml: cannot read"),
        (("--policy", "{bad}"), "points: expected a number of points >= 0"),
        (("--policy", "{due}"), "due: '2026-12-01 23:59': give the UTC offset"),
        (("--policy", "{puzzle}"), "puzzles.vectr_add: not a puzzle id"),
        (("--canvas", "c.csv"), "--canvas needs --roster"),
        (("--canvas", "c.csv", "--roster", "missing.csv"), "--roster missing.csv: no such file"),
        (("--submission-metadata", "{meta}"), "not JSON"),
    ],
)
def test_course_inputs_are_checked_before_anything_is_judged(
    cli, small_class, tmp_path, extra, words
):
    catalogue, root = small_class
    files = {
        "{bad}": "points: -1\n",
        "{due}": "due: '2026-12-01 23:59'\n",
        "{puzzle}": "puzzles: {vectr_add: {}}\n",
        "{meta}": "{not json",
    }
    args = []
    for value in extra:
        if value in files:
            path = tmp_path / "input.txt"
            path.write_text(files[value])
            value = str(path)
        args.append(value)
    result = cli("grade", str(root), "--puzzles", str(catalogue), "--interpret", *args)
    assert result.exit_code == 2, result.output
    assert words in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert "judging" not in result.stderr
    assert not store.default_path().exists() or not list(
        store.connect().execute("SELECT id FROM runs")
    )


def test_starting_the_cli_leaves_the_batch_modules_to_the_batch_commands():
    """`tpuzzle run`, `list` and `show` start without the modules of grade, bench and merge
    (a fifth of the command's start-up); the batch commands import them themselves."""
    code = (
        "import judge.cli.app, sys; "
        "print(sorted(m for m in ('judge.records.batches', 'judge.records.courses', "
        "'judge.cli.tables') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
