"""judge.judging.gate: judgings of one GPU check side by side and time alone."""

import dataclasses
import threading
import time

import pytest

from judge.judging import batch
from judge.judging.gate import Alone, DeviceGate


def inside(gate: DeviceGate, section: str, entered: threading.Event, leave: threading.Event):
    def run():
        with getattr(gate, section)():
            entered.set()
            leave.wait(10)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_checkings_share_the_device_and_a_timing_waits_for_them():
    gate = DeviceGate()
    a, b, timed = threading.Event(), threading.Event(), threading.Event()
    leave_a, leave_b, leave_t = threading.Event(), threading.Event(), threading.Event()
    inside(gate, "checking", a, leave_a)
    inside(gate, "checking", b, leave_b)
    assert a.wait(5) and b.wait(5)  # both at once
    inside(gate, "timing", timed, leave_t)
    leave_a.set()
    assert not timed.wait(0.3)  # one checking still runs
    leave_b.set()
    assert timed.wait(5)
    leave_t.set()


def test_a_waiting_timing_lets_no_new_checking_start_and_timings_take_turns():
    gate = DeviceGate()
    first, timed, late, second_timing = (threading.Event() for _ in range(4))
    leave_first, leave_t, leave_late, leave_second = (threading.Event() for _ in range(4))
    inside(gate, "checking", first, leave_first)
    assert first.wait(5)
    inside(gate, "timing", timed, leave_t)
    time.sleep(0.1)  # the timing is waiting now
    inside(gate, "checking", late, leave_late)
    assert not late.wait(0.3)  # held back behind the waiting timing
    leave_first.set()
    assert timed.wait(5) and not late.is_set()
    inside(gate, "timing", second_timing, leave_second)
    assert not second_timing.wait(0.3)  # one timing at a time
    leave_t.set()
    assert second_timing.wait(5) or late.wait(5)
    leave_second.set()
    assert late.wait(5)
    leave_late.set()


def test_a_stalled_checking_lets_others_check_but_the_timing_still_comes_next():
    gate = DeviceGate(stalled_s=0.3)
    hung, timed, bypass, after = (threading.Event() for _ in range(4))
    leave_hung, leave_t, leave_bypass, leave_after = (threading.Event() for _ in range(4))
    inside(gate, "checking", hung, leave_hung)
    assert hung.wait(5)
    inside(gate, "timing", timed, leave_t)
    time.sleep(0.1)  # the timing waits; the checking has not stalled yet
    inside(gate, "checking", bypass, leave_bypass)
    assert not bypass.wait(0.1)  # held back while the first has run under 0.3 s
    assert bypass.wait(5)  # the first has stalled: the others go on checking meanwhile
    leave_hung.set()
    time.sleep(0.5)  # the stalled one has gone; the one let in has now run over 0.3 s itself
    inside(gate, "checking", after, leave_after)
    assert not after.wait(0.3)  # it began after the wait, so it opens nothing
    assert not timed.is_set()  # the timing waits for the one let in
    leave_bypass.set()
    assert timed.wait(5) and not after.is_set()  # the timing comes next
    leave_t.set()
    assert after.wait(5)
    leave_after.set()


def test_a_device_of_its_own_has_free_sections():
    with Alone().checking() as seat, Alone().timing():
        assert not seat.timing_waits() and not seat.step_aside()


def test_a_checking_steps_aside_for_a_waiting_timing_and_comes_back_after_it():
    gate = DeviceGate()
    timed, leave_t, back = threading.Event(), threading.Event(), threading.Event()
    with gate.checking() as seat:
        assert not seat.timing_waits() and not seat.step_aside()  # nobody waits: it stays
        inside(gate, "timing", timed, leave_t)
        deadline = time.monotonic() + 5
        while not seat.timing_waits() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert seat.timing_waits() and not timed.is_set()  # it waits for this checking

        def aside():
            assert seat.step_aside()
            back.set()

        threading.Thread(target=aside, daemon=True).start()
        assert timed.wait(5)  # the checking gave the device up between two pieces of work
        assert not back.wait(0.3)  # and comes back only once the timing has ended
        leave_t.set()
        assert back.wait(5)
        assert not seat.timing_waits()
    assert not gate.checkers and not gate.processes  # left once, not twice


