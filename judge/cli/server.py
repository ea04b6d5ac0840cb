"""`tpuzzle server start|stop|status`: the local judge server that `tpuzzle run` uses."""

from __future__ import annotations

import time

import typer

from judge.cli.usage import usage_errors
from judge.errors import JudgeError
from judge.judging import client, server

app = typer.Typer(
    help="The local judge server: keeps PyTorch imported between runs (started on first use).",
    no_args_is_help=True,
)


def _status_line(found: dict) -> str:
    uptime = time.time() - found["started"]
    return f"running: pid {found['pid']}, up {uptime:.0f} s, {found['judged']} run(s) judged"


@app.command()
@usage_errors
def start() -> None:
    """Start the server for this environment (if none runs) and wait until it listens."""
    try:
        client.start(server.socket_path()).close()
    except OSError as exc:
        raise JudgeError(str(exc)) from None
    typer.echo(_status_line(client.control("ping") or {}))


@app.command()
@usage_errors
def stop() -> None:
    """Stop the server of this environment, if one runs."""
    found = client.control("stop")
    typer.echo("stopped" if found is not None else "no server was running")


@app.command()
@usage_errors
def status() -> None:
    """Whether a server of this environment runs (exit code 1 if none)."""
    found = client.control("ping")
    if found is None:
        typer.echo(f"not running (it would listen at {server.socket_path()})")
        raise typer.Exit(1)
    typer.echo(_status_line(found))
