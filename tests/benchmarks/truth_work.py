"""The parent's work on a puzzle's truths for one timed judging, printed (not asserted):

    python tests/benchmarks/truth_work.py [--puzzles fused_mul_add_sqrt,vector_add] [--runs 2]

For each puzzle, in a new process each run: every case's and every benchmark set's truth
(read back from the truth store where kept, else drawn and computed), then the files of every
command a timed judging sends (the worker's sealed inputs, the timer's inputs and expected
outputs), timed in turn. The first run of a puzzle keeps its slow truths; the later ones show
what a warm `tpuzzle bench` spends on them. Runs on a machine without a GPU.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

ONE_RUN = """
import sys, time
from dataclasses import replace
from pathlib import Path
from judge.core import registry
from judge.core.truth import load_reference
from judge.judging.plan import Plan
from judge.judging.truths import Truths

spec = registry.get(sys.argv[1], registry.puzzles_root())
plan = Plan(spec, Path("solution.py"), "", False, Truths(spec, load_reference(spec)))
cases, timed = plan.tests(None, False), plan.benchmarks(False)
started = time.perf_counter()
for case in plan.wanted(cases, timed):
    plan.truths.get(case)
got = time.perf_counter()
for case in timed:
    plan.reference_command(case)
for case in cases:
    plan.case_command(case, case.seed)
    plan.check_command(case, "case", {"steps": []}, Path("kernels"))
for case in timed:
    plan.bench_command(case, False)
    plan.prepare_command(case, "bench")
ended = time.perf_counter()
print(f"truths {got - started:.2f} s, files {ended - got:.2f} s, in all {ended - started:.2f} s")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--puzzles", default="fused_mul_add_sqrt,vector_add")
    parser.add_argument("--runs", type=int, default=2, help="new processes per puzzle")
    args = parser.parse_args()
    for puzzle in [p for p in args.puzzles.split(",") if p]:
        for run in range(args.runs):
            done = subprocess.run(
                [sys.executable, "-c", ONE_RUN, puzzle], cwd=ROOT, capture_output=True, text=True
            )
            line = done.stdout.strip() or done.stderr.strip().splitlines()[-1]
            print(f"{puzzle:22s} run {run + 1}: {line}", flush=True)


if __name__ == "__main__":
    main()
