"""A judging that stalls is stopped while another times the device past it (judge.judging.gate).
The attack: a helper process that left the worker's process group (setsid) and goes on working
while the group is stopped. The stop must reach it too."""

import os
import subprocess
import sys
import time

from judge.workers import watchdog
from judge.workers.channel import WorkerProcess

HELPER = """
import os, sys, time
if os.fork() == 0:
    os.setsid()  # out of the group that the judge stops and kills
    while True:
        with open(sys.argv[1], "a") as f:
            f.write("x")
        time.sleep(0.01)
while True:
    time.sleep(1)
"""


def size(path) -> int:
    return path.stat().st_size if path.exists() else 0


def grows(path, seconds: float) -> bool:
    before = size(path)
    time.sleep(seconds)
    return size(path) > before


def test_a_helper_that_left_the_process_group_is_stopped_with_the_worker(tmp_path):
    trace = tmp_path / "helper.log"
    cmd_r, cmd_w = os.pipe()
    event_r, event_w = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-c", HELPER, str(trace)], start_new_session=True,
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    worker = WorkerProcess(proc, cmd_w, event_r, tmp_path, interpret=True)
    helpers = []
    try:
        deadline = time.monotonic() + 10
        while not trace.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert grows(trace, 0.3)  # the helper works
        helpers = watchdog.tree(proc.pid)
        worker.pause()
        time.sleep(0.1)  # a write under way ends
        assert not grows(trace, 0.5)  # stopped, though outside the group
        worker.resume()
        assert grows(trace, 0.5)  # and going again
    finally:
        for pid in helpers[1:]:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        worker.kill()
        worker.stop()
        for fd in (cmd_r, event_w):
            os.close(fd)
