"""The `tpuzzle` command: parse, call the engine, render, exit with a code.

Exit codes: 0 passed (or a command that succeeded), 1 any other verdict, 2 a usage error.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated

import typer

from judge.cli import classes, hints, importing, pages, profiling, progress, render, report
from judge.cli import server as server_commands
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
    custom_case,
    keeps_finished,
    open_db,
)
from judge.cli.usage import usage_errors
from judge.core import registry
from judge.core.results import finite
from judge.core.spec import Case, PuzzleSpec
from judge.errors import JudgeError
from judge.judging import batch
from judge.records import store

app = typer.Typer(
    help="Triton kernel puzzles, judged: pick one, write a kernel, run it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(server_commands.app, name="server")


@app.command("list")
@usage_errors
def list_puzzles(
    puzzles: PuzzlesOpt = None,
    db: DbOpt = None,
    submitter: Annotated[str, typer.Option(help="Whose results to show.")] = "",
) -> None:
    """The catalogue, with your best result on each puzzle."""
    specs = registry.load_all(registry.puzzles_root(puzzles))
    best = store.best_per_puzzle(open_db(db, reading=True), submitter or store.default_submitter())
    render.console().print(pages.puzzle_list(specs, best))


@app.command()
@usage_errors
def show(puzzle: str, puzzles: PuzzlesOpt = None) -> None:
    """A puzzle's statement, signature, limits and example."""
    spec = registry.get(puzzle, registry.puzzles_root(puzzles))
    render.console().print(pages.puzzle_page(spec))


@app.command()
@usage_errors
def init(
    puzzle: str,
    puzzles: PuzzlesOpt = None,
    directory: Annotated[Path, typer.Option("--dir", help="Where to write it.")] = Path(
        "submissions"
    ),
    force: Annotated[bool, typer.Option(help="Overwrite an existing file.")] = False,
) -> None:
    """Write submissions/PUZZLE.py from the puzzle's template."""
    spec = registry.get(puzzle, registry.puzzles_root(puzzles))
    target = directory / f"{spec.id}.py"
    if target.exists() and not force:
        raise JudgeError(f"{target} already exists; use --force to overwrite it")
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(spec.directory / "template.py", target)
    typer.echo(f"wrote {target}\nnext: edit it, then `tpuzzle run {spec.id} {target}`")


