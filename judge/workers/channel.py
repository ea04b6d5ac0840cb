"""The parent's side of a worker process: start it, talk to it, time it out, kill it.

Commands go down one pipe and events come up another, one JSON object per line; the worker's
stdout and stderr go to a third pipe, drained in a thread and capped. The worker runs in a new
session so that killing its process group also kills whatever it started. What a worker is
handed, and whether it is forked or started, is judge.workers.launcher's; the limits watched
while it runs are judge.workers.watchdog's.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from judge.workers import watchdog
from judge.workers.handing import HANDED, with_paths
from judge.workers.spawner import Spawner
from judge.workers.watchdog import Watchdog

OUTPUT_HEAD = 16 * 1024  # bytes of a worker's output kept from the start
OUTPUT_TAIL = 16 * 1024  # and from the end
WORKER_MODULE = "judge.workers.worker"
ZYGOTE_LOST = "zygote-lost"  # the reason of a worker that ended with its zygote
ZYGOTE_TIMEOUT_S = 180.0  # a fork from a zygote: importing PyTorch and Triton on a cold disk
POLL_S = 0.2  # how often a wait checks whether the worker is still alive


class WorkerFailure(Exception):
    """The worker did not answer as asked: verdict 'error' or 'rejected', with a reason."""

    verdict = "error"

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message


class WorkerDied(WorkerFailure):
    pass


class WorkerTimeout(WorkerFailure):
    pass


class WorkerReported(WorkerFailure):
    """The worker itself reported an error or a rejection."""

    def __init__(self, verdict: str, kind: str, message: str):
        super().__init__(kind, message)
        self.verdict = verdict


class CappedOutput:
    """Keeps the head and tail of a stream of any length."""

    def __init__(self):
        self.head, self.tail, self.total = bytearray(), bytearray(), 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = OUTPUT_HEAD - len(self.head)
        self.head += chunk[:room]
        self.tail = (self.tail + chunk[room:])[-OUTPUT_TAIL:] if len(chunk) > room else self.tail

    def text(self) -> str:
        omitted = self.total - len(self.head) - len(self.tail)
        middle = f"\n[... {omitted} bytes of output omitted ...]\n" if omitted > 0 else ""
        return (
            bytes(self.head).decode(errors="replace")
            + middle
            + bytes(self.tail).decode(errors="replace")
        )


class WorkerProcess:
    def __init__(
        self,
        proc: subprocess.Popen,
        cmd_fd: int,
        event_fd: int,
        job_dir: Path,
        interpret: bool,
        passer: socket.socket | None = None,
    ):
        self.proc, self.cmd_fd, self.event_fd = proc, cmd_fd, event_fd
        self.passer = passer  # hands the worker file descriptors (the sealed inputs)
        self.dir, self.interpret = job_dir, interpret
        self.pending = b""
        self.stopping, self.stopped = threading.Lock(), False
        self.captured = CappedOutput()
        self.relaunch: Callable[[], WorkerProcess] | None = None  # a fresh worker, launched alike
        self.cache_dir = job_dir / "triton-cache"  # its Triton cache (where its kernels compile)
        self.shown: dict[str, str] = {}  # its copy of the submission: the path the user knows
        self.watchdog: Watchdog | None = None  # a confined worker's limits, watched from here
        self.pausing = threading.Lock()
        self.paused_at: float | None = None  # stopped (SIGSTOP) since, while another times
        self.paused_s = 0.0  # how long it was stopped before that, in all
        self.warming = False  # (a timer) asked to warm up its checks already (launch_timer)
        self.drain = threading.Thread(target=self._drain, daemon=True)
        self.drain.start()

    @classmethod
    def start(
        cls, job_dir: Path, env: dict[str, str], interpret: bool, prefix: list[str] = ()
    ) -> WorkerProcess:
        cmd_r, cmd_w = os.pipe()
        event_r, event_w = os.pipe()
        passer, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        work = job_dir / "work"
        work.mkdir(exist_ok=True)
        proc = subprocess.Popen(
            [
                *prefix,
                sys.executable,
                "-m",
                WORKER_MODULE,
                str(job_dir),
                str(cmd_r),
                str(event_w),
                str(theirs.fileno()),
            ],
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=(cmd_r, event_w, theirs.fileno()),
            start_new_session=True,
        )
        os.close(cmd_r)
        os.close(event_w)
        theirs.close()
        return cls(proc, cmd_w, event_r, job_dir, interpret, passer)

    @classmethod
    def forked(
        cls, spawner: Spawner, job_dir: Path, env: dict[str, str], interpret: bool
    ) -> WorkerProcess:
        """A worker forked by a zygote (PyTorch and Triton already imported there)."""
        work = job_dir / "work"
        work.mkdir(exist_ok=True)
        proc, cmd_w, event_r, passer = spawner.fork(str(job_dir), str(work), env, ZYGOTE_TIMEOUT_S)
        return cls(proc, cmd_w, event_r, job_dir, interpret, passer)

    def _drain(self) -> None:
        while chunk := self.proc.stdout.read1(65536):
            self.captured.add(chunk)

    def output(self) -> str:
        return self.captured.text()

    # ------------------------------------------------------------------------ talking

    def send(self, command: dict, phase: str) -> None:
        """One command; the sealed files it names (this process's /proc/PID/fd/N, which a
        confined worker cannot open) travel as file descriptors ahead of it, named fd:I."""
        command, fds = handed(command)
        try:
            if fds:
                socket.send_fds(self.passer, [b"fds"], fds)
            os.write(self.cmd_fd, (json.dumps(command) + "\n").encode())
        except OSError:
            raise self.died(phase) from None

    def expect(self, name: str | tuple[str, ...], timeout: float, phase: str) -> dict:
        """The next event, which must be `name` (one of them); raises a WorkerFailure
        otherwise."""
        event = self.next_event(timeout, phase)
        if event["event"] in ("error", "rejected"):
            kind, message = event.get("kind"), event.get("message")
            if not (isinstance(kind, str) and isinstance(message, str)):
                raise WorkerReported("error", "protocol", f"garbled message while {phase}")
            for copy, original in self.shown.items():
                message = message.replace(copy, original)
            raise WorkerReported(event["event"], kind, message)
        if event["event"] not in ((name,) if isinstance(name, str) else name):
            raise WorkerReported(
                "error", "protocol", f"unexpected {event['event']!r} while {phase}"
            )
        return event

    def expect_ok(self, command: dict, name: str, timeout: float, phase: str) -> dict:
        self.send(command, phase)
        return self.expect(name, timeout, phase)

    def next_event(self, timeout: float, phase: str) -> dict:
        """The next event; the time the worker spends stopped (`pause`) does not count."""
        deadline = time.monotonic() + timeout - self.stopped_for()
        while b"\n" not in self.pending:
            remaining = deadline + self.stopped_for() - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise WorkerTimeout(
                    "timeout",
                    f"no answer within {timeout:g} s while {phase}: "
                    "an infinite loop, or a kernel that never ends?",
                )
            ready, _, _ = select.select([self.event_fd], [], [], min(POLL_S, remaining))
            if not ready and self.watchdog is not None:
                self.watch(phase)
            chunk = os.read(self.event_fd, 1 << 16) if ready else b""
            if ready and not chunk or not ready and self.proc.poll() is not None:
                raise self.died(phase)
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        try:
            event = json.loads(line)
        except ValueError:
            event = None
        if not (isinstance(event, dict) and isinstance(event.get("event"), str)):
            raise WorkerReported("error", "protocol", f"garbled message while {phase}")
        return event

    def watch(self, phase: str) -> None:
        """Kill the worker when its tree or its folders have grown past their limits."""
        found = self.watchdog.check(self.proc.pid)
        if found is not None:
            self.kill()
            kind, message = found
            raise WorkerFailure(kind, f"{message} while {phase}")

    def died(self, phase: str) -> WorkerDied:
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.wait()
        if getattr(self.proc, "orphaned", False):
            return WorkerDied(
                ZYGOTE_LOST,
                f"the zygote this worker was forked from ended while {phase}, and the worker "
                "with it (did a submission kill the judge's processes?)",
            )
        if code < 0:
            name = signal.Signals(-code).name
            what = {
                "SIGSEGV": " (segmentation fault)",
                "SIGABRT": " (abort)",
                "SIGBUS": " (bus error)",
                "SIGKILL": " (killed)",
            }.get(name, "")
            return WorkerDied("crash", f"the worker died from {name}{what} while {phase}")
        return WorkerDied(
            "exit",
            f"the worker exited with code {code} while {phase} "
            "(os._exit or sys.exit in the submission?)",
        )

    # ------------------------------------------------------------------------ pausing

    def pause(self) -> None:
        """Stop its group and every descendant, those that left the group too (SIGSTOP), while
        another judging times the device: nothing new reaches the device from them, and the
        worker's deadlines stand still until `resume`."""
        with self.pausing:
            if self.paused_at is None and self._signal(signal.SIGSTOP):
                self.paused_at = time.monotonic()

    def resume(self) -> None:
        with self.pausing:
            if self.paused_at is not None:
                self._signal(signal.SIGCONT)
                self.paused_s += time.monotonic() - self.paused_at
                self.paused_at = None

    def stopped_for(self) -> float:
        """Seconds spent stopped by `pause`, so far."""
        at = self.paused_at
        return self.paused_s + (time.monotonic() - at if at is not None else 0.0)

    def _signal(self, sig: int) -> bool:
        """Signal the worker's group; a stop, a go or a kill also reaches each descendant that
        left the group (a submission's helper that called setsid)."""
        walked = sig in (signal.SIGSTOP, signal.SIGCONT, signal.SIGKILL)
        descendants = watchdog.tree(self.proc.pid)[1:] if walked else []  # before any dies
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        for pid in descendants:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        return True

    # ------------------------------------------------------------------------ ending

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def stop(self) -> None:
        """Ask the worker to exit, then kill its whole group whatever it did. Idempotent, and
        safe to call from two threads (a batch being stopped while a lane ends its run)."""
        with self.stopping:
            if self.stopped:
                return
            self.stopped = True
            with self.pausing:
                if self.paused_at is not None:  # stopped while another judging times: not let
                    self._signal(signal.SIGKILL)  # go on for a moment to read the exit
            self._stop()

    def _stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.write(self.cmd_fd, b'{"op": "exit"}\n')
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
        self.proc.wait()
        for fd in (self.cmd_fd, self.event_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.passer is not None:
            self.passer.close()
        self.drain.join(timeout=2)


OWN_FD = re.compile(r"/proc/(\d+)/fd/(\d+)")
MAX_HANDED = 200  # file descriptors with one command (SCM_RIGHTS takes up to 253)


def handed(command: dict) -> tuple[dict, list[int]]:
    """The command with each of this process's /proc/PID/fd/N paths in its input lists replaced
    by fd:I, and the file descriptors in the order of I."""
    fds: list[int] = []
    own = str(os.getpid())

    def swap(path: str) -> str:
        match = OWN_FD.fullmatch(path)
        if not (match and match.group(1) == own and len(fds) < MAX_HANDED):
            return path
        fd = int(match.group(2))
        if fd not in fds:
            fds.append(fd)
        return f"{HANDED}{fds.index(fd)}"

    swapped = with_paths(command, swap)
    if fds:
        swapped["fds"] = len(fds)
    return swapped, fds
