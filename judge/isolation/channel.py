"""The parent's side of a worker process: start it, talk to it, time it out, kill it.

Commands go down one pipe and events come up another, one JSON object per line; the worker's
stdout and stderr go to a third pipe, drained in a thread and capped. The worker runs in a new
session so that killing its process group also kills whatever it started.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from judge.isolation import sanitize

SECRET_ENV = "TPUZZLE_SECRET_SEED"  # an instructor's secret seed: never passed to a worker
SECRET_FILE_ENV = "TPUZZLE_SECRET_SEED_FILE"
SHM_MIN_FREE = 16 << 30  # /dev/shm holds job directories only when this much is free
OUTPUT_HEAD = 16 * 1024  # bytes of a worker's output kept from the start
OUTPUT_TAIL = 16 * 1024  # and from the end
WORKER_MODULE = "judge.isolation.worker"
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
        self, proc: subprocess.Popen, cmd_fd: int, event_fd: int, job_dir: Path, interpret: bool
    ):
        self.proc, self.cmd_fd, self.event_fd = proc, cmd_fd, event_fd
        self.dir, self.interpret = job_dir, interpret
        self.pending = b""
        self.stopping, self.stopped = threading.Lock(), False
        self.captured = CappedOutput()
        self.drain = threading.Thread(target=self._drain, daemon=True)
        self.drain.start()

    @classmethod
    def start(
        cls, job_dir: Path, env: dict[str, str], interpret: bool, prefix: list[str] = ()
    ) -> WorkerProcess:
        cmd_r, cmd_w = os.pipe()
        event_r, event_w = os.pipe()
        work = job_dir / "work"
        work.mkdir(exist_ok=True)
        proc = subprocess.Popen(
            [
                *prefix,
                sys.executable,
                "-m",
                "judge.isolation.worker",
                str(job_dir),
                str(cmd_r),
                str(event_w),
            ],
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=(cmd_r, event_w),
            start_new_session=True,
        )
        os.close(cmd_r)
        os.close(event_w)
        return cls(proc, cmd_w, event_r, job_dir, interpret)

    def _drain(self) -> None:
        while chunk := self.proc.stdout.read1(65536):
            self.captured.add(chunk)

    def output(self) -> str:
        return self.captured.text()

    # ------------------------------------------------------------------------ talking

    def send(self, command: dict, phase: str) -> None:
        try:
            os.write(self.cmd_fd, (json.dumps(command) + "\n").encode())
        except OSError:
            raise self.died(phase) from None

    def expect(self, name: str, timeout: float, phase: str) -> dict:
        """The next event, which must be `name`; raises a WorkerFailure otherwise."""
        event = self.next_event(timeout, phase)
        if event["event"] in ("error", "rejected"):
            kind, message = event.get("kind"), event.get("message")
            if not (isinstance(kind, str) and isinstance(message, str)):
                raise WorkerReported("error", "protocol", f"garbled message while {phase}")
            raise WorkerReported(event["event"], kind, message)
        if event["event"] != name:
            raise WorkerReported(
                "error", "protocol", f"unexpected {event['event']!r} while {phase}"
            )
        return event

    def expect_ok(self, command: dict, name: str, timeout: float, phase: str) -> dict:
        self.send(command, phase)
        return self.expect(name, timeout, phase)

    def next_event(self, timeout: float, phase: str) -> dict:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise WorkerTimeout(
                    "timeout",
                    f"no answer within {timeout:g} s while {phase}: "
                    "an infinite loop, or a kernel that never ends?",
                )
            ready, _, _ = select.select([self.event_fd], [], [], min(POLL_S, remaining))
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

    def died(self, phase: str) -> WorkerDied:
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.wait()
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

    # ------------------------------------------------------------------------ ending

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self) -> None:
        """Ask the worker to exit, then kill its whole group whatever it did. Idempotent, and
        safe to call from two threads (a batch being stopped while a lane ends its run)."""
        with self.stopping:
            if self.stopped:
                return
            self.stopped = True
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
        self.drain.join(timeout=2)


# ------------------------------------------------------------------------------ starting one


def launch(
    spec_file: Path,
    submission: Path,
    interpret: bool,
    gpu: int | None,
    sanitizer: Path | None = None,
) -> WorkerProcess:
    """A fresh worker for one submission, in a new job directory; it starts importing at once.
    With `sanitizer` (compute-sanitizer's path) the worker runs under memcheck."""
    job_dir = Path(tempfile.mkdtemp(prefix="tpuzzle-", dir=job_root()))
    job = {
        "spec": str(spec_file),
        "submission": str(Path(submission).resolve()),
        "interpret": interpret,
        "launched": time.monotonic(),
        "parent": None if sanitizer else os.getpid(),
    }
    (job_dir / "job.json").write_text(json.dumps(job))
    env = worker_env(job_dir, interpret, gpu)
    prefix: list[str] = []
    if sanitizer is not None:
        prefix = sanitize.wrapper(sanitizer, job_dir)
        env.update(sanitize.worker_env())
    return WorkerProcess.start(job_dir, env, interpret, prefix)


def discard(worker: WorkerProcess) -> None:
    """Stop a worker (its whole process group) and remove its job directory."""
    worker.stop()
    shutil.rmtree(worker.dir, ignore_errors=True)


def job_root() -> str | None:
    """Where job directories go: TPUZZLE_TMPDIR, else memory (/dev/shm) when it has room for
    large buffers, else the system's temporary directory."""
    if os.environ.get("TPUZZLE_TMPDIR"):
        return os.environ["TPUZZLE_TMPDIR"]
    shm = Path("/dev/shm")
    try:
        if os.access(shm, os.W_OK) and shutil.disk_usage(shm).free > SHM_MIN_FREE:
            return str(shm)
    except OSError:
        pass
    return None


WORKER_VISIBLE = {"TPUZZLE_PROFILE_DIR"}


def worker_env(job_dir: Path, interpret: bool, gpu: int | None) -> dict[str, str]:
    """The worker's environment: ours, less tpuzzle's own settings (the secret seed, the results
    database), with its own Triton cache."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("TPUZZLE_") or k in WORKER_VISIBLE  # no database, cache or secret
    }
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    env["TRITON_CACHE_DIR"] = str(job_dir / "triton-cache")
    env.pop("TRITON_INTERPRET", None)
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible_device(gpu)
    return env


def visible_device(index: int) -> str:
    """The CUDA_VISIBLE_DEVICES entry for device `index` as this process numbers its devices:
    with CUDA_VISIBLE_DEVICES=2,3 set, index 0 is device 2."""
    visible = [d.strip() for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")]
    visible = [d for d in visible if d]
    if "CUDA_VISIBLE_DEVICES" in os.environ and 0 <= index < len(visible):
        return visible[index]
    return str(index)


def cuda_present() -> bool:
    """Whether a CUDA device is visible, asked of the driver directly (no PyTorch import)."""
    return cuda_device_count() > 0


def cuda_device_count() -> int:
    """CUDA devices visible to this process (CUDA_VISIBLE_DEVICES applies), from the driver API."""
    import ctypes

    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    count = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value
