"""Stored results: every judged run, one row, in SQLite.

The database lives in the user's data directory unless `--db PATH` or TPUZZLE_DB says otherwise. The
schema version is SQLite's `user_version`; MIGRATIONS[i] takes a database from version i to i + 1.
WAL mode lets several judges write at once; each run is committed on its own, so a killed batch
keeps every run it finished.
"""

from __future__ import annotations

import getpass
import json
import os
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from judge.core.bench import is_tie
from judge.core.loader import file_sha256
from judge.core.results import RunReport

ENV_VAR = "TPUZZLE_DB"

MIGRATIONS = (
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        created_at TEXT NOT NULL,          -- ISO 8601, UTC
        submitter TEXT NOT NULL,
        puzzle TEXT NOT NULL,
        submission TEXT NOT NULL,          -- path as given
        submission_sha256 TEXT NOT NULL,
        verdict TEXT NOT NULL,
        reason TEXT NOT NULL,
        mode TEXT NOT NULL,                -- gpu | interpreter
        device TEXT NOT NULL,
        ranked INTEGER NOT NULL,           -- 1 when the result may enter a leaderboard
        median_ms REAL, p20_ms REAL, p80_ms REAL, samples INTEGER,
        gbps REAL, tflops REAL, sol_pct REAL, speedup REAL,
        env_json TEXT NOT NULL,
        report_json TEXT NOT NULL
    );
    CREATE INDEX runs_puzzle ON runs (puzzle, device, verdict);
    CREATE INDEX runs_submitter ON runs (submitter, puzzle);
    """,
    """
    CREATE INDEX runs_ranked ON runs (puzzle, device, submitter, median_ms) WHERE ranked = 1;
    """,
    """
    -- what a result was judged under (judge version, puzzle files, mode, seeds), so that a batch
    -- run again can take a submission's stored result instead of judging it twice
    ALTER TABLE runs ADD COLUMN context TEXT NOT NULL DEFAULT '';
    CREATE INDEX runs_resume ON runs (submitter, puzzle, submission_sha256, context);
    """,
    """
    -- from here on median_ms, p20_ms and p80_ms hold the run's score (the geometric mean over
    -- every benchmark shape), sol_pct and copy_pct its means, speedup its mean ratio to the best
    -- library call; rows stored before hold their first shape (a score of one shape)
    ALTER TABLE runs ADD COLUMN copy_pct REAL;
    ALTER TABLE runs ADD COLUMN shapes INTEGER;
    """,
    """
    -- how far each submitter has gone up each puzzle's ladder of hints (`tpuzzle hint`)
    CREATE TABLE hints (
        submitter TEXT NOT NULL,
        puzzle TEXT NOT NULL,
        shown INTEGER NOT NULL,            -- hints shown so far, from the first
        PRIMARY KEY (submitter, puzzle)
    );
    """,
)


def default_path() -> Path:
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR]).expanduser()
    base = Path(os.environ.get("XDG_DATA_HOME") or "~/.local/share").expanduser()
    return base / "tpuzzle" / "results.db"


def default_submitter() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "anonymous"


def connect(path: Path | None = None) -> sqlite3.Connection:
    """Open (and create or migrate) the results database."""
    path = path or default_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA busy_timeout=30000")
    migrate(conn)
    return conn


def migrate(conn: sqlite3.Connection) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    for step in range(version, len(MIGRATIONS)):
        with conn:
            conn.executescript(f"BEGIN; {MIGRATIONS[step]} PRAGMA user_version = {step + 1};")


def row_of(
    report: RunReport, submitter: str, context: str = "", sha256: str | None = None
) -> dict[str, object]:
    """The columns of one stored report. `sha256` is the hash of the judged file when the caller
    took it (else the file is hashed now)."""
    t = report.timing[0] if report.timing else None
    f = report.figure
    return {
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "submitter": submitter,
        "puzzle": report.puzzle,
        "submission": report.submission,
        "submission_sha256": file_sha256(Path(report.submission)) if sha256 is None else sha256,
        "verdict": report.verdict.value,
        "reason": report.reason,
        "mode": report.env.mode,
        "device": report.env.device,
        "ranked": int(report.ranked),
        "median_ms": f and f.ms,
        "p20_ms": f and f.p20_ms,
        "p80_ms": f and f.p80_ms,
        "samples": t and t.samples,
        "gbps": t and t.gbps,
        "tflops": t and t.tflops,
        "sol_pct": f and f.sol_pct,
        "speedup": f and f.speedup_vs_library,
        "copy_pct": f and f.copy_pct,
        "shapes": f and f.shapes,
        "env_json": json.dumps(report.to_dict()["env"]),
        "report_json": json.dumps(report.to_dict()),
        "context": context,
    }


def insert(conn: sqlite3.Connection, row: dict[str, object]) -> int:
    with conn:
        cur = conn.execute(
            f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
            tuple(row.values()),
        )
    return int(cur.lastrowid)


def record(
    conn: sqlite3.Connection,
    report: RunReport,
    submitter: str,
    context: str = "",
    sha256: str | None = None,
) -> int:
    """Store one report; returns its row id. Committed before returning."""
    return insert(conn, row_of(report, submitter, context, sha256))


def stored(
    conn: sqlite3.Connection, submitter: str, puzzle: str, sha256: str, context: str
) -> RunReport | None:
    """The latest stored report of this file by this submitter, judged under this context."""
    if not sha256 or not context:
        return None
    row = conn.execute(
        "SELECT report_json FROM runs WHERE submitter = ? AND puzzle = ? AND submission_sha256 = ? "
        "AND context = ? ORDER BY id DESC LIMIT 1",
        (submitter, puzzle, sha256, context),
    ).fetchone()
    return RunReport.from_dict(json.loads(row["report_json"])) if row else None


@dataclass(frozen=True)
class Best:
    """A submitter's best result on one puzzle."""

    puzzle: str
    verdict: str  # "passed" when any run passed, else the latest verdict
    median_ms: float | None  # best ranked score, None when nothing was timed
    device: str


