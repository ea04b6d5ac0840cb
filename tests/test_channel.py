from judge.workers.channel import OUTPUT_HEAD, OUTPUT_TAIL, CappedOutput


def test_capped_output_keeps_head_and_tail():
    out = CappedOutput()
    out.add(b"A" * OUTPUT_HEAD)
    for _ in range(100):
        out.add(b"B" * 10_000)
    out.add(b"END")
    text = out.text()
    assert text.startswith("A" * OUTPUT_HEAD) and text.endswith("B" * 100 + "END")
    assert f"[... {out.total - OUTPUT_HEAD - OUTPUT_TAIL} bytes of output omitted ...]" in text


def test_short_output_is_kept_whole():
    out = CappedOutput()
    out.add(b"hello\n")
    out.add(b"world\n")
    assert out.text() == "hello\nworld\n"


def test_a_paused_worker_is_stopped_and_its_deadline_stands_still(tmp_path):
    import os
    import subprocess
    import sys
    import threading
    import time

    from judge.workers.channel import WorkerProcess

    event_r, event_w = os.pipe()
    cmd_r, cmd_w = os.pipe()
    # answers 0.6 s after it starts, counted in its own running time (a stop holds it back)
    script = (
        "import os, sys, time\n"
        "t = time.process_time()\n"
        "while time.process_time() - t < 0.6: pass\n"
        f'os.write({event_w}, b\'{{"event": "done"}}\\n\')\n'
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], pass_fds=(event_w,), start_new_session=True,
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(event_w)
    worker = WorkerProcess(proc, cmd_w, event_r, tmp_path, interpret=True)
    worker.pause()
    threading.Timer(1.5, worker.resume).start()
    started = time.monotonic()
    event = worker.expect("done", 1.2, "a paused run")  # 1.2 s of its own time is plenty
    waited = time.monotonic() - started
    assert event["event"] == "done" and waited >= 1.5  # nothing ran while it was stopped
    assert 1.4 <= worker.stopped_for() <= 3.0
    worker.stop()
    os.close(cmd_r)


def test_a_paused_worker_that_is_stopped_is_killed_as_it_stands_never_let_go_on(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from judge.workers.channel import WorkerProcess

    cmd_r, cmd_w = os.pipe()
    event_r, event_w = os.pipe()
    script = f"import os, sys\nos.read({cmd_r}, 100)\nsys.exit(0)\n"  # exits on any command
    proc = subprocess.Popen(
        [sys.executable, "-c", script], pass_fds=(cmd_r,), start_new_session=True,
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(cmd_r)
    worker = WorkerProcess(proc, cmd_w, event_r, tmp_path, interpret=True)
    worker.pause()
    started = time.monotonic()
    worker.stop()
    assert time.monotonic() - started < 4  # not the 5 s a stopped process is waited for
    # killed, not let go on to read the exit: another judging may be timing the device
    assert proc.returncode == -signal.SIGKILL
    os.close(event_w)
