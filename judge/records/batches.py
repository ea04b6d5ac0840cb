"""`tpuzzle bench` and `tpuzzle grade` as engine functions: plain values in, frozen dataclasses out.

Each command is two calls. `plan_bench` / `plan_grade` read the command line's values and pick what
to judge; every mistake is a JudgeError raised there, before anything starts. `bench` / `grade`
judge the plan in lanes of fresh workers (`batch.judge_each`), store each report in the database as
it arrives, stream it as one line of a JSON-lines file, tell the caller through `on_tick`, and write
the output files at the end. A batch stopped halfway (Ctrl-C, a failure) raises `Stopped`, which
says how far it got; what finished before stays stored and streamed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager, suppress
from dataclasses import asdict, dataclass, field, replace
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

from judge import __version__
from judge.core import registry
from judge.core.results import RunReport, finite
from judge.core.spec import PuzzleSpec
from judge.errors import JudgeError
from judge.judging import batch, client, server
from judge.records import catalogue, courses, gradebook, grading, policy, scoring, store
from judge.records.courses import write_text
from judge.workers import confine

# ------------------------------------------------------------------------------- progress


@dataclass(frozen=True)
class Tick:
    """How far a batch has got: handed to `on_tick` once at the start, then per submission."""

    done: int  # submissions decided so far (0 on the starting tick)
    total: int  # submissions in the batch
    elapsed_s: float  # seconds since the batch started
    label: str = ""  # the submission just decided: "softmax" (bench), "ada/softmax" (grade)
    report: RunReport | None = None  # its report; None on the starting tick
    resumed: bool = False  # taken from the database (--resume), not judged now


class Stopped(Exception):
    """A batch stopped before its end; `__cause__` says why (KeyboardInterrupt: Ctrl-C). Every
    report decided before it is stored, and streamed when a JSON-lines file was asked for."""

    def __init__(self, done: int, total: int, jsonl: Path | None):
        where = f": results so far in {jsonl}" if jsonl is not None else ""
        super().__init__(f"stopped after {done} of {total}{where}")
        self.done, self.total, self.jsonl = done, total, jsonl


class Stream:
    """A JSON-lines file: one object per line, each line one write, flushed at once, so a batch
    killed at any point leaves whole lines. Writes nothing when `path` is None."""

    def __init__(self, path: Path | None):
        self.file = None
        if path is not None:
            try:
                self.file = path.open("w", encoding="utf-8")
            except OSError as exc:
                raise JudgeError(f"{path}: cannot write: {exc.strerror or exc}") from None

    def write(self, obj: Mapping[str, Any]) -> None:
        if self.file is not None:
            self.file.write(json.dumps(finite(dict(obj)), allow_nan=False) + "\n")
            self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


class _Tally:
    """Counts the decided submissions; streams each one's line, then ticks."""

    def __init__(self, stream: Stream, total: int, on_tick: Callable[[Tick], None] | None):
        self.stream, self.total, self.on_tick = stream, total, on_tick or _ignore
        self.done, self.started = 0, time.monotonic()

    def tick(self, label: str = "", report: RunReport | None = None, resumed: bool = False):
        elapsed = time.monotonic() - self.started
        self.on_tick(Tick(self.done, self.total, elapsed, label, report, resumed))

    def add(self, fields: Mapping[str, Any], label: str, report: RunReport, resumed=False):
        self.stream.write({"kind": "result", **fields, "report": report.to_dict()})
        self.done += 1
        self.tick(label, report, resumed)


@contextmanager
def _tally(jsonl: Path | None, start: Mapping[str, Any], total: int, on_tick) -> Iterator[_Tally]:
    """The start line and tick, the tally, the end line; whatever escapes becomes Stopped."""
    stream = Stream(jsonl)
    tally = _Tally(stream, total, on_tick)
    try:
        stream.write({"kind": "start", "total": total, **start})
        tally.tick()
        yield tally
        stream.write({"kind": "end", "done": tally.done, "total": total})
    except BaseException as exc:
        with suppress(Exception):
            stream.write({"kind": "stopped", "done": tally.done, "total": total})
        raise Stopped(tally.done, total, jsonl) from exc
    finally:
        stream.close()


