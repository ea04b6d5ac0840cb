"""Timing: triton.testing.do_bench, statistics, throughput and speed of light.

The measuring functions (`time_calls`, `cross_check`, `calibrate`) run in the worker, on the
device; the arithmetic (`summarize`, `throughput`, `consistent`) is pure and runs in the parent.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.spec import PuzzleSpec, evaluate

WARMUP_MS = 25  # do_bench warm-up budget
REP_MS = 100  # do_bench repetition budget
CROSS_CHECK_CALLS = 20  # synchronised calls in the wall-clock cross-check
ABOVE_SOL_MARGIN = 1.05  # a result over 105% of the measured peak is flagged
HEAD_START_US = 200  # the device's wait after each flush while the host queues the call


# ------------------------------------------------------------------------------- in the worker


def time_calls(
    fn: Callable[[], object], warmup_ms: int = WARMUP_MS, rep_ms: int = REP_MS
) -> list[float]:
    """Every timed sample of fn in milliseconds, from triton.testing.do_bench.

    do_bench calls fn once before timing (so a first call's compile is never timed), flushes the
    L2 cache before every timed call and records CUDA events around it. The events time the
    device, but the host's work inside fn (the submission's Python and launches, and the judge's
    PyTorch referee around it) shows up as an idle device between the events once it outlasts
    the flush, about 60 us on an H200: then a kernel of 10 us measures anywhere from 10 to 25 us
    with the host's jitter. So after each flush the device also waits HEAD_START_US (see
    `head_start`), by which time the whole call is queued behind it.
    """
    from triton import runtime
    from triton.testing import do_bench

    with head_start(runtime.driver.active, HEAD_START_US):
        times = do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="all")
    return [float(t) for t in times]


@contextlib.contextmanager
def head_start(driver, microseconds: float):
    """Within the block, the driver's L2 flush (do_bench's `clear_cache`) is followed by a sleep
    of about `microseconds` on the device (torch.cuda._sleep, a spinning kernel); unchanged
    where this PyTorch has no such kernel."""
    import torch

    sleep = getattr(torch.cuda, "_sleep", None)
    if sleep is None:
        yield
        return
    cycles = int(microseconds * _clock_khz(driver) / 1000)
    flush = driver.clear_cache
    patched_before = "clear_cache" in vars(driver)

    def clear_cache(cache) -> None:
        flush(cache)
        sleep(cycles)

    driver.clear_cache = clear_cache
    try:
        yield
    finally:
        if patched_before:
            driver.clear_cache = flush
        else:
            del driver.clear_cache


def _clock_khz(driver) -> float:
    """The device's SM clock in kHz, as Triton's driver reports it (2 GHz where it does not)."""
    try:
        props = driver.utils.get_device_properties(driver.get_current_device())
        return float(props.get("sm_clock_rate") or 2_000_000)
    except Exception:  # a driver without the query: the sleep is a little longer or shorter
        return 2_000_000.0


def cross_check(fn: Callable[[], object], calls: int = CROSS_CHECK_CALLS) -> dict[str, float]:
    """Event time against device-synchronised wall time, call by call.

    Each call is bracketed by CUDA events on the current stream and followed by a device-wide
    synchronise; the wall clock therefore includes work the call left running on other streams.
    The same loop around an empty function gives the synchronisation overhead.
    """
    import torch

    def loop(target: Callable[[], object]) -> tuple[float, float]:
        events, walls = [], []
        for _ in range(calls):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            start.record()
            target()
            end.record()
            torch.cuda.synchronize()
            walls.append((time.perf_counter() - t0) * 1e3)
            events.append(start.elapsed_time(end))
        return statistics.median(events), statistics.median(walls)

    event_ms, wall_ms = loop(fn)
    _, baseline_ms = loop(lambda: None)
    return {"event_ms": event_ms, "wall_ms": wall_ms, "baseline_ms": baseline_ms}


def calibrate() -> dict:
    """The device's own peaks: device-to-device copy bandwidth and dense matmul throughput."""
    import torch

    copy_gbps = _copy_bandwidth(1 << 28)
    peaks = {}
    n = 8192
    for name, dtype, tf32 in (
        ("matmul_fp32", torch.float32, False),
        ("matmul_tf32", torch.float32, True),
        ("matmul_fp16", torch.float16, False),
    ):
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        previous = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
        ms = statistics.median(time_calls(lambda a=a, b=b: a @ b))
        torch.backends.cuda.matmul.allow_tf32 = previous
        peaks[name] = 2 * n**3 / ms / 1e9
    return {"copy_gbps": copy_gbps, "peaks_tflops": peaks}


def _copy_bandwidth(n: int) -> float:
    """GB/s of a device-to-device copy of n floats, counting bytes read and bytes written."""
    import torch

    src = torch.empty(n, dtype=torch.float32, device="cuda").uniform_()
    dst = torch.empty_like(src)
    copy_ms = statistics.median(time_calls(lambda: dst.copy_(src)))
    return 2 * n * 4 / copy_ms / 1e6


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


def plausible_event(event: dict) -> bool:
    """A benchmark's answer has the shape the worker sends: positive finite times, and the
    cross-check's three durations."""

    def number(x) -> bool:
        return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)

    times, xc = event.get("times"), event.get("cross_check")
    return (
        isinstance(times, list)
        and bool(times)
        and all(number(t) and t > 0 for t in times)
        and isinstance(xc, dict)
        and all(number(xc.get(k)) for k in ("wall_ms", "baseline_ms", "event_ms"))
    )


def consistent(check: dict[str, float]) -> bool:
    """False when the events saw much less time than the device-synchronised wall clock.

    That happens when solve() returns with its work still running on another stream. The
    synchronisation overhead (baseline) is taken off the wall time first; differences under 50 us
    are not judged.
    """
    device_ms = check["wall_ms"] - check["baseline_ms"]
    return not (device_ms > 0.05 and check["event_ms"] < 0.5 * device_ms)


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