def test_a_checking_back_from_aside_still_holds_the_next_timing():
    gate = DeviceGate()
    timed, leave_t, second, leave_second = (threading.Event() for _ in range(4))
    with gate.checking() as seat:
        inside(gate, "timing", timed, leave_t)
        while not seat.timing_waits():
            time.sleep(0.01)
        stepped = threading.Thread(target=seat.step_aside, daemon=True)
        stepped.start()
        assert timed.wait(5)
        leave_t.set()
        stepped.join(5)
        assert not stepped.is_alive()  # back inside the shared section
        inside(gate, "timing", second, leave_second)
        assert not second.wait(0.3)  # a later timing waits for it again
    assert second.wait(5)
    leave_second.set()


def test_lanes_per_gpu_and_one_gate_per_shared_device(vector_add):
    assert batch.lanes([0, 1], None, False, 1, per_gpu=2) == [0, 0, 1, 1]
    assert batch.lanes(None, None, True, 3, per_gpu=2) == [None, None, None]
    seen = []

    def judge(spec, path, options, worker, gate=None):
        seen.append((options.gpu, gate))
        time.sleep(0.05)  # every lane gets work
        return f"report {path}"

    @dataclasses.dataclass(frozen=True)
    class Options:
        interpret: bool = False
        gpu: int | None = None

    jobs = [batch.Job(vector_add, f"s{i}.py") for i in range(9)]
    done = list(batch.judge_each(jobs, Options(), [0, 0, 1], lambda *a: object(), judge))
    assert len(done) == 9
    shared = {gate for gpu, gate in seen if gpu == 0}
    assert len(shared) == 1 and None not in shared  # the two lanes of GPU 0 share one gate
    assert all(gate is None for gpu, gate in seen if gpu == 1)  # alone on its GPU: no gate


def test_a_judging_waits_for_a_timing_on_its_device_and_says_so(vector_add, puzzles_root):
    from judge.core.spec import Case
    from judge.judging import runner

    gate = DeviceGate()
    timed, leave = threading.Event(), threading.Event()

    def progress(event) -> None:  # another judging times from calibration to 0.6 s into import
        if event.stage == "calibration":
            inside(gate, "timing", timed, leave)
            assert timed.wait(5)
        if event.stage == "import":
            threading.Timer(0.6, leave.set).start()

    one = (Case("N=300", (("N", 300),), seed=4),)
    options = runner.RunOptions(interpret=True, cases=one, timeout_s=60)
    plain = puzzles_root / "vector_add/solutions/correct/plain.py"
    report = runner.judge(vector_add, plain, options, progress=progress, gate=gate)
    assert report.verdict == "passed", report.message
    assert report.phases["device_wait"] >= 0.5


def test_a_judging_that_begins_during_a_timing_is_stopped_until_it_ends(vector_add, puzzles_root):
    from judge.core.spec import Case
    from judge.judging import runner

    one = (Case("N=300", (("N", 300),), seed=4),)
    options = runner.RunOptions(interpret=True, cases=one, timeout_s=60)
    plain = puzzles_root / "vector_add/solutions/correct/plain.py"
    alone = runner.judge(vector_add, plain, options, gate=DeviceGate())  # the zygote started
    gate = DeviceGate()
    timed, leave = threading.Event(), threading.Event()
    inside(gate, "timing", timed, leave)
    assert timed.wait(5)
    threading.Timer(1.5, leave.set).start()
    report = runner.judge(vector_add, plain, options, gate=gate)
    assert alone.verdict == report.verdict == "passed", report.message
    assert alone.wall_s < 1.0 < report.wall_s
    # its worker was stopped as it joined, until the timing ended
    assert report.phases["startup"] + report.phases["worker_import"] >= 1.0