def _judge(jobs: Sequence[batch.Job], plan: batch.Setup, keep, judge_each=None) -> None:
    """`keep(position, report)` for every job, in this thread, as each report arrives."""
    each = (judge_each or batch.judge_each)(jobs, plan.options, plan.devices)
    with closing(each):  # an exception in `keep` kills the workers still running, at once
        for index, report in each:
            keep(index, report)


def served_each(jobs: Sequence[batch.Job], options, devices: Sequence[int | None]):
    """batch.judge_each for a batch of one: the job judged as `tpuzzle run` judges one, through
    the local judge server when there is one to reach (PyTorch then stays out of this process)."""
    (job,) = jobs
    fields = {f.name: getattr(options, f.name) for f in dataclass_fields(options)}
    yield 0, client.judge_file(job.spec, job.path, {**fields, "gpu": devices[0]})


def served(jobs: Sequence[batch.Job]) -> bool:
    """Whether `tpuzzle bench` hands its jobs to the local judge server: a batch of one."""
    return len(jobs) == 1 and server.enabled()


def _ignore(tick: Tick) -> None:
    pass


# ------------------------------------------------------------------------------- bench


@dataclass(frozen=True)
class BenchPlan:
    """What `tpuzzle bench` judges, and how."""

    jobs: tuple[batch.Job, ...]
    setup: batch.Setup


@dataclass(frozen=True)
class Benched:
    """What `tpuzzle bench` found: a table row and a report per job, in the plan's order."""

    rows: tuple[catalogue.Row, ...]
    reports: tuple[RunReport, ...]

    @property
    def interpreted(self) -> bool:
        return any(r.env.mode == "interpreter" for r in self.reports)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.reports)

    def to_dict(self) -> dict[str, Any]:
        """The `--json` document (NaN and Infinity still in it: see `finite`)."""
        return {
            "mode": "interpreter" if self.interpreted else "gpu",
            "rows": [asdict(r) for r in self.rows],
            "reports": [r.to_dict() for r in self.reports],
        }


def plan_bench(
    puzzles: Path | None,
    target: str | None,
    only: Sequence[str],
    choices: batch.Choices,
    plot: bool = False,
) -> BenchPlan:
    """The shipped solutions, one puzzle's, or a directory's files (`catalogue.select`); with
    `plot`, one puzzle, timed at every test size as well."""
    jobs = catalogue.select(registry.puzzles_root(puzzles), target, list(only))
    how = batch.setup(choices, decide=plot or not served(jobs))
    if plot:
        if len(jobs) != 1:
            raise JudgeError(f"--plot draws one puzzle; {len(jobs)} were selected (name one)")
        if how.options.interpret or not how.options.timing:
            raise JudgeError(
                "--plot needs timings, taken on a GPU only (not --interpret/--no-timing)"
            )
        how = replace(how, options=replace(how.options, sweep=True))
    return BenchPlan(tuple(jobs), how)


def bench(
    plan: BenchPlan,
    conn=None,
    submitter: str = "",
    markdown: Path | None = None,
    jsonl: Path | None = None,
    on_tick: Callable[[Tick], None] | None = None,
    judge_each: Callable | None = None,
) -> Benched:
    """Judge the plan; each report is stored in `conn` (when given) and streamed as it arrives."""
    who = submitter or store.default_submitter()
    reports: list = [None] * len(plan.jobs)
    start = {"command": "bench", "mode": plan.setup.mode, "judge_version": __version__}

    def keep(index: int, report: RunReport) -> None:
        job = plan.jobs[index]
        if conn is not None:
            store.record(conn, report, who)
        reports[index] = report
        fields = {"index": index, "puzzle": job.spec.id, "submission": str(job.path)}
        tally.add(fields, job.spec.id, report)

    if judge_each is None and served(plan.jobs):
        judge_each = served_each
    with _tally(jsonl, start, len(plan.jobs), on_tick) as tally:
        _judge(plan.jobs, plan.setup, keep, judge_each)
    rows = tuple(catalogue.row(j.spec, r) for j, r in zip(plan.jobs, reports, strict=True))
    if markdown is not None:
        write_text(markdown, catalogue.markdown(list(rows)))
    return Benched(rows, tuple(reports))


# ------------------------------------------------------------------------------- grade


