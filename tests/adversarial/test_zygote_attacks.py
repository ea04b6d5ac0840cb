"""A submission that kills the zygote its worker was forked from. A confined worker cannot signal
it at all (its kill fails, and the import with it). Where workers run unconfined, the workers
forked beside it die too, through no fault of their own: each such worker is judged again in a
fresh one, so the innocent submissions of the batch get their own verdicts, and the attacker gets
error `zygote-lost` (it kills the fresh zygote as well)."""

from pathlib import Path

from judge.core import registry
from judge.core.spec import Case
from judge.judging import batch, runner
from judge.workers import confine

ROOT = Path(__file__).resolve().parents[2]
PLAIN = ROOT / "puzzles/vector_add/solutions/correct/plain.py"
KILLER = """
import os
import signal
import time

os.kill(os.getppid(), signal.SIGKILL)  # the zygote this worker was forked from
time.sleep(30)  # the parent-death signal comes once the zygote is gone (not at once)


def solve(a_ptr, b_ptr, c_ptr, N):
    pass
"""
SMALL = (Case("N=300", (("N", 300),), seed=4),)


def test_killing_the_zygote_costs_the_other_submissions_nothing(tmp_path):
    spec = registry.get("vector_add", registry.puzzles_root())
    killer = tmp_path / "killer.py"
    killer.write_text(KILLER)
    paths = [PLAIN, killer, PLAIN, PLAIN]
    options = runner.RunOptions(interpret=True, cases=SMALL, timeout_s=60)
    jobs = [batch.Job(spec, path) for path in paths]
    reports = dict(batch.judge_each(jobs, options, [None]))  # one lane: workers started ahead
    got = [(reports[i].verdict, reports[i].reason) for i in range(len(paths))]
    messages = [reports[i].message for i in range(len(paths))]
    again = [i for i in range(len(paths)) if any("Judged again" in n for n in reports[i].notes)]
    if not confine.missing_here():  # the signal never leaves the worker's domain
        assert got[1] == ("error", "import-error") and "PermissionError" in messages[1]
        assert got[0] == got[2] == got[3] == ("passed", "ok") and again == [], messages
        return
    assert got == [
        ("passed", "ok"),
        ("error", "zygote-lost"),
        ("passed", "ok"),
        ("passed", "ok"),
    ], messages
    assert again == [1, 2, 3]  # the workers started ahead of their turn went with the zygote


def test_unconfined_a_zygote_killer_costs_the_others_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(confine.CONFINE_ENV, "0")
    test_killing_the_zygote_costs_the_other_submissions_nothing(tmp_path)
