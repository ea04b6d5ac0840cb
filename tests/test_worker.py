import json
import os
import signal
import subprocess
import sys
import time

import pytest

from judge.core.loader import LoadError
from judge.workers import worker
from judge.workers.referee import ALLOWED_OPS, Rejected


def test_a_busy_worker_dies_with_its_judge_even_on_sigkill(vector_add, puzzles_root, tmp_path):
    """A worker stuck in a submission's endless loop reads no command, so only the kernel's
    parent-death signal can end it when the judge is killed."""
    loop = puzzles_root / "vector_add/solutions/wrong/error_infinite_loop.py"
    script = (
        "import time\n"
        "from pathlib import Path\n"
        "from judge.workers import launcher\n"
        f"w = launcher.launch(Path({str(vector_add.directory / 'puzzle.yaml')!r}), "
        f"Path({str(loop)!r}), True, None)\n"
        "w.expect('ready', 120, 'starting')\n"
        "w.expect_ok({'op': 'load'}, 'loaded', 60, 'loading')\n"
        "w.send({'op': 'case', 'tag': 'c', 'sizes': {'N': 300}, 'seed': 1}, 'case')\n"
        "print(w.proc.pid, flush=True)\n"
        "time.sleep(300)\n"
    )
    judge = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    worker_pid = int(judge.stdout.readline())
    time.sleep(1.0)  # well inside the endless loop
    judge.send_signal(signal.SIGKILL)
    judge.wait()
    for _ in range(100):
        try:
            os.kill(worker_pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.killpg(worker_pid, signal.SIGKILL)
    pytest.fail("the worker outlived its judge")


@pytest.fixture
def make_worker(tmp_path, vector_add):
    """A worker for vector_add on a job directory, with pipes for its commands and events."""
    made = []

    def make(interpret: bool, commands: list[dict] = ()) -> worker.Worker:
        job = {"spec": str(vector_add.directory / "puzzle.yaml"), "interpret": interpret}
        (tmp_path / "job.json").write_text(json.dumps(job))
        cmd_r, cmd_w = os.pipe()
        event_r, event_w = os.pipe()
        with os.fdopen(cmd_w, "w") as pending:
            pending.writelines(json.dumps(c) + "\n" for c in commands)
        w = worker.Worker(tmp_path, cmd_r, event_w)
        w.sync = lambda: None  # no device to wait for here
        w.replies = os.fdopen(event_r)
        made.append(w)
        return w

    yield make
    for w in made:
        w.commands.close()
        w.events.close()
        w.replies.close()


def test_serve_reports_the_reason_a_rejection_carries(make_worker):
    w = make_worker(interpret=True, commands=[{"op": "boom"}])

    def boom(cmd):
        raise Rejected("solve() launched work ...", kind="foreign-launch")

    w.op_boom = boom
    w.serve()
    w.events.close()
    events = [json.loads(line) for line in w.replies]
    assert [e["event"] for e in events] == ["ready", "rejected"]
    assert events[1]["kind"] == "foreign-launch"
    assert events[1]["message"] == "solve() launched work ..."


def test_on_the_gpu_every_checked_call_is_listed(make_worker, monkeypatch):
    w = make_worker(interpret=False)
    solved, listed = [], []
    w.solve = lambda *args: solved.append(args)

    def listing(call, allowed, seen=None):
        listed.append(allowed)
        call()
        return []

    monkeypatch.setattr(worker.launches, "listed", listing)
    for _ in range(3):
        assert w.watched_call({}, {}, [1, 2]) == {}
    assert solved == [(1, 2)] * 3
    assert listed == [ALLOWED_OPS] * 3


def test_foreign_work_in_the_listed_call_is_rejected_by_name(make_worker, monkeypatch):
    w = make_worker(interpret=False)
    w.solve = lambda *args: None
    found = ["Memcpy DtoD (Device -> Device)", "axpy_kernel_val"]
    monkeypatch.setattr(worker.launches, "listed", lambda call, allowed, seen=None: found)
    with pytest.raises(Rejected) as caught:
        w.watched_call({}, {}, [])
    assert caught.value.kind == "foreign-launch"
    assert "Memcpy DtoD (Device -> Device), axpy_kernel_val" in str(caught.value)


def test_nothing_is_listed_in_interpreter_mode(make_worker, monkeypatch):
    w = make_worker(interpret=True)
    w.solve = lambda *args: None
    monkeypatch.setattr(worker.launches, "listed", lambda *a: pytest.fail("listed on the CPU"))
    assert w.watched_call({}, {}, []) == {}


class Tuner:  # stands for a triton Autotuner that benchmarked its configs
    pass


@pytest.mark.parametrize("tunes", [False, True])
def test_an_early_benchmark_tunes_quickly_and_again_alone_only_if_a_tuner_tuned(make_worker, tunes):
    w = make_worker(interpret=True)
    tuner, calls, recorded = Tuner(), [], []
    w.prepare = lambda cmd, seed, paths: ({}, {}, [seed])

    def call(args):
        calls.append((args[0], w.tuning.quick))
        if tunes and w.tuning.quick:
            w.tuning.tuned.setdefault(tuner, set())

    w.call = call
    w.record_bench = lambda cmd, prepared, clock: recorded.append([a for _, _, a in prepared])
    w.op_bench({"op": "bench", "tag": "bench0", "sizes": {}, "seeds": [5, 6], "early": True})
    assert calls == [(5, True), (6, True)]  # first calls, quick tuning beside other judgings
    assert w.tuning.quick is False
    if not tunes:
        assert recorded == [[[5], [6]]] and w.untuned is None  # recorded at once
        with pytest.raises(LoadError):
            w.op_bench_tune({"op": "bench_tune"})
        return
    assert recorded == [] and w.untuned is not None
    w.events.flush()
    assert json.loads(w.replies.readline())["event"] == "bench_tuning"
    w.op_bench_tune({"op": "bench_tune"})
    assert calls[2:] == [(5, False), (6, False)]  # tuned again, properly, then recorded
    assert recorded == [[[5], [6]]] and w.untuned is None
    assert tuner not in w.tuning.tuned  # the quick choice was forgotten before


def test_a_benchmark_sent_late_tunes_properly_from_the_start(make_worker):
    w = make_worker(interpret=True)
    quick, recorded = [], []
    w.prepare = lambda cmd, seed, paths: ({}, {}, [seed])
    w.call = lambda args: quick.append(w.tuning.quick)
    w.record_bench = lambda cmd, prepared, clock: recorded.append(len(prepared))
    w.op_bench({"op": "bench", "tag": "bench0", "sizes": {}, "seeds": [5]})
    assert quick == [False] and recorded == [1]
