"""`tpuzzle hint PUZZLE`: the next step of the puzzle's ladder of hints, remembered per person."""

from __future__ import annotations

from typing import Annotated

import typer

from judge.cli import pages, render
from judge.cli.options import DbOpt, PuzzlesOpt, open_db
from judge.cli.usage import usage_errors
from judge.core import registry
from judge.records import store


@usage_errors
def hint(
    puzzle: Annotated[str, typer.Argument(help="The puzzle.")],
    again: Annotated[
        bool, typer.Option("--again", help="Show the hints seen so far, not a new one.")
    ] = False,
    reset: Annotated[bool, typer.Option(help="Forget the hints seen, and start again.")] = False,
    submitter: Annotated[str, typer.Option(help="Whose progress (default: you).")] = "",
    puzzles: PuzzlesOpt = None,
    db: DbOpt = None,
) -> None:
    """The next hint of the puzzle's ladder, from the idea to the kernel's shape.

    Never its code. The hints seen are remembered, so each call goes one step further.
    """
    spec = registry.get(puzzle, registry.puzzles_root(puzzles))
    who = submitter or store.default_submitter()
    conn = open_db(db)
    if reset:
        store.set_hints_shown(conn, who, spec.id, 0)
        typer.echo(f"{spec.id}: the hints start again from the first")
        return
    total = len(spec.hints)
    if total == 0:
        typer.echo(f"{spec.id} has no hints; `tpuzzle show {spec.id}` has its statement")
        return
    seen = store.hints_shown(conn, who, spec.id)
    shown = seen if again else min(seen + 1, total)
    if not again and seen >= total:
        typer.echo(f"{spec.id}: that was the last of its {total} hints; here they are again.")
    store.set_hints_shown(conn, who, spec.id, max(shown, seen))
    render.console().print(pages.hint_panels(spec, shown))
