import time
from pathlib import Path

from judge.core.results import CaseResult, Progress, Timing, Verdict
from judge.core.spec import Case
from judge.judging import findings
from judge.judging.plan import Plan

CASES = [Case("N=1", (("N", 1),), 1), Case("N=2", (("N", 2),), 2)]
TIMING = Timing("N=25M", {"N": 25_000_000}, 1.0, 0.9, 1.1, 10, 2)


def found(spec, interpret=False, progress=None):
    plan = Plan(spec, Path("sub.py"), "", interpret, truths=None)  # no command is built here
    return findings.Findings(plan, CASES, progress)


def test_phases_add_up_and_only_the_stages_are_announced(vector_add):
    events = []
    record = found(vector_add, progress=events.append)
    with record.phase("references"):
        pass
    with record.phase("cases", 2):
        record.notify("cases", 1, 2, "N=1")
        time.sleep(0.01)
    with record.phase("cases", 2):
        time.sleep(0.01)
    assert set(record.phases) == {"references", "cases"}
    assert record.phases["cases"] >= 0.02 and record.phases["references"] >= 0
    assert events == [
        Progress("cases", 0, 2),
        Progress("cases", 1, 2, "N=1"),
        Progress("cases", 0, 2),
    ]


def test_a_progress_callback_that_raises_changes_nothing(vector_add):
    def broken(progress):
        raise RuntimeError("a broken progress bar")

    record = found(vector_add, progress=broken)
    with record.phase("startup"):
        record.notify("cases", 1, 2, "N=1")
    assert list(record.phases) == ["startup"]
    found(vector_add).notify("cases", 1, 2)  # no callback: nothing to tell


def test_the_report_skips_the_cases_not_reached(vector_add):
    record = found(vector_add)
    ran = [CaseResult("N=1", {"N": 1}, 1, "failed")]
    report = record.report(Verdict.FAILED, "wrong-answer", "case N=1: wrong", ran, [], "out")
    assert [(c.name, c.status) for c in report.cases] == [("N=1", "failed"), ("N=2", "skipped")]
    assert report.cases[1].reproduce == "tpuzzle run vector_add sub.py --size N=2 --seed 2"
    assert (report.puzzle, report.submission, report.output) == ("vector_add", "sub.py", "out")
    assert not report.ranked and report.score is None and report.method == ""
    assert report.env.mode == "gpu"


def test_only_a_passed_timed_run_outside_the_interpreter_is_ranked(vector_add):
    ranked = found(vector_add).report(Verdict.PASSED, "ok", "", [], [TIMING], "")
    assert ranked.ranked and ranked.score is not None and ranked.method
    interpreted = found(vector_add, interpret=True).report(
        Verdict.PASSED, "ok", "", [], [TIMING], ""
    )
    assert not interpreted.ranked and interpreted.env.mode == "interpreter"
    rejected = found(vector_add).report(Verdict.REJECTED, "faster-than-light", "", [], [TIMING], "")
    assert not rejected.ranked and rejected.score is None and rejected.notes == ()


def test_the_workers_account_of_its_time_is_added_under_a_prefix(vector_add):
    record = found(vector_add)
    record.add("case", {"call_s": 0.5, "dump_s": 0.25})
    record.add("case", {"call_s": 0.5})
    record.add("case", {"dump_s": -1, "x_s": "1", 3: 1.0, "huge_s": 1e9})  # garbled: left out
    record.add("bench", "not a dict")
    assert record.phases == {"case_call": 1.0, "case_dump": 0.25}
