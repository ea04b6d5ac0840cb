"""Grading a class on the GPU, printed (not asserted): run on a CUDA machine with

    python tests/benchmarks/grade_class.py [--students 40] [--gpus 0] [--gpus all] ...

Builds a class of vector_add submissions, half of them correct (the shipped solutions) and half
wrong or crashing (every known-wrong solution in turn: wrong answers, a sys.exit, a segfault, an
illegal address, an endless loop, a kernel that never ends, ...), then times one
`tpuzzle grade CLASS --gpus G` per --gpus value (and per --per-gpu value), each a new process
with an empty results database, and prints the wall time per submission, the speed-up of
each over the first, and the largest phases summed over the files (where the lanes' time
went). With --unconfined-too, each is graded a second time with the workers unconfined
(TPUZZLE_CONFINE=0 and --unconfined): what confinement costs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "puzzles" / "vector_add" / "solutions"


def build_class(directory: Path, students: int) -> Counter:
    """students / 2 correct submissions, the rest cycling through the known-wrong ones."""
    correct = sorted((SOLUTIONS / "correct").glob("*.py"))
    wrong = sorted((SOLUTIONS / "wrong").glob("*.py"))
    kinds: Counter = Counter()
    for i in range(students):
        source = correct[(i // 2) % len(correct)] if i % 2 == 0 else wrong[(i // 2) % len(wrong)]
        student = directory / f"student{i:03d}"
        student.mkdir(parents=True)
        shutil.copy(source, student / "vector_add.py")
        kinds[source.parent.name] += 1
    return kinds


def grade(
    directory: Path, gpus: str, timeout: float, out: Path, confined: bool = True, per_gpu: int = 0
) -> tuple[float, dict]:
    label = f"gpus-{gpus.replace(',', '_')}{'' if confined else '-unconfined'}"
    label += f"-per{per_gpu}" if per_gpu else ""
    env = dict(os.environ, PYTHONPATH=str(ROOT), TPUZZLE_DB=str(out / f"{label}.db"))
    env["TPUZZLE_CONFINE"] = "1" if confined else "0"
    report = out / f"{label}.json"
    command = [sys.executable, "-m", "judge", "grade", str(directory), "--gpus", gpus]
    command += ["--timeout", str(timeout), "--json", str(report)]
    command += [] if confined else ["--unconfined"]
    command += ["--per-gpu", str(per_gpu)] if per_gpu else []
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"grade --gpus {gpus} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, json.loads(report.read_text())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--gpus", action="append", default=None)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per phase")
    parser.add_argument("--out", type=Path, default=None, help="keep the JSON reports here")
    parser.add_argument("--unconfined-too", action="store_true", help="also grade unconfined")
    parser.add_argument(
        "--per-gpu", type=int, action="append", default=None, help="lanes per GPU (each value)"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tpuzzle-class-"))
    out = args.out or work
    out.mkdir(parents=True, exist_ok=True)
    kinds = build_class(work / "class", args.students)
    print(f"class: {args.students} vector_add submissions ({dict(kinds)})", flush=True)
    first = None
    runs = [(g, True, p) for g in args.gpus or ["0"] for p in args.per_gpu or [0]]
    if args.unconfined_too:
        runs += [(g, False, p) for g, _, p in runs]
    for gpus, confined, per_gpu in runs:
        wall, document = grade(work / "class", gpus, args.timeout, out, confined, per_gpu)
        verdicts = Counter(e["report"]["verdict"] for e in document["entries"])
        first = first or wall
        print(
            f"--gpus {gpus:5s} {f'--per-gpu {per_gpu} ' if per_gpu else ''}"
            f"{'confined  ' if confined else 'unconfined'} {wall:6.1f} s in all, "
            f"{wall / args.students:5.2f} s per submission, {first / wall:4.2f}x the first; "
            f"verdicts {dict(verdicts)}",
            flush=True,
        )
        print(f"  phases summed over the files: {phases_line(document)}", flush=True)


def phases_line(document: dict, top: int = 10) -> str:
    """The largest phases of a grading, each summed over its files (seconds of lane time: a
    phase that waits, such as device_wait, is counted in each lane that waits)."""
    summed: Counter = Counter()
    for entry in document["entries"]:
        for phase, seconds in (entry["report"].get("phases") or {}).items():
            summed[phase] += seconds
    return ", ".join(f"{phase} {seconds:.1f}" for phase, seconds in summed.most_common(top))


if __name__ == "__main__":
    main()