@app.command()
@usage_errors
def run(
    puzzle: str,
    submission: Path,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object only.")] = False,
    interpret: InterpretOpt = False,
    timing: TimingOpt = True,
    size: Annotated[
        list[str] | None,
        typer.Option(help="Run one case of these sizes instead of the tests, e.g. --size N=1025."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the --size case.")] = 0,
    draw: Annotated[
        str,
        typer.Option(
            help="Input draw of the --size case: '' or 'mixed', or a case with inputs of its "
            "own ('test:NAME', as a failing case's reproduce line gives it)."
        ),
    ] = "",
    timeout: TimeoutOpt = None,
    gpu: Annotated[int | None, typer.Option(help="CUDA device index.")] = None,
    submitter: Annotated[str, typer.Option(help="Name stored with the result.")] = "",
    save: Annotated[bool, typer.Option(help="Store the result in the database.")] = True,
    output: Annotated[bool, typer.Option(help="Show what the submission printed.")] = False,
    sanitize: Annotated[
        bool,
        typer.Option(
            "--sanitize",
            help="Run the small cases once, untimed, under compute-sanitizer memcheck "
            "(CUDA toolkit) and report what it finds.",
        ),
    ] = False,
    recalibrate: RecalibrateOpt = False,
    visualize: Annotated[
        Path | None,
        typer.Option(
            help="Also draw one small case (--size, else the failing case of the most legible "
            "shape, else the smallest) into this PNG, run in the interpreter: which program "
            "loaded and stored each element, with a key (needs matplotlib)."
        ),
    ] = None,
    use_server: Annotated[
        bool,
        typer.Option(
            "--server/--no-server",
            help="Judge through the local judge server, started on first use, which keeps "
            "PyTorch imported between runs (TPUZZLE_SERVER=0 turns it off everywhere).",
        ),
    ] = True,
    puzzles: PuzzlesOpt = None,
    db: DbOpt = None,
) -> None:
    """Judge SUBMISSION on PUZZLE: every test case, then timing on the GPU."""
    from judge.judging import client

    spec = registry.get(puzzle, registry.puzzles_root(puzzles))
    cases = (custom_case(spec, size, seed, draw),) if size else None
    if visualize is not None:
        needs_matplotlib("--visualize")
    fields = client.run_fields(submission, interpret, timing, cases, timeout, gpu, sanitize)
    fields.update(recalibrate=recalibrate)
    with progress.run_progress() as shown:
        result = client.judge_file(spec, submission, fields, shown, use_server=use_server)
    rank = None
    if save:
        conn = open_db(db)
        store.record(conn, result, submitter or store.default_submitter())
        rank = local_rank(conn, result)
    if json_out:
        typer.echo(json.dumps(finite(result.to_dict())))
    else:
        render.console().print(report.run_report(result, rank, show_output=output))
    if visualize is not None:
        pictured(spec, submission, result, cases[0] if cases else None, visualize)
    raise typer.Exit(0 if result.passed else 1)


def pictured(spec: PuzzleSpec, submission: Path, result, chosen: Case | None, png: Path) -> None:
    """Draw the chosen case, else the failing case a student may see that draws best (a legible
    shape: visualize.choose), else the smallest test the interpreter runs."""
    from judge.cli import visualize as drawing
    from judge.insight import pictures, trace

    by_name = {c.name: c for c in spec.tests}
    failing = [
        dataclasses.replace(by_name[c.name], seed=c.seed)
        for c in result.cases
        if c.status not in ("passed", "skipped") and not c.hidden and c.name in by_name
    ]
    if chosen is None and failing:
        chosen = pictures.choose(spec, failing)
    if chosen is None:
        visible = [c for c in spec.tests if c.interpret and c.visibility != "hidden"]
        chosen = min(visible or spec.tests, key=lambda c: sum(v for _, v in c.sizes))
    accesses = trace.traced(spec, submission, chosen)
    title = f"{spec.id} · {submission.name} · case {chosen.name} (seed {chosen.seed})"
    drawing.draw(accesses, title, png)
    typer.echo(f"wrote {png}: case {chosen.name}, every load and store by program", err=True)


@app.command()
@usage_errors
@keeps_finished
def bench(
    target: Annotated[
        str | None,
        typer.Argument(
            help="A puzzle id, or a directory of submissions named <puzzle>.py "
            "(default: every puzzle's shipped solution)."
        ),
    ] = None,
    puzzle: Annotated[
        list[str] | None, typer.Option("--puzzle", "-p", help="Only these puzzles (repeatable).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object only.")] = False,
    jsonl: JsonlOpt = None,
    markdown: Annotated[Path | None, typer.Option(help="Also write the table as Markdown.")] = None,
    plot: Annotated[
        Path | None,
        typer.Option(
            help="One puzzle: also time every test size and draw GB/s or TFLOP/s against size "
            "into this PNG (needs matplotlib)."
        ),
    ] = None,
    interpret: InterpretOpt = False,
    timing: TimingOpt = True,
    timeout: TimeoutOpt = None,
    gpus: GpusOpt = None,
    jobs: JobsOpt = 1,
    per_gpu: PerGpuOpt = batch.PER_GPU,
    submitter: Annotated[str, typer.Option(help="Name stored with the results.")] = "",
    save: Annotated[bool, typer.Option(help="Store the results in the database.")] = True,
    recalibrate: RecalibrateOpt = False,
    puzzles: PuzzlesOpt = None,
    db: DbOpt = None,
) -> None:
    """Judge the whole catalogue (or one puzzle, or a directory of submissions): one table."""
    from judge.cli import tables  # a batch's modules: not imported for the other commands
    from judge.records import batches

    choices = batch.Choices(interpret, timing, timeout, gpus, jobs, recalibrate, per_gpu)
    plan = batches.plan_bench(puzzles, target, puzzle or [], choices, plot=plot is not None)
    if plot is not None:
        needs_matplotlib()
    conn = open_db(db) if save else None
    with tables.batch_progress() as tick:
        benched = batches.bench(plan, conn, submitter, markdown, jsonl, tick)
    if plot is not None and benched.reports[0].timing:
        from judge.cli import plot as plotting

        plotting.draw_sweep(plan.jobs[0].spec, benched.reports[0], plot)
    if json_out:
        typer.echo(json.dumps(finite(benched.to_dict())))
    else:
        render.console().print(tables.catalogue_table(benched.rows, benched.interpreted))
    raise typer.Exit(0 if benched.passed else 1)


def needs_matplotlib(option: str = "--plot") -> None:
    from judge.cli import plot

    if plot.missing():
        raise JudgeError(f"{option} needs matplotlib: {plot.missing()}")


app.command()(classes.grade)
app.command()(classes.merge)
app.command("import")(importing.import_)
app.command()(hints.hint)
app.command()(profiling.profile)


@app.command()
@usage_errors
def leaderboard(
    puzzle: Annotated[
        str | None, typer.Argument(help="Only this puzzle (default: every puzzle).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON list only.")] = False,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Also write the leaderboard as one self-contained web page (sortable columns, "
            "each shape's figures).",
        ),
    ] = None,
    puzzles: PuzzlesOpt = None,
    db: DbOpt = None,
) -> None:
    """The fastest ranked result of each submitter, ranked per puzzle and GPU model."""
    from judge.cli import tables
    from judge.records.courses import write_text

    if puzzle is not None:
        puzzle = registry.get(puzzle, registry.puzzles_root(puzzles)).id
    conn = open_db(db, reading=True)
    entries = store.leaderboard(conn, puzzle)
    if html is not None:
        from judge.records import webpage

        when = f"Generated {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC."
        text = webpage.leaderboard_page(entries, store.shape_timings(conn, entries), puzzle, when)
        write_text(html, text)
        typer.echo(f"wrote {html}", err=True)
    if json_out:
        typer.echo(json.dumps(finite([dataclasses.asdict(e) for e in entries])))
    else:
        render.console().print(tables.leaderboard_table(entries, puzzle))


def local_rank(conn, result) -> tuple[int, int] | None:
    if not result.ranked:
        return None
    medians = store.ranked_medians(conn, result.puzzle, result.env.device)
    mine = result.figure.ms
    return 1 + sum(m < mine for m in medians.values()), max(len(medians), 1)


def main() -> None:  # pragma: no cover - console entry point
    app(prog_name="tpuzzle")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
