"""A local judge server: one long-lived process that keeps PyTorch imported, its zygotes ready and
its reference truths in memory, so that `tpuzzle run` after an edit starts in a fraction of a
second instead of importing PyTorch twice.

Like the daemons of Bazel, Gradle or dmypy: the command line starts it on first use and talks to
it over a Unix socket that only the same user can reach; it stops after IDLE_S seconds without a
request or on `tpuzzle server stop`. Each server is keyed by a fingerprint of the judge's own
sources, the Python executable and the environment that shapes imports, so an edited judge or
another environment gets a server of its own (the one it replaces idles out).

What runs in it is what `tpuzzle run` runs in-process: `runner.judge`, each submission in its own
fresh worker (forked from the server's zygote) that dies with it. A client that disconnects
(Ctrl-C) has its worker killed. Judgings on the GPU take turns, one at a time per device, so two
runs never time each other's kernels.

Protocol: one JSON object per line. The client sends {"op": "judge", ...} (see `client.request`), or
{"op": "ping"} / {"op": "stop"}; the server answers with {"event": "progress", ...} lines and
one {"event": "report", "report": {...}} or {"event": "error", "message": "..."}.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from judge.core.results import RunReport
from judge.core.spec_reader import load_spec
from judge.errors import JudgeError
from judge.judging.options import RunOptions, fields_from_dict

SERVER_ENV = "TPUZZLE_SERVER"  # 0: judge in this process, never through a server
IDLE_ENV = "TPUZZLE_SERVER_IDLE"
IDLE_S = 900.0  # a server with no request for this long exits
START_TIMEOUT_S = 180.0  # a new server imports PyTorch before it listens
SHAPING = (  # environment variables that change what an import finds or does
    "PYTHONPATH",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_VISIBLE_DEVICES",  # which devices a run sees, and whether it sees one at all
    "TPUZZLE_CACHE",
    "TPUZZLE_TRUTH_CACHE_MB",
    "TPUZZLE_TRUTH_DISK_MB",
    "TPUZZLE_TMPDIR",
    "TPUZZLE_ZYGOTE",
    "TPUZZLE_KEEP_COMPILED",
    "XDG_CACHE_HOME",
)
SHAPING_PREFIXES = ("TRITON_", "TORCH_", "PYTORCH_", "OMP_", "MKL_", "NVIDIA_")


# ------------------------------------------------------------------------------ where it listens


def enabled(environ: dict[str, str] | None = None) -> bool:
    environ = os.environ if environ is None else environ
    return environ.get(SERVER_ENV, "1") != "0" and hasattr(socket, "AF_UNIX")


def fingerprint(environ: dict[str, str] | None = None) -> str:
    """What a server must share with its client: the judge's sources, Python, the shaping
    environment."""
    environ = os.environ if environ is None else environ
    digest = hashlib.sha256(sys.executable.encode())
    package = Path(__file__).resolve().parents[1]
    for path in sorted(package.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(package)}:{stat.st_mtime_ns}:{stat.st_size}".encode())
    for key in sorted(environ):
        if key in SHAPING or key.startswith(SHAPING_PREFIXES):
            digest.update(f"{key}={environ[key]}".encode())
    return digest.hexdigest()[:16]


def runtime_dir() -> Path:
    """A folder only this user can enter: $XDG_RUNTIME_DIR/tpuzzle, else /tmp/tpuzzle-UID."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    path = Path(base) / "tpuzzle" if base else Path("/tmp") / f"tpuzzle-{os.getuid()}"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_uid != os.getuid() or path.stat().st_mode & 0o077:
        raise JudgeError(f"{path}: not a private folder of this user; remove it")
    return path


def socket_path(environ: dict[str, str] | None = None) -> Path:
    return runtime_dir() / f"server-{fingerprint(environ)}.sock"


# ------------------------------------------------------------------------------ the server


