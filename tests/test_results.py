import json
import math
from dataclasses import replace

from judge.core.results import (
    BufferCheck,
    CaseResult,
    EnvInfo,
    Mismatch,
    RunReport,
    Score,
    Timing,
    Verdict,
    finite,
)

ENV = EnvInfo(
    mode="gpu",
    device="NVIDIA H100",
    driver="580",
    cuda="13.0",
    triton="3.6.0",
    torch="2.11.0",
    python="3.12.3",
    copy_gbps=3000.0,
    peaks_tflops={"matmul_tf32": 400},
)


def sample_report() -> RunReport:
    bad = BufferCheck(
        name="c_ptr",
        ok=False,
        mismatches=1,
        total=3,
        max_error=2.0,
        max_error_index=1,
        first=(Mismatch(1, 3.0, 1.0, 2.0),),
    )
    return RunReport(
        puzzle="vector_add",
        submission="s.py",
        verdict=Verdict.FAILED,
        reason="wrong-answer",
        message="case N=3",
        env=ENV,
        ranked=False,
        cases=(
            CaseResult(
                name="N=3",
                sizes={"N": 3},
                seed=1,
                status="failed",
                max_error=2.0,
                buffers=(bad,),
                hints=("a hint",),
                reproduce="tpuzzle run ...",
            ),
        ),
        timing=(
            Timing(
                case="N=25M",
                sizes={"N": 25},
                median_ms=0.1,
                p20_ms=0.09,
                p80_ms=0.11,
                samples=100,
                input_sets=2,
                gbps=3000.0,
                sol_pct=95.0,
                reference_median_ms=0.12,
                speedup_vs_reference=1.2,
                copy_pct=97.0,
                library="torch.add",
                library_median_ms=0.12,
                speedup_vs_library=1.2,
                event_median_ms=0.1,
                device_span_ms=0.095,
                launches=1,
                host_ms=0.048,
                floor_ms=0.08,
            ),
        ),
        score=Score(0.1, 0.09, 0.11, 1, 95.0, 97.0, 1.2),
        method="device time per call: the method in words",
    )


def test_round_trip_through_json():
    report = sample_report()
    data = json.loads(json.dumps(report.to_dict()))
    assert RunReport.from_dict(data) == report


def test_the_ranked_figure_is_the_score_or_for_old_reports_the_first_shape():
    report = sample_report()
    assert report.figure is report.score
    old = RunReport.from_dict({**report.to_dict(), "score": None})
    assert old.figure.spread == (0.1, 0.09, 0.11) and old.figure.shapes == 1
    assert replace(old, timing=()).figure is None


def test_json_shape_for_the_cli():
    data = sample_report().to_dict()
    assert data["verdict"] == "failed"
    assert data["timing"]["median_ms"] == 0.1
    assert data["timings"][0]["speedup_vs_reference"] == 1.2
    assert data["cases"][0]["buffers"][0]["first"][0] == {
        "index": 1,
        "got": 3.0,
        "expected": 1.0,
        "error": 2.0,
    }
    assert data["env"]["triton"] == "3.6.0"


def test_no_timing_is_null():
    report = sample_report()
    data = RunReport(**{**report.__dict__, "timing": ()}).to_dict()
    assert data["timing"] is None and data["timings"] == []


def test_verdict_is_a_string():
    assert str(Verdict.PASSED) == "passed"
    assert Verdict("error") is Verdict.ERROR


def test_finite_makes_a_report_fit_for_json():
    assert finite({"a": [math.nan, 1.0], "b": (-math.inf,), "c": "x"}) == {
        "a": [None, 1.0],
        "b": [None],
        "c": "x",
    }
