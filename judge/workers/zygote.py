"""A pre-imported parent for workers: PyTorch, Triton and the worker's modules imported once, no
CUDA context, then one fork per submission.

Importing PyTorch takes seconds; forking a process that has already imported it takes
milliseconds, and a forked child may still create its own CUDA context (none exists before the
fork). Each worker is still a fresh process of its own: its own session and process group, its
own environment, directory, Triton cache and CUDA context, dying with the process that forked it.

The judge runs `python -m judge.workers.zygote SOCKET_FD` with one end of a SOCK_SEQPACKET
socket pair. Requests and answers are one JSON object per packet:

- judge -> zygote: {"op": "fork", "job_dir", "cwd", "env"} with four file descriptors attached
  (the worker's command pipe to read, its event pipe to write, its output pipe, and its end of
  the socket that hands it file descriptors);
- zygote -> judge: {"forked": PID} (or {"error": MESSAGE}) in answer, and later, whenever a
  worker ends, {"exited": PID, "code": C} with C as subprocess reports it (negative: a signal).

The zygote stays single-threaded (forking a threaded process is unsafe); when the judge closes
its end (or dies), it kills the workers it forked and exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import sys
import tempfile
import traceback

MAX_PACKET = 1 << 20  # a request: a job's environment and paths
PRELOADED = (  # imported once here; what a worker imports later, it imports itself
    "numpy",
    "torch",
    "torch.profiler",
    "torch.autograd.profiler",
    "torch.utils._python_dispatch",
    "triton",
    "triton.language",
    "triton.testing",
    "judge.workers.worker",
)
# imported by Triton (3.6) when a worker or the timer first loads a compiled kernel: about 0.1 s
# in each process otherwise; absent from older Triton
PRELOADED_WHERE_FOUND = ("triton.experimental.gluon",)


def preload() -> None:
    """Import what every worker needs, and do the CPU-only work Triton repeats per process (the
    hash of its own sources that keys its cache); nothing here may create a CUDA context."""
    import importlib

    for name in PRELOADED:
        importlib.import_module(name)
    for name in PRELOADED_WHERE_FOUND:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    with contextlib.suppress(Exception):  # an internal of Triton: a saving where it exists
        from triton.runtime.cache import triton_key

        triton_key()


class Zygote:
    """The zygote's loop: fork on request, report each worker's exit."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.children: set[int] = set()
        self.wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # the wakeup fd is what matters

    def serve(self) -> None:
        while True:
            ready, _, _ = select.select([self.sock, self.wake_r], [], [])
            if self.wake_r in ready:
                os.read(self.wake_r, 4096)
                self.reap()
            if self.sock in ready and not self.request():
                return

    def request(self) -> bool:
        """Answer one request; False when the judge has gone."""
        try:
            data, fds, _, _ = socket.recv_fds(self.sock, MAX_PACKET, 4)
        except OSError:
            return False
        if not data:
            return False
        try:
            message = json.loads(data)
            if len(fds) != 4 or message.get("op") != "fork":
                raise ValueError("expected a fork request with four file descriptors")
            self.send({"forked": self.fork(message, fds)})
        except (OSError, ValueError) as exc:
            self.send({"error": f"{type(exc).__name__}: {exc}"})
        finally:
            for fd in fds:
                os.close(fd)
        return True

    def fork(self, message: dict, fds: list[int]) -> int:
        """A new worker; returns once it leads a session of its own (so that killing its
        process group cannot miss it)."""
        sys.stdout.flush()
        sys.stderr.flush()
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker
            os.close(ready_r)
            code = 1
            try:
                os.setsid()
                os.close(ready_w)
                code = self.become_worker(message, fds)
            except BaseException:  # noqa: BLE001 - said on the worker's output, which is kept
                traceback.print_exc()
            finally:
                os._exit(code)
        os.close(ready_w)
        os.read(ready_r, 1)  # EOF once the child has its own session (or has died)
        os.close(ready_r)
        self.children.add(pid)
        self.reap()  # a child that died at once: its SIGCHLD may have come and gone
        return pid

    def become_worker(self, message: dict, fds: list[int]) -> int:
        from judge.workers import worker

        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        zygote = os.getppid()
        cmd_fd, event_fd, out_fd, pass_fd = fds
        self.sock.close()
        os.close(self.wake_r)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        os.close(null)
        os.close(out_fd)
        os.environ.clear()
        os.environ.update(message["env"])
        tempfile.tempdir = None  # found again from the job's TMPDIR
        os.chdir(message["cwd"])
        sys.stdout.reconfigure(line_buffering=True)
        sys.stderr.reconfigure(line_buffering=True)
        try:
            return worker.run(message["job_dir"], cmd_fd, event_fd, zygote, pass_fd)
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()

    def reap(self) -> None:
        """Report every child that has ended (also one that ended before its fork was answered:
        its exit is sent first and kept by the judge until asked for)."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.children.discard(pid)
            self.send({"exited": pid, "code": os.waitstatus_to_exitcode(status)})

    def send(self, message: dict) -> None:
        with contextlib.suppress(OSError):  # the judge has gone: the loop ends at its EOF
            self.sock.send(json.dumps(message).encode())

    def close(self) -> None:
        """Kill every worker still running (whole process groups), then reap them."""
        for pid in list(self.children):
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
        for pid in list(self.children):
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)


def main(argv: list[str]) -> int:
    sock = socket.socket(fileno=int(argv[1]))
    preload()
    zygote = Zygote(sock)
    sock.send(json.dumps({"ready": os.getpid()}).encode())
    try:
        zygote.serve()
    finally:
        zygote.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
