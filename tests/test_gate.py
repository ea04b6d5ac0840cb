"""judge.judging.gate: judgings of one GPU check side by side and time alone."""

import dataclasses
import threading
import time

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
    with Alone().checking(), Alone().timing():
        pass


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
    inside(gate, "timing", timed, leave)
    assert timed.wait(5)

    def progress(event) -> None:  # the timing ends 0.6 s after the judging asks to import
        if event.stage == "import":
            threading.Timer(0.6, leave.set).start()

    one = (Case("N=300", (("N", 300),), seed=4),)
    options = runner.RunOptions(interpret=True, cases=one, timeout_s=60)
    plain = puzzles_root / "vector_add/solutions/correct/plain.py"
    report = runner.judge(vector_add, plain, options, progress=progress, gate=gate)
    assert report.verdict == "passed", report.message
    assert report.phases["device_wait"] >= 0.5
