"""`tpuzzle grade` and `tpuzzle merge`: a class graded, its files written for the instructor
(JSON, JUnit, Markdown, CSV) and for the course platforms (Gradescope, GitHub Classroom,
Canvas)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated

import typer

from judge.cli import render, report
from judge.cli.options import (
    DbOpt,
    GpusOpt,
    InterpretOpt,
    JobsOpt,
    JsonlOpt,
    PerGpuOpt,
    PuzzlesOpt,
    RecalibrateOpt,
    TimeoutOpt,
    TimingOpt,
    keeps_finished,
    open_db,
)
from judge.cli.usage import usage_errors
from judge.core import registry
from judge.errors import JudgeError
from judge.judging import batch

JsonOut = Annotated[Path | None, typer.Option("--json", help="Write the grading as JSON.")]
JunitOut = Annotated[Path | None, typer.Option("--junit", help="Write JUnit XML.")]
MarkdownOut = Annotated[Path | None, typer.Option("--markdown", help="Write Markdown tables.")]
CsvOut = Annotated[
    Path | None,
    typer.Option("--csv", help="Write a gradebook CSV: credit per case, points, lateness."),
]
PolicyOpt = Annotated[
    Path | None,
    typer.Option(
        "--policy",
        help="A grading policy (YAML): points per puzzle, correctness and speed shares, case "
        "weights, due date, late penalty (default: 10 points a puzzle, 80% correctness).",
    ),
]
GradescopeOut = Annotated[
    Path | None,
    typer.Option(
        "--gradescope",
        help="Write Gradescope's results.json: this file for one student's folder, else "
        "OUT/<student>/results.json for each student.",
    ),
]
HtmlOut = Annotated[
    Path | None,
    typer.Option(
        "--html",
        help="Write the class's tables as one self-contained web page (ranks per GPU, "
        "sortable columns, each shape's figures).",
    ),
]
CanvasOut = Annotated[
    Path | None,
    typer.Option("--canvas", help="Write a gradebook CSV that Canvas imports (needs --roster)."),
]
RosterOpt = Annotated[
    Path | None,
    typer.Option(
        "--roster",
        help="A CSV mapping each submitter (column 'submitter') to Canvas's Student, ID, "
        "SIS User ID, SIS Login ID and Section columns.",
    ),
]


@usage_errors
@keeps_finished
def grade(
    root: Annotated[
        Path | None,
        typer.Argument(
            help="The class: ROOT/<student>/<puzzle>.py, or one student's folder of "
            "<puzzle>.py files (or use --manifest)."
        ),
    ] = None,
    manifest: Annotated[
        Path | None,
        typer.Option(
            help="A CSV with the header student,puzzle,path (and optionally submitted, an "
            "ISO 8601 time), instead of ROOT."
        ),
    ] = None,
    puzzle: Annotated[
        list[str] | None, typer.Option("--puzzle", "-p", help="Only these puzzles (repeatable).")
    ] = None,
    json_file: JsonOut = None,
    jsonl: JsonlOpt = None,
    junit: JunitOut = None,
    markdown: MarkdownOut = None,
    csv_file: CsvOut = None,
    html: HtmlOut = None,
    policy: PolicyOpt = None,
    gradescope: GradescopeOut = None,
    classroom: Annotated[
        bool,
        typer.Option(
            "--classroom",
            help="Print GitHub Classroom's autograding result (base64 JSON) on stdout: bare for "
            "one student's repository, student<TAB>BASE64 per student of a class.",
        ),
    ] = False,
    canvas: CanvasOut = None,
    roster: RosterOpt = None,
    submission_metadata: Annotated[
        Path | None,
        typer.Option(
            help="Gradescope's submission_metadata.json: dates the files (for the late "
            "penalty), gives the due date if the policy has none, and names the student."
        ),
    ] = None,
    shard: Annotated[
        str | None, typer.Option(help="Grade only slice K of N (e.g. 2/8), for CI matrices.")
    ] = None,
    secret_file: Annotated[
        Path | None,
        typer.Option(help="A file holding the secret seed (default: TPUZZLE_SECRET_SEED[_FILE])."),
    ] = None,
    resume: Annotated[
        bool,
        typer.Option(
            help="Take the stored result of a file already graded under the same judge, puzzle, "
            "mode and seed instead of judging it again."
        ),
    ] = False,
    interpret: InterpretOpt = False,
    timing: TimingOpt = True,
    timeout: TimeoutOpt = None,
    gpus: GpusOpt = None,
    jobs: JobsOpt = 1,
    per_gpu: PerGpuOpt = batch.PER_GPU,
    recalibrate: RecalibrateOpt = False,
    save: Annotated[bool, typer.Option(help="Store the results in the database.")] = True,
    unconfined: Annotated[
        bool,
        typer.Option(
            "--unconfined",
            help="Grade even where this machine cannot confine the workers (no Landlock or "
            "seccomp): the submissions then run with the grader's rights.",
        ),
    ] = False,
    puzzles: PuzzlesOpt = None,
    db: DbOpt = None,
) -> None:
    """Grade a class: every submission in its own worker, then a table per puzzle.

    Exit code 0 when grading completed, whatever the verdicts; 2 when it could not start.
    """
    # a batch's modules, imported by the commands that use them: `tpuzzle run` starts faster
    from judge.cli import tables
    from judge.records import batches, courses

    choices = batch.Choices(interpret, timing, timeout, gpus, jobs, recalibrate, per_gpu)

    def course(ids: set[str]) -> courses.Course:
        return courses.prepare(
            policy, ids, gradescope, classroom, canvas, roster, submission_metadata
        )

    plan = batches.plan_grade(
        puzzles, root, manifest, puzzle or [], shard, secret_file, choices, course, unconfined
    )
    if plan.unconfined:
        typer.secho(f"warning: {report.unconfined_line(plan.unconfined)}", fg="yellow", err=True)
    for warning in plan.warnings:
        typer.secho(f"warning: {warning}", fg="yellow", err=True)
    conn = open_db(db) if save or resume else None
    outputs = batches.Outputs(json_file, junit, markdown, csv_file)
    with tables.batch_progress() as tick:
        graded = batches.grade(plan, conn, save, resume, outputs, jsonl, tick)
    for warning in graded.warnings:
        typer.secho(f"warning: {warning}", fg="yellow", err=True)
    if html is not None:
        write_class_page(html, graded.graded, plan.course.rules.assignment)
    if classroom:  # stdout is the reporter's: the tables go to stderr
        for line in graded.classroom:
            typer.echo(line)
        console = render.console(stderr=True)
    else:
        console = render.console()
    console.print(tables.class_tables(graded.tables))
    if graded.interpreted:
        console.print("Interpreter mode: correctness only; nothing is timed or ranked.")
    if graded.resumed:
        console.print(f"{graded.resumed} result(s) taken from the database (--resume)")


@usage_errors
def merge(
    documents: Annotated[list[Path], typer.Argument(help="Grading JSON files (one per shard).")],
    json_file: JsonOut = None,
    junit: JunitOut = None,
    markdown: MarkdownOut = None,
    csv_file: CsvOut = None,
    html: HtmlOut = None,
    policy: PolicyOpt = None,
    gradescope: GradescopeOut = None,
    canvas: CanvasOut = None,
    roster: RosterOpt = None,
    puzzles: PuzzlesOpt = None,
) -> None:
    """Join the JSON of several `tpuzzle grade --shard` runs into one class table.

    Writes the class's files (JSON, JUnit, Markdown, CSV, the web page, Gradescope, Canvas) as
    one grading would.
    """
    from judge.cli import tables
    from judge.records import batches, courses, gradebook, grading, scoring

    catalogue_root = registry.puzzles_root(puzzles)
    ids = set(registry.puzzle_ids(catalogue_root))
    course = courses.prepare(policy, ids, gradescope, False, canvas, roster)
    texts = []
    for path in documents:
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise JudgeError(f"{path}: cannot read: {exc}") from None
    graded = gradebook.merge(texts, [str(p) for p in documents])
    metas = [json.loads(t).get("meta", {}) for t in texts]
    secret = any(m.get("secret_seed") for m in metas)
    wanted = {g.submission.puzzle for g in graded} | set(course.rules.listed)
    specs = {p: registry.get(p, catalogue_root) for p in sorted(wanted)}
    meta = {**gradebook.grading_meta(secret), "merged": [m.get("shard") for m in metas]}
    marks = scoring.assess(graded, specs, course.rules, secret)
    outputs = batches.Outputs(json_file, junit, markdown, csv_file)
    batches.write_grading(graded, meta, outputs, marks)
    warnings, _ = courses.write(graded, specs, course, secret, one_student=False, marks=marks)
    for warning in warnings:
        typer.secho(f"warning: {warning}", fg="yellow", err=True)
    if html is not None:
        write_class_page(html, graded, course.rules.assignment)
    render.console().print(tables.class_tables(grading.class_table(graded)))


def write_class_page(path: Path, graded, assignment: str) -> None:
    """`--html`: the class's results as one self-contained web page."""
    from judge.records import courses, webpage

    when = f"Generated {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC."
    courses.write_text(path, webpage.class_page(graded, assignment, when))