@dataclass(frozen=True)
class Outputs:
    """The files a grading is written to; None: not asked for."""

    json: Path | None = None  # the grading document (`tpuzzle merge` joins several)
    junit: Path | None = None  # JUnit XML, one test per file
    markdown: Path | None = None  # a table per puzzle
    csv: Path | None = None  # the gradebook, with credit per case


@dataclass(frozen=True)
class GradePlan:
    """What `tpuzzle grade` judges, and how."""

    submissions: tuple[grading.Submission, ...]  # sorted by (student, puzzle), filtered, sharded
    specs: Mapping[str, PuzzleSpec]  # by puzzle id, for every puzzle submitted
    contexts: Mapping[str, str]  # by puzzle id: what a stored result must match (--resume)
    setup: batch.Setup
    shard: tuple[int, int] | None = None  # (K, N) of --shard K/N
    warnings: tuple[str, ...] = ()  # files skipped while looking for submissions
    course: courses.Course = courses.Course()  # the policy, and the platforms' files asked for
    one_student: bool = False  # ROOT is one student's folder (Gradescope, GitHub Classroom)
    unconfined: Mapping[str, str] = field(default_factory=dict)  # what workers run without

    @property
    def meta(self) -> dict[str, Any]:
        meta = gradebook.grading_meta(bool(self.setup.options.secret), self.shard)
        rules = policy.as_dict(self.course.rules)
        return {**meta, "policy": rules, "unconfined": dict(self.unconfined)}


@dataclass(frozen=True)
class Grading:
    """What `tpuzzle grade` found: every submission with its report, in the plan's order."""

    graded: tuple[grading.Graded, ...]
    interpreted: bool  # judged by the interpreter: nothing timed or ranked
    resumed: int  # reports taken from the database (--resume)
    warnings: tuple[str, ...] = ()  # from writing the platforms' files (Canvas's roster)
    classroom: tuple[str, ...] = ()  # GitHub Classroom's results, one line per student

    @property
    def tables(self) -> dict[str, list[grading.Row]]:
        return grading.class_table(self.graded)


def plan_grade(
    puzzles: Path | None,
    root: Path | None,
    manifest: Path | None,
    only: Sequence[str],
    shard: str | None,
    secret_file: Path | None,
    choices: batch.Choices,
    course: Callable[[set[str]], courses.Course] | None = None,
    unconfined: bool = False,
) -> GradePlan:
    """The class's files (ROOT/<student>/<puzzle>.py, one student's ROOT/<puzzle>.py, or a
    manifest), `only` those puzzles, the slice `shard` ("K/N") of them; the secret seed from
    `secret_file` or the environment. `course` reads the policy and the platforms' inputs, given
    the catalogue's puzzle ids. Hidden cases are graded in full: the instructor's files show
    them, the platforms' files map them to what students may see. Where this machine cannot
    confine the workers, grading is refused unless `unconfined` says to go on without."""
    missing = confine.missing_here()
    if missing and not unconfined:
        raise JudgeError(
            f"cannot confine the submissions' workers here ({confine.describe(missing)}); "
            "pass --unconfined to grade with the grader's rights anyway"
        )
    where = grading.parse_shard(shard) if shard else None
    how = batch.setup(choices, read_secret(secret_file))
    how = replace(how, options=replace(how.options, reveal_hidden=True))
    catalogue_root = registry.puzzles_root(puzzles)
    ids = registry.puzzle_ids(catalogue_root)
    the_course = course(set(ids)) if course is not None else courses.Course()
    student = the_course.metadata.student if the_course.metadata else ""
    subs, warnings = find_submissions(root, manifest, ids, student)
    subs = courses.dated(subs, the_course)
    if only:
        chosen = {registry.get(p, catalogue_root).id for p in only}
        subs = [s for s in subs if s.puzzle in chosen]
    subs = grading.shard(subs, *where) if where else subs
    specs = {pid: registry.get(pid, catalogue_root) for pid in sorted({s.puzzle for s in subs})}
    o = how.options
    contexts = {
        pid: grading.context(spec, o.interpret, o.timing, o.secret) for pid, spec in specs.items()
    }
    specs |= {p: registry.get(p, catalogue_root) for p in the_course.rules.listed}
    one = root is not None and manifest is None and grading.is_one_student(root, ids)
    found = (tuple(subs), specs, contexts, how, where, tuple(warnings), the_course, one, missing)
    return GradePlan(*found)


