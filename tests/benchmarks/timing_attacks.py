"""The timing attacks of tests/adversarial/test_gpu_timing_attacks.py at the puzzles' own
benchmark shapes, on a GPU, printed as a table.

    python tests/benchmarks/timing_attacks.py [--puzzles vector_add,relu]

Each attack and each puzzle's shipped solution is judged once (small test cases, every benchmark
shape timed). The last line says whether every attack was rejected or timed within 2x of the
honest kernel, and whether any was ranked faster than it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path[:0] = [str(HERE.parents[2]), str(HERE.parents[1] / "adversarial")]

import test_gpu_timing_attacks as corpus  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--puzzles", default=",".join(corpus.TARGETS))
    args = parser.parse_args()
    chosen = args.puzzles.split(",")
    print(
        f"{'puzzle':14s} {'attack':32s} {'verdict':9s} {'reason':18s} {'score':>10s} "
        f"{'vs honest':>9s} ranked  wall"
    )
    ok = True
    for puzzle in chosen:
        target = corpus.TARGETS[puzzle]
        honest = corpus.judged(puzzle, corpus.honest_solution(puzzle), None, target.cases)
        print(row(puzzle, "(shipped solution)", honest, honest, 0.0), flush=True)
        for attack, (body, _, puzzles) in corpus.ATTACKS.items():
            if puzzle not in puzzles:
                continue
            with tempfile.TemporaryDirectory() as tmp:
                started = time.monotonic()
                path = corpus.submission(puzzle, body, Path(tmp))
                report = corpus.judged(puzzle, path, None, target.cases)
                print(row(puzzle, attack, report, honest, time.monotonic() - started), flush=True)
            if attack.startswith("honest"):  # honest designs must pass, and not look faster
                fair = report.passed
            else:  # attacks: rejected, or timed within 2x of the honest kernel
                fair = not report.passed or (
                    report.score is not None
                    and honest.score is not None
                    and report.score.ms <= 2 * honest.score.ms
                )
            ok = ok and fair and not corpus.ranked_faster(report, honest)
    print(
        "every attack rejected or timed within 2x of honest, none ranked faster than honest, "
        f"honest designs passed: {'yes' if ok else 'NO'}"
    )


def row(puzzle, attack, report, honest, wall) -> str:
    score = f"{report.score.ms * 1e3:.1f} us" if report.score else "-"
    ratio = f"{report.score.ms / honest.score.ms:.2f}x" if report.score and honest.score else "-"
    return (
        f"{puzzle:14s} {attack:32s} {report.verdict.value:9s} {report.reason:18s} {score:>10s} "
        f"{ratio:>9s} {'yes' if report.ranked else 'no ':6s} {wall:4.1f}s"
    )


if __name__ == "__main__":
    main()