def test_a_judging_steps_aside_between_cases_for_a_timing(vector_add, puzzles_root):
    from judge.core.spec import Case
    from judge.judging import runner

    gate = DeviceGate()
    cases = tuple(Case(f"N={n}", (("N", n),), seed=n) for n in (100, 200, 300, 400, 500))
    done = []  # cases the judging had finished when the timing began

    def timing():
        with gate.timing():
            done.append(len(finished))
            time.sleep(0.5)

    finished = []

    def progress(event) -> None:  # another judging asks to time after the first case
        if event.stage == "cases" and event.done:
            finished.append(event.detail)
            if event.done == 1:
                threading.Thread(target=timing, daemon=True).start()

    options = runner.RunOptions(interpret=True, cases=cases, timeout_s=60)
    plain = puzzles_root / "vector_add/solutions/correct/plain.py"
    report = runner.judge(vector_add, plain, options, progress=progress, gate=gate)
    assert report.verdict == "passed", report.message
    assert len(finished) == 5
    assert done and done[0] < 4  # the timing did not wait for the rest of the cases
    assert report.phases["device_wait"] >= 0.4  # the judging waited for it, between two cases


class Process:
    """A stand-in for a checking judging's worker or timer: says whether it is stopped."""

    def __init__(self):
        self.paused = False
        self.pauses = 0

    def pause(self) -> None:
        self.paused, self.pauses = True, self.pauses + 1

    def resume(self) -> None:
        self.paused = False


def checking_with(gate: DeviceGate, processes, entered, leave):
    def run():
        with gate.checking(*processes):
            entered.set()
            leave.wait(10)

    threading.Thread(target=run, daemon=True).start()


def timing_with(gate: DeviceGate, quiet, entered, leave):
    def run():
        with gate.timing(quiet):
            entered.set()
            leave.wait(10)

    threading.Thread(target=run, daemon=True).start()


def test_a_timing_passes_stalled_checkings_on_a_quiet_device_with_their_processes_stopped():
    gate = DeviceGate(stalled_s=0.2, retry_s=0.05)
    worker, timer = Process(), Process()
    hung, timed = threading.Event(), threading.Event()
    leave_hung, leave_t = threading.Event(), threading.Event()
    checking_with(gate, (worker, timer), hung, leave_hung)
    assert hung.wait(5)
    asked = []

    def quiet() -> bool:
        asked.append((worker.paused, timer.paused))  # asked while they are stopped
        return True

    timing_with(gate, quiet, timed, leave_t)
    assert timed.wait(5)  # past the stalled one, which never left
    assert asked == [(True, True)] and worker.paused and timer.paused
    leave_t.set()
    deadline = time.monotonic() + 5
    while worker.paused and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not worker.paused and not timer.paused  # they go on once the timing ends
    leave_hung.set()


def test_a_busy_device_keeps_the_timing_waiting_and_the_stalled_checking_running():
    gate = DeviceGate(stalled_s=0.2, retry_s=0.05)
    worker = Process()
    hung, timed = threading.Event(), threading.Event()
    leave_hung, leave_t = threading.Event(), threading.Event()
    checking_with(gate, (worker,), hung, leave_hung)
    assert hung.wait(5)
    probes = []
    timing_with(gate, lambda: probes.append(1) or False, timed, leave_t)
    assert not timed.wait(0.6)  # a kernel that never ends: the timing waits
    assert len(probes) >= 2 and not worker.paused  # asked again, and let go each time
    leave_hung.set()
    assert timed.wait(5)  # the stalled one ended: the timing goes ahead as always
    leave_t.set()


def test_no_probe_while_a_checking_is_young_or_cannot_be_stopped():
    gate = DeviceGate(stalled_s=0.3, retry_s=0.05)
    probes = []
    young, bare, timed = threading.Event(), threading.Event(), threading.Event()
    leave_young, leave_bare, leave_t = threading.Event(), threading.Event(), threading.Event()
    checking_with(gate, (), bare, leave_bare)  # no processes to stop
    assert bare.wait(5)
    timing_with(gate, lambda: probes.append(1) or True, timed, leave_t)
    assert not timed.wait(0.6) and probes == []
    leave_bare.set()
    assert timed.wait(5)
    leave_t.set()
    gate2 = DeviceGate(stalled_s=5.0, retry_s=0.05)
    checking_with(gate2, (Process(),), young, leave_young)
    assert young.wait(5)
    timed2 = threading.Event()
    timing_with(gate2, lambda: probes.append(1) or True, timed2, threading.Event())
    assert not timed2.wait(0.4) and probes == []  # under stalled_s: waited for as always
    leave_young.set()
    assert timed2.wait(5)


