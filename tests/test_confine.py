"""The worker's confinement: the rules the parent writes, the filter, the limits, and what a
confined process can still do (in a child process, so that this one stays free)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from judge.core.spec_reader import load_spec, worker_view
from judge.errors import JudgeError
from judge.workers import channel, confine, launcher, watchdog

CONFINABLE = not confine.available()
needs_confinement = pytest.mark.skipif(not CONFINABLE, reason="cannot confine here")


def test_a_forbidden_folder_inside_a_readable_one_is_left_out_child_by_child(tmp_path):
    site = tmp_path / "site-packages"
    for name in ("numpy", "torch", "puzzles"):
        (site / name).mkdir(parents=True)
    (site / "six.py").write_text("")
    rules = confine.rules([tmp_path / "job"], [site / "puzzles"], False, python=[str(site)])
    assert str(site / "numpy") in rules.read and str(site / "six.py") in rules.read
    assert str(site) not in rules.read and str(site / "puzzles") not in rules.read
    assert rules.write == (str((tmp_path / "job").resolve()),)


def test_a_folder_inside_a_forbidden_one_may_still_be_read(tmp_path):
    home = tmp_path / "home"
    python = home / ".pyenv" / "versions" / "3.11"
    python.mkdir(parents=True)
    rules = confine.rules([tmp_path / "job"], [home], False, python=[str(python)])
    assert str(python) in rules.read and str(home) not in rules.read


def test_the_judges_package_is_readable_and_its_checkout_is_not():
    import judge

    package = Path(judge.__file__).resolve().parent
    rules = confine.rules([], [], False, python=[str(package.parent)])
    assert str(package) in rules.read and str(package.parent) not in rules.read


def test_python_dirs_leave_out_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), "", *sys.path])
    assert str(tmp_path) not in confine.python_dirs()
    assert sys.base_prefix in confine.python_dirs()


def test_python_dirs_open_a_worker_package_from_elsewhere_but_not_its_folder(tmp_path, monkeypatch):
    """A Triton installed with `pip install --target DIR` and found through PYTHONPATH: the
    worker compiles with its files, so its own folder is readable; whatever else DIR holds
    (a class's submissions, say) is not."""
    (tmp_path / "tritonlike").mkdir()
    (tmp_path / "tritonlike" / "__init__.py").write_text("")
    (tmp_path / "submissions").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.setattr(confine, "WORKER_PACKAGES", ("tritonlike", "not_installed_anywhere"))
    found = confine.python_dirs()
    assert str(tmp_path / "tritonlike") in found
    assert str(tmp_path) not in found and str(tmp_path / "submissions") not in found
    rules = confine.rules([], [], False, python=found)
    assert str(tmp_path / "tritonlike") in rules.read and str(tmp_path) not in rules.read
    monkeypatch.chdir(tmp_path)  # judged from that folder: a student's folder named like one
    assert str(tmp_path / "tritonlike") not in confine.python_dirs()


def test_gpu_rules_name_the_device_files_only_on_the_gpu(tmp_path):
    assert not any("nvidia" in d for d in confine.rules([], [], False, python=[]).devices)
    assert "/dev/null" in confine.rules([], [], False, python=[]).devices


def test_rules_travel_as_json():
    rules = confine.rules([Path("/tmp/j")], [], True, confine.Limits(processes=9), python=[])
    again = confine.Rules.from_json(json.loads(json.dumps(rules.to_json())))
    assert again == rules and again.limits.processes == 9


def test_the_seccomp_filter_is_a_whole_program_for_known_machines():
    program = confine.seccomp_filter("x86_64")
    assert program is not None and len(program) % 8 == 0
    codes = [struct.unpack("<HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    assert codes[-1] == (confine.BPF_RET_K, 0, 0, confine.SECCOMP_RET_ALLOW)
    assert any(k == 41 for _, _, _, k in codes)  # socket on x86_64
    assert confine.seccomp_filter("aarch64") is not None
    assert confine.seccomp_filter("sparc") is None


def test_limits_come_from_the_environment_in_mib_and_counts():
    limits = confine.limits_from({"TPUZZLE_MEMORY_MB": "512", "TPUZZLE_PROCESSES": "8"})
    assert limits.memory_bytes == 512 << 20 and limits.processes == 8
    assert limits.disk_bytes == confine.DISK_BYTES
    with pytest.raises(JudgeError, match="TPUZZLE_DISK_MB"):
        confine.limits_from({"TPUZZLE_DISK_MB": "lots"})
    with pytest.raises(JudgeError, match="TPUZZLE_OPEN_FILES"):
        confine.limits_from({"TPUZZLE_OPEN_FILES": "0"})


def test_turning_confinement_off_is_said(monkeypatch):
    monkeypatch.setenv(confine.CONFINE_ENV, "0")
    assert confine.missing_here() == {"everything": "TPUZZLE_CONFINE=0"}
    assert "everything: TPUZZLE_CONFINE=0" == confine.describe(confine.missing_here())


CHILD = """
import json, os, socket, sys
from pathlib import Path
from judge.workers import confine
rules = confine.Rules.from_json(json.loads(sys.argv[1]))
missing = confine.apply(rules)
found = {"missing": missing}
def attempt(name, action):
    try:
        action()
        found[name] = "ok"
    except OSError as exc:
        found[name] = exc.__class__.__name__
attempt("read_forbidden", lambda: open(sys.argv[2]).read())
attempt("write_job", lambda: open(os.path.join(sys.argv[3], "mine"), "w").write("x"))
attempt("write_tmp", lambda: open(sys.argv[4], "w").write("x"))
attempt("socket", lambda: socket.socket())
attempt("signal_parent", lambda: os.kill(os.getppid(), 0))
attempt("run_a_program", lambda: __import__("subprocess").run(["true"], check=True))
print(json.dumps(found))
"""


@needs_confinement
def test_a_confined_process_keeps_to_its_rules(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("x")
    job = tmp_path / "job"
    job.mkdir()
    rules = confine.rules([job], [tmp_path], False)
    command = [sys.executable, "-c", CHILD, json.dumps(rules.to_json()), str(secret), str(job),
               str(tmp_path / "outside")]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    found = json.loads(out.stdout)
    assert found["missing"] == {}
    assert found["write_job"] == "ok" and found["run_a_program"] == "ok"
    assert found["read_forbidden"] == found["write_tmp"] == "PermissionError"
    assert found["socket"] == found["signal_parent"] == "PermissionError"
    assert not (tmp_path / "outside").exists()


def test_the_watchdog_counts_a_tree_and_sums_folders(tmp_path):
    sleepers = [subprocess.Popen(["sleep", "30"]) for _ in range(3)]
    try:
        assert watchdog.tree_size(os.getpid()) >= 4
        dog = watchdog.Watchdog([tmp_path], confine.Limits(processes=2))
        kind, message = dog.check(os.getpid())
        assert kind == "process-limit" and "limit of 2" in message
    finally:
        for proc in sleepers:
            proc.kill()
            proc.wait()
    (tmp_path / "big").write_bytes(b"x" * (3 << 20))
    dog = watchdog.Watchdog([tmp_path], confine.Limits(disk_bytes=1 << 20))
    kind, message = dog.check(os.getpid())
    assert kind == "disk-limit" and "1 MiB" in message
    assert watchdog.folder_bytes([tmp_path], 10) == ((3 << 20), 1)


def test_a_process_that_ends_while_its_tree_is_counted_is_left_out(monkeypatch):
    """A child reaped between its parent's listing and its own: /proc answers ESRCH for its
    folder (seen on an H200, where it ended a judging with a traceback)."""
    sleepers = [subprocess.Popen(["sleep", "30"]) for _ in range(2)]
    gone = f"/proc/{sleepers[0].pid}/task"
    listdir = os.listdir

    def reaped(path):
        if path == gone:
            raise ProcessLookupError(3, "No such process", path)
        return listdir(path)

    monkeypatch.setattr(watchdog.os, "listdir", reaped)
    try:
        found = watchdog.tree(os.getpid())
        assert sleepers[1].pid in found and sleepers[0].pid not in found
    finally:
        for proc in sleepers:
            proc.kill()
            proc.wait()


def test_a_process_s_name_and_state_are_read_whatever_its_name_holds(tmp_path):
    """A name may hold spaces and parentheses (a file the submission named): the state is the
    letter after the last ")", and a zombie counts as ended."""
    import shutil

    from judge.workers import spawner

    odd = tmp_path / "a) Z (b"
    shutil.copy(shutil.which("sleep"), odd)
    proc = subprocess.Popen([str(odd), "30"])
    try:
        deadline = time.monotonic() + 10
        while watchdog.stat(proc.pid)[0] != odd.name and time.monotonic() < deadline:
            time.sleep(0.02)  # the name is the file's once the process has exec'd it
        name, state = watchdog.stat(proc.pid)
        assert name == "a) Z (b" and state in ("R", "S") and spawner.running(proc.pid)
        proc.kill()
        while watchdog.stat(proc.pid)[1] not in watchdog.ENDED and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not spawner.running(proc.pid)  # a zombie: ended, not yet reaped
    finally:
        proc.kill()
        proc.wait()
    assert not spawner.running(proc.pid)
    with pytest.raises(FileNotFoundError):
        watchdog.stat(proc.pid)


def test_sealed_files_travel_as_file_descriptors():
    own = f"/proc/{os.getpid()}/fd/"
    command = {
        "op": "case",
        "inputs": {"a_ptr": own + "7", "b_ptr": own + "9"},
        "recheck_inputs": [{"a_ptr": own + "9"}],
        "note": own + "7",  # only input lists are handed
    }
    swapped, fds = channel.handed(command)
    assert fds == [7, 9] and swapped["fds"] == 2
    assert swapped["inputs"] == {"a_ptr": "fd:0", "b_ptr": "fd:1"}
    assert swapped["recheck_inputs"] == [{"a_ptr": "fd:1"}] and swapped["note"] == own + "7"
    assert channel.handed({"op": "case", "inputs": {"a": "/proc/1/fd/3"}}) == (
        {"op": "case", "inputs": {"a": "/proc/1/fd/3"}},
        [],
    )


def test_a_worker_is_handed_its_puzzle_without_cases(tmp_path, puzzles_root):
    spec_file = puzzles_root / "vector_add" / "puzzle.yaml"
    staged = launcher.staged_spec(spec_file, tmp_path)
    text = staged.read_text()
    assert "tests" not in worker_view(spec_file) and "seed" not in text and "hints" not in text
    spec = load_spec(staged, view=True)
    assert spec.id == "vector_add" and spec.tests == () and len(spec.args) == 4
    with pytest.raises(Exception, match="at least one test"):
        load_spec(staged)


def test_the_worker_gets_its_own_copy_of_the_submission(tmp_path):
    original = tmp_path / "class" / "alice" / "vector_add.py"
    original.parent.mkdir(parents=True)
    original.write_text("def solve(): pass\n")
    (tmp_path / "job").mkdir()
    copy = launcher.staged_submission(original, tmp_path / "job")
    assert copy.read_text() == original.read_text() and copy.name == "vector_add.py"
    assert original.parent not in copy.parents


def test_a_report_names_what_its_worker_ran_without():
    from judge.cli.report import unconfined_line

    line = unconfined_line({"signals": "Landlock ABI 5 cannot scope signals"})
    assert line.startswith("the submission's worker ran unconfined in part")
    assert "signals: Landlock ABI 5" in textwrap.shorten(line, 200)


def test_grade_refuses_to_run_unconfined_unless_told(tmp_path):
    """A course runs confined or knows it does not: one line and exit 2, else --unconfined with
    a warning and the missing mechanisms in the grading's JSON."""
    sys.path.insert(0, str(Path(__file__).parent / "adversarial"))
    from hostile import ROOT, grade_command, run_judge

    student = tmp_path / "class" / "alice"
    student.mkdir(parents=True)
    plain = ROOT / "puzzles" / "vector_add" / "solutions" / "correct" / "plain.py"
    (student / "vector_add.py").write_text(plain.read_text())
    env = dict(os.environ, TPUZZLE_CONFINE="0", TPUZZLE_DB=str(tmp_path / "r.db"))
    command = grade_command(tmp_path / "class", ROOT / "puzzles", "--no-save")
    refused = run_judge(command, env=env)
    assert refused.returncode == 2 and "--unconfined" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "Traceback" not in refused.stderr
    document = tmp_path / "grading.json"
    ran = run_judge([*command, "--unconfined", "--json", str(document)], env=env, timeout=600)
    assert ran.returncode == 0, ran.stderr
    assert "ran unconfined" in ran.stderr
    meta = json.loads(document.read_text())["meta"]
    assert meta["unconfined"] == {"everything": "TPUZZLE_CONFINE=0"}
