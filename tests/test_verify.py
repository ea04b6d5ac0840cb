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
from judge.judging import verify
from judge.judging.plan import Plan
from judge.judging.truths import Truths
from judge.workers.channel import WorkerReported

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


def leave_sets(checker, tag, wrong_set=None, seeds=None):
    for j, seed in enumerate(seeds or checker.plan.recheck_seeds(CASE)):
        leave(checker, replace(CASE, seed=seed), f"{tag}_set{j}", 1.0 if j == wrong_set else 0.0)


def test_untimed_calls_are_checked_again_on_fresh_inputs(checker):
    leave_sets(checker, "bench0")
    assert checker.bench(CASE, "bench0", {"event": "bench_done"}, fresh=True) is None
    leave_sets(checker, "bench1", wrong_set=1)
    verdict, reason, message = checker.bench(CASE, "bench1", {}, fresh=True)
    assert (verdict, reason) == (Verdict.FAILED, "recheck-failed")
    assert message.startswith("benchmark N=300: called again on fresh inputs")
    assert "skip work on repeated calls" in message
    assert checker.bench(CASE, "bench2", {}, fresh=True)[:2] == (Verdict.ERROR, "protocol")


def test_recorded_calls_are_left_to_the_timer(checker):
    """A timed run's worker only records: its buffers are not read (the timer checks what it
    replays), so nothing it left, right or wrong, decides anything."""
    own = checker.plan.bench_seeds(CASE)
    leave_sets(checker, "bench1", wrong_set=0, seeds=own)
    assert checker.bench(CASE, "bench1", {}, fresh=False) is None
    assert checker.bench(CASE, "never-left", {}, fresh=False) is None


def replayed(first_wrong=None, times=(1.0, 2.0, 3.0), **more):
    return {
        "event": "replayed",
        "times": list(times),
        "calls": 40,
        "first_wrong": first_wrong,
        "wrong_elements": 300 if first_wrong is not None else 0,
        "wrong_calls": 13 if first_wrong is not None else 0,
        "first_wrong_set": first_wrong % 3 if isinstance(first_wrong, int) else None,
        "calls_by_set": [14, 13, 13],
        "wrong_by_set": [0, 13, 0] if first_wrong is not None else [0, 0, 0],
        "host_ms": 0.02,
        "launches": ["add_kernel grid 3x1x1", "fill 64 bytes of scratch 0 with 0 (float32)"],
        "wrong_sets": [],
        **more,
    }


def test_a_replay_right_when_checked_after_each_set_reads_no_buffer(checker, tmp_path):
    assert checker.replayed(CASE, "bench0", replayed(), tmp_path / "nothing-here") is None


def test_a_set_wrong_when_checked_after_it_ended_fails_with_the_buffers_read(checker):
    leave_sets(checker, "bench0", wrong_set=1)
    event = replayed(wrong_sets=[1])
    verdict, reason, message = checker.replayed(CASE, "bench0", event, checker.worker.dir)
    assert (verdict, reason) == (Verdict.FAILED, "recheck-failed")
    assert message.startswith("benchmark N=300: called again on fresh inputs, replayed in the")
    # the timer's buffers gone: still a failure, never a pass
    missing = checker.replayed(CASE, "gone", event, checker.worker.dir)
    assert missing[:2] in ((Verdict.FAILED, "recheck-failed"), (Verdict.ERROR, "protocol"))


def test_the_timer_s_case_answer_is_checked_for_shape():
    assert verify.plausible_check({"wrong": 0, "max_error": 0.0})
    for garbled in (
        {"wrong": -1, "max_error": 0.0},
        {"wrong": 0},
        {"wrong": "0", "max_error": 1.0},
    ):
        assert not verify.plausible_check(garbled)


def test_a_case_the_timer_found_right_passes_with_its_largest_error(checker):
    result = verify.passed_case(checker.plan, CASE, 2.5e-7)
    assert result.status == "passed" and result.max_error == 2.5e-7 and not result.reproduce
    assert {b.name for b in result.buffers} == {a.name for a in checker.plan.spec.buffers}


def test_a_set_both_right_and_wrong_in_its_timed_calls_is_called_a_race(checker):
    event = replayed(
        first_wrong=16, first_wrong_set=0, calls_by_set=[14, 13, 13], wrong_by_set=[5, 0, 0]
    )
    verdict, reason, message = checker.replayed(CASE, "b", event, Path("/"))
    assert (verdict, reason) == (Verdict.FAILED, "timed-call-wrong")
    assert "timed call 17 of 40 (input set 1 of 3, drawn fresh)" in message
    assert "input set 1 came out right in 9 of its 14 calls and wrong in 5" in message
    assert "a race" in message and "skip work" not in message


