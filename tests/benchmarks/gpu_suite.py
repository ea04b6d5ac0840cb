"""The gpu-marked tests of every puzzle, spread over several pytest processes on one GPU.

    python tests/benchmarks/gpu_suite.py --jobs 8 --logs gpu_logs [--ids FILE]

Each process takes whole puzzles (a puzzle's correct and wrong solutions share its references),
puzzles with the most tests first. The timed test (`test_timed_run_on_gpu`) is left out: timings
taken side by side mean nothing; run it alone with `-m gpu -k timed`. Prints one line per puzzle
and the failures, and exits non-zero when any test failed.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = "tests/test_puzzles.py"


def collect() -> dict[str, list[str]]:
    """Node ids of the untimed gpu tests, by puzzle."""
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "gpu", TESTS,
               "-k", "not timed", "-p", "no:cacheprovider"]  # fmt: skip
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    by_puzzle = collections.defaultdict(list)
    for line in out.stdout.splitlines():
        match = re.match(r"\S+::\w+\[(\w+)(?:/[\w.-]+)?\]$", line.strip())
        if match:
            by_puzzle[match.group(1)].append(line.strip())
    return dict(by_puzzle)


def share(by_puzzle: dict[str, list[str]], jobs: int) -> list[list[str]]:
    """Whole puzzles into `jobs` groups, largest first, each to the group with the fewest tests."""
    groups: list[list[str]] = [[] for _ in range(jobs)]
    for pid in sorted(by_puzzle, key=lambda p: -len(by_puzzle[p])):
        min(groups, key=len).extend(by_puzzle[pid])
    return [g for g in groups if g]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--logs", type=Path, default=Path("gpu_logs"))
    parser.add_argument("--timeout", type=float, default=3600, help="seconds for the whole run")
    parser.add_argument("--ids", type=Path, help="only the node ids listed in this file")
    args = parser.parse_args()
    args.logs.mkdir(parents=True, exist_ok=True)
    by_puzzle = collect()
    if args.ids:
        only = set(args.ids.read_text().split())
        by_puzzle = {p: [t for t in ts if t in only] for p, ts in by_puzzle.items()}
        by_puzzle = {p: ts for p, ts in by_puzzle.items() if ts}
    groups = share(by_puzzle, args.jobs)
    threads = str(max(1, (os.cpu_count() or 2) // len(groups)))
    env = dict(os.environ, OMP_NUM_THREADS=threads, PYTHONPATH=str(ROOT))
    started = time.monotonic()
    procs = []
    for j, group in enumerate(groups):
        log = (args.logs / f"group{j}.log").open("w")
        command = [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", *group]
        procs.append((subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log), log))
    failed = 0
    for j, (proc, log) in enumerate(procs):
        left = max(1.0, args.timeout - (time.monotonic() - started))
        try:
            proc.wait(timeout=left)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        text = (args.logs / f"group{j}.log").read_text()
        summary = text.strip().splitlines()[-1] if text.strip() else "(no output)"
        print(f"group {j} ({len(groups[j])} tests, rc {proc.returncode}): {summary}")
        for line in text.splitlines():
            if line.startswith(("FAILED", "ERROR")):
                print("  " + line)
        failed += proc.returncode != 0
    print(f"{sum(map(len, groups))} tests in {len(groups)} processes: "
          f"{time.monotonic() - started:.0f} s")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
