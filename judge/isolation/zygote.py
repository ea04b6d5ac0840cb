"""A pre-imported parent for workers: PyTorch, Triton and the worker's modules imported once, no
CUDA context, then one fork per submission.

Importing PyTorch takes seconds; forking a process that has already imported it takes
milliseconds, and a forked child may still create its own CUDA context (none exists before the
fork). Each worker is still a fresh process of its own: its own session and process group, its
own environment, directory, Triton cache and CUDA context, dying with the process that forked it.

The judge runs `python -m judge.isolation.zygote SOCKET_FD` with one end of a SOCK_SEQPACKET
socket pair. Requests and answers are one JSON object per packet:

- judge -> zygote: {"op": "fork", "job_dir", "cwd", "env"} with three file descriptors attached
  (the worker's command pipe to read, its event pipe to write, its output pipe);
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
import time
from pathlib import Path

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
    "judge.isolation.worker",
)


def preload() -> None:
    """Import what every worker needs, and do the CPU-only work Triton repeats per process (the
    hash of its own sources that keys its cache); nothing here may create a CUDA context."""
    import importlib

    for name in PRELOADED:
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
            data, fds, _, _ = socket.recv_fds(self.sock, MAX_PACKET, 3)
        except OSError:
            return False
        if not data:
            return False
        try:
            message = json.loads(data)
            if len(fds) != 3 or message.get("op") != "fork":
                raise ValueError("expected a fork request with three file descriptors")
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
            finally:
                os._exit(code)
        os.close(ready_w)
        os.read(ready_r, 1)  # EOF once the child has its own session (or has died)
        os.close(ready_r)
        self.children.add(pid)
        self.reap()  # a child that died at once: its SIGCHLD may have come and gone
        return pid

    def become_worker(self, message: dict, fds: list[int]) -> int:
        from judge.isolation import worker

        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        zygote = os.getppid()
        cmd_fd, event_fd, out_fd = fds
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
        os.chdir(message["cwd"])
        sys.stdout.reconfigure(line_buffering=True)
        sys.stderr.reconfigure(line_buffering=True)
        try:
            return worker.run(message["job_dir"], cmd_fd, event_fd, zygote)
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


# ------------------------------------------------------------------------------ the judge's side


class ForkedProcess:
    """A worker forked by a zygote, seen from the judge like a subprocess.Popen: pid, its
    output stream, poll() and wait() (the exit code arrives from the zygote, which reaps it)."""

    def __init__(self, pid: int, stdout, zygote: Spawner):
        self.pid, self.stdout, self.zygote = pid, stdout, zygote
        self.returncode: int | None = None
        self.orphaned = False  # it ended with its zygote (which its parent-death signal follows)

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.exit_code(self.pid, 0.0)
            self.orphaned = self.returncode is not None and not self.zygote.alive
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            left = WAIT_SLICE_S if deadline is None else max(0.0, deadline - time.monotonic())
            self.returncode = self.zygote.exit_code(self.pid, min(WAIT_SLICE_S, left))
            if self.returncode is None and not running(self.pid):
                self.returncode = self.zygote.exit_code(self.pid, 1.0) or -signal.SIGKILL
            if deadline is not None and time.monotonic() >= deadline:
                break
        self.orphaned = self.returncode is not None and not self.zygote.alive
        if self.returncode is None:
            import subprocess

            raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
        return self.returncode


WAIT_SLICE_S = 0.5  # how often a wait looks at the process itself as well as the zygote's word


def running(pid: int) -> bool:
    """Whether a process exists and has not ended (a zombie has ended: only its reaping is
    left), from /proc; True where /proc cannot tell."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


class Spawner:
    """The judge's handle on one zygote: started with `start(env)`, it imports in the
    background; `fork(...)` waits for it to be ready, then forks a worker."""

    def __init__(self, proc, sock: socket.socket):
        import threading

        self.proc, self.sock = proc, sock
        self.lock = threading.Lock()  # one fork request at a time
        self.changed = threading.Condition()  # guards exits, answers, alive
        self.exits: dict[int, int] = {}
        self.answers: list[dict] = []
        self.ready: dict | None = None  # the zygote's first answer, once it has imported
        self.alive = True
        self.reader = threading.Thread(target=self._read, daemon=True, name="zygote")
        self.reader.start()

    @classmethod
    def start(cls, env: dict[str, str]) -> Spawner:
        import subprocess

        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        proc = subprocess.Popen(
            [sys.executable, "-m", "judge.isolation.zygote", str(theirs.fileno())],
            env=env,
            stdin=subprocess.DEVNULL,
            pass_fds=(theirs.fileno(),),
            start_new_session=True,
        )
        theirs.close()
        return cls(proc, ours)

    def _read(self) -> None:
        while True:
            try:
                data = self.sock.recv(MAX_PACKET)
                message = json.loads(data) if data else None
            except (OSError, ValueError):
                message = None
            with self.changed:
                if not isinstance(message, dict):
                    self.alive = False  # its workers die with it (parent-death signal)
                    self.changed.notify_all()
                    return
                if "exited" in message:
                    self.exits[message["exited"]] = message["code"]
                else:
                    self.answers.append(message)
                self.changed.notify_all()

    def fork(
        self, job_dir: str, cwd: str, env: dict[str, str], timeout: float
    ) -> tuple[ForkedProcess, int, int]:
        """A worker in job_dir, with the judge's ends of its command and event pipes; raises
        OSError when the zygote cannot fork one."""
        cmd_r, cmd_w = os.pipe()
        event_r, event_w = os.pipe()
        out_r, out_w = os.pipe()
        request = {"op": "fork", "job_dir": job_dir, "cwd": cwd, "env": env}
        try:
            with self.lock:
                self._answer(timeout, "ready")
                socket.send_fds(self.sock, [json.dumps(request).encode()], [cmd_r, event_w, out_w])
                answer = self._answer(timeout, "forked")
        except BaseException:
            for fd in (cmd_w, event_r, out_r):
                os.close(fd)
            raise
        finally:
            for fd in (cmd_r, event_w, out_w):
                os.close(fd)
        process = ForkedProcess(answer["forked"], os.fdopen(out_r, "rb"), self)
        return process, cmd_w, event_r

    def _answer(self, timeout: float, key: str) -> dict:
        """The zygote's next answer, which must hold `key` (the first, "ready", is kept)."""
        with self.changed:
            if key == "ready" and self.ready is not None:
                return self.ready
            if not self.changed.wait_for(lambda: self.answers or not self.alive, timeout):
                raise OSError(f"the zygote did not answer within {timeout:g} s")
            if not self.answers:
                raise OSError("the zygote has exited")
            answer = self.answers.pop(0)
        if key not in answer:
            raise OSError(answer.get("error") or f"unexpected answer from the zygote: {answer}")
        if key == "ready":
            self.ready = answer
        return answer

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        """A forked worker's exit code once it has ended (None while it runs); a worker of a
        zygote that died is taken as killed."""
        with self.changed:
            self.changed.wait_for(lambda: pid in self.exits or not self.alive, timeout)
            if pid in self.exits:
                return self.exits.pop(pid)
            return None if self.alive else -signal.SIGKILL

    @property
    def usable(self) -> bool:
        return self.alive and self.proc.poll() is None

    def close(self) -> None:
        """The zygote kills its workers and exits when its socket closes."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=10)