def test_timed_calls_wrong_on_whole_sets_are_called_skipped_work(checker):
    event = replayed(
        first_wrong=16, first_wrong_set=1, calls_by_set=[14, 13, 13], wrong_by_set=[0, 13, 13]
    )
    message = checker.replayed(CASE, "b", event, Path("/"))[2]
    assert "(input set 2 of 3, drawn fresh)" in message
    assert "skip work on repeated calls" in message and "a race" not in message


def test_a_wrong_timed_call_fails_and_is_named(checker):
    verdict, reason, message = checker.replayed(CASE, "b", replayed(first_wrong=16), Path("/"))
    assert (verdict, reason) == (Verdict.FAILED, "timed-call-wrong")
    assert message.startswith(
        "benchmark N=300: timed call 17 of 40 (input set 2 of 3, drawn fresh) got 300 elements "
        "wrong, and 13 of the calls were wrong"
    )


@pytest.mark.parametrize(
    "garbled",
    [
        {"times": []},
        {"times": [1.0, float("nan")]},
        {"times": [-1.0]},
        {"first_wrong": "0"},
        {"calls": None},
        {"launches": "x"},
        {"wrong_sets": None},
        {"wrong_sets": [-1]},
        {"calls_by_set": "14"},
        {"calls_by_set": None},
        {"wrong_by_set": [1.5]},
        {"first_wrong": 3, "first_wrong_set": None},
        {"first_wrong_set": 0},
    ],
)
def test_a_garbled_replay_is_a_protocol_error(checker, garbled):
    problem = checker.replayed(CASE, "b", replayed(**garbled), Path("/"))
    assert problem == (Verdict.ERROR, "protocol", "benchmark N=300: a garbled replay")


def test_writes_outside_triton_are_rejected_before_any_buffer_is_read(checker):
    event = {"foreign": {"c_ptr": 300, "a_ptr": 0}}
    verdict, reason, message = checker.bench(CASE, "nothing-written", event, fresh=True)
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
    assert message.startswith("benchmark N=300: called again on fresh inputs")
    assert verify.recheck_problem(CASE, replace(failed, status="passed")) is None


def test_timing_figures_come_from_the_replay(vector_add):
    measured = {"reference": [5.0, 5.0, 5.0], "library": {"torch.fast": [4.0], "none": []}}
    calibration = {"copy_gbps": 3000.0, "peaks_tflops": {}, "copy_curve": {}}
    t = verify.timing(vector_add, CASE, replayed(), measured, 3, calibration)
    assert (t.case, t.sizes, t.samples, t.input_sets) == ("N=300", {"N": 300}, 3, 3)
    assert (t.median_ms, t.p20_ms, t.p80_ms) == pytest.approx((2.0, 1.4, 2.6))
    assert t.event_median_ms == 2.0 and t.device_span_ms is None
    assert (t.launches, t.host_ms) == (1, 0.02)
    assert t.replayed == ("add_kernel grid 3x1x1", "fill 64 bytes of scratch 0 with 0 (float32)")
    assert t.gbps == pytest.approx(12 * 300 / 2.0 / 1e6) and t.tflops is None
    assert t.sol_pct == pytest.approx(100 * t.gbps / 3000.0)
    assert (t.reference_median_ms, t.speedup_vs_reference) == (5.0, 2.5)
    assert (t.library, t.library_median_ms, t.speedup_vs_library) == ("torch.fast", 4.0, 2.0)
    assert t.floor_ms == pytest.approx(12 * 300 / 3000.0 / 1e6)


def test_timing_figures_without_measurements(vector_add):
    t = verify.timing(vector_add, CASE, replayed(), None, 2, None)
    assert t.median_ms == t.event_median_ms == 2.0 and t.input_sets == 2
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


def test_a_recorded_call_that_launched_nothing_is_work_skipped():
    assert verify.launched_nothing({"steps": [], "kernels": []})
    assert verify.launched_nothing({"steps": [{"fill": {}, "nbytes": 4}]})
    assert not verify.launched_nothing({"steps": [{"launch": "k"}]})
    assert not verify.launched_nothing({"unsupported": "a tensor descriptor", "steps": []})
    assert not verify.launched_nothing(None) and not verify.launched_nothing({"steps": "x"})
    assert "skip work on repeated calls" in verify.skipped_message(CASE)
