"""`tpuzzle import`: a checkout's problems, probed in processes of their own (their code runs
there, on the CPU, never in this one), converted into puzzles in the user's folder, with a line for
every problem skipped and a count of both.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import yaml

from judge.core import registry
from judge.errors import JudgeError
from judge.sources import checkouts, convert

PROBE_TIMEOUT_S = 3600  # one probe process, every problem of its share
SPEC = "puzzle.yaml"


@dataclass(frozen=True)
class Outcome:
    """One problem of the checkout: converted (into `puzzle`), or skipped with a reason."""

    problem: str
    puzzle: str = ""  # the id it was written as; "" when skipped
    reason: str = ""  # why it was skipped
    notes: tuple[str, ...] = ()  # cases left out of a converted puzzle

    @property
    def converted(self) -> bool:
        return bool(self.puzzle)


@dataclass(frozen=True)
class Imported:
    kind: str
    checkout: Path
    into: Path
    outcomes: tuple[Outcome, ...]

    @property
    def converted(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.converted]

    @property
    def skipped(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.converted]


def destination(kind: str, into: Path | None) -> Path:
    """Where the puzzles go: --into, else the user's imported folder for this source, which the
    registry searches beside the bundled catalogue."""
    folder = into if into is not None else registry.imported_root() / kind
    folder = folder.expanduser()
    if folder.exists() and not folder.is_dir():
        raise JudgeError(f"--into {folder}: not a directory")
    for entry in folder.glob(f"*/{SPEC}") if folder.is_dir() else ():
        if not _imported(entry):
            raise JudgeError(
                f"--into {folder}: holds puzzles of its own ({entry.parent.name}); "
                "import into a folder of imported puzzles only"
            )
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _imported(spec_file: Path) -> bool:
    """Whether a puzzle.yaml is one `tpuzzle import` wrote: it has a `source` key."""
    try:
        data = yaml.safe_load(spec_file.read_text(encoding="utf-8", errors="replace"))
    except yaml.YAMLError:
        return False
    return isinstance(data, dict) and isinstance(data.get("source"), dict)


def run(
    kind: str,
    checkout: Path,
    into: Path | None = None,
    only: Sequence[str] = (),
    jobs: int = 2,
    max_stored_mb: int = 64,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> Imported:
    """Import every problem of the checkout (or those whose folder contains one of `only`)."""
    if kind not in checkouts.KINDS:
        raise JudgeError(f"unknown source {kind!r} (expected one of: {', '.join(checkouts.KINDS)})")
    checkout = checkout.expanduser().resolve()
    found = checkouts.problems(kind, checkout)
    chosen = [p for p in found if not only or any(o in p for o in only)]
    if not chosen:
        raise JudgeError(f"{checkout}: no problem matches {', '.join(only)}")
    folder = destination(kind, into)
    about = checkouts.about(checkout)
    shares = [chosen[i :: max(1, jobs)] for i in range(max(1, jobs))]
    outcomes: dict[str, Outcome] = {}

    def one_share(share: list[str]) -> None:
        made = []
        for problem, description, probed in probe(kind, checkout, share):
            made.append(_outcome(kind, checkout, problem, about, description, probed, folder,
                                 max_stored_mb << 20))  # fmt: skip
        for outcome in verified(made, folder):
            outcomes[outcome.problem] = outcome
            if on_outcome is not None:
                on_outcome(outcome)

    with ThreadPoolExecutor(max_workers=len(shares)) as pool:
        list(pool.map(one_share, [s for s in shares if s]))
    return Imported(kind, checkout, folder, tuple(outcomes[p] for p in chosen))


def _outcome(kind, checkout, problem, about, description, probed, folder, max_stored) -> Outcome:
    try:
        origin = checkouts.origin(kind, checkout, problem, about)
        done = convert.convert(description, origin, probed, folder, max_stored)
    except convert.Skip as skip:
        return Outcome(problem, reason=str(skip))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return Outcome(
            problem, reason=f"its description could not be read ({type(exc).__name__}: {exc})"
        )
    return Outcome(problem, puzzle=done.puzzle_id, notes=done.notes)


def verified(made: list[Outcome], folder: Path) -> list[Outcome]:
    """The outcomes, each converted puzzle tried in a process of its own (its reference on its
    smallest test); one that fails is removed and counted as skipped, with the reason."""
    converted = {str(folder / o.puzzle): o for o in made if o.converted}
    errors: dict[str, str] = {}
    if converted:
        command = [sys.executable, "-m", "judge.sources.verify", *converted]
        try:
            done = subprocess.run(
                command, env=_env(), capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
            lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
            tail = done.stderr.strip().splitlines()[-1:]
            why = f"the process that tries it ended with code {done.returncode}" + (
                f": {tail[0][:200]}" if tail else ""
            )
        except (subprocess.TimeoutExpired, ValueError) as exc:
            lines, why = [], f"the process that tries it failed ({type(exc).__name__})"
        seen = {line["puzzle"]: line["error"] for line in lines}
        missing = f"its reference could not be tried: {why}"
        errors = {p: seen.get(p, missing) or "" for p in converted}
    kept = []
    for outcome in made:
        error = errors.get(str(folder / outcome.puzzle)) if outcome.converted else None
        if error:
            shutil.rmtree(folder / outcome.puzzle, ignore_errors=True)
            outcome = Outcome(outcome.problem, reason=error)
        kept.append(outcome)
    return kept


def probe(kind: str, checkout: Path, problems: list[str]):
    """(problem, description, folder of its arrays) for each problem, from probe processes: one
    runs the share, and where it dies, the next starts after the problem it died on."""
    left = list(problems)
    while left:
        with tempfile.TemporaryDirectory(prefix="tpuzzle-import-") as out:
            log = Path(out) / "probe.log"
            code = _probe_process(kind, checkout, Path(out), left, log)
            done = 0
            for index, problem in enumerate(left):
                path = Path(out) / str(index) / "problem.json"
                if not path.is_file():
                    break
                yield problem, json.loads(path.read_text()), path.parent
                done += 1
            if done < len(left):
                tail = (
                    log.read_text(errors="replace").strip().splitlines()[-1:]
                    if log.exists()
                    else []
                )
                why = f"the probe process ended with code {code}" + (
                    f": {tail[0][:200]}" if tail else ""
                )
                yield left[done], {"skip": why}, Path(out)
                done += 1
            left = left[done:]


def _env() -> dict[str, str]:
    """The environment of the processes that run a source's code: no GPU, this judge importable."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TRITON_INTERPRET="1")
    here = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH", "")]))
    return env


def _probe_process(kind: str, checkout: Path, out: Path, problems: list[str], log: Path) -> int:
    env = _env()
    command = [
        sys.executable,
        "-m",
        "judge.sources.probe",
        kind,
        str(checkout),
        str(out),
        *problems,
    ]
    with log.open("w") as sink:
        try:
            return subprocess.run(
                command, cwd=out, env=env, stdout=sink, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, timeout=PROBE_TIMEOUT_S,
            ).returncode  # fmt: skip
        except subprocess.TimeoutExpired:
            return -9