def best_per_puzzle(conn: sqlite3.Connection, submitter: str) -> dict[str, Best]:
    """For `tpuzzle list`: the fastest ranked pass, else any pass, else the latest run."""
    rows = conn.execute(
        "SELECT puzzle, verdict, ranked, median_ms, device FROM runs WHERE submitter = ? "
        "ORDER BY id",
        (submitter,),
    ).fetchall()
    best: dict[str, Best] = {}
    for r in rows:
        current = best.get(r["puzzle"])
        candidate = Best(
            r["puzzle"], r["verdict"], r["median_ms"] if r["ranked"] else None, r["device"]
        )
        if current is None or _better(candidate, current):
            best[r["puzzle"]] = candidate
    return best


def _better(new: Best, old: Best) -> bool:
    if (new.verdict == "passed") != (old.verdict == "passed"):
        return new.verdict == "passed"
    if new.verdict != "passed":
        return True  # the latest failure replaces an older one
    if new.median_ms is None or old.median_ms is None:
        return old.median_ms is None
    return new.median_ms < old.median_ms


def ranked_medians(conn: sqlite3.Connection, puzzle: str, device: str) -> dict[str, float]:
    """Best ranked score per submitter for one puzzle on one GPU model."""
    rows = conn.execute(
        "SELECT submitter, MIN(median_ms) AS best FROM runs WHERE puzzle = ? AND device = ? "
        "AND ranked = 1 GROUP BY submitter",
        (puzzle, device),
    ).fetchall()
    return {r["submitter"]: r["best"] for r in rows}


@dataclass(frozen=True)
class Entry:
    """One line of a leaderboard: a submitter's fastest ranked run on one puzzle and GPU model."""

    puzzle: str  # puzzle id
    device: str  # GPU model; only runs on the same model are ranked together
    submitter: str  # who ran it
    median_ms: float  # the score: geometric mean of the shapes' medians (see results.Score)
    p20_ms: float  # the same mean of the shapes' 20th percentiles
    p80_ms: float  # the same mean of the shapes' 80th percentiles
    samples: int  # timed calls of the first shape
    gbps: float | None  # achieved GB/s on the first shape, for byte formulas
    tflops: float | None  # achieved TFLOP/s on the first shape, for FLOP formulas
    sol_pct: float | None  # percent of the device's measured peak (mean over shapes)
    speedup: float | None  # ratio to the best library call (mean over shapes)
    copy_pct: float | None  # percent of a same-size copy (mean over shapes), bytes puzzles
    shapes: int | None  # benchmark shapes in the score (None: stored before scores)
    submission_sha256: str  # hash of the submitted file ("" when it could not be read)
    created_at: str  # ISO 8601, UTC
    run_id: int  # the row in `runs`
    rank: int  # competition ranking within (puzzle, device): 1, 1, 3
    tie: bool  # shares its rank with a neighbour


