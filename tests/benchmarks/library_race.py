"""Every shipped solution (and any draft) of a puzzle against its library calls, at the
benchmark shapes, on a GPU; printed, not asserted:

    python tests/benchmarks/library_race.py [--puzzles sort,prefix_sum] [--drafts DIR]
        [--sustained [--reps 100]] [--out FILE]

A quick way to compare kernels while writing them, without the judge's cases. Each shape gets
three input sets, drawn from the shape's seed and the two after it (the judge draws its own from
seeds it keeps), and the library's first answer on each as its truth. Each solution runs once
and is compared with it (the largest relative error is printed). Then every call, the library's
and the solutions', is timed in the judge's own timing loop (`judge.workers.player.timed`): the
set's outputs reset, the L2 cache flushed, a head start on the device, CUDA events around the
call, every buffer checked after it (the wrong calls are printed). So the library's figure and a
solution's come from one loop, as in the judge, where the solution's calls are replayed from a
recording instead of called. The library calls are the reference's and every `LIBRARY` entry of
reference.py. `--drafts DIR` adds DIR/<puzzle>/*.py to the shipped solutions. The judge's own
figures come from `tpuzzle run`.

`--sustained` times `--reps` calls back to back instead, as `triton.testing.do_bench` does (the
L2 cache flushed before each, no reset, no head start, no check). The tensor cores then never
rest, so a kernel that draws more power than the board allows runs at a lower clock than in the
judge's timing. The sets are not reset between calls: a solution whose call changes its own
inputs is timed on what it left there.
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
from judge.workers import player  # noqa: E402

SETS = 3  # input sets a shape's calls rotate through (the judge's timer: two or three)


def shape_sets(spec, case) -> list[player.CheckedSet]:
    """A benchmark shape's input sets on the device, as the judge's timer holds them."""
    sizes = case.size_map
    tolerance = spec.tolerance.at(sizes)
    return [
        player.CheckedSet(spec, sizes, inputs.pristine(spec, sizes, case.seed + j), None, tolerance)
        for j in range(SETS)
    ]


def timed(call, sets: list[player.CheckedSet], reps: int) -> tuple[list[float], int]:
    """Milliseconds per call and the calls that got anything wrong, in the judge's own timing
    loop (its budgets of calls, not `reps`)."""
    result = player.timed(call, sets)
    return result["times"], result["wrong_calls"]


def sustained(call, sets: list[player.CheckedSet], reps: int) -> tuple[list[float], None]:
    """Milliseconds per call, the calls back to back (only the L2 flush between them)."""
    cache = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for one in sets:
        one.reset()
    for j in range(3):
        one = sets[j % len(sets)]
        call.play(one.bases, one.scratch)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        one = sets[i % len(sets)]
        cache.zero_()
        starts[i].record()
        call.play(one.bases, one.scratch)
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)], None


def error(got: dict, want: dict) -> float:
    """The largest error relative to the answer's scale, over every output."""
    worst = 0.0
    for name, g in got.items():
        w = want[name].double()
        scale = float(w.abs().max()) or 1.0
        worst = max(worst, float((g.double() - w).abs().nan_to_num(nan=float("inf")).max()) / scale)
    return worst


def outputs(one: player.CheckedSet) -> dict:
    """The output buffers of a set, without their guard bands."""
    return {
        lay.arg.name: inputs.data_view(one.fulls[lay.arg.name], lay)
        for lay in one.layouts
        if lay.arg.role != "in"
    }


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
        sets = shape_sets(spec, case)
        for k, (label, fn) in enumerate(library.items()):
            call = player.LibraryCall(fn, spec, sizes, sets)
            if k == 0:  # the reference's answers are every call's truths
                for one in sets:
                    one.own_answers(call)
            times, wrong = timer(call, sets, reps)
            rows.append(_row(spec, case, "library: " + label, times, None, wrong))
        for path in files:
            label = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            try:
                solve = import_file(path, f"race_{spec.id}_{path.stem}").solve
                call = player.LibraryCall(solve, spec, sizes, sets, pointers=True)
                first = sets[0]
                call.play(first.bases, first.scratch)  # compiles and tunes (in place)
                first.reset()
                call.play(first.bases, first.scratch)
                torch.cuda.synchronize()
                err = error(outputs(first), first.truths)
                times, wrong = timer(call, sets, reps)
                rows.append(_row(spec, case, str(label), times, err, wrong))
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
        del sets
        torch.cuda.empty_cache()
    return rows


def _row(spec, case, who: str, times: list[float], err: float | None, wrong: int | None) -> dict:
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
        "wrong_calls": wrong,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--puzzles", default="sort,prefix_sum,matmul,gemm_fp16,matrix_copy,causal_attention"
    )
    parser.add_argument("--drafts", type=Path, default=None)
    parser.add_argument("--reps", type=int, default=100, help="calls timed with --sustained")
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
            if r["wrong_calls"]:
                err += f" WRONG in {r['wrong_calls']} timed calls"
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
