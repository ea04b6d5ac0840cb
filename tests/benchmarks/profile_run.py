"""Where one `tpuzzle run` spends its time, parent and worker, printed (not asserted):

    python tests/benchmarks/profile_run.py [PUZZLE] [SUBMISSION] [--top 25] [--repeat 2]

Runs the judge in this process under cProfile, with TPUZZLE_PROFILE_DIR set so that the worker
profiles itself too, and prints the functions with the most cumulative time on each side. With
--repeat N it judges N times and profiles the last, as a batch sees its later submissions (caches
warm); the phases of every run are printed.
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
    print("\n---- worker")
    worker = out / "worker.prof"
    if worker.exists():
        pstats.Stats(str(worker)).sort_stats("cumulative").print_stats(args.top)
    else:
        print("(no worker profile)")


if __name__ == "__main__":
    main()
