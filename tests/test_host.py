"""judge.workers.host: the worker's machine and the processes around it."""

import os
import time

from judge.workers import host


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
        while len(host.descendants(child.pid)) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        found = host.descendants(os.getpid())  # this process may have others (a zygote)
        assert child.pid in [pid for pid, _ in found]
        assert "sleep" in [name for _, name in found]
    finally:
        for pid, _ in host.descendants(child.pid):
            os.kill(pid, 9)
        child.kill()
        child.wait()
    assert child.pid not in [pid for pid, _ in host.descendants(os.getpid())]