def grade(
    plan: GradePlan,
    conn=None,
    save: bool = True,
    resume: bool = False,
    outputs: Outputs | None = None,
    jsonl: Path | None = None,
    on_tick: Callable[[Tick], None] | None = None,
    judge_each: Callable | None = None,
) -> Grading:
    """Judge the plan (with `resume`, take the stored report of a file already graded under the
    same context); each new report is stored when `save`, and streamed, as it arrives."""
    subs = plan.submissions
    reports = _stored(plan, conn) if resume else {}
    resumed = sorted(reports)
    todo = [i for i in range(len(subs)) if i not in reports]

    def keep(i: int, report: RunReport, was_stored: bool = False) -> None:
        s = subs[i]
        if save and conn is not None and not was_stored:
            store.record(conn, report, s.student, plan.contexts[s.puzzle], s.sha256)
        reports[i] = report
        fields = {"index": i, "student": s.student, "puzzle": s.puzzle, "path": str(s.path)}
        fields |= {"sha256": s.sha256, "resumed": was_stored}
        tally.add(fields, f"{s.student}/{s.puzzle}", report, was_stored)

    start = {"command": "grade", "mode": plan.setup.mode, **plan.meta}
    with _tally(jsonl, start, len(subs), on_tick) as tally:
        for i in resumed:
            keep(i, reports[i], was_stored=True)
        jobs = [batch.Job(plan.specs[subs[i].puzzle], subs[i].path) for i in todo]
        _judge(jobs, plan.setup, lambda k, report: keep(todo[k], report), judge_each)
    graded = tuple(grading.Graded(s, reports[i]) for i, s in enumerate(subs))
    secret = bool(plan.setup.options.secret)
    marks = scoring.assess(graded, plan.specs, plan.course.rules, secret)
    write_grading(graded, plan.meta, outputs or Outputs(), marks)
    warnings, lines = courses.write(
        graded, plan.specs, plan.course, secret, plan.one_student, marks=marks
    )
    interpreted = bool(plan.setup.options.interpret)
    return Grading(graded, interpreted, len(resumed), tuple(warnings), tuple(lines))


def _stored(plan: GradePlan, conn) -> dict[int, RunReport]:
    """The stored report of every submission already graded under its puzzle's context."""
    found = {}
    for i, s in enumerate(plan.submissions):
        report = store.stored(conn, s.student, s.puzzle, s.sha256, plan.contexts[s.puzzle])
        if report is not None:
            found[i] = report
    return found


def find_submissions(
    root: Path | None, manifest: Path | None, ids, student: str = ""
) -> tuple[list, list[str]]:
    """(submissions, warnings about files skipped) from ROOT or from a manifest CSV; `student`
    names the owner of a ROOT that is one student's folder."""
    if (root is None) == (manifest is None):
        raise JudgeError("give either ROOT (ROOT/<student>/<puzzle>.py) or --manifest CSV")
    if manifest is not None:
        return grading.read_manifest(manifest, ids), []
    return grading.discover(root, ids, student)


def read_secret(path: Path | None) -> str:
    """The secret seed held in `path` ("" without one)."""
    if path is None:
        return ""
    try:
        secret = path.read_text().strip()
    except OSError as exc:
        raise JudgeError(f"--secret-file {path}: {exc.strerror or exc}") from None
    if not secret:
        raise JudgeError(f"--secret-file {path}: the file is empty")
    return secret


def write_grading(
    graded: Sequence[grading.Graded], meta, outputs: Outputs, marks: Sequence | None = None
) -> None:
    """Every output file that was asked for; `marks` (scoring.StudentMark) put points and
    lateness in the Markdown tables and the gradebook CSV."""
    writers = (
        (outputs.json, lambda: gradebook.to_json(graded, meta)),
        (outputs.junit, lambda: gradebook.to_junit(graded)),
        (outputs.markdown, lambda: gradebook.to_markdown(graded, marks)),
        (outputs.csv, lambda: gradebook.to_csv(graded, marks)),
    )
    for path, text in writers:
        if path is not None:
            write_text(path, text())
