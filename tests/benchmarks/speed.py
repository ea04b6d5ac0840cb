"""Where the judge's time goes, and how it compares with the targets, printed (not asserted):

    python tests/benchmarks/speed.py [--runs 4] [--skip-bench] [--bench-runs 2] [--skip-grade]
        [--students 40] [--server-only]

Times, each from a new process as a user would start it:
- a warm `tpuzzle run vector_add plain.py`: through the judge server (warm after its first run)
  and in-process (`--no-server`), with the judge's own phases of each run;
- the whole catalogue, `tpuzzle bench --jsonl` in one process, with each puzzle's wall time and
  phases as its line arrives, --bench-runs times (on a fresh machine the first compiles every
  kernel and keeps the slow truths on disk: the second is the warm figure), each after a line
  of what the truth store holds and the disk's room (it keeps no more below its floor);
- grading a class of 40 vector_add submissions on one GPU (tests/benchmarks/grade_class.py).
The calibration and reference times are cached first by one untimed run, as in the targets.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from judge.core import truth_store  # noqa: E402

PLAIN = ROOT / "puzzles/vector_add/solutions/correct/plain.py"
TARGETS = {"run": 2.0, "bench": 60.0, "grade": 1.5}


def tpuzzle(*args: str, env: dict, check: bool = True) -> tuple[float, str, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "judge", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    if check and done.returncode not in (0, 1):
        sys.exit(f"tpuzzle {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, done.stdout, done.stderr


def phases_line(phases: dict) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in phases.items() if v >= 0.01)


def warm_runs(env: dict, runs: int, modes: tuple[str, ...]) -> None:
    print("\n## tpuzzle run vector_add plain.py --json --no-save (new process each)")
    for mode in modes:
        walls = []
        for i in range(runs):
            wall, out, _ = tpuzzle(
                "run", "vector_add", str(PLAIN), "--json", "--no-save", mode, env=env
            )
            report = json.loads(out)
            walls.append(wall)
            outside = wall - report["wall_s"]
            print(
                f"{mode:12s} run {i + 1}: {wall:5.2f} s wall, judge {report['wall_s']:.2f} s, "
                f"outside the judge {outside:.2f} s; {report['verdict']}, "
                f"ranked {report['ranked']}; "
                f"{phases_line(report['phases'])}",
                flush=True,
            )
        warm = sorted(walls[1:])[len(walls[1:]) // 2] if len(walls) > 1 else walls[0]
        print(f"{mode:12s} warm median {warm:.2f} s (target <= {TARGETS['run']:g} s)")


def whole_catalogue(env: dict, out: Path) -> None:
    print("\n## tpuzzle bench (every puzzle, one process) --jsonl")
    # a warm run reads the slow truths back from the disk store, when it had room to keep them
    print(truth_store.usage().line())
    stream = out / "bench.jsonl"
    wall, _, err = tpuzzle("bench", "--json", "--no-save", "--jsonl", str(stream), env=env)
    totals: dict[str, float] = defaultdict(float)
    for line in stream.read_text().splitlines():
        entry = json.loads(line)
        report = entry.get("report")
        if not report:
            continue
        for phase, seconds in report["phases"].items():
            totals[phase] += seconds
        print(
            f"{report['puzzle']:20s} {report['verdict']:8s} {report['wall_s']:6.2f} s  "
            f"{phases_line(report['phases'])}",
            flush=True,
        )
    print(f"whole catalogue: {wall:.1f} s wall (target <= {TARGETS['bench']:g} s)")
    print(f"phases summed over puzzles: {phases_line(dict(totals))}")
    alone = totals.get("device_alone", 0.0)  # timing sections never overlap on one device
    print(f"the device held by one judging alone: {alone:.1f} s of the {wall:.1f} s wall")


def grade(students: int, out: Path) -> None:
    print(f"\n## grading {students} vector_add submissions, one GPU")
    script = ROOT / "tests/benchmarks/grade_class.py"
    done = subprocess.run(
        [sys.executable, str(script), "--students", str(students), "--out", str(out / "grade")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    print(done.stdout.strip() or done.stderr[-2000:])
    print(f"(target <= {TARGETS['grade']:g} s per submission)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--skip-bench", action="store_true")
    parser.add_argument("--bench-runs", type=int, default=1, help="catalogue runs, one by one")
    parser.add_argument("--skip-grade", action="store_true")
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--server-only", action="store_true", help="no --no-server runs")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="tpuzzle-speed-"))
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT), TPUZZLE_DB=str(out / "results.db"))
    wall, _, _ = tpuzzle("run", "vector_add", str(PLAIN), "--json", "--no-save", env=env)
    print(f"untimed first run (calibration, reference times, server start): {wall:.1f} s")
    warm_runs(env, args.runs, ("--server",) if args.server_only else ("--server", "--no-server"))
    for _ in range(0 if args.skip_bench else args.bench_runs):
        whole_catalogue(env, out)
    if not args.skip_grade:
        grade(args.students, out)
    tpuzzle("server", "stop", env=env, check=False)


if __name__ == "__main__":
    main()
