"""The parent's checks of what a worker left, driven without a worker: buffer files written here
as a worker would leave them, and benchmark answers made up as a worker would send them."""

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from judge.core import inputs
from judge.core.results import CaseResult, Timing, Verdict
from judge.core.spec import Case
from judge.core.truth import load_reference
from judge.isolation import verify
from judge.isolation.channel import WorkerReported
from judge.isolation.plan import Plan
from judge.isolation.truths import Truths

CASE = Case(name="N=300", sizes=(("N", 300),), seed=4)


@pytest.fixture
def checker(vector_add, tmp_path):
    truths = Truths(vector_add, load_reference(vector_add))
    plan = Plan(vector_add, Path("sub.py"), "", True, truths)
    return verify.Checker(plan, SimpleNamespace(dir=tmp_path))


def leave(checker, case, tag, change=0.0):
    """Write a call's buffers as a worker leaves them: guard bands, inputs as drawn, outputs as
    the reference computed them (plus `change` on the last element)."""
    truth = checker.plan.truths.get(case)
    for lay in inputs.layouts(checker.plan.spec, case.size_map):
        name = lay.arg.name
        data = truth.outputs[name].to(torch.float32) if lay.arg.role == "out" else None
        if data is not None:
            data[-1] += change
        full = inputs.guarded(lay, truth.initial.get(name, data), "cpu")
        Path(checker.files(tag)[name]).write_bytes(full.numpy().tobytes())


def test_a_case_s_buffers_are_checked_against_the_parent_s_truth(checker):
    leave(checker, CASE, "case0")
    right = checker.case(CASE, checker.plan.truths.get(CASE), checker.files("case0"))
    assert right.status == "passed" and right.reproduce == ""
    leave(checker, CASE, "case1", change=1.0)
    wrong = checker.case(CASE, checker.plan.truths.get(CASE), checker.files("case1"))
    assert wrong.status == "failed" and wrong.max_error == pytest.approx(1.0, rel=1e-3)
    assert wrong.reproduce.endswith("--size N=300 --seed 4 --interpret")
    with pytest.raises(WorkerReported, match="the buffers came back wrong") as missing:
        checker.case(CASE, checker.plan.truths.get(CASE), checker.files("case2"))
    assert (missing.value.verdict, missing.value.kind) == ("error", "protocol")


def leave_sets(checker, tag, wrong_set=None):
    for j, seed in enumerate(checker.plan.recheck_seeds(CASE)):
        leave(checker, replace(CASE, seed=seed), f"{tag}_set{j}", 1.0 if j == wrong_set else 0.0)


def test_the_timed_buffers_are_checked_again_on_fresh_inputs(checker):
    leave_sets(checker, "bench0")
    assert checker.bench(CASE, "bench0", {"event": "bench_done"}, 0.0) is None
    leave_sets(checker, "bench1", wrong_set=1)
    verdict, reason, message = checker.bench(CASE, "bench1", {}, 0.0)
    assert (verdict, reason) == (Verdict.FAILED, "recheck-failed")
    assert message.startswith("benchmark N=300: called again on the timed buffers refilled")
    assert "skip work on repeated calls" in message
    assert checker.bench(CASE, "bench2", {}, 0.0)[:2] == (Verdict.ERROR, "protocol")


def test_writes_outside_triton_are_rejected_before_any_buffer_is_read(checker):
    event = {"foreign": {"c_ptr": 300, "a_ptr": 0}}
    verdict, reason, message = checker.bench(CASE, "nothing-written", event, 0.0)
    assert (verdict, reason) == (Verdict.REJECTED, "outside-triton")
    assert message.startswith("benchmark N=300: 300 elements of c_ptr changed without a Triton")
    assert "a_ptr" not in message
    assert verify.outside_triton("case x", {"foreign": {"c_ptr": 0}}) is None
    assert verify.outside_triton("case x", {}) is None
    assert verify.outside_triton("case x", {"foreign": [1]}) == (
        "case x: a garbled count of writes outside Triton"
    )


def test_recheck_message_carries_the_case_s_failure():
    failed = CaseResult("N=300", {"N": 300}, 9, "failed")
    verdict, reason, message = verify.recheck_problem(CASE, failed)
    assert (verdict, reason) == (Verdict.FAILED, "recheck-failed")
    assert message.startswith("benchmark N=300: called again on the timed buffers refilled with ")
    assert verify.recheck_problem(CASE, replace(failed, status="passed")) is None


def event(times=(1.0, 1.0, 1.0), spans=None, **cross_check):
    xc = {"wall_ms": 1.1, "baseline_ms": 0.1, "event_ms": 1.0, "host_ms": 0.02, **cross_check}
    found = {"event": "bench_done", "times": list(times), "cross_check": xc}
    return found if spans is None else {**found, "spans": list(spans), "launches": 2}


