"""judge.judging.server and client: `tpuzzle run` through a long-lived local judge server gives
the report an in-process judging gives; the server is private, keyed to its environment, and
kills the worker of a client that goes away."""

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judge.core.results import Progress
from judge.core.spec import Case
from judge.judging import client, options, server

CORRECT = "puzzles/vector_add/solutions/correct/plain.py"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def served(tmp_path, monkeypatch):
    """A server of its own for this test (a private runtime folder), stopped afterwards."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setenv(server.SERVER_ENV, "1")
    monkeypatch.setenv(server.IDLE_ENV, "60")
    yield server
    if client.control("stop") is not None:
        path = server.socket_path()
        for _ in range(100):
            if not path.exists():
                break
            time.sleep(0.1)


def machine_mode() -> str:
    """The mode a run left undecided gets on this machine."""
    return "interpreter" if client.launcher.interpreting(None) else "gpu"


def fields(**extra) -> dict:
    base = {"interpret": True, "timing": True, "cases": None, "timeout_s": None, "secret": ""}
    return {**base, "gpu": None, "sanitize": None, **extra}


def test_a_run_through_the_server_matches_one_in_process(served, vector_add):
    seen: list[Progress] = []
    remote = client.judge_file(vector_add, ROOT / CORRECT, fields(), seen.append)
    local = client.judge_file(vector_add, ROOT / CORRECT, fields(), use_server=False)
    assert remote.verdict == local.verdict == "passed"
    assert [c.name for c in remote.cases] == [c.name for c in local.cases]
    assert client.control("ping")["judged"] == 1
    assert [p.stage for p in seen][:1] == ["startup"] and seen[-1].stage == "benchmarks"


def test_a_mode_left_undecided_is_decided_where_the_run_is_judged(served, vector_add, monkeypatch):
    """`tpuzzle run` without --interpret leaves the mode to the server (or to this process when
    it judges itself): both choose the machine's (the interpreter without a CUDA device)."""
    one = Case("N=1025", (("N", 1025),), seed=3)
    remote = client.judge_file(vector_add, ROOT / CORRECT, fields(interpret=None, cases=(one,)))
    local = client.judge_file(
        vector_add, ROOT / CORRECT, fields(interpret=None, cases=(one,)), use_server=False
    )
    assert remote.verdict == local.verdict == "passed"
    assert remote.env.mode == local.env.mode == machine_mode()


def test_run_fields_leave_the_mode_undecided_without_asking_the_driver(monkeypatch, tmp_path):
    def never():
        raise AssertionError("cuInit costs a run about 0.2 s: the client does not call it")

    submission = tmp_path / "mine.py"
    submission.write_text("def solve(): pass\n")
    monkeypatch.setattr(client.launcher, "cuda_present", never)
    chosen = client.run_fields(submission, False, True, None, None, None, False)
    assert chosen["interpret"] is None and chosen["sanitize"] is None
    assert client.run_fields(submission, True, True, None, None, None, False)["interpret"] is True


def test_a_sanitized_run_decides_its_mode_at_once(monkeypatch, tmp_path):
    from judge.workers import sanitize

    submission = tmp_path / "mine.py"
    submission.write_text("def solve(): pass\n")
    monkeypatch.setattr(sanitize, "find_tool", lambda: Path("/opt/cuda/bin/compute-sanitizer"))
    monkeypatch.setattr(client.launcher, "cuda_present", lambda: True)
    chosen = client.run_fields(submission, False, True, None, None, None, True)
    assert chosen["interpret"] is False and chosen["sanitize"].name == "compute-sanitizer"
    monkeypatch.setattr(client.launcher, "cuda_present", lambda: False)
    with pytest.raises(client.JudgeError, match="--sanitize checks kernels on a CUDA device"):
        client.run_fields(submission, False, True, None, None, None, True)
    with pytest.raises(client.JudgeError, match="--sanitize checks kernels on a CUDA device"):
        client.run_fields(submission, True, True, None, None, None, True)


