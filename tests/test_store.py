import sqlite3

from test_results import sample_report

from judge import store
from judge.results import Verdict


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
