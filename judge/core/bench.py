"""Timing: the device's peaks, statistics, throughput and speed of light.

The measuring functions (`calibrate`, `contention`) run in the timer, on the device; the
arithmetic (`summarize`, `throughput`, `faster_than_light`) is pure and runs in the parent.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.core.results import Score, Timing
from judge.core.spec import Arg, Draw, PuzzleSpec, SpeedOfLight, Tolerance, evaluate

WARMUP_MS = 25  # the timing loop's warm-up budget (player.timed), in ms of calls
REP_MS = 100  # the timing loop's budget of timed calls, in ms
HEAD_START_US = 200  # the device's least wait after each flush while the host queues the call
HEAD_START_HOST_FACTOR = 3  # ... and at least this many times the host time of one call
CONTENTION_PROBE_MS = 20.0  # `contention`'s spinning kernel: several of the device's time slices
CONTENTION_GIVE_UP = 10  # a probe not done in this many times its length: busy
# A probe within this factor of its length: nothing else held the device. Measured on an H200
# (driver 580): 1.00-1.02 idle; 1.11 beside another process's 4096 blocks that never end; 1.03-1.29
# beside one such block (the device shares its time between processes rather than waiting).
QUIET_CONTENTION = 1.03
COPY_CURVE_MIB = (1, 4, 16, 64, 256, 1024, 2048)  # copies calibrated, in MiB moved (read + write)
READ_MIB = 2048  # the read-bandwidth calibration: a sum over this many MiB
# Faster than light: a time whose rate exceeds the device's fastest measured rate for the puzzle's
# kind of work by more than these factors is rejected. Memory: the fastest of the copy curve and
# the read (repeated calibrations agree within 1%, and the best shipped kernels reach 94-97% of a
# copy). FLOP: the measured peak of the puzzle's own precision (`speed_of_light.peak`: float32
# SIMT, TF32 or float16 tensor cores; the fastest of cuBLAS at MATMUL_SIZES), never a faster
# precision's: a float32 puzzle held to the float16 peak would let a TF32 kernel run at 1.4x its
# own peak unranked. Hand written kernels reach 0.9-1.1x cuBLAS at large shapes, so a quarter
# above the peak is beyond any honest kernel of that precision.
LIGHT_MARGIN = {"bytes": 1.10, "flop": 1.25}
METHOD = (
    "device time per call: what one call of solve() launched (recorded in its worker) replayed "
    "by a process that never imported the submission, on the judge's own buffers and inputs "
    "drawn fresh; median of every timed call, L2 flushed before each, the launches queued "
    "ahead (at least 200 us, and 3x their host time) so the host's side is not timed, and "
    "every timed call's answer checked"
)


# -------------------------------------------------------------------------------- in the timer


def contention(probe_ms: float = CONTENTION_PROBE_MS, probes: int = 3) -> float:
    """How many times longer than it should a spinning kernel of about `probe_ms` took, from its
    launch until the host saw it end (the least of `probes` tries): about 1 when nothing else
    slows the device down, more while another process's kernels hold its multiprocessors (ours
    then waits for them, or for its turn). A device that was idle may take a few milliseconds to
    raise its clock, which only makes the probe err on the side of busy. Infinite where PyTorch
    has no spinning kernel, or when a probe is not done in CONTENTION_GIVE_UP times its length
    (it stays queued, and runs once the device is free)."""
    import time

    import torch
    from triton import runtime

    sleep = getattr(torch.cuda, "_sleep", None)
    if sleep is None:
        return math.inf
    cycles = int(probe_ms * _clock_khz(runtime.driver.active))
    least = math.inf
    for _ in range(probes):
        torch.cuda.synchronize()
        ended = torch.cuda.Event()
        started = time.perf_counter()
        sleep(cycles)
        ended.record()
        deadline = started + CONTENTION_GIVE_UP * probe_ms / 1e3
        while not ended.query():  # a kernel that never ends may keep the probe from starting
            if time.perf_counter() > deadline:
                return math.inf
            time.sleep(probe_ms / 1e5)
        least = min(least, (time.perf_counter() - started) * 1e3 / probe_ms)
    return least


def _clock_khz(driver) -> float:
    """The device's SM clock in kHz, as Triton's driver reports it (2 GHz where it does not)."""
    try:
        props = driver.utils.get_device_properties(driver.get_current_device())
        return float(props.get("sm_clock_rate") or 2_000_000)
    except Exception:  # a driver without the query: the sleep is a little longer or shorter
        return 2_000_000.0


# How the timer times each of the calibration's library calls: (the call's buffers as a spec,
# its sizes, the call) -> every timed call in ms. The timer passes the loop that times a
# submission's replay (judge.workers.player.timed), so that a peak and the figure held to it come
# from the same loop: a long call that draws much power runs more slowly with less rest between
# calls (cuBLAS's TF32 matmul 5-16% on an H100 back to back, as do_bench calls it), and a peak
# timed that way read 102-106% for a kernel timed the judge's way.
Played = Callable[[PuzzleSpec, dict[str, int], Callable], list[float]]
# The square matmuls of the peaks: a precision's peak is the fastest of them. One size is not
# enough: cuBLAS's TF32 matmul ran at 381 TFLOP/s at 8192^3 on an H200 whose cuBLAS did matmul's
# 8192 x 6144 x 4096 at 411, so the shipped kernel, 0.94x cuBLAS there, read 101% of that peak.
# On another H200, TF32 (float16) ran at 391-397 (739-747) TFLOP/s at 4096^3, 399-401 (761) at
# 6144^3 and 385-389 (746-747) at 8192^3.
MATMUL_SIZES = (4096, 6144, 8192)
# Device memory the timer's loop holds for a copy, per byte it moves, and for a read, per byte
# read: the inputs as drawn, each buffer twice (as before a call, as the call left it) and the
# outputs' truths in float64 (a copy's src: 1 + 2 halves, its dst 2 halves + 2 for the truth).
COPY_HOLDS = 3.5
READ_HOLDS = 3
PEAKS = (  # (name, element type, TF32 allowed)
    ("matmul_fp32", "float32", False),
    ("matmul_tf32", "float32", True),
    ("matmul_fp16", "float16", False),
)


def measurement(name: str, buffers: tuple[tuple[str, str, str, tuple[str, ...]], ...]):
    """One of the calibration's library calls as a puzzle's spec: its buffers, each (name, role,
    element type, shape in n), then the size n; the timer plays it as it plays a library call
    beside a submission (inputs drawn, outputs the sentinel, guard bands, the check after each
    call against the first call's answers)."""
    normal = Draw(dist="normal")
    args = tuple(
        Arg(name=b, role=role, dtype=dtype, shape=shape, draw=normal if role == "in" else None)
        for b, role, dtype, shape in buffers
    )
    return PuzzleSpec(
        id=name,
        title=name,
        difficulty="easy",
        tags=(),
        statement="",
        example="",
        args=(*args, Arg(name="n", role="size")),
        # the timed calls against the first call's answers: the same library call on the same
        # inputs, within float16's rounding (a reduction may add in another order)
        tolerance=Tolerance(atol=1e-3, rtol=1e-3),
        limits=(("n", 1, 1 << 40),),
        constraints=(),
        tests=(),
        benchmarks=(),
        speed_of_light=SpeedOfLight(measure="bytes", formula="0", peak="copy_bandwidth"),
        library="",
        timeout_s=60.0,
        directory=Path("."),
    )


COPY = measurement("copy", (("src", "in", "float32", ("n",)), ("dst", "out", "float32", ("n",))))
READ = measurement("read", (("src", "in", "float32", ("n",)), ("total", "out", "float32", ("1",))))


def matmul_measurement(dtype: str):
    return measurement(
        f"matmul_{dtype}",
        (
            ("a", "in", dtype, ("n", "n")),
            ("b", "in", dtype, ("n", "n")),
            ("c", "out", dtype, ("n", "n")),
        ),
    )


def copy_call(src, dst, n):
    dst.copy_(src)


def read_call(src, total, n):
    import torch

    torch.sum(src, dim=0, keepdim=True, out=total)


def matmul_call(a, b, c, n):
    import torch

    torch.matmul(a.view(n, n), b.view(n, n), out=c.view(n, n))


def calibrate(played: Played, free_bytes: int | None = None) -> dict:
    """The device's own peaks, each library call timed by `played`: device-to-device copy
    bandwidth at several sizes (the largest is `copy_gbps`), read bandwidth, and dense matmul
    throughput (the fastest of cuBLAS's square matmuls at MATMUL_SIZES). A copy or a read that
    would take more than half the device's free memory (`free_bytes`, else asked of the device)
    in the timer's loop is left out, or made smaller: with 8 GB free, the copies go up to 1 GiB
    moved."""
    import torch

    if free_bytes is None:
        free_bytes = torch.cuda.mem_get_info()[0]

    def rate(spec: PuzzleSpec, n: int, fn, work: float) -> float:
        return work / statistics.median(played(spec, {"n": n}, fn)) / 1e6

    copies = [mib for mib in COPY_CURVE_MIB if COPY_HOLDS * (mib << 20) <= free_bytes // 2]
    curve = {
        str(mib << 20): rate(COPY, (mib << 20) // 8, copy_call, mib << 20)
        for mib in copies or COPY_CURVE_MIB[:1]
    }
    read = min(READ_MIB << 20, max(1 << 20, (free_bytes // 2 // READ_HOLDS) >> 20 << 20))
    peaks = {}
    for name, dtype, tf32 in PEAKS:
        previous = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
        try:
            peaks[name] = max(
                rate(matmul_measurement(dtype), n, matmul_call, 2 * n**3) / 1e3
                for n in MATMUL_SIZES
            )
        finally:
            torch.backends.cuda.matmul.allow_tf32 = previous
    return {
        "copy_gbps": curve[max(curve, key=int)],
        "copy_curve": curve,
        "read_gbps": rate(READ, read // 4, read_call, read),
        "peaks_tflops": peaks,
    }


# ------------------------------------------------------------------------------- in the parent


def summarize(times: list[float]) -> tuple[float, float, float, int]:
    """(median, p20, p80, samples) of timed calls in milliseconds."""
    ordered = sorted(times)

    def quantile(q: float) -> float:
        pos = q * (len(ordered) - 1)
        lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
        return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)

    return statistics.median(ordered), quantile(0.2), quantile(0.8), len(ordered)


def work(spec: PuzzleSpec, sizes: dict[str, int]) -> float:
    """Bytes or FLOP one call must move or compute, from the spec's formula."""
    return float(evaluate(spec.speed_of_light.formula, dict(sizes)))


def throughput(
    spec: PuzzleSpec, sizes: dict[str, int], median_ms: float
) -> tuple[float | None, float | None]:
    """(GB/s, TFLOP/s): the one that the spec's speed-of-light measure names, the other None."""
    amount = work(spec, sizes)
    if spec.speed_of_light.measure == "bytes":
        return amount / median_ms / 1e6, None
    return None, amount / median_ms / 1e9


def sol_percent(
    spec: PuzzleSpec, gbps: float | None, tflops: float | None, calibration: dict | None
) -> float | None:
    """Achieved throughput as a percentage of the device's measured peak."""
    top = peak(spec, calibration)
    achieved = gbps if spec.speed_of_light.peak == "copy_bandwidth" else tflops
    if not top or achieved is None:
        return None
    return 100.0 * achieved / top


def copy_rate(curve: dict[str, float] | None, moved: float) -> float | None:
    """GB/s of a device copy moving `moved` bytes: the calibrated curve, interpolated between
    its sizes on a log-log scale and held at its ends."""
    points = sorted((float(k), v) for k, v in (curve or {}).items() if v and float(k) > 0)
    if not points or moved <= 0:
        return None
    if moved <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        if moved <= x1:
            f = math.log(moved / x0) / math.log(x1 / x0)
            return math.exp(math.log(y0) + f * (math.log(y1) - math.log(y0)))
    return points[-1][1]


def copy_percent(spec: PuzzleSpec, sizes: dict[str, int], gbps: float | None, calibration):
    """Achieved GB/s as a percentage of a device copy that moves the same bytes (bytes puzzles)."""
    if gbps is None or spec.speed_of_light.measure != "bytes" or not calibration:
        return None
    rate = copy_rate(calibration.get("copy_curve"), work(spec, sizes))
    return 100.0 * gbps / rate if rate else None


def light(spec: PuzzleSpec, calibration: dict | None) -> float | None:
    """The fastest rate the device was measured to reach for this kind of work (GB/s for bytes;
    TFLOP/s for FLOP, at the puzzle's own precision): no honest kernel goes beyond it by more
    than LIGHT_MARGIN."""
    if not calibration:
        return None
    if spec.speed_of_light.measure == "bytes":
        rates = [calibration.get("copy_gbps"), calibration.get("read_gbps")]
        rates += list((calibration.get("copy_curve") or {}).values())
    else:  # the puzzle's own precision
        rates = [(calibration.get("peaks_tflops") or {}).get(spec.speed_of_light.peak)]
    rates = [r for r in rates if r]
    return max(rates) if rates else None


def floor_ms(spec: PuzzleSpec, sizes: dict[str, int], calibration: dict | None) -> float | None:
    """A shape's speed-of-light time: its work at the device's fastest measured rate."""
    top = light(spec, calibration)
    if not top:
        return None
    scale = 1e6 if spec.speed_of_light.measure == "bytes" else 1e9
    return work(spec, sizes) / top / scale


def faster_than_light(spec: PuzzleSpec, sizes, median_ms: float, calibration) -> str | None:
    """Why a median is beyond what the device can do, or None when it is not."""
    floor = floor_ms(spec, sizes, calibration)
    margin = LIGHT_MARGIN[spec.speed_of_light.measure]
    if floor is None or median_ms * margin >= floor:
        return None
    unit = "GB/s" if spec.speed_of_light.measure == "bytes" else "TFLOP/s"
    rate = floor * light(spec, calibration) / median_ms
    return (
        f"{rate:.0f} {unit} in {median_ms * 1e3:.1f} us, against the device's measured peak of "
        f"{light(spec, calibration):.0f} {unit} ({floor * 1e3:.1f} us at least)"
    )


def geomean(values: Iterable[float]) -> float | None:
    values = list(values)
    if not values or any(v is None or v <= 0 for v in values):
        return None
    if len(values) == 1:
        return values[0]
    return math.exp(statistics.fmean(math.log(v) for v in values))


def score(timings: Iterable[Timing]) -> Score | None:
    """The ranked figure over every benchmark shape (see results.Score); None without timings."""
    timings = list(timings)
    if not timings:
        return None

    def mean(values) -> float | None:
        return geomean(values) if all(v is not None for v in values) else None

    floors = [t.floor_ms or 0.0 for t in timings]
    return Score(
        ms=mean([max(t.median_ms, f) for t, f in zip(timings, floors, strict=True)]),
        p20_ms=mean([max(t.p20_ms, f) for t, f in zip(timings, floors, strict=True)]),
        p80_ms=mean([max(t.p80_ms, f) for t, f in zip(timings, floors, strict=True)]),
        shapes=len(timings),
        sol_pct=mean([t.sol_pct for t in timings]),
        copy_pct=mean([t.copy_pct for t in timings]),
        speedup_vs_library=mean([t.speedup_vs_library for t in timings]),
    )


@dataclass(frozen=True)
class SweepPoint:
    """One size of a sweep: the work of a call and the rates achieved on it."""

    label: str  # the case's name, e.g. "N=1025"
    work: float  # bytes or FLOP of one call, from the spec's formula
    rate: float  # the submission's GB/s or TFLOP/s
    reference_rate: float | None  # the PyTorch reference's, in the same unit


def sweep_points(spec: PuzzleSpec, timings: Iterable) -> list[SweepPoint]:
    """The timed cases of a run as points of a rate-against-size plot, smallest work first."""
    scale = 1e6 if spec.speed_of_light.measure == "bytes" else 1e9
    points = []
    for t in timings:
        amount = work(spec, t.sizes)
        ref = t.reference_median_ms
        points.append(
            SweepPoint(t.case, amount, amount / t.median_ms / scale, ref and amount / ref / scale)
        )
    return sorted(points, key=lambda p: p.work)


def peak(spec: PuzzleSpec, calibration: dict | None) -> float | None:
    """The device's measured peak that the spec's speed of light names (GB/s or TFLOP/s)."""
    if not calibration:
        return None
    if spec.speed_of_light.peak == "copy_bandwidth":
        return calibration.get("copy_gbps")
    return (calibration.get("peaks_tflops") or {}).get(spec.speed_of_light.peak)


def is_tie(a: tuple[float, float, float], b: tuple[float, float, float]) -> bool:
    """Two (median, p20, p80) results whose medians lie within each other's p20-p80 spread."""
    return a[1] <= b[0] <= a[2] or b[1] <= a[0] <= b[2]


# ------------------------------------------------------------------------------- measurement cache
#
# Device peaks and the PyTorch reference's times depend on the device, its driver and the
# versions, not on any submission: each is measured once per key and kept in a JSON file per kind
# ("calibration", "reference"), so that a run spends its time on the submission.


def cache_dir() -> Path:
    base = os.environ.get("TPUZZLE_CACHE") or os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    path = Path(base).expanduser() / ("" if os.environ.get("TPUZZLE_CACHE") else "tpuzzle")
    return path


def _cache_file(kind: str) -> Path:
    return cache_dir() / f"{kind}.json"


def load_cached(kind: str, key: str) -> Any:
    """The value stored under key in the cache of this kind, or None."""
    try:
        return json.loads(_cache_file(kind).read_text()).get(key)
    except (OSError, ValueError, AttributeError):
        return None


def save_cached(kind: str, key: str, value: Any) -> None:
    """Store value under key; concurrent writers may drop each other's entries, never garble."""
    path = _cache_file(kind)
    try:
        data = json.loads(path.read_text())
        data = data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        data = {}
    data[key] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as tmp:
        json.dump(data, tmp, indent=1)
    os.replace(tmp.name, path)