class Server:
    """Accepts connections, one thread each; exits when idle or told to stop."""

    def __init__(self, path: Path):
        self.path = path
        self.idle_s = float(os.environ.get(IDLE_ENV, IDLE_S))
        self.last = time.monotonic()
        self.active = 0
        self.judged = 0
        self.started = time.time()
        self.lock = threading.Lock()  # guards active, last, judged
        self.devices: dict[object, threading.Lock] = {}  # one judging at a time per device
        self.spares = SpareTimers()
        self.stopping = threading.Event()

    def serve(self) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        listener.bind(str(self.path))
        os.chmod(self.path, 0o600)
        listener.listen(16)
        listener.settimeout(1.0)
        try:
            while not self.stopping.is_set() and not self.idle():
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                threading.Thread(target=self.handle, args=(conn,), daemon=True).start()
        finally:
            listener.close()
            self.spares.close()
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    def idle(self) -> bool:
        with self.lock:
            return self.active == 0 and time.monotonic() - self.last > self.idle_s

    def handle(self, conn: socket.socket) -> None:
        with self.lock:
            self.active += 1
        try:
            with conn, conn.makefile("rwb") as stream:
                if peer_uid(conn) != os.getuid():
                    return
                line = stream.readline()
                if line:
                    self.answer(json.loads(line), conn, stream)
        except (OSError, ValueError):
            pass  # a client that went away or sent garbage
        finally:
            with self.lock:
                self.active -= 1
                self.last = time.monotonic()

    def answer(self, message: dict, conn: socket.socket, stream) -> None:
        def send(event: str, **fields) -> None:
            stream.write(json.dumps({"event": event, **fields}).encode() + b"\n")
            stream.flush()

        op = message.get("op")
        if op in ("ping", "stop"):
            send("status", pid=os.getpid(), started=self.started, judged=self.judged)
            if op == "stop":
                self.stopping.set()
            return
        if op != "judge":
            return send("error", message=f"unknown op {op!r}")
        try:
            report = self.judge(message, conn, lambda p: send("progress", progress=vars(p)))
        except JudgeError as exc:
            return send("usage", message=str(exc))
        except Exception as exc:  # noqa: BLE001 - the client falls back to judging itself
            return send("error", message=f"{type(exc).__name__}: {exc}")
        with self.lock:
            self.judged += 1
        send("report", report=report.to_dict())

    def judge(self, message: dict, conn: socket.socket, progress) -> RunReport:
        from judge.judging import runner
        from judge.workers import launcher

        spec_dir = Path(message["spec_dir"])
        spec = load_spec(spec_dir / "puzzle.yaml")
        options = RunOptions(**fields_from_dict(message["options"]))
        # a mode left undecided is decided here: the client's environment is this server's (SHAPING)
        options = replace(options, interpret=launcher.interpreting(options.interpret))
        submission = Path(message["submission"])
        worker = launcher.launch(
            spec_dir / "puzzle.yaml",
            submission,
            bool(options.interpret),
            options.gpu,
            options.sanitize,
            environ=message["environ"],
        )
        gone = watch_hangup(conn, lambda: launcher.discard(worker))
        timed = runner.has_timer(options, options.interpret)
        turn = contextlib.nullcontext() if options.interpret else self.turn(options.gpu)
        spec_file = spec_dir / "puzzle.yaml"
        try:
            with turn:
                timer = self.spares.take(spec_file, options.gpu) if timed else None
                report = runner.judge(
                    spec, submission, options, worker, progress=progress, timer=timer
                )
                if timed:
                    self.spares.keep(spec_file, options.gpu)
                return report
        finally:
            gone.set()

    def turn(self, device) -> threading.Lock:
        """The device's lock; no device named (None) is the first one visible, device 0."""
        with self.lock:
            return self.devices.setdefault(slot(device), threading.Lock())


class SpareTimers:
    """Per device, a timer started after a judging for the next one, when it judges the same
    puzzle: the edit-and-run loop, where each `tpuzzle run` would otherwise wait for its new
    timer to create its CUDA context and make its first check (`launcher.warm`), a few tenths
    of a second. A spare is a fresh process that served no judging: taken by one judging, which
    discards it with its worker; one kept for another puzzle, for files of the puzzle changed
    since (its spec and reference, by size and time), or one that ended, is discarded unused.

    It is started and warmed up inside its device's turn (`Server.turn`) and taken inside the
    next one, before that judging times anything: so it makes its first check while no judging
    of this server is timing on the device, or is killed before one does."""

    def __init__(self, launch: Callable[..., Any] | None = None):
        from judge.workers import launcher  # the server's process has imported it already

        self.launch = launch or launcher.launch_timer  # another in the tests
        self.discard = launcher.discard
        # one spare a device (None, no device named, is device 0, as in Server.turn):
        # slot -> (stamp, the device as named, timer)
        self.kept: dict[int, tuple[tuple, Any, Any]] = {}
        self.lock = threading.Lock()

    def take(self, spec_file: Path, device):
        """The device's spare if it was started for this puzzle as it is now, and for the device
        named alike, else None (and a spare of the device that does not fit is discarded)."""
        with self.lock:
            found = self.kept.pop(slot(device), None)
        if found is None:
            return None
        stamp, named, timer = found
        with contextlib.suppress(OSError):  # a folder gone since: no spare fits
            if (stamp, named) == (puzzle_stamp(spec_file), device) and timer.proc.poll() is None:
                return timer
        self.discard(timer)
        return None

    def keep(self, spec_file: Path, device) -> None:
        """Start the device's next spare, warming up at once (a spare that cannot start is
        not kept: the next judging starts its own timer)."""
        try:
            stamp = puzzle_stamp(spec_file)
            timer = self.launch(spec_file, device, warm_up=True)
        except Exception:  # noqa: BLE001 - a spare is only a head start
            return
        with self.lock:
            replaced = self.kept.pop(slot(device), None)
            self.kept[slot(device)] = (stamp, device, timer)
        if replaced is not None:
            self.discard(replaced[-1])

    def close(self) -> None:
        with self.lock:
            kept = list(self.kept.values())
            self.kept.clear()
        for *_, timer in kept:
            self.discard(timer)


def slot(device) -> int:
    """A device's index; None (no device named) is the first visible, 0."""
    return 0 if device is None else device


def puzzle_stamp(spec_file: Path) -> tuple:
    """The size and modification time of each file beside the spec (its reference among them):
    what a timer read as it started."""
    folder = Path(spec_file).resolve().parent
    return tuple(
        (path.name, stat.st_size, stat.st_mtime_ns)
        for path in sorted(folder.iterdir())
        if path.is_file() and (stat := path.stat())
    )


def watch_hangup(conn: socket.socket, on_hangup: Callable[[], None]) -> threading.Event:
    """Call on_hangup if the client closes its end before the returned event is set."""
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            try:
                data = conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
            except BlockingIOError:
                data = b"."
            except OSError:
                data = b""
            if not data and not done.is_set():
                on_hangup()
                return
            done.wait(0.2)

    threading.Thread(target=watch, daemon=True).start()
    return done


def peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[2]


def main(argv: list[str]) -> int:
    """Run a server at argv[1]: import what judging needs first, then listen."""
    from judge.workers import launcher  # noqa: F401 - PyTorch, imported once here

    path = Path(argv[1])
    launcher.zygote(interpret=not launcher.cuda_present())
    Server(path).serve()
    launcher.close_zygotes()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
