"""How far one `tpuzzle run` has come, on stderr: a live status line on a terminal, else one
plain line per stage and per benchmark shape (a CI log). stdout stays the report's (or the JSON's).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator

from rich.console import Console

from judge.core.results import Progress


def describe(event: Progress) -> str:
    """One short line: the stage, the steps done of its total, the step just finished."""
    steps = f" {event.done}/{event.total}" if event.total else ""
    detail = f" {event.detail}" if event.detail else ""
    return f"{event.stage}{steps}{detail}"


@contextlib.contextmanager
def run_progress(enabled: bool = True) -> Iterator[Callable[[Progress], None] | None]:
    """A progress callback for one judging, or None when disabled."""
    if not enabled:
        yield None
        return
    console = Console(stderr=True)
    if not console.is_terminal:
        started = time.monotonic()
        last = [""]

        def plain(event: Progress) -> None:
            if event.stage != last[0] or event.stage == "benchmarks" and event.done:
                last[0] = event.stage
                line = f"[{time.monotonic() - started:5.1f} s] {describe(event)}"
                print(line, file=sys.stderr, flush=True)

        yield plain
        return
    with console.status("starting") as status:
        yield lambda event: status.update(describe(event))
