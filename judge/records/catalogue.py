"""What `tpuzzle bench` judges (the shipped solutions, or a directory of submissions), and the
rows of its table. The judging itself is `batch.judge_each`: each submission in its own worker.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from judge.core import registry
from judge.core.results import RunReport, Timing
from judge.core.spec import PuzzleSpec
from judge.errors import JudgeError
from judge.judging.batch import Job


@dataclass(frozen=True)
class Row:
    """One line of the catalogue table."""

    puzzle: str
    difficulty: str
    submission: str
    verdict: str
    reason: str
    device: str
    median_ms: float | None  # the score: geometric mean over the benchmark shapes
    throughput: str  # the first shape's "3941 GB/s" or "612.3 TFLOP/s", "" when not timed
    sol_pct: float | None  # percent of peak, mean over shapes
    speedup: float | None  # ratio to the best library call, mean over shapes
    ranked: bool
    copy_pct: float | None = None  # percent of a same-size copy, mean over shapes
    shapes: int = 0  # benchmark shapes in the score
    per_shape: tuple[Timing, ...] = ()  # each benchmark shape's figures, when there are several


def shipped(specs: Iterable[PuzzleSpec]) -> list[Job]:
    """The best shipped correct solution of every puzzle: the one its puzzle.yaml names
    (`best`), else the first in file-name order."""
    targets = []
    for spec in specs:
        found = best_solution(spec)
        if found is not None:
            targets.append(Job(spec, found))
    return targets


def best_solution(spec: PuzzleSpec) -> Path | None:
    folder = spec.directory / "solutions" / "correct"
    if spec.best and (folder / spec.best).is_file():
        return folder / spec.best
    found = sorted(folder.glob("*.py"))
    return found[0] if found else None


def ladder(spec: PuzzleSpec) -> list[Path]:
    """Every shipped correct solution, the best first, then the rest in file-name order (the
    simpler ones a learner climbs from)."""
    best = best_solution(spec)
    rest = sorted(p for p in (spec.directory / "solutions" / "correct").glob("*.py") if p != best)
    return ([best] if best else []) + rest


def from_directory(specs: Iterable[PuzzleSpec], directory: Path) -> list[Job]:
    """A user's workspace: DIRECTORY/<puzzle id>.py for every puzzle that has one."""
    if not directory.is_dir():
        raise JudgeError(f"{directory}: not a directory")
    targets = [Job(s, directory / f"{s.id}.py") for s in specs]
    targets = [t for t in targets if t.path.is_file()]
    if not targets:
        raise JudgeError(f"{directory}: no file named after a puzzle (e.g. vector_add.py)")
    return targets


def select(root: Path, target: str | Path | None, only: list[str]) -> list[Job]:
    """What to bench: every shipped solution, one puzzle's (target is a puzzle id), or a
    directory's files (target is a directory); `only` keeps just those puzzles."""
    specs = [registry.get(pid, root) for pid in only] if only else registry.load_all(root)
    if target is None:
        return shipped(specs)
    if str(target) in registry.puzzle_ids(root):
        found = shipped([registry.get(str(target), root)])
        if not found:
            raise JudgeError(
                f"{target}: no shipped solution to bench (an imported puzzle has none); bench "
                f"a directory of your own files instead: `tpuzzle bench DIR` with DIR/{target}.py"
            )
        return found
    if Path(target).is_dir():
        return from_directory(specs, Path(target))
    if Path(target).exists():
        raise JudgeError(f"{target}: not a directory")
    if "/" in str(target) or str(target).startswith("."):
        raise JudgeError(f"{target}: no such directory")
    registry.get(str(target), root)  # raises UnknownPuzzle, with a "did you mean"
    raise JudgeError(f"{target}: neither a puzzle id nor a directory")


def row(spec: PuzzleSpec, report: RunReport) -> Row:
    """The puzzle's line: its score over every shape, the first shape's throughput."""
    t = report.timing[0] if report.timing else None
    f = report.figure
    return Row(
        puzzle=spec.id,
        difficulty=spec.difficulty,
        submission=report.submission,
        verdict=report.verdict.value,
        reason=report.reason,
        device=report.env.device,
        median_ms=f.ms if f else None,
        throughput=t.throughput if t else "",
        sol_pct=f.sol_pct if f else None,
        speedup=f.speedup_vs_library if f else None,
        ranked=report.ranked,
        copy_pct=f.copy_pct if f else None,
        shapes=f.shapes if f else 0,
        per_shape=report.timing if len(report.timing) > 1 else (),
    )


def markdown(rows: list[Row]) -> str:
    """The catalogue table as GitHub-flavoured Markdown."""
    lines = [
        "| puzzle | difficulty | verdict | GPU | score | shapes | throughput | same-size copy | "
        "speed of light | vs best library |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        score = f"{r.median_ms * 1e3:.1f} us" if r.median_ms is not None else "-"
        copy = f"{r.copy_pct:.1f}%" if r.copy_pct is not None else "-"
        sol = f"{r.sol_pct:.1f}%" if r.sol_pct is not None else "-"
        speedup = f"{r.speedup:.2f}x" if r.speedup is not None else "-"
        lines.append(
            f"| {r.puzzle} | {r.difficulty} | {r.verdict} | {r.device} | {score} | "
            f"{r.shapes or '-'} | {r.throughput or '-'} | {copy} | {sol} | {speedup} |"
        )
    return "\n".join(lines) + "\n"