def test_a_wrong_submission_gets_the_same_verdict_and_reason(served, vector_add):
    wrong = ROOT / "puzzles/vector_add/solutions/wrong/failed_no_mask.py"
    one = Case("N=1025", (("N", 1025),), seed=3)
    remote = client.judge_file(vector_add, wrong, fields(cases=(one,)))
    assert (remote.verdict, remote.reason) == ("failed", "out-of-bounds")
    assert [c.name for c in remote.cases] == ["N=1025"]  # the chosen case travelled


def test_a_client_that_goes_away_has_its_worker_killed(served, vector_add, write_submission):
    token = f"sleeps for test {os.getpid()}-{time.monotonic_ns()}"
    hang = write_submission(f"import time\ntime.sleep(600)  # {token}\n")
    message = {
        "op": "judge",
        "spec_dir": str(vector_add.directory),
        "submission": str(hang),
        "options": options.fields_to_dict(fields()),
        "environ": dict(os.environ),
    }
    sock = client.start(server.socket_path())
    sock.sendall(json.dumps(message).encode() + b"\n")
    before = set()
    for _ in range(150):  # the worker starts (a fresh zygote imports first), then sleeps
        before = sleepers(token)
        if before:
            break
        time.sleep(0.1)
    assert before, "no worker found running the submission"
    sock.close()
    for _ in range(300):  # on a loaded machine the server may take a while to notice
        if not sleepers(token) & before:
            return
        time.sleep(0.1)
    for pid in sleepers(token) & before:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    pytest.fail("the worker outlived its client")


def sleepers(token: str) -> set[int]:
    """Workers of this user running a submission that holds `token` (other judgings' workers,
    of other tests running on the machine, are left out): a process whose working folder is a
    tpuzzle job's, whose copy of the submission holds the token."""
    found = set()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and "tpuzzle-" in (cwd := os.readlink(proc / "cwd")):
                copies = (Path(cwd).parent / "submission").glob("*.py")
                if any(token in copy.read_text() for copy in copies):
                    found.add(int(proc.name))
        except OSError:
            continue
    return found - {os.getpid()}


def test_the_server_is_private_and_keyed_to_its_environment(served, monkeypatch):
    folder = server.runtime_dir()
    assert folder.stat().st_mode & 0o777 == 0o700
    first = server.fingerprint()
    monkeypatch.setenv("TRITON_DEBUG", "1")
    assert server.fingerprint() != first
    monkeypatch.delenv("TRITON_DEBUG")
    monkeypatch.setenv("UNRELATED_SETTING", "x")
    assert server.fingerprint() == first
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # no device: a server that sees none
    assert server.fingerprint() != first


