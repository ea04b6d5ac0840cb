"""Where one `tpuzzle run` spends its time, parent, worker and timer, printed (not asserted):

    python tests/benchmarks/profile_run.py [PUZZLE] [SUBMISSION] [--top 25] [--repeat 2]

Runs the judge in this process under cProfile, with TPUZZLE_PROFILE_DIR set so that the worker
and the timer (on the GPU) profile themselves too, and prints the functions with the most
cumulative time in each. With --repeat N it judges N times and profiles the last, as a batch
sees its later submissions (caches warm); the phases of every run are printed.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("puzzle", nargs="?", default="vector_add")
    parser.add_argument("submission", nargs="?", type=Path, default=None)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    from judge.core import registry
    from judge.judging import runner

    spec = registry.get(args.puzzle, registry.puzzles_root())
    submission = args.submission or sorted((spec.directory / "solutions/correct").glob("*.py"))[0]
    out = Path(tempfile.mkdtemp(prefix="tpuzzle-profile-"))
    os.environ["TPUZZLE_PROFILE_DIR"] = str(out)
    options = runner.RunOptions(timing=not args.no_timing)
    for _ in range(args.repeat - 1):
        report = runner.judge(spec, submission, options)
        print(f"{report.verdict} {report.reason} in {report.wall_s:.1f} s; phases {report.phases}")
    profile = cProfile.Profile()
    report = profile.runcall(runner.judge, spec, submission, options)
    print(f"{report.verdict} {report.reason} in {report.wall_s:.1f} s; phases {report.phases}")
    print("\n---- parent")
    pstats.Stats(profile).sort_stats("cumulative").print_stats(args.top)
    for side in ("worker", "timer"):
        print(f"\n---- {side}")
        found = out / f"{side}.prof"
        if found.exists():
            pstats.Stats(str(found)).sort_stats("cumulative").print_stats(args.top)
        else:
            print(f"(no {side} profile)")


if __name__ == "__main__":
    main()
