import functools
import json
import math
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from test_batch import Recorder
from test_results import sample_report

from judge.core.results import Verdict
from judge.errors import JudgeError
from judge.judging import batch
from judge.records import batches, store

CPU = batch.Choices(interpret=True)


class Judge(Recorder):
    """Fake workers: each job gets a report naming its puzzle and file, passed unless its puzzle or
    its directory is in `fail`. At the file `interrupt_on` the judge raises KeyboardInterrupt (as
    Ctrl-C would), at `error_on` a RuntimeError (a bug)."""

    def __init__(self, fail: tuple[str, ...] = (), interrupt_on=None, error_on=None):
        super().__init__()
        self.fail, self.interrupt_on, self.error_on = fail, interrupt_on, error_on

    def judge(self, spec, path, options, worker):
        if path == self.interrupt_on:
            raise KeyboardInterrupt
        if path == self.error_on:
            raise RuntimeError("a bug in the judge")
        super().judge(spec, path, options, worker)
        failed = spec.id in self.fail or path.parent.name in self.fail
        verdict = Verdict.FAILED if failed else Verdict.PASSED
        return replace(sample_report(), puzzle=spec.id, submission=str(path), verdict=verdict)

    @property
    def each(self):
        return functools.partial(batch.judge_each, launch=self.launch, judge=self.judge)

    @property
    def judged(self) -> list[str]:
        return [name for kind, name, _ in self.events if kind == "judged"]


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# ------------------------------------------------------------------------------- bench


def test_plan_bench_selects_and_checks_the_plot(puzzles_root):
    plan = batches.plan_bench(puzzles_root, None, ["relu", "vector_add"], CPU)
    assert [j.spec.id for j in plan.jobs] == ["relu", "vector_add"]
    assert plan.setup.mode == "interpreter" and plan.setup.options.sweep is False
    with pytest.raises(JudgeError, match="--plot draws one puzzle; 2 were selected"):
        batches.plan_bench(puzzles_root, None, ["relu", "vector_add"], CPU, plot=True)
    with pytest.raises(JudgeError, match="--plot needs timings"):
        batches.plan_bench(puzzles_root, "vector_add", [], CPU, plot=True)


def test_a_bench_of_one_file_leaves_the_mode_to_the_server(puzzles_root, monkeypatch):
    asked = []
    monkeypatch.setattr(batch.launcher, "cuda_present", lambda: asked.append(1) or False)
    monkeypatch.setenv("TPUZZLE_SERVER", "1")
    one = batches.plan_bench(puzzles_root, "vector_add", [], batch.Choices())
    assert one.setup.mode == "auto" and not asked  # the server decides, its driver initialised
    two = batches.plan_bench(puzzles_root, None, ["relu", "vector_add"], batch.Choices())
    assert two.setup.mode == "interpreter" and asked == [1]  # lanes of this process: decided
    monkeypatch.setenv("TPUZZLE_SERVER", "0")
    here = batches.plan_bench(puzzles_root, "vector_add", [], batch.Choices())
    assert here.setup.mode == "interpreter" and asked == [1, 1]