def test_a_foreign_runtime_folder_is_refused(tmp_path, monkeypatch):
    run = tmp_path / "run"
    (run / "tpuzzle").mkdir(parents=True, mode=0o755)
    os.chmod(run / "tpuzzle", 0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    with pytest.raises(server.JudgeError, match="not a private folder"):
        server.runtime_dir()


def test_run_options_travel_as_json_and_back():
    case = Case("N=7", (("N", 7),), seed=5, draw="mixed")
    back = options.fields_from_dict(
        json.loads(json.dumps(options.fields_to_dict(fields(cases=(case,)))))
    )
    assert back["cases"] == (case,) and back["sanitize"] is None


def test_no_server_answers_when_none_runs(served):
    assert client.control("ping") is None
    assert client.connect(server.socket_path(), timeout=1) is None


def test_the_peer_of_a_connection_is_this_user():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with a, b:
        assert server.peer_uid(a) == os.getuid()


def test_a_bench_of_one_puzzle_goes_through_the_server(served, vector_add, monkeypatch):
    """The server judges it, and chooses the mode: this process never asks the driver."""
    from judge.judging import batch
    from judge.records import batches

    def driver():
        raise AssertionError("the client asked the driver")

    mode = machine_mode()
    monkeypatch.setattr(client.launcher, "cuda_present", driver)
    plan = batches.plan_bench(None, "vector_add", [], batch.Choices())
    assert plan.setup.mode == "auto"
    benched = batches.bench(plan)
    assert [r.verdict for r in benched.reports] == ["passed"]
    assert benched.to_dict()["mode"] == mode
    assert client.control("ping")["judged"] == 1


def test_the_server_commands_report_a_foreign_runtime_folder_in_one_line(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from judge.cli.app import app

    run = tmp_path / "run"
    (run / "tpuzzle").mkdir(parents=True)
    os.chmod(run / "tpuzzle", 0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    for command in ("start", "stop", "status"):
        result = CliRunner().invoke(app, ["server", command])
        assert result.exit_code == 2, (command, result.output)
        assert "not a private folder" in result.output and "Traceback" not in result.output


def test_the_server_commands_start_report_and_stop(served):
    from typer.testing import CliRunner

    from judge.cli.app import app

    runner = CliRunner()
    assert runner.invoke(app, ["server", "status"]).exit_code == 1
    started = runner.invoke(app, ["server", "start"])
    assert started.exit_code == 0 and "running: pid" in started.output
    assert "0 run(s) judged" in runner.invoke(app, ["server", "status"]).output
    assert runner.invoke(app, ["server", "stop"]).output.strip() == "stopped"


def test_a_server_imports_the_judge_its_client_runs(tmp_path):
    """Started in /, the server finds the judge of its client's checkout, installed or not (an
    uninstalled checkout's server used to fail its import, and the client waited 180 s)."""
    checkout = tmp_path / "checkout"
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "judge", checkout / "judge", ignore=skip)
    ask = (
        "import json, sys; from judge.judging import client; "
        "json.dump(client.server_env(), sys.stdout)"
    )
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    made = subprocess.run(
        [sys.executable, "-c", ask], cwd=checkout, env=env, capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    found = subprocess.run(
        [sys.executable, "-c", "import judge; print(judge.__file__)"],
        cwd="/",
        env=json.loads(made.stdout),
        capture_output=True,
        text=True,
    )
    assert found.stdout.strip() == str(checkout / "judge" / "__init__.py")


def test_a_server_that_ends_as_it_starts_is_reported_at_once(served, monkeypatch):
    real = subprocess.Popen

    def failing(command, **kwargs):
        return real([sys.executable, "-c", "raise SystemExit(1)"], **kwargs)

    monkeypatch.setattr(client.subprocess, "Popen", failing)
    with pytest.raises(OSError, match="ended as it started"):
        client.start(server.socket_path())


# ------------------------------------------------------------------------------ spare timers


class FakeTimer:
    """What SpareTimers and launcher.discard touch of a timer: its process, stop, folder."""

    def __init__(self, folder: Path, ended: bool = False):
        self.dir = folder
        self.ended, self.stopped = ended, False
        self.proc = self

    def poll(self):
        return 0 if self.ended else None

    def stop(self):
        self.stopped = True


@pytest.fixture
def spare_puzzle(tmp_path):
    """A puzzle folder (spec and reference) and a launch that records how it was asked."""
    folder = tmp_path / "puzzle"
    folder.mkdir()
    (folder / "puzzle.yaml").write_text("id: p\n")
    (folder / "reference.py").write_text("def reference(): pass\n")
    launched: list[tuple] = []

    def launch(spec_file, device, warm_up=False):
        launched.append((spec_file, device, warm_up))
        return FakeTimer(tmp_path / f"timer{len(launched)}")

    return folder / "puzzle.yaml", launch, launched


def test_a_spare_timer_serves_the_next_judging_of_its_puzzle_once(spare_puzzle):
    spec_file, launch, launched = spare_puzzle
    spares = server.SpareTimers(launch)
    assert spares.take(spec_file, 0) is None  # none kept yet
    spares.keep(spec_file, 0)
    assert launched == [(spec_file, 0, True)]  # warming up from the start
    timer = spares.take(spec_file, 0)
    assert timer is not None and not timer.stopped
    assert spares.take(spec_file, 0) is None  # used by one judging only


def test_a_spare_for_another_puzzle_or_device_is_not_used(spare_puzzle, tmp_path):
    spec_file, launch, _ = spare_puzzle
    other = tmp_path / "other"
    other.mkdir()
    (other / "puzzle.yaml").write_text("id: q\n")
    spares = server.SpareTimers(launch)
    spares.keep(spec_file, 0)
    assert spares.take(spec_file, 1) is None  # device 1 has none
    kept = spares.kept[0][-1]
    assert spares.take(other / "puzzle.yaml", 0) is None
    assert kept.stopped  # discarded, not left running


def test_a_spare_is_discarded_when_its_puzzle_changed_or_it_ended(spare_puzzle):
    spec_file, launch, _ = spare_puzzle
    spares = server.SpareTimers(launch)
    spares.keep(spec_file, 0)
    kept = spares.kept[0][-1]
    reference = spec_file.parent / "reference.py"
    reference.write_text("def reference(): return 1\n")  # another size: read anew
    assert spares.take(spec_file, 0) is None and kept.stopped
    spares.keep(spec_file, 0)
    ended = spares.kept[0][-1]
    ended.ended = True
    assert spares.take(spec_file, 0) is None and ended.stopped


def test_a_new_spare_replaces_the_old_and_close_discards_every_one(spare_puzzle):
    spec_file, launch, _ = spare_puzzle
    spares = server.SpareTimers(launch)
    spares.keep(spec_file, 0)
    first = spares.kept[0][-1]
    spares.keep(spec_file, 0)
    assert first.stopped and not spares.kept[0][-1].stopped
    spares.keep(spec_file, 1)
    kept = [timer for *_, timer in spares.kept.values()]
    spares.close()
    assert all(timer.stopped for timer in kept) and not spares.kept


def test_a_device_named_otherwise_has_the_same_turn_and_discards_the_spare(spare_puzzle, tmp_path):
    """No device named is device 0: one turn for both (two runs never time each other's
    kernels), and one spare, which a run naming the device otherwise discards."""
    spec_file, launch, _ = spare_puzzle
    one = server.Server(tmp_path / "s.sock")
    assert one.turn(None) is one.turn(0) and one.turn(1) is not one.turn(0)
    spares = server.SpareTimers(launch)
    spares.keep(spec_file, None)
    kept = spares.kept[0][-1]
    assert spares.take(spec_file, 0) is None and kept.stopped
    spares.keep(spec_file, 0)
    spares.keep(spec_file, None)  # replaces device 0's spare
    assert len(spares.kept) == 1 and spares.take(spec_file, None) is not None


def test_a_spare_that_cannot_start_is_not_kept(spare_puzzle):
    spec_file, _, _ = spare_puzzle

    def failing(spec_file, device, warm_up=False):
        raise OSError("the zygote cannot fork")

    spares = server.SpareTimers(failing)
    spares.keep(spec_file, 0)  # no exception: the next judging starts its own timer
    assert spares.take(spec_file, 0) is None


def test_a_timer_is_asked_to_warm_up_once():
    from judge.workers import launcher

    sent: list[dict] = []

    class Timer:
        warming = False

        def send(self, command, phase):
            sent.append(command)

    timer = Timer()
    launcher.warm(timer)
    launcher.warm(timer)  # the judging that takes a spare asks again: nothing is sent
    assert sent == [{"op": "warm_up"}] and timer.warming


@pytest.mark.gpu
def test_the_server_keeps_one_spare_timer_and_uses_it(served, vector_add, tmp_path, monkeypatch):
    """Each judging on the GPU leaves one spare timer (its job folder) for the next; the next
    run of the same puzzle takes it and leaves a new one; stopping the server ends it."""
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    monkeypatch.setenv("TPUZZLE_TMPDIR", str(jobs))
    one = Case("N=1025", (("N", 1025),), seed=3)
    run = fields(interpret=False, timing=False, cases=(one,))

    def timers() -> list[str]:
        return sorted(p.name for p in jobs.glob("tpuzzle-timer-*"))

    first = client.judge_file(vector_add, ROOT / CORRECT, run)
    spare = timers()
    assert first.verdict == "passed" and len(spare) == 1
    second = client.judge_file(vector_add, ROOT / CORRECT, run)
    assert second.verdict == "passed" and len(timers()) == 1 and timers() != spare
    client.control("stop")
    for _ in range(100):
        if not timers():
            break
        time.sleep(0.1)
    assert timers() == []


def test_a_spare_whose_puzzle_folder_is_gone_is_discarded(spare_puzzle):
    spec_file, launch, _ = spare_puzzle
    spares = server.SpareTimers(launch)
    spares.keep(spec_file, 0)
    kept = spares.kept[0][-1]
    for path in spec_file.parent.iterdir():
        path.unlink()
    spec_file.parent.rmdir()
    assert spares.take(spec_file, 0) is None and kept.stopped
