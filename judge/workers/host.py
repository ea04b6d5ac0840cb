"""The worker's machine and its place among processes: what it runs on (`environment`, sent with
its first answer and shown in every report), and the processes around it: it dies with the judge
(`die_with_parent`), and no process a submission started may outlive a call (`descendants`,
`alone`)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import signal
from pathlib import Path

import torch

from judge.workers import watchdog
from judge.workers.referee import Rejected

PR_SET_PDEATHSIG = 1  # prctl(2): the signal this process gets when its parent dies
PR_SET_CHILD_SUBREAPER = 36  # prctl(2): orphaned descendants are re-parented to this process


def environment(interpret: bool) -> dict:
    import triton

    env = {
        "mode": "interpreter" if interpret else "gpu",
        "device": "cpu (Triton interpreter)",
        "driver": "",
        "cuda": torch.version.cuda or "",
        "triton": triton.__version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
    }
    if not interpret:
        env["device"] = torch.cuda.get_device_name()
        env["driver"] = driver_version()
        major, minor = torch.cuda.get_device_capability()
        env["capability"] = f"{major}.{minor}"
        env["shared_memory_kb"] = shared_memory_kb()
    return env


def shared_memory_kb() -> int:
    """Shared memory one block may opt in to, in KiB (0 where neither PyTorch nor Triton says)."""
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    found = getattr(props, "shared_memory_per_block_optin", 0)
    if not found:
        try:
            from triton.runtime import driver

            device = driver.active.get_current_device()
            found = driver.active.utils.get_device_properties(device).get("max_shared_mem", 0)
        except Exception:  # a Triton without the query
            found = 0
    return int(found) // 1024


def driver_version() -> str:
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
        return next(w for w in text.split() if w[:1].isdigit() and w.count(".") >= 1)
    except (OSError, StopIteration):
        return ""


def descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, name) of every live descendant of a process, from /proc (zombies left out); empty
    where /proc does not list children."""
    found, todo = [], [pid]
    while todo:
        for child in watchdog.children(todo.pop()) or []:
            todo.append(child)
            try:
                name, state = watchdog.stat(child)
            except OSError:
                continue
            if state not in watchdog.ENDED:
                found.append((child, name))
    return found


def alone() -> None:
    """No process the submission started may still run: a helper process could do the work
    on the device, out of sight of this process's profiler and events."""
    found = descendants(os.getpid())
    if found:
        for pid, _ in found:  # they may have left the process group the judge kills
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        names = ", ".join(f"{pid} ({name})" for pid, name in found[:3])
        raise Rejected(
            f"solve() left {len(found)} process(es) running: {names}; the work must be done "
            "by Triton kernels launched from the judged process",
            kind="helper-process",
        )


def die_with_parent(parent: int | None) -> None:
    """On Linux, ask the kernel to kill this worker when the judge dies, even by SIGKILL, so that
    a killed batch leaves no worker running on the GPU; and to re-parent the submission's
    orphaned processes to this worker, so that none escapes `alone`. `parent` is None
    when a tool (the sanitizer) stands between the judge and the worker: the worker then dies
    with the tool."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1)  # a daemonised helper stays a descendant
    except (OSError, AttributeError):
        return
    if parent is not None and os.getppid() != parent:  # the judge died before the request
        os._exit(1)
