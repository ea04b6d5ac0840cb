"""Every shipped solution (and any draft) of a puzzle against its library calls, at the
benchmark shapes, on a GPU; printed, not asserted:

    python tests/benchmarks/library_race.py [--puzzles sort,prefix_sum] [--drafts DIR]
        [--reps 100] [--sustained] [--out FILE]

A quick way to compare kernels while writing them, without the judge's cases: each solution
runs once on the benchmark's inputs and is compared with the library's answer (the largest
relative error is printed), then each call is timed as the judge's timer does it: the buffers
restored, the L2 cache flushed, a head start on the device, CUDA events around the call. The
library calls are the reference's and every `LIBRARY` entry of reference.py. `--drafts DIR`
adds DIR/<puzzle>/*.py to the shipped solutions. The judge's own figures come from `tpuzzle run`.

`--sustained` times the calls back to back instead, as `triton.testing.do_bench` does (the L2
cache flushed before each, no restore, no head start). The tensor cores then never rest, so a
kernel that draws more power than the board allows runs at a lower clock than in the judge's
timing, where each call follows a restore, a flush and a head start in which they idle. The
buffers are not restored between calls: a solution whose call changes its own inputs is timed
on what it left there.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import traceback
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from judge.core import bench, inputs, registry  # noqa: E402
from judge.core.loader import import_file  # noqa: E402
from judge.core.truth import load_reference  # noqa: E402

HEAD_START_US = 300


class Buffers:
    """One benchmark shape's buffers on the device, restorable to their state before a call."""

    def __init__(self, spec, sizes: dict, seed: int):
        self.layouts = [lay for lay in inputs.layouts(spec, sizes)]
        initial = inputs.pristine(spec, sizes, seed)
        self.start, self.now = {}, {}
        for lay in self.layouts:
            name = lay.arg.name
            if name in initial:
                first = initial[name].to("cuda")
            else:
                first = (
                    torch.full(
                        (lay.n,),
                        float("nan"),
                        dtype=inputs.torch_dtype(lay.arg.dtype),
                        device="cuda",
                    )
                    if lay.arg.dtype.startswith(("float", "bfloat"))
                    else torch.zeros(lay.n, dtype=inputs.torch_dtype(lay.arg.dtype), device="cuda")
                )
            self.start[name] = first
            self.now[name] = first.clone()

    def reset(self) -> None:
        for lay in self.layouts:
            if lay.arg.role != "in":
                self.now[lay.arg.name].copy_(self.start[lay.arg.name])

    def outputs(self) -> dict:
        return {
            lay.arg.name: self.now[lay.arg.name] for lay in self.layouts if lay.arg.role != "in"
        }


def timed(fn, buffers: Buffers, reps: int) -> list[float]:
    """Milliseconds per call, as the judge's timer measures a replay."""
    cache = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    cycles = int(HEAD_START_US * bench._clock_khz(_driver()) / 1000)
    for _ in range(3):
        buffers.reset()
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        buffers.reset()
        cache.zero_()
        torch.cuda._sleep(cycles)
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)]


def sustained(fn, buffers: Buffers, reps: int) -> list[float]:
    """Milliseconds per call, the calls back to back (only the L2 flush between them)."""
    cache = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    buffers.reset()
    for _ in range(3):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        cache.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)]


def _driver():
    from triton import runtime

    return runtime.driver.active


def error(got: dict, want: dict) -> float:
    """The largest error relative to the answer's scale, over every output."""
    worst = 0.0
    for name, g in got.items():
        w = want[name].double()
        scale = float(w.abs().max()) or 1.0
        worst = max(worst, float((g.double() - w).abs().nan_to_num(nan=float("inf")).max()) / scale)
    return worst