def test_a_timing_stops_every_other_judging_s_worker_and_waits_for_a_quiet_device():
    gate = DeviceGate(retry_s=0.05)
    mine, theirs, idle = Process(), Process(), Process()
    asked = []

    def quiet() -> bool:
        asked.append((mine.paused, theirs.paused, idle.paused))
        return len(asked) >= 3  # what they left running ends after two probes

    with gate.joined(mine), gate.joined(theirs), gate.joined(idle):
        busy = []
        with gate.timing(quiet, own=(mine,), busy=lambda: busy.append(1)):
            # outside both sections, a worker's threads could still launch kernels: stopped
            assert theirs.paused and idle.paused and not mine.paused
        assert asked == [(False, True, True)] * 3 and busy == []
        assert not theirs.paused and not idle.paused  # they go on once the timing ends
        with gate.timing(quiet, own=(mine,)):
            assert theirs.paused
    with gate.timing(lambda: asked.append("alone") or True):
        pass  # no other judging joined: nothing to stop, no probe
    assert asked[-1] != "alone"


def test_a_judging_that_joins_during_a_timing_is_stopped_until_it_ends():
    gate = DeviceGate()
    timer, worker, before = Process(), Process(), Process()
    with gate.joined(before):
        with gate.timing(own=()):
            assert before.paused
            with gate.joined(worker, timer):  # its timer would warm up on the device at once
                assert worker.paused and timer.paused
        assert not worker.paused and not timer.paused and not before.paused
        with gate.joined(worker, timer):  # no timing under way: it goes on
            assert not worker.paused and not timer.paused
    assert gate.late == [] and gate.members == {}


def test_a_device_that_stays_busy_is_timed_after_the_wait_and_the_report_told():
    gate = DeviceGate(retry_s=0.05, quiet_wait_s=0.3)
    theirs, probes, busy = Process(), [], []
    with gate.joined(theirs):
        started = time.monotonic()
        with gate.timing(lambda: probes.append(1) or False, busy=lambda: busy.append(1)):
            assert theirs.paused
        assert 0.3 <= time.monotonic() - started < 3
    assert busy == [1] and len(probes) >= 3 and not theirs.paused
    # a device busy from outside the judge: the next timings ask once, without the wait
    with gate.joined(theirs):
        asked, started = len(probes), time.monotonic()
        with gate.timing(lambda: probes.append(1) or False, busy=lambda: busy.append(1)):
            pass
        assert len(probes) == asked + 1 and time.monotonic() - started < 0.2 and busy == [1, 1]
        with gate.timing(lambda: probes.append(1) or True, busy=lambda: busy.append(1)):
            pass  # quiet again
        assert gate.busy_outside is False and busy == [1, 1]


HOG = """
import sys, time, torch, triton, triton.language as tl


@triton.jit
def spin(flag_ptr):  # every block spins until the flag is set, which it never is
    i = 0
    while tl.load(flag_ptr, volatile=True) == 0:
        i += 1
    tl.store(flag_ptr + 1, i)


flag = torch.zeros(2, dtype=torch.int32, device="cuda")
spin[(4096,)](flag)
print("launched", flush=True)
time.sleep(600)
"""
# printed, then gone at once: a process whose probe is still queued behind a kernel that never
# ends would otherwise wait for it as it exits
PROBE = (
    "import os; from judge.core import bench; print(bench.contention(), flush=True); os._exit(0)"
)


@pytest.mark.gpu
def test_the_quiet_probe_tells_a_kernel_that_never_ends_from_an_idle_device(tmp_path):
    import os
    import subprocess
    import sys

    from judge.core import bench

    # on the device, not in Triton's interpreter (which the tests' environment sets)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}

    def probe() -> float:
        command = [sys.executable, "-c", PROBE]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
        try:
            return float(process.stdout.readline())
        finally:
            process.kill()
            process.wait()

    idle = probe()
    hog_file = tmp_path / "hog.py"
    hog_file.write_text(HOG)
    hog = subprocess.Popen(
        [sys.executable, str(hog_file)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert hog.stdout.readline().strip() == "launched"
        busy = probe()
    finally:
        hog.kill()
        hog.wait(60)
    assert busy > bench.QUIET_CONTENTION > idle, (busy, idle)