def test_bench_stores_streams_and_ticks_every_report_in_job_order(puzzles_root, tmp_path):
    plan = batches.plan_bench(puzzles_root, None, ["relu", "vector_add", "silu"], CPU)
    conn, stream, md = store.connect(tmp_path / "r.db"), tmp_path / "b.jsonl", tmp_path / "b.md"
    ticks = []
    fake = Judge(fail=("silu",))
    benched = batches.bench(plan, conn, "ada", md, stream, ticks.append, fake.each)
    assert [r.puzzle for r in benched.rows] == ["relu", "vector_add", "silu"]
    assert [r.verdict for r in benched.rows] == ["passed", "passed", "failed"]
    assert not benched.passed and not benched.interpreted  # the fake reports say "gpu"
    assert set(benched.to_dict()) == {"mode", "rows", "reports"}
    assert "| silu | easy | failed |" in md.read_text()
    rows = conn.execute("SELECT submitter, puzzle FROM runs ORDER BY puzzle").fetchall()
    assert [tuple(r) for r in rows] == [("ada", "relu"), ("ada", "silu"), ("ada", "vector_add")]
    start, *results, end = lines(stream)
    assert start == {
        "kind": "start",
        "total": 3,
        "command": "bench",
        "mode": "interpreter",
        "judge_version": start["judge_version"],
    }
    assert end == {"kind": "end", "done": 3, "total": 3}
    assert sorted((r["index"], r["puzzle"]) for r in results) == [
        (0, "relu"),
        (1, "vector_add"),
        (2, "silu"),
    ]
    for r in results:
        assert r["kind"] == "result" and r["report"]["puzzle"] == r["puzzle"]
        assert r["submission"] == r["report"]["submission"] == str(plan.jobs[r["index"]].path)
    assert [t.done for t in ticks] == [0, 1, 2, 3] and ticks[0].report is None
    assert {t.label for t in ticks[1:]} == {"relu", "vector_add", "silu"}
    assert all(a.elapsed_s <= b.elapsed_s for a, b in zip(ticks, ticks[1:], strict=False))


def test_an_interrupted_bench_keeps_what_finished(puzzles_root, tmp_path):
    plan = batches.plan_bench(puzzles_root, None, ["relu", "silu", "vector_add"], CPU)
    conn, stream = store.connect(tmp_path / "r.db"), tmp_path / "b.jsonl"
    fake = Judge(interrupt_on=plan.jobs[1].path)
    with pytest.raises(batches.Stopped) as stopped:
        batches.bench(plan, conn, "ada", None, stream, judge_each=fake.each)
    assert isinstance(stopped.value.__cause__, KeyboardInterrupt)
    assert str(stopped.value) == f"stopped after 1 of 3: results so far in {stream}"
    assert (stopped.value.done, stopped.value.total) == (1, 3)
    kinds = [(d["kind"], d.get("puzzle")) for d in lines(stream)]
    assert kinds == [("start", None), ("result", "relu"), ("stopped", None)]
    assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    unfinished = [w for w in fake.workers if w.path != plan.jobs[0].path]
    assert unfinished and all(w.stopped for w in unfinished)


def test_a_failure_midway_is_stopped_with_its_cause_and_no_file_says_so(puzzles_root):
    plan = batches.plan_bench(puzzles_root, None, ["relu", "vector_add"], CPU)
    fake = Judge(error_on=plan.jobs[1].path)
    with pytest.raises(batches.Stopped, match=r"^stopped after 1 of 2$") as stopped:
        batches.bench(plan, judge_each=fake.each)
    assert isinstance(stopped.value.__cause__, RuntimeError)


# ------------------------------------------------------------------------------- stream


def test_stream_lines_are_whole_and_flushed_as_written(tmp_path):
    path = tmp_path / "s.jsonl"
    stream = batches.Stream(path)
    stream.write({"kind": "start", "x": math.nan, "y": (1, math.inf)})
    assert lines(path) == [{"kind": "start", "x": None, "y": [1, None]}]  # before close
    stream.write({"kind": "end"})
    assert path.read_text().count("\n") == 2
    stream.close()
    batches.Stream(None).write({"kind": "nothing"})  # no file, no error
    with pytest.raises(JudgeError, match="cannot write"):
        batches.Stream(tmp_path / "missing" / "s.jsonl")


# ------------------------------------------------------------------------------- grade


@pytest.fixture
def klass(tmp_path, puzzles_root):
    """ada submits relu and vector_add, bob vector_add and a file named after no puzzle."""
    root = tmp_path / "class"
    for student, puzzle in (("ada", "vector_add"), ("ada", "relu"), ("bob", "vector_add")):
        (root / student).mkdir(parents=True, exist_ok=True)
        shutil.copy(puzzles_root / puzzle / "template.py", root / student / f"{puzzle}.py")
    (root / "bob" / "notes.py").write_text("")
    return root


