"""judge.workers.zygote: workers forked from a pre-imported process, each still a fresh process
of its own (session, environment, directory), reaped and reported like a subprocess."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from judge.workers import channel, launcher
from judge.workers.spawner import ForkedProcess, Spawner

SHOW_ENV = """
import os, sys
print("cache", os.environ.get("TRITON_CACHE_DIR"), "cwd", os.getcwd(), "sid", os.getsid(0),
      "pid", os.getpid(), "secret", os.environ.get("TPUZZLE_SECRET_SEED"), flush=True)

def solve(a_ptr, b_ptr, c_ptr, N):
    pass
"""


@pytest.fixture
def launched(vector_add, write_submission):
    workers = []

    def launch(source: str, **environ) -> channel.WorkerProcess:
        path = write_submission(source)
        env = {**os.environ, **environ}
        worker = launcher.launch(vector_add.directory / "puzzle.yaml", path, True, None, None, env)
        workers.append(worker)
        return worker

    yield launch
    for worker in workers:
        launcher.discard(worker)


def test_a_forked_worker_is_a_session_leader_with_its_own_environment(launched, monkeypatch):
    monkeypatch.setenv("TPUZZLE_KEEP_COMPILED", "0")
    worker = launched(SHOW_ENV, TPUZZLE_SECRET_SEED="hidden", TPUZZLE_KEEP_COMPILED="0")
    assert isinstance(worker.proc, ForkedProcess)
    worker.expect("ready", 120, "starting")
    worker.expect_ok({"op": "load"}, "loaded", 60, "loading")
    worker.stop()
    words = worker.output().split()
    found = dict(zip(words[::2], words[1::2], strict=False))
    assert found["cache"] == str(worker.dir / "triton-cache")
    assert found["cwd"] == str(worker.dir / "work")
    assert found["sid"] == found["pid"] == str(worker.proc.pid)
    assert found["secret"] == "None"  # the judge's own settings never reach a worker


def test_the_exit_code_and_the_signal_of_a_forked_worker_are_reported(launched):
    worker = launched("import os\nos._exit(7)\n")
    worker.expect("ready", 120, "starting")
    worker.send({"op": "load"}, "loading")
    assert worker.proc.wait(timeout=30) == 7
    worker = launched("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    worker.expect("ready", 120, "starting")
    with pytest.raises(channel.WorkerDied, match="SIGSEGV"):
        worker.expect_ok({"op": "load"}, "loaded", 30, "loading")


def test_a_zygote_that_dies_takes_its_workers_and_is_replaced(launched):
    worker = launched("def solve(a_ptr, b_ptr, c_ptr, N):\n    pass\n")
    worker.expect("ready", 120, "starting")
    spawner = launcher.zygote(True)
    os.kill(spawner.proc.pid, signal.SIGKILL)
    assert worker.proc.wait(timeout=30) == -signal.SIGKILL
    assert not spawner.usable
    assert launcher.zygote(True) is not spawner


def test_closing_the_zygote_ends_its_workers(vector_add, write_submission, tmp_path):
    path = write_submission("import time\ntime.sleep(600)\n")
    spawner = Spawner.start(launcher.zygote_env(True))
    job = tmp_path / "job"
    (job / "work").mkdir(parents=True)
    (job / "job.json").write_text(
        f'{{"spec": "{vector_add.directory / "puzzle.yaml"}", "submission": "{path}", '
        '"interpret": true}'
    )
    env = launcher.worker_env(job, True, None)
    proc, cmd_w, event_r, passer = spawner.fork(str(job), str(job / "work"), env, 120)
    os.write(cmd_w, b'{"op": "load"}\n')
    time.sleep(0.5)
    spawner.close()
    for _ in range(100):
        try:
            os.kill(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("a worker outlived its zygote")
    os.close(cmd_w)
    os.close(event_r)
    passer.close()


def test_without_the_zygote_workers_start_from_nothing(launched, monkeypatch):
    monkeypatch.setenv(launcher.ZYGOTE_ENV, "0")
    worker = launched("def solve(a_ptr, b_ptr, c_ptr, N):\n    pass\n")
    assert isinstance(worker.proc, subprocess.Popen)
    assert worker.expect("ready", 120, "starting")["event"] == "ready"


def test_compiled_kernels_are_kept_per_submission_path(tmp_path, monkeypatch):
    monkeypatch.setenv("TPUZZLE_CACHE", str(tmp_path / "cache"))
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    env = dict(os.environ)
    assert launcher.compiled_dir(a, env) == launcher.compiled_dir(Path(str(a)), env)
    assert launcher.compiled_dir(a, env) != launcher.compiled_dir(b, env)
    assert launcher.compiled_dir(a, {**env, launcher.KEEP_COMPILED_ENV: "0"}) is None


def test_only_the_most_recently_used_compiled_caches_are_kept(tmp_path):
    for i in range(5):
        folder = tmp_path / f"d{i}"
        folder.mkdir()
        os.utime(folder, (1000 + i, 1000 + i))
    launcher.prune(tmp_path, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d3", "d4"]


def test_a_wait_ends_when_the_worker_is_gone_whatever_the_zygote_says(tmp_path):
    """A worker that has ended is not waited for forever, even with no word from its zygote."""

    class Silent:
        alive = True

        def exit_code(self, pid, timeout):
            time.sleep(timeout or 0)
            return None

    gone = subprocess.Popen(["true"])
    gone.wait()
    assert ForkedProcess(gone.pid, None, Silent()).wait() == -signal.SIGKILL
    alive = subprocess.Popen(["sleep", "30"])
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            ForkedProcess(alive.pid, None, Silent()).wait(timeout=0.6)
    finally:
        alive.kill()
        alive.wait()


def test_a_child_that_dies_at_once_is_still_reported(launched):
    worker = launched("def solve(a_ptr, b_ptr, c_ptr, N):\n    pass\n")
    worker.kill()
    assert worker.proc.wait(timeout=30) == -signal.SIGKILL


def test_a_clean_exit_reported_late_is_not_taken_for_a_kill():
    """The zygote's word arrives after the process is gone: its exit code 0 stands."""

    class Late:
        alive = True
        calls = 0

        def exit_code(self, pid, timeout):
            self.calls += 1
            return 0 if self.calls > 1 else None

    gone = subprocess.Popen(["true"])
    gone.wait()
    assert ForkedProcess(gone.pid, None, Late()).wait() == 0


def test_a_gpu_is_numbered_as_the_client_numbers_it(tmp_path, monkeypatch):
    """The judge server launches workers for clients whose CUDA_VISIBLE_DEVICES may differ from
    its own: --gpu 1 of a client that sees devices 2,3 is device 3."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    client = {"CUDA_VISIBLE_DEVICES": "2,3"}
    assert launcher.worker_env(tmp_path, False, 1, client)["CUDA_VISIBLE_DEVICES"] == "3"
    assert launcher.worker_env(tmp_path, False, 1)["CUDA_VISIBLE_DEVICES"] == "1"


def test_a_relaunched_worker_gets_the_environment_of_the_first(launched):
    shows = (
        'import os\nprint("mark", os.environ.get("CLIENT_MARK"), flush=True)\n'
        "def solve(a_ptr, b_ptr, c_ptr, N):\n    pass\n"
    )
    first = launched(shows, CLIENT_MARK="from-the-client")
    again = first.relaunch()
    try:
        for worker in (first, again):
            worker.expect("ready", 120, "starting")
            worker.expect_ok({"op": "load"}, "loaded", 60, "loading")
            worker.stop()
            assert "mark from-the-client" in worker.output()
        assert again.dir != first.dir
    finally:
        launcher.discard(again)
