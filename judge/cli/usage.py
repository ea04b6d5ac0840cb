"""How a user's mistake ends a command: one red line on stderr and exit code 2, no traceback."""

from __future__ import annotations

import functools

import typer

from judge.errors import JudgeError


def usage_errors(fn):
    """Turn a JudgeError into one red line on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except JudgeError as exc:
            typer.secho(f"error: {exc}", fg="red", err=True)
            raise typer.Exit(2) from None

    return wrapper
