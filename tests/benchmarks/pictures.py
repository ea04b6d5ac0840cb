"""One `tpuzzle run --visualize` picture per puzzle, drawn into a folder to be looked at (nothing
is asserted): run on any machine with matplotlib, in Triton's interpreter,

    python tests/benchmarks/pictures.py [OUT_DIR] [--only ID ...] [--choose]

Each puzzle is judged with one wrong solution from puzzles/<id>/solutions/wrong/ (one whose
mistake shows in the accesses, `out-of-bounds` or `unwritten`, where there is one; else the first
that fails rather than erring), or a correct one where it has none, and the picture is drawn as
`tpuzzle run --visualize` draws it: the case `pictured` picks among the failing ones, or with
--choose the one `visualize.choose` picks.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")  # before anything imports triton
os.environ["TPUZZLE_SERVER"] = "0"
os.environ.setdefault("TPUZZLE_DB", str(Path(tempfile.mkdtemp()) / "results.db"))

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SHOWN = ("out-of-bounds", "unwritten")  # verdicts of mistakes the accesses show, preferred


def expectation(path: Path) -> str:
    """The `# expect:` line of a solution file, without its marker."""
    for line in path.read_text().splitlines():
        if line.startswith("# expect:"):
            return line.removeprefix("# expect:").strip()
    return ""


def solution(puzzle: Path) -> Path:
    """The solution whose picture is drawn: a wrong one that fails, else a correct one."""
    wrong = sorted((puzzle / "solutions" / "wrong").glob("*.py"))
    failing = [w for w in wrong if expectation(w).startswith("failed")]
    shown = [w for v in SHOWN for w in failing if v in expectation(w)]
    return (shown or failing or sorted((puzzle / "solutions" / "correct").glob("*.py")))[0]


def picture(puzzle_id: str, out: Path, choose: bool) -> str:
    from judge.cli import visualize
    from judge.cli.app import pictured
    from judge.core import registry
    from judge.judging import client

    spec = registry.get(puzzle_id, ROOT / "puzzles")
    submission = solution(spec.directory)
    fields = client.run_fields(submission, True, False, None, None, None, False)
    result = client.judge_file(spec, submission, fields, use_server=False)
    chosen = None
    if choose:
        by_name = {c.name: c for c in spec.tests}
        failing = [
            dataclasses.replace(by_name[c.name], seed=c.seed)
            for c in result.cases
            if c.status not in ("passed", "skipped") and not c.hidden and c.name in by_name
        ]
        chosen = visualize.choose(spec, failing) if failing else None
    pictured(spec, submission, result, chosen, out / f"{puzzle_id}.png")
    return f"{submission.parent.name}/{submission.name}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=Path("pictures"))
    parser.add_argument("--only", nargs="*", default=None, help="these puzzle ids only")
    parser.add_argument("--choose", action="store_true", help="the case visualize.choose picks")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    ids = args.only or sorted(p.parent.name for p in (ROOT / "puzzles").glob("*/puzzle.yaml"))
    for puzzle_id in ids:
        started = time.perf_counter()
        try:
            drawn = picture(puzzle_id, args.out, args.choose)
        except Exception as exc:  # one puzzle's failure should not stop the others
            drawn = f"FAILED: {type(exc).__name__}: {exc}"
        print(f"{puzzle_id:20} {time.perf_counter() - started:6.1f} s  {drawn}", flush=True)


if __name__ == "__main__":
    main()
