"""The command line: the Typer app, rich rendering, plots. Nothing below imports it."""

from judge.cli.app import app, main

__all__ = ["app", "main"]
