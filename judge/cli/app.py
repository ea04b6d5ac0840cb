"""The `tpuzzle` command: parse, call the engine, render, exit with a code.

Exit codes: 0 passed (or a command that succeeded), 1 any other verdict, 2 a usage error.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import shutil
import signal
import sys
import threading
from pathlib import Path
from typing import Annotated

import typer

from judge.cli import progress, report
from judge.cli import server as server_commands
from judge.cli.usage import usage_errors
from judge.core import registry
from judge.core.spec import Case, PuzzleSpec, violated
from judge.errors import JudgeError
from judge.isolation import batch
from judge.records import batches, store
from judge.records.batches import finite

app = typer.Typer(
    help="Triton kernel puzzles, judged: pick one, write a kernel, run it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(server_commands.app, name="server")

PuzzlesOpt = Annotated[
    Path | None,
    typer.Option(
        "--puzzles", help="Catalogue directory (default: TPUZZLE_PUZZLES, then the bundled one)."
    ),
]
InterpretOpt = Annotated[
    bool,
    typer.Option(
        "--interpret", help="Use Triton's interpreter on the CPU even when a GPU is present."
    ),
]
TimingOpt = Annotated[bool, typer.Option(help="Time the benchmark cases on the GPU.")]
TimeoutOpt = Annotated[float | None, typer.Option(help="Seconds per phase.")]
GpusOpt = Annotated[
    str | None,
    typer.Option(help="Judge on these GPUs in parallel, one worker each: 'all' or e.g. '0,1'."),
]
PerGpuOpt = Annotated[
    int,
    typer.Option(
        help="Judgings sharing each GPU: they check answers side by side and time one at a "
        "time, with the device to themselves (1: one submission at a time).",
    ),
]
JobsOpt = Annotated[
    int, typer.Option(help="Parallel lanes in interpreter mode (CPU); GPU mode uses --gpus.")
]
RecalibrateOpt = Annotated[
    bool,
    typer.Option(
        help="Measure the device's peaks and the PyTorch reference again instead of using the "
        "cached measurements."
    ),
]
DbOpt = Annotated[
    Path | None,
    typer.Option(
        "--db", help="Results database (default: TPUZZLE_DB, then the user's data directory)."
    ),
]


@app.command("list")
@usage_errors
def list_puzzles(
    puzzles: PuzzlesOpt = None,
    db: DbOpt = None,
    submitter: Annotated[str, typer.Option(help="Whose results to show.")] = "",
) -> None:
    """The catalogue, with your best result on each puzzle."""
    specs = registry.load_all(registry.puzzles_root(puzzles))
    best = store.best_per_puzzle(open_db(db), submitter or store.default_submitter())
    report.console().print(report.puzzle_list(specs, best))


@app.command()
@usage_errors
def show(puzzle: str, puzzles: PuzzlesOpt = None) -> None:
    """A puzzle's statement, signature, limits and example."""
    spec = registry.get(puzzle, registry.puzzles_root(puzzles))
    report.console().print(report.puzzle_page(spec))


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
    draw: Annotated[str, typer.Option(help="Input draw of the --size case: '' or 'mixed'.")] = "",
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
    from judge.isolation import client

    spec = registry.get(puzzle, registry.puzzles_root(puzzles))
    cases = (custom_case(spec, size, seed, draw),) if size else None
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
        report.console().print(report.run_report(result, rank, show_output=output))
    raise typer.Exit(0 if result.passed else 1)


JsonlOpt = Annotated[
    Path | None,
    typer.Option(
        "--jsonl",
        help="Stream one JSON line per submission to this file as each is decided (a start line "
        "first, an end line last); an interrupted run keeps what finished.",
    ),
]


def sigterm_as_ctrl_c():
    """Within: SIGTERM (a cancelled CI job, `kill`) raises KeyboardInterrupt in the main thread,
    as Ctrl-C does. Outside the main thread, where no handler can be set, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        return contextlib.nullcontext()
    return _sigterm_handler()


@contextlib.contextmanager
def _sigterm_handler():
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def keeps_finished(fn):
    """For a batch: SIGTERM stops it as Ctrl-C does; stopped halfway, it says how far it got (what
    finished is stored, and streamed to --jsonl); exit code 130 for an interrupt."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        cause: BaseException | None = None
        with sigterm_as_ctrl_c():
            try:
                return fn(*args, **kwargs)
            except batches.Stopped as stop:
                typer.secho(str(stop), fg="yellow", err=True)
                cause = stop.__cause__
            except KeyboardInterrupt:
                typer.secho("interrupted", fg="yellow", err=True)
        if cause is not None and not isinstance(cause, KeyboardInterrupt):
            raise cause  # a JudgeError: one red line and exit code 2; anything else: a bug
        raise typer.Exit(130)

    return wrapper


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
    choices = batch.Choices(interpret, timing, timeout, gpus, jobs, recalibrate, per_gpu)
    plan = batches.plan_bench(puzzles, target, puzzle or [], choices, plot=plot is not None)
    if plot is not None:
        needs_matplotlib()
    conn = open_db(db) if save else None
    with report.batch_progress() as tick:
        benched = batches.bench(plan, conn, submitter, markdown, jsonl, tick)
    if plot is not None and benched.reports[0].timing:
        from judge.cli import plot as plotting

        plotting.draw_sweep(plan.jobs[0].spec, benched.reports[0], plot)
    if json_out:
        typer.echo(json.dumps(finite(benched.to_dict())))
    else:
        report.console().print(report.catalogue_table(benched.rows, benched.interpreted))
    raise typer.Exit(0 if benched.passed else 1)


