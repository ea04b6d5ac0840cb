"""What the commands share: the options that several take, the results database, and how a
batch ends when it is stopped halfway."""

from __future__ import annotations

import contextlib
import functools
import signal
import threading
from pathlib import Path
from typing import Annotated

import typer

from judge.core.spec import Case, PuzzleSpec, violated
from judge.errors import JudgeError
from judge.records import store

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
        from judge.records import batches  # a batch's module: not imported for `tpuzzle run`

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


def open_db(path: Path | None, *, reading: bool = False):
    """The results database. A command that only reads it (`reading`) refuses a --db that names
    no file, where another would create an empty database and show nothing: most likely a typo.
    Without --db, a database not made yet is only one with no results."""
    if reading and path is not None and not path.expanduser().is_file():
        raise JudgeError(f"--db {path}: no such file")
    try:
        return store.connect(path)
    except Exception as exc:  # sqlite3.Error, OSError: the path is the user's
        raise JudgeError(f"results database {path or store.default_path()}: {exc}") from None


def custom_case(spec: PuzzleSpec, sizes: list[str], seed: int, draw: str) -> Case:
    """The one case that --size NAME=INT (every size), --seed and --draw describe."""
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
    if draw not in ("", "mixed") and spec.variant(draw) is None:
        own = [f"{k}:{c.name}" for k, cs in (("test", spec.tests), ("benchmark", spec.benchmarks))
               for c in cs if c.own]  # fmt: skip
        choices = "'mixed'" + "".join(f", {c!r}" for c in own[:3]) + (", ..." if own[3:] else "")
        raise JudgeError(f"--draw {draw!r}: expected {choices} or nothing")
    ordered = tuple((n, values[n]) for n in spec.size_names)
    own = spec.variant(draw)
    if own is not None and own.inputs and own.sizes != ordered:
        given = " ".join(f"{n}={v}" for n, v in own.sizes)
        raise JudgeError(f"--draw {draw!r}: its stored inputs are for --size {given}")
    return Case(name=" ".join(f"{n}={v}" for n, v in ordered), sizes=ordered, seed=seed, draw=draw)
