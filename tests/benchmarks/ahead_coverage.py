"""How much of each shipped solution compiles ahead, printed (not asserted):

    python tests/benchmarks/ahead_coverage.py [--puzzles vector_add,softmax]

For every correct solution of the catalogue (or of the puzzles named), one compile ahead as a
batch makes it (judge.workers.ahead: a confined worker with no GPU, the puzzle's visible test
sizes and benchmark shapes): the calls that went through of those sent, the first error of
those that stopped, and the seconds. Runs without a GPU as well (the target is then an H100's),
into a fresh cache of its own. With --judge (a GPU), each file is then judged as
`tpuzzle run --no-server` judges it, and the line adds the first case's call (where a kernel's
first launch loads or compiles it) and what its worker still compiled: the cache's kernels
(.cubin) and host modules (.so) that were not there before.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from test_ahead import H100  # noqa: E402 - an H100's target, where this machine has no GPU


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--puzzles", default="", help="comma-separated ids (default: all)")
    parser.add_argument("--judge", action="store_true", help="then judge each file (a GPU)")
    args = parser.parse_args()
    os.environ["TPUZZLE_CACHE"] = tempfile.mkdtemp(prefix="tpuzzle-ahead-coverage-")
    sys.path.insert(0, str(ROOT))
    from judge.core import registry
    from judge.judging.batch import ahead_calls
    from judge.workers import launcher
    from judge.workers.channel import WorkerFailure

    target = launcher.device_target(0)
    print(f"target: sm_{(target or H100)['arch']}{'' if target else ' (no GPU here)'}")
    root = ROOT / "puzzles"
    wanted = [p for p in args.puzzles.split(",") if p] or registry.puzzle_ids(root)
    whole = total = 0
    for puzzle in wanted:
        spec = registry.get(puzzle, root)
        calls = ahead_calls(spec)
        for path in sorted((spec.directory / "solutions" / "correct").glob("*.py")):
            started = time.perf_counter()
            worker = launcher.launch_ahead(
                spec.directory / "puzzle.yaml", path, target or H100, calls
            )
            if worker is None:
                sys.exit("no compile ahead here: not confined, or turned off")
            try:
                answer = worker.expect("compiled", 600, "compiling ahead")
                line = f"{answer['calls']}/{len(calls)} calls"
                if answer["stopped"]:
                    line += f", stopped: {answer['first_stop']}"
                whole += not answer["stopped"]
            except WorkerFailure as exc:
                line = f"failed: {exc}"
            finally:
                launcher.discard(worker)
            total += 1
            took = time.perf_counter() - started
            if args.judge:
                line += "; " + judged(puzzle, path, launcher.compiled_dir(path, dict(os.environ)))
            print(f"{puzzle}/{path.name}: {line} ({took:.1f} s)", flush=True)
    print(f"{whole} of {total} solutions compiled ahead whole")


def judged(puzzle: str, path: Path, kept: Path) -> str:
    """The file judged in a new process; its first case's call and what its worker compiled."""

    def built() -> set[Path]:
        return {p for pattern in ("*.cubin", "*.so") for p in kept.rglob(pattern)}

    before = built()
    command = [sys.executable, "-m", "judge", "run", puzzle, str(path), "--json", "--no-save"]
    done = subprocess.run([*command, "--no-server"], capture_output=True, text=True, cwd=ROOT)
    try:
        report = json.loads(done.stdout)
    except ValueError:
        return f"judging failed: {done.stderr.strip().splitlines()[-1:]}"
    new = sorted(p.name for p in built() - before)
    first = (report.get("phases") or {}).get("case_call")
    compiled = ", ".join(new) or "nothing"
    return f"judged {report.get('verdict')}, case_call {first} s, compiled there: {compiled}"


if __name__ == "__main__":
    main()
