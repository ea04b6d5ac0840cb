import dataclasses
import sqlite3

import pytest
from test_results import sample_report

from judge.core import bench
from judge.core.results import Verdict
from judge.records import store


def passed(median, device="NVIDIA H100"):
    report = sample_report()
    timing = report.timing[0].__class__(**{**report.timing[0].__dict__, "median_ms": median})
    env = report.env.__class__(**{**report.env.__dict__, "device": device})
    return report.__class__(
        **{
            **report.__dict__,
            "verdict": Verdict.PASSED,
            "ranked": True,
            "timing": (timing,),
            "env": env,
            "score": bench.score((timing,)),
        }
    )


def test_schema_is_created_versioned_and_in_wal_mode(tmp_path):
    conn = store.connect(tmp_path / "r.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(store.MIGRATIONS)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    again = store.connect(tmp_path / "r.db")  # migrating twice is harmless
    assert again.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_record_is_committed_at_once(tmp_path):
    path = tmp_path / "r.db"
    conn = store.connect(path)
    store.record(conn, sample_report(), "ada")
    other = sqlite3.connect(path)  # a second connection sees the row without a close
    row = other.execute("SELECT submitter, verdict, reason, median_ms FROM runs").fetchone()
    assert row == ("ada", "failed", "wrong-answer", 0.1)


def test_best_per_puzzle_prefers_fast_passes(tmp_path):
    conn = store.connect(tmp_path / "r.db")
    store.record(conn, sample_report(), "ada")
    store.record(conn, passed(0.5), "ada")
    store.record(conn, passed(0.2), "ada")
    store.record(conn, sample_report(), "ada")  # a later failure does not hide the pass
    best = store.best_per_puzzle(conn, "ada")["vector_add"]
    assert (best.verdict, best.median_ms) == ("passed", 0.2)
    assert store.best_per_puzzle(conn, "bob") == {}


def test_ranked_medians_per_gpu_model(tmp_path):
    conn = store.connect(tmp_path / "r.db")
    store.record(conn, passed(0.3), "ada")
    store.record(conn, passed(0.2), "bob")
    store.record(conn, passed(0.1, device="NVIDIA H200"), "cyd")
    assert store.ranked_medians(conn, "vector_add", "NVIDIA H100") == {"ada": 0.3, "bob": 0.2}


def timed(median, spread=0.001, *, puzzle="vector_add", device="NVIDIA H100", **timing):
    """A ranked pass on the GPU whose p20-p80 spread is median -/+ spread."""
    base = sample_report()
    t = dataclasses.replace(
        base.timing[0], median_ms=median, p20_ms=median - spread, p80_ms=median + spread, **timing
    )
    return dataclasses.replace(
        base,
        puzzle=puzzle,
        verdict=Verdict.PASSED,
        reason="ok",
        ranked=True,
        timing=(t,),
        env=dataclasses.replace(base.env, device=device),
        score=bench.score((t,)),
    )


def two_shapes(small: float, large: float, submitter_spread: float = 0.0001):
    """A ranked pass timed on two shapes, scored on both."""
    base = timed(small, submitter_spread)
    first = dataclasses.replace(base.timing[0], floor_ms=None)
    second = dataclasses.replace(
        first, case="N=big", median_ms=large, p20_ms=large * 0.999, p80_ms=large * 1.001
    )
    shapes = (first, second)
    return dataclasses.replace(base, timing=shapes, score=bench.score(shapes))


def test_the_leaderboard_ranks_on_every_shape_not_the_first(tmp_path):
    """ada is faster on the first shape, bob on the geometric mean of both."""
    conn = store.connect(tmp_path / "r.db")
    store.record(conn, two_shapes(0.010, 4.0), "ada")  # score 0.2
    store.record(conn, two_shapes(0.020, 1.0), "bob")  # score 0.141
    board = store.leaderboard(conn, "vector_add")
    assert [(e.submitter, e.rank, e.shapes) for e in board] == [("bob", 1, 2), ("ada", 2, 2)]
    assert board[0].median_ms == pytest.approx((0.020 * 1.0) ** 0.5)


def interpreted(puzzle="vector_add"):
    """A pass in Triton's interpreter: no timing, never ranked."""
    env = dataclasses.replace(sample_report().env, mode="interpreter", device=CPU)
    return dataclasses.replace(timed(0.01, puzzle=puzzle), ranked=False, timing=(), env=env)


def above_light(median):
    """A pass faster than the measured peak allows: flagged, not ranked."""
    report = timed(median)
    t = dataclasses.replace(report.timing[0], sol_pct=130.0, above_speed_of_light=True)
    return dataclasses.replace(report, ranked=False, timing=(t,), score=bench.score((t,)))


CPU = "cpu (Triton interpreter)"


def board(conn, puzzle=None):
    return [
        (e.puzzle, e.device, e.submitter, e.median_ms, e.rank, e.tie)
        for e in store.leaderboard(conn, puzzle)
    ]


def test_leaderboard_best_ranked_pass_per_submitter_puzzle_and_device(tmp_path):
    conn = store.connect(tmp_path / "r.db")
    store.record(conn, timed(0.30), "ada")
    best = store.record(conn, timed(0.20), "ada")
    store.record(conn, timed(0.40), "ada")  # a slower later run does not replace the best
    store.record(conn, timed(0.25), "bob")
    store.record(conn, timed(0.50, device="NVIDIA H200"), "bob")
    store.record(conn, timed(0.10, device="NVIDIA H200"), "cyd")
    store.record(conn, timed(2.0, puzzle="matmul", gbps=None, tflops=300.0), "ada")
    store.record(conn, sample_report(), "dan")  # failed, with a fast timing
    store.record(conn, interpreted(), "dan")
    store.record(conn, above_light(0.01), "dan")
    store.record(conn, interpreted(), "eve")
    store.record(conn, above_light(0.01), "bob")  # bob's flagged run does not beat his 0.25
    h100, h200 = "NVIDIA H100", "NVIDIA H200"
    assert board(conn) == [
        ("matmul", h100, "ada", 2.0, 1, False),
        ("vector_add", h100, "ada", 0.20, 1, False),
        ("vector_add", h100, "bob", 0.25, 2, False),
        ("vector_add", h200, "cyd", 0.10, 1, False),
        ("vector_add", h200, "bob", 0.50, 2, False),
    ]
    assert board(conn, "matmul") == [("matmul", h100, "ada", 2.0, 1, False)]
    assert board(conn, "sort") == []
    top = store.leaderboard(conn, "vector_add")[0]
    assert (top.run_id, top.p20_ms, top.p80_ms, top.samples) == (best, 0.199, 0.201, 100)
    assert (top.gbps, top.tflops, top.sol_pct, top.speedup) == (3000.0, None, 95.0, 1.2)
    assert top.submission_sha256 == "" and top.created_at.endswith("+00:00")
    assert store.leaderboard(conn, "matmul")[0].tflops == 300.0


def test_leaderboard_ties_share_a_rank(tmp_path):
    conn = store.connect(tmp_path / "r.db")
    store.record(conn, timed(0.300), "eve")
    store.record(conn, timed(0.152, 0.005), "dan")  # within cyd's spread
    store.record(conn, timed(0.150, 0.005), "cyd")
    store.record(conn, timed(0.102, 0.008), "bob")  # within ada's spread, but not cyd's
    store.record(conn, timed(0.100, 0.005), "ada")
    assert [(e.submitter, e.rank, e.tie) for e in store.leaderboard(conn)] == [
        ("ada", 1, True),
        ("bob", 1, True),
        ("cyd", 3, True),
        ("dan", 3, True),
        ("eve", 5, False),
    ]


def test_leaderboard_a_chain_of_ties_shares_one_rank(tmp_path):
    conn = store.connect(tmp_path / "r.db")
    store.record(conn, timed(1.00, 0.02), "ada")
    store.record(conn, timed(1.015, 0.02), "bob")  # ties ada and cyd; ada and cyd do not tie
    store.record(conn, timed(1.03, 0.01), "cyd")
    store.record(conn, timed(2.00, 0.01), "dan")
    assert [(e.submitter, e.rank, e.tie) for e in store.leaderboard(conn)] == [
        ("ada", 1, True),
        ("bob", 1, True),
        ("cyd", 1, True),
        ("dan", 4, False),
    ]


def test_a_version_1_database_is_migrated_and_keeps_its_runs(tmp_path):
    path = tmp_path / "r.db"
    old = sqlite3.connect(path)
    old.executescript(f"BEGIN; {store.MIGRATIONS[0]} PRAGMA user_version = 1; COMMIT;")

    def version_1_row(report, submitter):
        row = store.row_of(report, submitter)
        for later in ("context", "copy_pct", "shapes"):  # added by later migrations
            del row[later]
        return row

    run_id = store.insert(old, version_1_row(timed(0.2), "ada"))
    store.insert(old, version_1_row(interpreted(), "bob"))
    old.close()
    conn = store.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 5 == len(store.MIGRATIONS)
    assert store.hints_shown(conn, "anyone", "vector_add") == 0  # the hints table is there
    columns = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    assert columns >= {"context", "copy_pct", "shapes"}
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"runs_puzzle", "runs_submitter", "runs_ranked"} <= indexes
    assert [(e.run_id, e.submitter, e.rank) for e in store.leaderboard(conn)] == [
        (run_id, "ada", 1)
    ]
