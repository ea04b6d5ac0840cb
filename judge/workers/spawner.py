"""The judge's side of a zygote (judge.workers.zygote): start it, ask it to fork workers, learn
how each ended. A forked worker is seen as a subprocess.Popen would be (ForkedProcess)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from judge.workers import watchdog
from judge.workers.zygote import MAX_PACKET


class ForkedProcess:
    """A worker forked by a zygote, seen from the judge like a subprocess.Popen: pid, its
    output stream, poll() and wait() (the exit code arrives from the zygote, which reaps it)."""

    def __init__(self, pid: int, stdout, zygote: Spawner):
        self.pid, self.stdout, self.zygote = pid, stdout, zygote
        self.returncode: int | None = None
        self.orphaned = False  # it ended with its zygote (which its parent-death signal follows)

    def ended(self, code: int | None) -> None:
        """Take the exit code once known; a worker whose zygote is gone by then went with it."""
        if code is not None:
            self.returncode, self.orphaned = code, not self.zygote.alive

    def poll(self) -> int | None:
        if self.returncode is None:
            self.ended(self.zygote.exit_code(self.pid, 0.0))
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            left = WAIT_SLICE_S if deadline is None else max(0.0, deadline - time.monotonic())
            code = self.zygote.exit_code(self.pid, min(WAIT_SLICE_S, left))
            if code is None and not running(self.pid):  # gone, with no word from the zygote
                code = self.zygote.exit_code(self.pid, 1.0)
                code = -signal.SIGKILL if code is None else code
            self.ended(code)
            if deadline is not None and time.monotonic() >= deadline:
                break
        if self.returncode is None:
            raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
        return self.returncode


WAIT_SLICE_S = 0.5  # how often a wait looks at the process itself as well as the zygote's word


def running(pid: int) -> bool:
    """Whether a process exists and has not ended (a zombie has ended: only its reaping is
    left), from /proc; True where /proc cannot tell."""
    try:
        return watchdog.stat(pid)[1] not in watchdog.ENDED
    except FileNotFoundError:
        return False
    except OSError:
        return True


class Spawner:
    """The judge's handle on one zygote: started with `start(env)`, it imports in the
    background; `fork(...)` waits for it to be ready, then forks a worker."""

    def __init__(self, proc, sock: socket.socket):
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
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        proc = subprocess.Popen(
            [sys.executable, "-m", "judge.workers.zygote", str(theirs.fileno())],
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
    ) -> tuple[ForkedProcess, int, int, socket.socket]:
        """A worker in job_dir, with the judge's ends of its command and event pipes and of the
        socket that hands it file descriptors; raises OSError when the zygote cannot fork one."""
        cmd_r, cmd_w = os.pipe()
        event_r, event_w = os.pipe()
        out_r, out_w = os.pipe()
        passer, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        request = {"op": "fork", "job_dir": job_dir, "cwd": cwd, "env": env}
        fds = [cmd_r, event_w, out_w, theirs.fileno()]
        try:
            with self.lock:
                self._answer(timeout, "ready")
                socket.send_fds(self.sock, [json.dumps(request).encode()], fds)
                answer = self._answer(timeout, "forked")
        except BaseException:
            for fd in (cmd_w, event_r, out_r):
                os.close(fd)
            passer.close()
            raise
        finally:
            for fd in (cmd_r, event_w, out_w):
                os.close(fd)
            theirs.close()
        process = ForkedProcess(answer["forked"], os.fdopen(out_r, "rb"), self)
        return process, cmd_w, event_r, passer

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
