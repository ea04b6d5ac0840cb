"""Judging one file for the command line: through the local judge server when it can (started
here on first use), else in this process; either way `runner.judge` decides, each submission in
its own fresh worker.

Nothing here imports PyTorch: a `tpuzzle run` served by a warm server never loads it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from judge.core.results import Progress, RunReport
from judge.core.spec import PuzzleSpec
from judge.errors import JudgeError, SubmissionNotFound
from judge.judging import options, server
from judge.workers import launcher


def judge_file(
    spec: PuzzleSpec,
    submission: Path,
    fields: dict,
    progress: Callable[[Progress], None] | None = None,
    use_server: bool = True,
) -> RunReport:
    """The report on one submission. `fields` are runner.RunOptions' fields (interpret already
    decided). A server that cannot be reached or fails is reported on stderr and the file is
    judged here instead; a run under compute-sanitizer, or one that measures the device again,
    is always judged here."""
    local = fields.get("sanitize") or fields.get("recalibrate")  # a run of its own, measured anew
    if use_server and server.enabled() and not local:
        try:
            return request(spec.directory, submission, fields, progress)
        except OSError as exc:
            print(f"note: judging in this process ({exc})", file=sys.stderr)
    fields = {**fields, "interpret": launcher.interpreting(fields.get("interpret"))}  # judged here
    if not fields.get("sanitize"):
        launcher.zygote(bool(fields["interpret"]))  # imports while this process imports PyTorch
    from judge.judging import runner

    return runner.judge(spec, submission, options.RunOptions(**fields), progress=progress)


def run_fields(
    submission: Path,
    interpret: bool,
    timing: bool,
    cases: tuple | None,
    timeout: float | None,
    gpu: int | None,
    sanitize: bool,
) -> dict:
    """runner.RunOptions' fields for `tpuzzle run`: the sanitizer found, the secret seed read;
    JudgeError for a missing file or a sanitizer asked for without a GPU.

    Without --interpret the mode is left undecided (None: the interpreter exactly when no CUDA
    device is present) for whoever judges: the server, whose driver is initialised already,
    or this process when it judges itself. Asking the driver here (cuInit) would cost each run
    about 0.2 s on an H100 machine. A sanitized run, always judged here, decides it now."""
    from judge.workers import sanitize as memcheck

    if not submission.is_file():
        raise SubmissionNotFound(f"{submission}: no such file")
    mode = True if interpret else None
    tool = memcheck.find_tool() if sanitize else None
    if tool is not None:
        if interpret or not launcher.cuda_present():
            raise JudgeError("--sanitize checks kernels on a CUDA device; none is in use here")
        mode = False
    return {
        "interpret": mode,
        "timing": timing,
        "cases": cases,
        "timeout_s": timeout,
        "secret": options.secret_from_env(),
        "gpu": gpu,
        "sanitize": tool,
    }


# ------------------------------------------------------------------------------ the server's client


def connect(path: Path, timeout: float | None = None) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    sock.settimeout(None)
    return sock


def start(path: Path) -> socket.socket:
    """Connect to the server at path, starting it first if none answers."""
    sock = connect(path)
    if sock is not None:
        return sock
    log = path.with_suffix(".log")
    with open(log, "ab") as out:
        started = subprocess.Popen(
            [sys.executable, "-m", "judge.judging.server", str(path)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # outlives this command
            cwd="/",
            env=server_env(),
        )
    deadline = time.monotonic() + server.START_TIMEOUT_S
    while time.monotonic() < deadline:
        sock = connect(path)
        if sock is not None:
            return sock
        if started.poll() is not None:  # it failed before it listened: no use waiting
            raise OSError(f"the judge server ended as it started ({log})")
        time.sleep(0.05)
    raise OSError(f"the judge server did not start within {server.START_TIMEOUT_S:g} s ({log})")


def server_env() -> dict[str, str]:
    """The server's environment: ours, with this judge first on PYTHONPATH, so that the server
    imports the judge its client runs (it starts in /), installed or not."""
    return launcher.judge_first(dict(os.environ))


def request(
    spec_dir: Path,
    submission: Path,
    fields: dict,
    progress: Callable[[Progress], None] | None = None,
) -> RunReport:
    """Judge through the server (started if need be): the same report `runner.judge` gives.
    Raises OSError when no server can be reached or it fails; JudgeError for a usage error."""
    message = {
        "op": "judge",
        "spec_dir": str(Path(spec_dir).resolve()),
        "submission": str(Path(submission).resolve()),
        "options": options.fields_to_dict(fields),
        "environ": dict(os.environ),
    }
    sock = start(server.socket_path())
    with sock, sock.makefile("rwb") as stream:
        stream.write(json.dumps(message).encode() + b"\n")
        stream.flush()
        for line in stream:
            event = json.loads(line)
            if event["event"] == "progress" and progress is not None:
                progress(Progress(**event["progress"]))
            elif event["event"] == "report":
                return RunReport.from_dict(event["report"])
            elif event["event"] == "usage":
                raise JudgeError(event["message"])
            elif event["event"] == "error":
                raise OSError(f"the judge server failed: {event['message']}")
    raise OSError("the judge server closed the connection before the report")


def control(op: str) -> dict | None:
    """Ask a running server (of this environment) for its status or to stop; None if none runs."""
    sock = connect(server.socket_path(), timeout=5)
    if sock is None:
        return None
    try:
        with sock, sock.makefile("rwb") as stream:
            stream.write(json.dumps({"op": op}).encode() + b"\n")
            stream.flush()
            line = stream.readline()
    except OSError:  # a server that is stopping: it answers no more
        return None
    return json.loads(line) if line else None