def needs_matplotlib() -> None:
    from judge.cli import plot

    if plot.missing():
        raise JudgeError(f"--plot needs matplotlib: {plot.missing()}")


@app.command()
@usage_errors
@keeps_finished
def grade(
    root: Annotated[
        Path | None,
        typer.Argument(help="The class: ROOT/<student>/<puzzle>.py (or use --manifest)."),
    ] = None,
    manifest: Annotated[
        Path | None,
        typer.Option(help="A CSV with the header student,puzzle,path, instead of ROOT."),
    ] = None,
    puzzle: Annotated[
        list[str] | None, typer.Option("--puzzle", "-p", help="Only these puzzles (repeatable).")
    ] = None,
    json_file: Annotated[
        Path | None, typer.Option("--json", help="Write the grading as JSON.")
    ] = None,
    jsonl: JsonlOpt = None,
    junit: Annotated[Path | None, typer.Option(help="Write JUnit XML (one test per file).")] = None,
    markdown: Annotated[Path | None, typer.Option(help="Write Markdown tables.")] = None,
    csv_file: Annotated[
        Path | None, typer.Option("--csv", help="Write a gradebook CSV with credit per case.")
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
    puzzles: PuzzlesOpt = None,
    db: DbOpt = None,
) -> None:
    """Grade a class: every submission in its own worker, then a table per puzzle.

    Exit code 0 when grading completed, whatever the verdicts; 2 when it could not start.
    """
    choices = batch.Choices(interpret, timing, timeout, gpus, jobs, recalibrate, per_gpu)
    plan = batches.plan_grade(puzzles, root, manifest, puzzle or [], shard, secret_file, choices)
    for warning in plan.warnings:
        typer.secho(f"warning: {warning}", fg="yellow", err=True)
    conn = open_db(db) if save or resume else None
    outputs = batches.Outputs(json_file, junit, markdown, csv_file)
    with report.batch_progress() as tick:
        graded = batches.grade(plan, conn, save, resume, outputs, jsonl, tick)
    report.console().print(report.class_tables(graded.tables))
    if graded.interpreted:
        typer.echo("Interpreter mode: correctness only; nothing is timed or ranked.")
    if graded.resumed:
        typer.echo(f"{graded.resumed} result(s) taken from the database (--resume)")


@app.command()
@usage_errors
def merge(
    documents: Annotated[list[Path], typer.Argument(help="Grading JSON files (one per shard).")],
    json_file: Annotated[Path | None, typer.Option("--json", help="Write the merged JSON.")] = None,
    junit: Annotated[Path | None, typer.Option(help="Write JUnit XML.")] = None,
    markdown: Annotated[Path | None, typer.Option(help="Write Markdown tables.")] = None,
    csv_file: Annotated[Path | None, typer.Option("--csv", help="Write a gradebook CSV.")] = None,
) -> None:
    """Join the JSON of several `tpuzzle grade --shard` runs into one class table."""
    from judge.records import gradebook, grading

    texts = []
    for path in documents:
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise JudgeError(f"{path}: cannot read: {exc}") from None
    graded = gradebook.merge(texts, [str(p) for p in documents])
    metas = [json.loads(t).get("meta", {}) for t in texts]
    meta = {
        **gradebook.grading_meta(any(m.get("secret_seed") for m in metas)),
        "merged": [m.get("shard") for m in metas],
    }
    outputs = batches.Outputs(json_file, junit, markdown, csv_file)
    batches.write_grading(graded, meta, outputs)
    report.console().print(report.class_tables(grading.class_table(graded)))


@app.command()
@usage_errors
def leaderboard(
    puzzle: Annotated[
        str | None, typer.Argument(help="Only this puzzle (default: every puzzle).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON list only.")] = False,
    puzzles: PuzzlesOpt = None,
    db: DbOpt = None,
) -> None:
    """The fastest ranked result of each submitter, ranked per puzzle and GPU model."""
    if puzzle is not None:
        puzzle = registry.get(puzzle, registry.puzzles_root(puzzles)).id
    entries = store.leaderboard(open_db(db), puzzle)
    if json_out:
        typer.echo(json.dumps(finite([dataclasses.asdict(e) for e in entries])))
    else:
        report.console().print(report.leaderboard_table(entries, puzzle))


def custom_case(spec: PuzzleSpec, sizes: list[str], seed: int, draw: str) -> Case:
    values = {}
    for item in sizes:
        name, _, value = item.partition("=")
        if name not in spec.size_names or not value.strip().isdigit():
            raise JudgeError(
                f"--size {item!r}: expected NAME=INT with NAME one of {', '.join(spec.size_names)}"
            )
        values[name] = int(value)
    for name, low, high in spec.limits:
        if name not in values:
            raise JudgeError(
                f"--size: {name} is missing (give every size: {', '.join(spec.size_names)})"
            )
        if not low <= values[name] <= high:
            raise JudgeError(f"--size {name}={values[name]}: outside the limits [{low}, {high}]")
    broken = violated(spec.constraints, values)
    if broken:
        raise JudgeError(f"--size: {', '.join(sizes)} breaks the puzzle's constraint {broken!r}")
    if draw not in ("", "mixed"):
        raise JudgeError(f"--draw {draw!r}: expected 'mixed' or nothing")
    ordered = tuple((n, values[n]) for n in spec.size_names)
    return Case(name=" ".join(f"{n}={v}" for n, v in ordered), sizes=ordered, seed=seed, draw=draw)


def open_db(path: Path | None):
    try:
        return store.connect(path)
    except Exception as exc:  # sqlite3.Error, OSError: the path is the user's
        raise JudgeError(f"results database {path or store.default_path()}: {exc}") from None


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