_BEST_RANKED = """
    SELECT puzzle, device, submitter, median_ms, p20_ms, p80_ms, samples, gbps, tflops, sol_pct,
           speedup, copy_pct, shapes, submission_sha256, created_at, id AS run_id
    FROM (
        SELECT *, ROW_NUMBER() OVER (
            PARTITION BY puzzle, device, submitter ORDER BY median_ms, id
        ) AS nth
        FROM runs
        WHERE ranked = 1 AND verdict = 'passed' AND median_ms IS NOT NULL {where}
    )
    WHERE nth = 1
    ORDER BY puzzle, device, median_ms, run_id
"""


def leaderboard(conn: sqlite3.Connection, puzzle: str | None = None) -> list[Entry]:
    """The fastest ranked pass per (submitter, puzzle, device), ranked per (puzzle, device).

    Only ranked runs count: interpreter runs, failures and times above the speed of light never
    are. Entries come grouped by puzzle, then device, fastest first.
    """
    where, params = ("AND puzzle = ?", (puzzle,)) if puzzle is not None else ("", ())
    rows = conn.execute(_BEST_RANKED.format(where=where), params).fetchall()
    groups: dict[tuple[str, str], list[sqlite3.Row]] = {}
    for r in rows:
        groups.setdefault((r["puzzle"], r["device"]), []).append(r)
    return [entry for group in groups.values() for entry in _ranked(group)]


def _ranked(rows: list[sqlite3.Row]) -> list[Entry]:
    """Competition ranking (1, 1, 3) of one group sorted by median. A run tied with the one before
    it shares that one's rank, so a chain of ties shares one rank."""
    tied = [i > 0 and _tied(rows[i - 1], rows[i]) for i in range(len(rows))] + [False]
    entries: list[Entry] = []
    for i, r in enumerate(rows):
        rank = entries[-1].rank if tied[i] else i + 1
        entries.append(Entry(**dict(r), rank=rank, tie=tied[i] or tied[i + 1]))
    return entries


def _tied(a: sqlite3.Row, b: sqlite3.Row) -> bool:
    """Spreads that overlap per bench.is_tie; a run without percentiles ties with nothing."""
    sa, sb = ((r["median_ms"], r["p20_ms"], r["p80_ms"]) for r in (a, b))
    return None not in sa + sb and is_tie(sa, sb)


def shape_timings(conn: sqlite3.Connection, entries: list[Entry]) -> dict[int, tuple]:
    """Each leaderboard entry's benchmark shapes (its stored report's timings), by run id."""
    found = {}
    for e in entries:
        row = conn.execute("SELECT report_json FROM runs WHERE id = ?", (e.run_id,)).fetchone()
        if row is not None:
            found[e.run_id] = RunReport.from_dict(json.loads(row["report_json"])).timing
    return found


def hints_shown(conn: sqlite3.Connection, submitter: str, puzzle: str) -> int:
    """How many of a puzzle's hints the submitter has seen."""
    row = conn.execute(
        "SELECT shown FROM hints WHERE submitter = ? AND puzzle = ?", (submitter, puzzle)
    ).fetchone()
    return int(row[0]) if row else 0


def set_hints_shown(conn: sqlite3.Connection, submitter: str, puzzle: str, shown: int) -> None:
    with conn:
        conn.execute(
            "INSERT INTO hints (submitter, puzzle, shown) VALUES (?, ?, ?) "
            "ON CONFLICT (submitter, puzzle) DO UPDATE SET shown = excluded.shown",
            (submitter, puzzle, shown),
        )
