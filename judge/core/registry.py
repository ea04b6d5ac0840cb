"""Finding puzzles: the catalogue directory, the list of ids, and `get(id)` with a "did you mean".

Where the catalogue lives, first match wins: an explicit directory (`--puzzles DIR`), the
environment variable TPUZZLE_PUZZLES, the copy installed with the package (`judge.puzzles`), and
the `puzzles/` directory of a source checkout. Beside the installed catalogue (not beside one
named explicitly), the puzzles `tpuzzle import` wrote into the user's own folder are found too:
TPUZZLE_IMPORTED, else $XDG_DATA_HOME/tpuzzle/imported (~/.local/share/tpuzzle/imported).
"""

from __future__ import annotations

import difflib
import importlib.util
import os
from pathlib import Path

from judge.core.spec import PuzzleSpec
from judge.core.spec_reader import load_spec
from judge.errors import JudgeError, UnknownPuzzle

ENV_VAR = "TPUZZLE_PUZZLES"
IMPORTED_ENV = "TPUZZLE_IMPORTED"
SPEC_FILE = "puzzle.yaml"


def puzzles_root(explicit: str | Path | None = None) -> Path:
    """The directory that holds one sub-directory per puzzle."""
    chosen = explicit or os.environ.get(ENV_VAR)
    if chosen:
        root = Path(chosen).expanduser()
        if not root.is_dir():
            source = "--puzzles" if explicit else ENV_VAR
            raise JudgeError(f"{source}: {root} is not a directory")
        return root
    return bundled_root()


def bundled_root() -> Path:
    """The catalogue that comes with tpuzzle."""
    installed = importlib.util.find_spec("judge.puzzles")
    if installed is not None and installed.submodule_search_locations:
        return Path(next(iter(installed.submodule_search_locations)))
    return Path(__file__).resolve().parents[2] / "puzzles"


def imported_root() -> Path:
    """Where `tpuzzle import` writes puzzles unless told otherwise."""
    chosen = os.environ.get(IMPORTED_ENV)
    if chosen:
        return Path(chosen).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "tpuzzle" / "imported"


def search_dirs(root: Path) -> list[Path]:
    """The folders searched for puzzles: root, and beside the bundled catalogue the user's
    imported puzzles (each import's folder, imported/<source>/<id>/)."""
    dirs = [root]
    if root.resolve() == bundled_root().resolve():
        imported = imported_root()
        if imported.is_dir():
            dirs += sorted(d for d in imported.iterdir() if d.is_dir())
    return dirs


def puzzle_ids(root: Path) -> list[str]:
    """Ids of every puzzle under root (and the imported ones beside the bundled catalogue),
    sorted."""
    return sorted({p.parent.name for d in search_dirs(root) for p in d.glob(f"*/{SPEC_FILE}")})


def get(puzzle_id: str, root: Path) -> PuzzleSpec:
    """The spec of one puzzle; UnknownPuzzle with the closest ids when it does not exist."""
    found = (d / puzzle_id / SPEC_FILE for d in search_dirs(root))
    path = next((p for p in found if p.is_file()), root / puzzle_id / SPEC_FILE)
    if not path.is_file():
        known = puzzle_ids(root)
        close = difflib.get_close_matches(puzzle_id, known, n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(close)}?" if close else "; `tpuzzle list` shows them"
        raise UnknownPuzzle(f"unknown puzzle {puzzle_id!r}{hint}")
    return load_spec(path)


def load_all(root: Path) -> list[PuzzleSpec]:
    """Every spec under root, in catalogue order (difficulty, then id)."""
    order = {"easy": 0, "medium": 1, "hard": 2}
    specs = [get(pid, root) for pid in puzzle_ids(root)]
    return sorted(specs, key=lambda s: (order[s.difficulty], s.id))
