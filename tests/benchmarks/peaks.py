"""The device's peaks as the judge calibrates them, against cuBLAS's TF32 matmul timed back to
back by `triton.testing.do_bench` (how the calibration was timed before 11cbabf), on a GPU;
printed, not asserted:

    python tests/benchmarks/peaks.py [--rounds 2] [--free-gib 8]

Each round runs the whole calibration the way the timer does (`bench.calibrate` with
`timer_commands.played_alone`: every call's output reset, the L2 cache flushed, a head start on
the device, the check after the call) and prints its peaks, copy curve, time and the device
memory it took; then the TF32 matmul at the same size by `triton.testing.do_bench` alone (the L2
flushed between calls; no reset, check or head start; the calibration before 11cbabf also waited
200 us on the device after each flush). `--free-gib` calibrates as a device with only that much
free memory would be (the copies and the read that fit in half of it), on a larger one.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from triton.testing import do_bench

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from judge.core import bench  # noqa: E402
from judge.workers import timer_commands  # noqa: E402


def back_to_back_tf32() -> float:
    """TFLOP/s of cuBLAS's TF32 matmul at the largest of MATMUL_SIZES, cubed, timed by do_bench."""
    n = max(bench.MATMUL_SIZES)
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        ms = do_bench(lambda: a @ b, warmup=bench.WARMUP_MS, rep=bench.REP_MS)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    return 2 * n**3 / ms / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--free-gib", type=float, default=None, help="pretend this much is free")
    args = parser.parse_args()
    print(torch.cuda.get_device_name(), flush=True)
    free = None if args.free_gib is None else int(args.free_gib * 2**30)
    for r in range(args.rounds):
        torch.cuda.reset_peak_memory_stats()
        started = time.perf_counter()
        calibration = bench.calibrate(timer_commands.played_alone, free_bytes=free)
        took = time.perf_counter() - started
        memory = torch.cuda.max_memory_allocated() / 2**30
        peaks = ", ".join(f"{k} {v:.1f}" for k, v in calibration["peaks_tflops"].items())
        curve = ", ".join(
            f"{int(k) >> 20} MiB {v:.0f}" for k, v in calibration["copy_curve"].items()
        )
        print(f"round {r}: the judge's loop, {took:.1f} s, {memory:.1f} GiB at most", flush=True)
        print(f"  peaks (TFLOP/s): {peaks}", flush=True)
        print(f"  copies (GB/s): {curve}; read {calibration['read_gbps']:.0f}", flush=True)
        print(f"  TF32 back to back (do_bench): {back_to_back_tf32():.1f} TFLOP/s", flush=True)


if __name__ == "__main__":
    main()
