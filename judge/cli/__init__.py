"""The command line: the Typer app (judge.cli.app), rich rendering, plots. Nothing below imports
it, and importing the package imports none of its modules."""
