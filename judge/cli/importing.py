"""`tpuzzle import leetgpu|gpumode CHECKOUT`: another catalogue's problems, converted on this
machine into the user's own puzzles."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from judge.cli.usage import usage_errors
from judge.errors import JudgeError


@usage_errors
def import_(
    kind: Annotated[str, typer.Argument(help="The problem set: leetgpu or gpumode.")],
    checkout: Annotated[Path, typer.Argument(help="Your checkout of its repository.")],
    into: Annotated[
        Path | None,
        typer.Option(
            help="Where the puzzles go (default: your imported folder, found beside the bundled "
            "catalogue; with --into, use --puzzles DIR to see them)."
        ),
    ] = None,
    only: Annotated[
        list[str] | None,
        typer.Option("--only", help="Only problems whose folder contains this (repeatable)."),
    ] = None,
    jobs: Annotated[int, typer.Option(help="Probe processes side by side.")] = 2,
    max_stored_mb: Annotated[
        int,
        typer.Option(help="Largest inputs stored for one case made by code, in MiB."),
    ] = 64,
) -> None:
    """Convert your checkout of LeetGPU's or GPU MODE's problems into tpuzzle puzzles.

    The puzzles go into your own folder, on this machine. Their code runs (in processes of
    their own, on the CPU): import only from a checkout you trust, at a commit you chose.
    Nothing converted is shipped with tpuzzle; each puzzle records its source, commit and
    licence, which `tpuzzle show` prints.
    """
    if jobs < 1:
        raise JudgeError(f"--jobs {jobs}: expected at least 1")
    from judge.sources import importer  # NumPy and the converters: only for this command

    def said(outcome: importer.Outcome) -> None:
        if outcome.converted:
            typer.echo(f"converted {outcome.problem} -> {outcome.puzzle}", err=True)
            for note in outcome.notes:
                typer.secho(f"  {note}", fg="yellow", err=True)
        else:
            typer.secho(f"skipped {outcome.problem}: {outcome.reason}", fg="yellow", err=True)

    done = importer.run(kind, checkout, into, only or (), jobs, max_stored_mb, said)
    reasons = Counter(_kind_of(o.reason) for o in done.skipped)
    summary = ", ".join(f"{n} {why}" for why, n in reasons.most_common())
    typer.echo(
        f"{len(done.converted)} of {len(done.outcomes)} {kind} problems converted into "
        f"{done.into}; {len(done.skipped)} skipped" + (f" ({summary})" if summary else "")
    )
    raise typer.Exit(0 if done.converted else 1)


def _kind_of(reason: str) -> str:
    """A skip reason's kind, for the summary's counts."""
    for words, kind in (
        ("GPUs", "need several GPUs"),
        ("tier", "outside the free tier"),
        ("a type tpuzzle lacks", "an unmapped type"),
        ("is not mapped", "an unmapped type"),
        ("shape of", "a shape not in its sizes"),
        ("ModuleNotFoundError", "a library not installed"),
        ("raised", "code that failed on the CPU"),
        ("accepts zeros", "a check that checks no output"),
        ("its check's", "a tolerance that no expression gives"),
        ("its check ", "a check that fails its own reference"),
        ("rejects the reference", "a check that rejects its own reference"),
        ("only tensors, numbers", "inputs that are not tensors"),
        ("not tensors", "outputs that are not tensors"),
        ("lays the data out", "data that changes from case to case"),
        ("in one case", "data that changes from case to case"),
        ("reference fails", "a reference that fails on the CPU"),
        ("probe process", "code that crashed"),
    ):
        if words in reason:
            return kind
    return "other reasons"
