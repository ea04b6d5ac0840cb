"""A submission that slows its neighbours' times down: a thread it started on import launches
work on the device while its own judging waits outside the gate's sections, so that it runs
beside another lane's timing. Every timing stops the workers of the device's other judgings
first (gate.DeviceGate.timing) and waits for the device to fall quiet: no kernel of theirs is
launched, nor still running, while it times."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from judge.core.results import Verdict
from judge.core.spec import Case
from judge.judging import runner
from judge.judging.gate import DeviceGate

# the neighbour's thread: a few milliseconds of work at a time, four queued, then the time at
# which its host saw them end (the clock is the machine's, as the judge's)
NEIGHBOUR = """
import time, torch
while True:
    for _ in range(4):
        torch.cuda._sleep(5_000_000)
    torch.cuda.synchronize()
    print(time.monotonic(), flush=True)
"""
DRAINED_S = 0.2  # far longer than the work the neighbour has queued when it is stopped


class Neighbour:
    """The neighbour's process as another judging's worker: the gate stops it and lets it go
    on; when it did is kept, as is every moment its host saw its work end."""

    def __init__(self, env: dict):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", NEIGHBOUR],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
        self.ended: list[float] = []
        self.stops: list[tuple[str, float]] = []
        threading.Thread(target=self.read, daemon=True).start()

    def read(self) -> None:
        for line in self.proc.stdout:
            self.ended.append(float(line))

    def pause(self) -> None:
        os.killpg(self.proc.pid, signal.SIGSTOP)
        self.stops.append(("stop", time.monotonic()))

    def resume(self) -> None:
        self.stops.append(("go", time.monotonic()))
        os.killpg(self.proc.pid, signal.SIGCONT)

    def close(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(60)


@pytest.mark.gpu
def test_a_neighbour_launching_from_outside_the_gate_is_stopped_while_a_submission_times(
    vector_add, puzzles_root
):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    neighbour = Neighbour(env)
    try:
        deadline = time.monotonic() + 120
        while not neighbour.ended and time.monotonic() < deadline:
            time.sleep(0.05)
        assert neighbour.ended, "the neighbour never got going"
        gate = DeviceGate()
        one = (Case("N=300", (("N", 300),), seed=4),)
        options = runner.RunOptions(interpret=False, timeout_s=120, cases=one)
        plain = puzzles_root / "vector_add/solutions/correct/plain.py"
        with gate.joined(neighbour):
            report = runner.judge(vector_add, plain, options, gate=gate)
    finally:
        neighbour.close()
    assert report.verdict is Verdict.PASSED, report.message
    assert report.timing and runner.BUSY_NOTE not in report.notes
    kinds = [kind for kind, _ in neighbour.stops]
    assert kinds and kinds == ["stop", "go"] * (len(kinds) // 2)  # stopped for every timing
    stopped = list(zip(neighbour.stops[::2], neighbour.stops[1::2], strict=True))
    assert max(go - stop for (_, stop), (_, go) in stopped) > 0.3  # the benchmark's timing
    for (_, stop), (_, go) in stopped:
        inside = [t for t in neighbour.ended if stop + DRAINED_S <= t < go]
        assert not inside, f"the neighbour's work ended {len(inside)} times while it was stopped"
    assert any(t < neighbour.stops[0][1] for t in neighbour.ended)  # it was busy before