def test_believable_times_pass():
    assert verify.times_problem(CASE, event(), 10.0) is None
    assert verify.times_problem(CASE, event(spans=(1.0, 1.0, 1.0)), 10.0) is None
    assert verify.times_problem(CASE, {"event": "bench_done"}, 0.0) is None  # untimed calls


def test_garbled_times_are_an_error():
    problem = verify.times_problem(CASE, event(times=(1.0, -1.0)), 10.0)
    assert problem == (Verdict.ERROR, "protocol", "benchmark N=300: garbled timings")


def test_times_longer_than_the_wall_clock_or_shorter_than_the_device_was_busy_are_rejected():
    longer = verify.times_problem(CASE, event(), 2.5)  # 3 ms of calls inside 2.5 ms
    busy = verify.times_problem(CASE, event(wall_ms=10.0), 20.0)
    for verdict, reason, message in (longer, busy):
        assert (verdict, reason) == (Verdict.REJECTED, "timing-mismatch")
        assert message.endswith("is work left running on another stream after solve() returns?")
    assert busy[2].startswith(
        "benchmark N=300: CUDA events saw 1.000 ms per call but the device was busy 10.000 ms "
        "(synchronised wall clock)"
    )


def test_a_device_record_of_more_work_than_the_events_saw_is_rejected():
    verdict, reason, message = verify.times_problem(CASE, event(spans=(2.0, 2.0, 2.0)), 10.0)
    assert (verdict, reason) == (Verdict.REJECTED, "timing-mismatch")
    assert message.startswith(
        "benchmark N=300: CUDA events saw 1000.0 us per call (median), but the device's record "
        "shows 2000.0 us of work per call (mean span, every stream)"
    )
    assert "side.wait_stream(torch.cuda.current_stream())" in message


def test_timing_figures_take_each_call_s_longer_figure(vector_add):
    measured = {"reference": [5.0, 5.0, 5.0], "library": {"torch.fast": [4.0], "none": []}}
    calibration = {"copy_gbps": 3000.0, "peaks_tflops": {}, "copy_curve": {}}
    spans = (2.5, 0.5, 0.5)
    t = verify.timing(vector_add, CASE, event((1.0, 2.0, 3.0), spans), measured, 3, calibration)
    assert (t.case, t.sizes, t.samples, t.input_sets) == ("N=300", {"N": 300}, 3, 3)
    assert (t.median_ms, t.p20_ms, t.p80_ms) == pytest.approx((2.5, 2.2, 2.8))  # of 2.5, 2, 3
    assert t.event_median_ms == 2.0 and t.device_span_ms == pytest.approx(3.5 / 3)
    assert (t.launches, t.host_ms) == (2, 0.02)
    assert t.gbps == pytest.approx(12 * 300 / 2.5 / 1e6) and t.tflops is None
    assert t.sol_pct == pytest.approx(100 * t.gbps / 3000.0)
    assert (t.reference_median_ms, t.speedup_vs_reference) == (5.0, 2.0)
    assert (t.library, t.library_median_ms, t.speedup_vs_library) == ("torch.fast", 4.0, 1.6)
    assert t.floor_ms == pytest.approx(12 * 300 / 3000.0 / 1e6)


def test_timing_figures_without_a_device_record_or_measurements(vector_add):
    t = verify.timing(vector_add, CASE, event((1.0, 2.0, 3.0)), None, 2, None)
    assert t.median_ms == t.event_median_ms == 2.0 and t.input_sets == 2
    assert t.device_span_ms is None and t.launches is None
    assert t.sol_pct is None and t.floor_ms is None and t.copy_pct is None
    assert (t.reference_median_ms, t.library, t.speedup_vs_library) == (None, "", None)


def test_a_median_beyond_the_device_s_peak_is_flagged_and_rejected(vector_add):
    calibration = {"copy_gbps": 1.0}  # 1 GB/s: 3600 bytes take 3.6 us at least
    slow = Timing("N=300", {"N": 300}, 1.0, 1.0, 1.0, 3, 3)
    assert verify.speed_of_light(vector_add, CASE, slow, calibration) == (slow, None)
    fast = replace(slow, median_ms=0.001)
    flagged, (verdict, reason, message) = verify.speed_of_light(vector_add, CASE, fast, calibration)
    assert flagged == replace(fast, above_speed_of_light=True)
    assert (verdict, reason) == (Verdict.REJECTED, "faster-than-light")
    assert message.startswith("benchmark N=300: faster than light: 4 GB/s in 1.0 us")