def test_plan_grade_finds_filters_and_warns(klass, puzzles_root):
    plan = batches.plan_grade(puzzles_root, klass, None, [], None, None, CPU)
    assert [(s.student, s.puzzle) for s in plan.submissions] == [
        ("ada", "relu"),
        ("ada", "vector_add"),
        ("bob", "vector_add"),
    ]
    assert set(plan.specs) == set(plan.contexts) == {"relu", "vector_add"}
    assert len(plan.warnings) == 1 and "'notes' is not a puzzle id" in plan.warnings[0]
    assert plan.meta["secret_seed"] is False and plan.meta["shard"] is None
    only = batches.plan_grade(puzzles_root, klass, None, ["relu"], None, None, CPU)
    assert [s.puzzle for s in only.submissions] == ["relu"]
    with pytest.raises(JudgeError, match="give either ROOT"):
        batches.plan_grade(puzzles_root, None, None, [], None, None, CPU)
    with pytest.raises(JudgeError, match="shard '0/2'"):
        batches.plan_grade(puzzles_root, klass, None, [], "0/2", None, CPU)


def test_grade_streams_then_resumes_from_the_database(klass, puzzles_root, tmp_path):
    plan = batches.plan_grade(puzzles_root, klass, None, [], None, None, CPU)
    conn = store.connect(tmp_path / "r.db")
    out = batches.Outputs(json=tmp_path / "g.json", csv=tmp_path / "g.csv")
    first = batches.grade(plan, conn, True, False, out, tmp_path / "1.jsonl", None, Judge().each)
    assert first.resumed == 0 and first.interpreted
    assert [g.submission.student for g in first.graded] == ["ada", "ada", "bob"]
    assert len(json.loads(out.json.read_text())["entries"]) == 3 and out.csv.is_file()
    assert list(first.tables) == ["relu", "vector_add"]
    start, *results, end = lines(tmp_path / "1.jsonl")
    assert (start["command"], start["total"], start["secret_seed"]) == ("grade", 3, False)
    assert end == {"kind": "end", "done": 3, "total": 3}
    assert sorted((r["student"], r["puzzle"], r["resumed"]) for r in results) == [
        ("ada", "relu", False),
        ("ada", "vector_add", False),
        ("bob", "vector_add", False),
    ]
    assert all(r["path"] == str(plan.submissions[r["index"]].path) for r in results)
    ticks, fake, stream = [], Judge(), tmp_path / "2.jsonl"
    again = batches.grade(plan, conn, True, True, None, stream, ticks.append, fake.each)
    assert fake.judged == []
    assert again.resumed == 3 and [t.resumed for t in ticks] == [False, True, True, True]
    assert [r.get("resumed") for r in lines(stream)] == [None, True, True, True, None]
    assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 3  # nothing judged again


def test_grade_without_saving_stores_nothing(klass, puzzles_root, tmp_path):
    plan = batches.plan_grade(puzzles_root, klass, None, ["relu"], None, None, CPU)
    conn = store.connect(tmp_path / "r.db")
    graded = batches.grade(plan, conn, save=False, judge_each=Judge().each)
    assert [g.report.verdict for g in graded.graded] == [Verdict.PASSED]
    assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_read_secret(tmp_path):
    assert batches.read_secret(None) == ""
    (tmp_path / "s").write_text(" abc \n")
    assert batches.read_secret(tmp_path / "s") == "abc"
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(JudgeError, match="the file is empty"):
        batches.read_secret(tmp_path / "empty")


def test_write_grading_says_which_file_it_cannot_write(tmp_path):
    with pytest.raises(JudgeError, match="nowhere/g.md: cannot write"):
        batches.write_grading([], {}, batches.Outputs(markdown=tmp_path / "nowhere" / "g.md"))
