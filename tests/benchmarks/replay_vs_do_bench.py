"""What the timer's replay costs and gives: the judge's median for a shipped solution (recorded in
its worker, replayed and checked in the timer) beside a plain `triton.testing.do_bench` of the
same solve() on the same shape, in this process, on a GPU.

    python tests/benchmarks/replay_vs_do_bench.py [--puzzles vector_add,matmul] [--all]

Prints one row per benchmark shape: the two medians, their ratio, the launches replayed, and
the judge's verdict. Single-launch solutions should agree within 5%.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[2]))

import torch  # noqa: E402
from triton.testing import do_bench  # noqa: E402

from judge.core import inputs, registry  # noqa: E402
from judge.judging import runner  # noqa: E402

DEFAULT = "vector_add,reduction,histogram,conv2d,matmul,softmax_rows,prefix_sum,sort"


def plain(spec, case, path: Path) -> float:
    """do_bench's median of solve() on one input set of the shape (L2 flushed as do_bench does)."""
    loaded = importlib.util.spec_from_file_location("solution", path)
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    sizes = case.size_map
    initial = inputs.pristine(spec, sizes, case.seed, case.draw)
    views = {}
    for lay in inputs.layouts(spec, sizes):
        start = initial.get(lay.arg.name)
        views[lay.arg.name] = (
            start.to("cuda")
            if start is not None
            else torch.empty(lay.n, dtype=inputs.torch_dtype(lay.arg.dtype), device="cuda")
        )
    args = inputs.call_args(spec, sizes, views, case.draw)
    pointers = [a.data_ptr() if hasattr(a, "data_ptr") else a for a in args]
    module.solve(*pointers)
    torch.cuda.synchronize()
    return statistics.median(do_bench(lambda: module.solve(*pointers), return_mode="all"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--puzzles", default=DEFAULT)
    parser.add_argument("--all", action="store_true", help="every puzzle of the catalogue")
    args = parser.parse_args()
    root = registry.puzzles_root()
    chosen = [s.id for s in registry.load_all(root)] if args.all else args.puzzles.split(",")
    print(
        f"{'puzzle':18s} {'shape':24s} {'judge us':>10s} {'do_bench us':>12s} {'ratio':>6s} "
        f"{'launches':>8s}  verdict",
        flush=True,
    )
    for puzzle in chosen:
        spec = registry.get(puzzle, root)
        path = sorted((spec.directory / "solutions" / "correct").glob("*.py"))[-1]
        report = runner.judge(spec, path, runner.RunOptions())
        for timing, case in zip(report.timing, spec.benchmarks, strict=False):
            base = plain(spec, case, path)
            ratio = timing.median_ms / base if base else float("nan")
            print(
                f"{puzzle:18s} {timing.case[:24]:24s} {timing.median_ms * 1e3:10.1f} "
                f"{base * 1e3:12.1f} {ratio:6.3f} {timing.launches or 0:8g}  "
                f"{report.verdict.value} {report.reason}",
                flush=True,
            )
        if not report.timing:
            print(
                f"{puzzle:18s} {'-':24s} {'':>10s} {'':>12s} {'':>6s} {'':>8s}  "
                f"{report.verdict.value} {report.reason}: {report.message[:200]}",
                flush=True,
            )


if __name__ == "__main__":
    main()
