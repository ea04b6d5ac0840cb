from dataclasses import replace

import pytest

from judge.core import bench


def test_summarize_median_and_quantiles():
    median, p20, p80, n = bench.summarize([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (median, n) == (3.0, 5)
    assert p20 == pytest.approx(1.8) and p80 == pytest.approx(4.2)


def test_throughput_and_speed_of_light(vector_add):
    gbps, tflops = bench.throughput(vector_add, {"N": 25_000_000}, median_ms=0.1)
    assert gbps == pytest.approx(3000.0) and tflops is None
    calibration = {"copy_gbps": 3200.0, "peaks_tflops": {}}
    assert bench.sol_percent(vector_add, gbps, None, calibration) == pytest.approx(93.75)
    assert bench.sol_percent(vector_add, gbps, None, None) is None


def test_ties_are_overlapping_spreads():
    assert bench.is_tie((1.0, 0.95, 1.05), (1.02, 0.99, 1.06))
    assert not bench.is_tie((1.0, 0.99, 1.01), (1.2, 1.19, 1.21))


def test_measurement_cache_round_trip_per_kind():
    assert bench.load_cached("calibration", "gpu-a") is None
    bench.save_cached("calibration", "gpu-a", {"copy_gbps": 1.0, "peaks_tflops": {"fp16": 2.0}})
    bench.save_cached("calibration", "gpu-b", {"copy_gbps": 3.0, "peaks_tflops": {}})
    bench.save_cached("reference", "gpu-a", [0.5, 0.6])
    assert bench.load_cached("calibration", "gpu-a")["peaks_tflops"]["fp16"] == 2.0
    assert bench.load_cached("calibration", "gpu-b")["copy_gbps"] == 3.0
    assert bench.load_cached("reference", "gpu-a") == [0.5, 0.6]
    assert sorted(p.name for p in bench.cache_dir().iterdir()) == [
        "calibration.json",
        "reference.json",
    ]


def test_a_damaged_cache_file_is_a_miss_and_is_rewritten():
    bench.cache_dir().mkdir(parents=True)
    (bench.cache_dir() / "calibration.json").write_text("[not a mapping")
    assert bench.load_cached("calibration", "gpu-a") is None
    bench.save_cached("calibration", "gpu-a", {"copy_gbps": 1.0})
    assert bench.load_cached("calibration", "gpu-a") == {"copy_gbps": 1.0}


def sweep_timing(case: str, n: int, median_ms: float, reference_ms: float | None):
    from judge.core.results import Timing

    return Timing(
        case, {"N": n}, median_ms, median_ms, median_ms, 10, 3, reference_median_ms=reference_ms
    )


def test_sweep_points_are_rates_in_order_of_work(vector_add):
    points = bench.sweep_points(
        vector_add,
        [sweep_timing("N=25M", 25_000_000, 0.1, 0.12), sweep_timing("N=1000", 1000, 0.005, None)],
    )
    assert [p.label for p in points] == ["N=1000", "N=25M"]
    assert points[0].work == 12_000 and points[0].rate == pytest.approx(2.4)
    assert points[0].reference_rate is None
    assert points[1].rate == pytest.approx(3000.0) and points[1].reference_rate == pytest.approx(
        2500.0
    )


def test_peak_is_the_one_the_spec_names(vector_add):
    assert bench.peak(vector_add, {"copy_gbps": 4000.0, "peaks_tflops": {}}) == 4000.0
    assert bench.peak(vector_add, None) is None


class FakeDriver:
    """Triton's active driver as the head start's clock reads it: the device's properties."""

    utils = property(lambda self: self)

    def get_current_device(self):
        return 0

    def get_device_properties(self, device):
        return {"sm_clock_rate": 1_500_000}  # kHz


def test_the_sm_clock_comes_from_the_driver_or_is_taken_as_2_ghz():
    assert bench._clock_khz(FakeDriver()) == 1_500_000
    assert bench._clock_khz(object()) == 2_000_000  # a driver without the query


# ------------------------------------------------------------------- figures under the new rules


CURVE = {str(1 << 20): 200.0, str(4 << 20): 600.0, str(2 << 30): 3000.0}


def test_the_copy_curve_is_interpolated_on_log_scales_and_held_at_its_ends():
    assert bench.copy_rate(CURVE, 1 << 20) == 200.0
    assert bench.copy_rate(CURVE, 2 << 20) == pytest.approx((200.0 * 600.0) ** 0.5)
    assert bench.copy_rate(CURVE, 1) == 200.0 and bench.copy_rate(CURVE, 8 << 30) == 3000.0
    assert bench.copy_rate({}, 1 << 20) is None


def spec_with(measure: str, formula: str, peak: str = ""):
    from judge.core.spec import SpeedOfLight

    spec = registry_spec("vector_add")
    peak = peak or ("copy_bandwidth" if measure == "bytes" else "matmul_fp16")
    return replace(spec, speed_of_light=SpeedOfLight(measure, formula, peak))


def registry_spec(puzzle_id):
    from pathlib import Path

    from judge.core import registry

    return registry.get(puzzle_id, Path(__file__).parent.parent / "puzzles")


CALIBRATION = {
    "copy_gbps": 3000.0,
    "read_gbps": 3100.0,
    "copy_curve": CURVE,
    "peaks_tflops": {"matmul_fp32": 50.0, "matmul_fp16": 700.0},
}


def test_same_size_copy_percent_uses_the_bytes_the_call_moves():
    spec = spec_with("bytes", "N")
    assert bench.copy_percent(spec, {"N": 4 << 20}, 300.0, CALIBRATION) == pytest.approx(50.0)
    assert bench.copy_percent(spec_with("flop", "N"), {"N": 1}, 300.0, CALIBRATION) is None


def test_faster_than_light_against_the_fastest_rate_measured_with_a_margin():
    spec = spec_with("bytes", "N")
    sizes = {"N": 31 * 10**8}  # 3.1 GB: 1 ms at the read bandwidth
    assert bench.floor_ms(spec, sizes, CALIBRATION) == pytest.approx(1.0)
    assert (
        bench.faster_than_light(spec, sizes, 1.0 / bench.LIGHT_MARGIN["bytes"], CALIBRATION) is None
    )
    text = bench.faster_than_light(spec, sizes, 0.5, CALIBRATION)
    assert "6200 GB/s" in text and "3100 GB/s" in text
    flop = spec_with("flop", "N")
    assert bench.faster_than_light(flop, {"N": 7 * 10**11}, 0.9, CALIBRATION) is None
    assert "TFLOP/s" in bench.faster_than_light(flop, {"N": 7 * 10**11}, 0.5, CALIBRATION)
    assert bench.faster_than_light(spec, sizes, 0.001, None) is None


def test_a_flop_puzzle_is_held_to_the_peak_of_its_own_precision():
    fp32 = spec_with("flop", "N", "matmul_fp32")  # 50 TFLOP/s measured; float16 reaches 700
    sizes = {"N": 5 * 10**10}  # 50 GFLOP: 1 ms at the float32 peak
    assert bench.floor_ms(fp32, sizes, CALIBRATION) == pytest.approx(1.0)
    assert (
        bench.faster_than_light(fp32, sizes, 1.0 / bench.LIGHT_MARGIN["flop"], CALIBRATION) is None
    )
    text = bench.faster_than_light(fp32, sizes, 0.5, CALIBRATION)  # 2x float32, far below float16
    assert "100 TFLOP/s" in text and "peak of 50 TFLOP/s" in text
    unmeasured = spec_with("flop", "N", "matmul_tf32")  # no TF32 peak in this calibration
    assert bench.faster_than_light(unmeasured, sizes, 0.001, CALIBRATION) is None


def test_the_score_is_the_geometric_mean_of_floored_shapes():
    from judge.core.results import Timing

    fast_small = Timing("small", {}, 0.001, 0.001, 0.002, 9, 3, floor_ms=0.004, copy_pct=40.0)
    large = Timing("large", {}, 1.0, 0.9, 1.1, 9, 3, floor_ms=0.5, copy_pct=90.0)
    score = bench.score([fast_small, large])
    assert score.ms == pytest.approx((0.004 * 1.0) ** 0.5)  # the small shape raised to its floor
    assert score.p80_ms == pytest.approx((0.004 * 1.1) ** 0.5)
    assert score.copy_pct == pytest.approx(60.0) and score.shapes == 2
    assert score.sol_pct is None  # not every shape has one
    assert bench.score([]) is None


def test_every_peak_is_timed_by_the_loop_it_is_given_and_is_the_call_it_names():
    """calibrate times each library call with the function the timer hands it (the loop that
    times a submission's replay); here a fake that plays the call once on a small CPU set of
    the same buffers, so each call is seen to compute what its peak names."""
    import torch

    from judge.core import inputs
    from judge.workers import player

    asked = []

    def played(spec, sizes, fn):
        small = {"n": 8}
        initial = inputs.pristine(spec, small, seed=3)
        one = player.CheckedSet(spec, small, initial, None, spec.tolerance.at(small), device="cpu")
        one.own_answers(player.LibraryCall(fn, spec, small, [one]))
        got = {name: t.to(torch.float64) for name, t in one.truths.items()}
        given = {name: t.to(torch.float64) for name, t in initial.items()}
        if spec.id == "copy":
            assert torch.equal(got["dst"], given["src"])
        elif spec.id == "read":
            assert got["total"].item() == pytest.approx(given["src"].sum().item(), rel=1e-5)
        else:
            product = given["a"].view(8, 8) @ given["b"].view(8, 8)
            assert torch.allclose(got["c"].view(8, 8), product, rtol=1e-2, atol=1e-2)
        asked.append((spec.id, sizes["n"], torch.backends.cuda.matmul.allow_tf32))
        return [3.0, 1.0, 2.0]  # a median of 2 ms

    before = torch.backends.cuda.matmul.allow_tf32
    calibration = bench.calibrate(played, free_bytes=1 << 40)
    assert torch.backends.cuda.matmul.allow_tf32 == before
    copies = [((mib << 20) // 8) for mib in bench.COPY_CURVE_MIB]
    assert asked == [("copy", c, before) for c in copies] + [
        *(("matmul_float32", n, False) for n in bench.MATMUL_SIZES),
        *(("matmul_float32", n, True) for n in bench.MATMUL_SIZES),  # TF32 for this one only
        *(("matmul_float16", n, False) for n in bench.MATMUL_SIZES),
        ("read", (bench.READ_MIB << 20) // 4, before),
    ]
    assert calibration["copy_curve"] == {
        str(mib << 20): (mib << 20) / 2 / 1e6 for mib in bench.COPY_CURVE_MIB
    }
    assert calibration["copy_gbps"] == (bench.COPY_CURVE_MIB[-1] << 20) / 2 / 1e6
    assert calibration["read_gbps"] == (bench.READ_MIB << 20) / 2 / 1e6
    # every call takes 2 ms: the largest size does the most work in that time
    flops = 2 * max(bench.MATMUL_SIZES) ** 3 / 2 / 1e9
    assert calibration["peaks_tflops"] == pytest.approx(
        {"matmul_fp32": flops, "matmul_tf32": flops, "matmul_fp16": flops}
    )


def test_a_precision_s_peak_is_the_fastest_of_its_sizes_whichever_that_is():
    """A long call may run at a lower clock: the peak is the fastest size's rate, not the
    largest size's."""
    small, large = min(bench.MATMUL_SIZES), max(bench.MATMUL_SIZES)
    slower = {"matmul_float16": large, "matmul_float32": small}  # the size held back

    def played(spec, sizes, fn):
        n = sizes["n"]
        ms = 2 * n**3 / 1e9 / (100.0 if slower.get(spec.id) == n else 200.0)  # TFLOP/s
        return [ms]

    peaks = bench.calibrate(played, free_bytes=1 << 40)["peaks_tflops"]
    assert peaks == pytest.approx(
        {"matmul_fp32": 200.0, "matmul_tf32": 200.0, "matmul_fp16": 200.0}
    )


def test_a_device_with_little_free_memory_is_calibrated_on_copies_and_a_read_that_fit():
    sizes = {}

    def played(spec, given, fn):
        sizes.setdefault(spec.id, []).append(given["n"])
        return [1.0]

    calibration = bench.calibrate(played, free_bytes=8 * 10**9)
    assert [n * 8 >> 20 for n in sizes["copy"]] == [1, 4, 16, 64, 256, 1024]  # MiB moved
    assert calibration["copy_gbps"] == calibration["copy_curve"][str(1 << 30)]
    read = sizes["read"][0] * 4
    assert 1 << 30 < read <= 8 * 10**9 // 2 // bench.READ_HOLDS  # smaller than READ_MIB
    assert calibration["read_gbps"] == read / 1e6
    bench.calibrate(played, free_bytes=1 << 20)  # too little for any: the smallest, still
    assert sizes["copy"][-1] * 8 == 1 << 20 and sizes["read"][-1] * 4 == 1 << 20


CALIBRATE = """
import json
from judge.core import bench
from judge.workers import timer_commands
print(json.dumps(bench.calibrate(timer_commands.played_alone)))
"""


@pytest.mark.gpu
def test_the_device_s_peaks_are_measured_in_the_timer_s_own_loop():
    import json
    import os
    import subprocess
    import sys

    # on the device, not in Triton's interpreter (which the tests' environment sets)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run(
        [sys.executable, "-c", CALIBRATE], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    calibration = json.loads(done.stdout.splitlines()[-1])
    peaks = calibration["peaks_tflops"]
    assert 0 < peaks["matmul_fp32"] < peaks["matmul_tf32"] < peaks["matmul_fp16"]
    curve = [calibration["copy_curve"][str(mib << 20)] for mib in bench.COPY_CURVE_MIB]
    assert 0 < curve[0] < curve[-1] == calibration["copy_gbps"]
    assert calibration["read_gbps"] > 0
