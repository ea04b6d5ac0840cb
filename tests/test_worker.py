import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from judge.workers import worker


def test_referee_allows_scratch_allocation_and_rejects_work():
    with worker.referee() as mode:
        scratch = torch.empty(16)
        scratch.zero_()
        torch.zeros(4)
    assert not mode.violation
    with pytest.raises(worker.Rejected, match="aten.add"):
        with worker.referee():
            torch.ones(2) + 1
    mode = worker.referee()
    with mode:
        try:
            torch.ones(2).sum()  # a submission that swallows the exception is still caught
        except worker.Rejected:
            pass
    assert "aten.sum" in mode.violation


@pytest.mark.parametrize(
    "exc, kind",
    [
        (SystemExit(4), "exit"),
        (RuntimeError("CUDA error: an illegal memory access was encountered"), "cuda-error"),
        (ZeroDivisionError("division by zero"), "exception"),
    ],
)
def test_classify(exc, kind):
    assert worker.classify(exc)[0] == kind


def test_classify_triton_compile_errors():
    import triton.language as tl  # noqa: F401 - the interpreter's error type lives in triton
    from triton.runtime.errors import InterpreterError

    assert worker.classify(InterpreterError("bad arange"))[0] == "compile-error"


def test_a_busy_worker_dies_with_its_judge_even_on_sigkill(vector_add, puzzles_root, tmp_path):
    """A worker stuck in a submission's endless loop reads no command, so only the kernel's
    parent-death signal can end it when the judge is killed."""
    loop = puzzles_root / "vector_add/solutions/wrong/error_infinite_loop.py"
    script = (
        "import time\n"
        "from pathlib import Path\n"
        "from judge.workers import channel\n"
        f"w = channel.launch(Path({str(vector_add.directory / 'puzzle.yaml')!r}), "
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


def test_input_sets_pair_each_seed_with_its_sealed_files():
    assert worker.input_sets({"seed": 3, "inputs": {"a": "/p"}}) == [(3, {"a": "/p"})]
    assert worker.input_sets({"seed": 3}) == [(3, {})]
    assert worker.input_sets({"seeds": [1, 2], "inputs": [{"a": "x"}, {"a": "y"}]}) == [
        (1, {"a": "x"}),
        (2, {"a": "y"}),
    ]


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


def test_a_rejection_carries_its_reason():
    assert worker.Rejected("aten.add ran").kind == "torch-in-solve"
    assert worker.Rejected("a memcpy ran", kind="foreign-launch").kind == "foreign-launch"


def test_serve_reports_the_reason_a_rejection_carries(make_worker):
    w = make_worker(interpret=True, commands=[{"op": "boom"}])

    def boom(cmd):
        raise worker.Rejected("solve() launched work ...", kind="foreign-launch")

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
    assert listed == [worker.ALLOWED_OPS] * 3


def test_foreign_work_in_the_listed_call_is_rejected_by_name(make_worker, monkeypatch):
    w = make_worker(interpret=False)
    w.solve = lambda *args: None
    found = ["Memcpy DtoD (Device -> Device)", "axpy_kernel_val"]
    monkeypatch.setattr(worker.launches, "listed", lambda call, allowed, seen=None: found)
    with pytest.raises(worker.Rejected) as caught:
        w.watched_call({}, {}, [])
    assert caught.value.kind == "foreign-launch"
    assert "Memcpy DtoD (Device -> Device), axpy_kernel_val" in str(caught.value)


def test_nothing_is_listed_in_interpreter_mode(make_worker, monkeypatch):
    w = make_worker(interpret=True)
    w.solve = lambda *args: None
    monkeypatch.setattr(worker.launches, "listed", lambda *a: pytest.fail("listed on the CPU"))
    assert w.watched_call({}, {}, []) == {}


def test_descendants_are_found_through_every_generation_and_zombies_are_not():
    import subprocess
    import sys

    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, time; subprocess.Popen(['sleep', '30']); time.sleep(30)",
        ]
    )
    try:
        deadline = time.monotonic() + 10
        while len(worker.descendants(child.pid)) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        found = worker.descendants(os.getpid())  # this process may have others (a zygote)
        assert child.pid in [pid for pid, _ in found]
        assert "sleep" in [name for _, name in found]
    finally:
        for pid, _ in worker.descendants(child.pid):
            os.kill(pid, 9)
        child.kill()
        child.wait()
    assert child.pid not in [pid for pid, _ in worker.descendants(os.getpid())]
