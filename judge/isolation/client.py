"""Judging one file for the command line: through the local judge server when it can, else in
this process; either way `runner.judge` decides, each submission in its own fresh worker.

Nothing here imports PyTorch: a `tpuzzle run` served by a warm server never loads it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from judge.core.results import Progress, RunReport
from judge.core.spec import PuzzleSpec
from judge.errors import JudgeError, SubmissionNotFound
from judge.isolation import channel, options, server


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
            return server.request(spec.directory, submission, fields, progress)
        except OSError as exc:
            print(f"note: judging in this process ({exc})", file=sys.stderr)
    if not fields.get("sanitize"):
        channel.zygote(bool(fields["interpret"]))  # imports while this process imports PyTorch
    from judge.isolation import runner

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
    """runner.RunOptions' fields for `tpuzzle run`: the mode decided (the interpreter where no
    CUDA device is present), the sanitizer found, the secret seed read; JudgeError for a
    missing file or a sanitizer asked for without a GPU."""
    from judge.isolation import sanitize as memcheck

    if not submission.is_file():
        raise SubmissionNotFound(f"{submission}: no such file")
    interpret = interpret or not channel.cuda_present()
    tool = memcheck.find_tool() if sanitize else None
    if tool is not None and interpret:
        raise JudgeError("--sanitize checks kernels on a CUDA device; none is in use here")
    return {
        "interpret": interpret,
        "timing": timing,
        "cases": cases,
        "timeout_s": timeout,
        "secret": options.secret_from_env(),
        "gpu": gpu,
        "sanitize": tool,
    }