def race(spec, drafts: Path | None, reps: int, timer=timed) -> list[dict]:
    module = import_file(spec.directory / "reference.py", f"race_reference_{spec.id}")
    reference = load_reference(spec)
    library = {f"{spec.library or 'reference'}": reference, **getattr(module, "LIBRARY", {})}
    files = sorted((spec.directory / "solutions" / "correct").glob("*.py"))
    if drafts is not None:
        files += sorted((drafts / spec.id).glob("*.py"))
    rows = []
    for case in spec.benchmarks:
        sizes = case.size_map
        buffers = Buffers(spec, sizes, case.seed)
        tensors = [buffers.now[a.name] if a.is_buffer else None for a in spec.args]
        args_t = inputs.call_args(spec, sizes, {n: t for n, t in buffers.now.items()})
        args_p = inputs.call_args(spec, sizes, {n: t.data_ptr() for n, t in buffers.now.items()})
        del tensors
        want = None
        for label, fn in library.items():
            buffers.reset()
            fn(*args_t)
            torch.cuda.synchronize()
            if want is None:
                want = {k: v.clone() for k, v in buffers.outputs().items()}
            times = timer(lambda fn=fn, args=args_t: fn(*args), buffers, reps)
            rows.append(_row(spec, case, "library: " + label, times, None))
        for path in files:
            label = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            try:
                solve = import_file(path, f"race_{spec.id}_{path.stem}").solve
                solve(*args_p)  # compiles and tunes (an autotuner tries its configs in place)
                buffers.reset()
                solve(*args_p)
                torch.cuda.synchronize()
                err = error(buffers.outputs(), want)
                times = timer(lambda solve=solve, args=args_p: solve(*args), buffers, reps)
                rows.append(_row(spec, case, str(label), times, err))
            except Exception as exc:  # a draft that fails is reported, the race goes on
                traceback.print_exc(limit=3)
                rows.append(
                    {
                        "puzzle": spec.id,
                        "case": case.name,
                        "who": str(label),
                        "failed": f"{type(exc).__name__}: {exc}"[:300],
                    }
                )
        best_library = min(
            r["median_us"]
            for r in rows
            if r.get("case") == case.name and r["who"].startswith("library") and "median_us" in r
        )
        for r in rows:
            if r.get("case") == case.name and "median_us" in r:
                r["vs_library"] = best_library / r["median_us"]
        del buffers
        torch.cuda.empty_cache()
    return rows


def _row(spec, case, who: str, times: list[float], err: float | None) -> dict:
    median = statistics.median(times)
    work = bench.work(spec, case.size_map)
    return {
        "puzzle": spec.id,
        "case": case.name,
        "who": who,
        "median_us": median * 1e3,
        "p20_us": sorted(times)[len(times) // 5] * 1e3,
        "p80_us": sorted(times)[4 * len(times) // 5] * 1e3,
        "rate": work / (median * 1e-3) / 1e9 if work else None,
        "max_rel_error": err,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--puzzles", default="sort,prefix_sum,matmul,gemm_fp16,matrix_copy,causal_attention"
    )
    parser.add_argument("--drafts", type=Path, default=None)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--sustained", action="store_true", help="the calls back to back")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    how = "back to back (--sustained)" if args.sustained else "each from rest, as the judge"
    print(f"# {torch.cuda.get_device_name()}, timed {how}", flush=True)
    for pid in args.puzzles.split(","):
        spec = registry.get(pid, ROOT / "puzzles")
        rows = race(spec, args.drafts, args.reps, sustained if args.sustained else timed)
        for r in rows:
            if "failed" in r:
                print(f"{r['puzzle']:16s} {r['case']:28s} {r['who']:60s} FAILED {r['failed']}")
                continue
            err = "" if r["max_rel_error"] is None else f"err {r['max_rel_error']:.1e}"
            print(
                f"{r['puzzle']:16s} {r['case']:28s} {r['who']:60s} {r['median_us']:9.1f} us "
                f"[{r['p20_us']:.1f}-{r['p80_us']:.1f}] {r['vs_library']:5.2f}x lib  {err}",
                flush=True,
            )
        if args.out:
            with args.out.open("a") as f:
                for r in rows:
                    f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
