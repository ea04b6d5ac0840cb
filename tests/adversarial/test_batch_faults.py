"""Faults in a batch: a hostile submission affects its own verdict only, and a judge killed
halfway loses nothing it committed."""

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time

from hostile import ROOT, expected, grade_command, run_judge

SOLUTIONS = ROOT / "puzzles" / "vector_add" / "solutions"
HOSTILE = ["error_infinite_loop.py", "error_segfault.py", "error_os_exit.py"]
HONEST = [
    "correct/plain.py",
    "wrong/failed_no_mask.py",
    "correct/autotuned.py",
    "wrong/failed_grid_rounds_down.py",
    "wrong/failed_overwrites_input.py",
    "wrong/failed_skips_repeated_calls.py",
]


def hostile_class(root, students: int) -> dict[str, tuple[str, set[str]]]:
    """Every third student hostile (a hang, a segfault, an os._exit); the expected verdicts."""
    want = {}
    for i in range(students):
        source = (
            SOLUTIONS / "wrong" / HOSTILE[(i // 3) % len(HOSTILE)]
            if i % 3 == 2
            else SOLUTIONS / HONEST[(i - i // 3) % len(HONEST)]
        )
        student = f"s{i:02d}"
        (root / student).mkdir(parents=True)
        shutil.copy(source, root / student / "vector_add.py")
        want[student] = expected(source)
    return want


def verdicts(document: dict) -> dict[str, tuple[str, str]]:
    return {
        e["student"]: (e["report"]["verdict"], e["report"]["reason"]) for e in document["entries"]
    }


def assert_as_expected(got: dict, want: dict) -> None:
    wrong = {s: (got.get(s), w) for s, w in want.items() if got.get(s, ("", ""))[0] != w[0]}
    wrong |= {s: (got[s], w) for s, w in want.items() if s in got and got[s][1] not in w[1]}
    assert not wrong, wrong


def test_every_third_submission_hostile_and_every_other_verdict_right(tmp_path, small_catalogue):
    catalogue = small_catalogue()
    want = hostile_class(tmp_path / "class", 9)
    out = tmp_path / "grades.json"
    done = run_judge(
        grade_command(tmp_path / "class", catalogue, "--jobs", "2", "--timeout", "6")
        + ["--json", str(out)],
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert_as_expected(verdicts(json.loads(out.read_text())), want)


def stored_rows(db) -> list[tuple]:
    if not db.exists():
        return []
    try:
        conn = sqlite3.connect(db, timeout=5)
        return conn.execute("SELECT id, submitter, verdict FROM runs ORDER BY id").fetchall()
    except sqlite3.OperationalError:  # the table is not there yet
        return []


def test_a_judge_killed_mid_batch_loses_no_committed_result_and_resumes(tmp_path, small_catalogue):
    catalogue = small_catalogue()
    want = hostile_class(tmp_path / "class", 6)
    db = tmp_path / "class.db"
    env = dict(os.environ, PYTHONPATH=str(ROOT), TPUZZLE_DB=str(db))
    command = grade_command(tmp_path / "class", catalogue, "--timeout", "20", "--resume")
    judge = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 300
    while len(stored_rows(db)) < 2 and time.monotonic() < deadline and judge.poll() is None:
        time.sleep(0.2)
    judge.send_signal(signal.SIGKILL)  # s02 hangs for 20 s: the judge dies mid-batch
    judge.wait()
    before = stored_rows(db)
    assert 2 <= len(before) < 6, before
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    out = tmp_path / "grades.json"
    again = run_judge([*command, "--json", str(out)], env=env, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"{len(before)} result(s) taken from the database" in again.stdout
    after = stored_rows(db)
    assert after[: len(before)] == before  # nothing committed was lost or rewritten
    assert sorted(r[1] for r in after) == sorted(want)  # each student judged exactly once
    assert_as_expected(verdicts(json.loads(out.read_text())), want)
