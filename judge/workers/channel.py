"""The parent's side of a worker process: start it, talk to it, time it out, kill it.

Commands go down one pipe and events come up another, one JSON object per line; the worker's
stdout and stderr go to a third pipe, drained in a thread and capped. The worker runs in a new
session so that killing its process group also kills whatever it started.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import yaml

from judge.core.spec_reader import worker_view
from judge.workers import confine, sanitize
from judge.workers.handing import HANDED, with_paths
from judge.workers.spawner import Spawner

SECRET_ENV = "TPUZZLE_SECRET_SEED"  # an instructor's secret seed: never passed to a worker
SECRET_FILE_ENV = "TPUZZLE_SECRET_SEED_FILE"
SHM_MIN_FREE = 16 << 30  # /dev/shm holds job directories only when this much is free
OUTPUT_HEAD = 16 * 1024  # bytes of a worker's output kept from the start
OUTPUT_TAIL = 16 * 1024  # and from the end
WORKER_MODULE = "judge.workers.worker"
ZYGOTE_LOST = "zygote-lost"  # the reason of a worker that ended with its zygote
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

    def expect(self, name: str, timeout: float, phase: str) -> dict:
        """The next event, which must be `name`; raises a WorkerFailure otherwise."""
        event = self.next_event(timeout, phase)
        if event["event"] in ("error", "rejected"):
            kind, message = event.get("kind"), event.get("message")
            if not (isinstance(kind, str) and isinstance(message, str)):
                raise WorkerReported("error", "protocol", f"garbled message while {phase}")
            for copy, original in self.shown.items():
                message = message.replace(copy, original)
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


class Watchdog:
    """The limits a worker's rlimits cannot hold, checked from the parent while it waits: the
    processes of its whole tree (RLIMIT_NPROC counts a user's processes, and does not bind root)
    and the bytes of its writable folders (RLIMIT_FSIZE holds one file, not many)."""

    DISK_EVERY_S = 0.2  # folder sizes are summed at most this often
    MAX_ENTRIES = 100_000  # more files than this in its folders is past the limit by itself

    def __init__(self, folders: list[Path], limits: confine.Limits):
        self.folders, self.limits = folders, limits
        self.disk_checked = 0.0

    def check(self, pid: int) -> tuple[str, str] | None:
        tree = tree_size(pid)
        if tree > self.limits.processes:
            return "process-limit", (
                f"the submission's processes passed the limit of {self.limits.processes} "
                f"({tree} running)"
            )
        now = time.monotonic()
        if now - self.disk_checked < self.DISK_EVERY_S:
            return None
        self.disk_checked = now
        used, entries = folder_bytes(self.folders, self.MAX_ENTRIES)
        if used > self.limits.disk_bytes or entries > self.MAX_ENTRIES:
            return "disk-limit", (
                f"the worker's folders passed the disk limit of {self.limits.disk_bytes >> 20} "
                f"MiB or {self.MAX_ENTRIES} files ({used >> 20} MiB in {entries} files)"
            )
        return None


def tree_size(pid: int) -> int:
    """Live processes in a process's tree, itself included (threads not counted), from /proc."""
    count, todo = 0, [pid]
    while todo:
        parent = todo.pop()
        count += 1
        for children in Path(f"/proc/{parent}/task").glob("*/children"):
            try:
                todo += [int(p) for p in children.read_text().split()]
            except (OSError, ValueError):
                continue
    return count


def folder_bytes(folders: list[Path], cap: int) -> tuple[int, int]:
    """(bytes, entries) under the folders, counting at most `cap` + 1 entries."""
    used = entries = 0
    todo = [str(f) for f in folders]
    while todo and entries <= cap:
        try:
            scan = os.scandir(todo.pop())
        except OSError:
            continue
        with scan:
            for entry in scan:
                entries += 1
                try:
                    if entry.is_dir(follow_symlinks=False):
                        todo.append(entry.path)
                    else:
                        used += entry.stat(follow_symlinks=False).st_blocks * 512
                except OSError:
                    continue
    return used, entries


# ------------------------------------------------------------------------------ starting one


def launch(
    spec_file: Path,
    submission: Path,
    interpret: bool,
    gpu: int | None,
    sanitizer: Path | None = None,
    environ: dict[str, str] | None = None,
    prefix: tuple[str, ...] = (),
) -> WorkerProcess:
    """A fresh worker for one submission, in a new job directory: forked from this process's
    zygote, else started from nothing. With `sanitizer` (compute-sanitizer's path) the worker
    runs under memcheck; with a command `prefix` (a profiler's), started from nothing under it.
    `environ` stands for this process's environment (a judge server judging for a client passes
    the client's).

    The worker is handed what it needs in its job directory (a copy of the submission, the
    puzzle's worker view) and, unless a tool wraps it or TPUZZLE_CONFINE=0, confinement rules
    it applies to itself (judge.workers.confine): it cannot see the submission's folder, the
    catalogue or anything else of the machine's that it does not need."""
    job_dir = Path(tempfile.mkdtemp(prefix="tpuzzle-", dir=job_root()))
    environ = dict(os.environ if environ is None else environ)
    env = worker_env(job_dir, interpret, gpu, environ)
    kept = compiled_dir(submission, environ)
    if kept is not None:
        env["TRITON_CACHE_DIR"] = str(kept)
    cache = Path(env["TRITON_CACHE_DIR"])
    tool = bool(sanitizer or prefix)
    rules = None
    if not tool and confining(environ):
        forbidden = forbidden_dirs(spec_file, submission, environ)
        limits = confine.limits_from(environ)
        rules = confine.rules([job_dir, cache], forbidden, not interpret, limits).to_json()
    job = {
        "spec": str(staged_spec(spec_file, job_dir)),
        "submission": str(staged_submission(submission, job_dir)),
        "interpret": interpret,
        "launched": time.monotonic(),
        "parent": None if tool else os.getpid(),
        "confine": rules,
    }
    (job_dir / "job.json").write_text(json.dumps(job))
    worker = _started(job_dir, interpret, sanitizer, env, prefix)
    worker.cache_dir = cache
    if rules is not None:
        worker.watchdog = Watchdog([job_dir, cache], confine.Limits(**rules["limits"]))
    worker.shown = {job["submission"]: str(Path(submission).resolve())}
    worker.relaunch = lambda: launch(
        spec_file, submission, interpret, gpu, sanitizer, environ, prefix
    )
    return worker


def launch_timer(spec_file: Path, gpu: int | None, environ: dict[str, str] | None = None):
    """The timer of one judging: a worker process that never imports a submission (it refuses
    to). It measures the device and the reference, and replays, times and checks the launch
    sequences a submission's worker recorded (judge.workers.player). It runs no submission
    code, so it is not confined: it reads the puzzle's reference."""
    job_dir = Path(tempfile.mkdtemp(prefix="tpuzzle-timer-", dir=job_root()))
    job = {
        "spec": str(spec_file),
        "submission": "",
        "timer": True,
        "interpret": False,
        "launched": time.monotonic(),
        "parent": os.getpid(),
    }
    (job_dir / "job.json").write_text(json.dumps(job))
    environ = dict(os.environ if environ is None else environ)
    env = worker_env(job_dir, False, gpu, environ)
    kept = timer_cache()
    if kept is not None:  # the judge's own checking kernels, compiled once per machine
        env["TRITON_CACHE_DIR"] = str(kept)
    return _started(job_dir, False, None, env, ())


def timer_cache() -> Path | None:
    """The timer's Triton cache, kept between judgings: only the judge's own kernels compile
    there (a submission's are loaded from the files copied out of its worker's cache)."""
    from judge.core.bench import cache_dir

    path = cache_dir() / "timer-kernels"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path


def confining(environ: Mapping[str, str]) -> bool:
    """Whether workers are confined (TPUZZLE_CONFINE=0 turns it off, to measure its cost)."""
    return environ.get(confine.CONFINE_ENV, "1") != "0"


def staged_submission(submission: Path, job_dir: Path) -> Path:
    """The worker's own copy of the submission, under its own name: the worker cannot read the
    folder it came from (a class folder holds the other students' files)."""
    folder = job_dir / "submission"
    folder.mkdir()
    copy = folder / Path(submission).name
    shutil.copyfile(submission, copy)
    return copy


def staged_spec(spec_file: Path, job_dir: Path) -> Path:
    """The puzzle as the worker is handed it (`spec_reader.worker_view`: no cases, hints or
    reference), in a folder named after the puzzle as load_spec wants."""
    view = worker_view(spec_file)
    folder = job_dir / "spec" / str(view.get("id", Path(spec_file).parent.name))
    folder.mkdir(parents=True)
    path = folder / "puzzle.yaml"
    path.write_text(yaml.safe_dump(view, sort_keys=False))
    return path


def forbidden_dirs(spec_file: Path, submission: Path, environ: Mapping[str, str]) -> list[Path]:
    """Folders a worker must not see even where they lie inside a readable one: the catalogue,
    the submission's folder, home, the judge's caches and results, other job folders."""
    from judge.core.bench import cache_dir

    found = [Path(spec_file).resolve().parent.parent, Path(submission).resolve().parent]
    found += [Path.home(), cache_dir(), Path(job_root() or tempfile.gettempdir())]
    if environ.get("TPUZZLE_DB"):
        found.append(Path(environ["TPUZZLE_DB"]).expanduser().resolve().parent)
    return found


def _started(
    job_dir: Path,
    interpret: bool,
    sanitizer: Path | None,
    env: dict[str, str],
    prefix: tuple[str, ...],
) -> WorkerProcess:
    if sanitizer is not None:
        env.update(sanitize.worker_env())
        return WorkerProcess.start(job_dir, env, interpret, sanitize.wrapper(sanitizer, job_dir))
    if prefix:
        return WorkerProcess.start(job_dir, env, interpret, list(prefix))
    spawner = zygote(interpret)
    if spawner is not None:
        try:
            return WorkerProcess.forked(spawner, job_dir, env, interpret)
        except OSError:
            pass  # a zygote that cannot fork: a worker started from nothing instead
    return WorkerProcess.start(job_dir, env, interpret)


# One zygote per mode (interpreter or GPU) per judging process, started on first use; ZYGOTE_ENV
# set to 0 starts every worker from nothing instead.
ZYGOTE_ENV = "TPUZZLE_ZYGOTE"
ZYGOTE_TIMEOUT_S = 180.0  # importing PyTorch and Triton on a cold disk
_zygotes: dict[bool, Spawner] = {}
_zygotes_lock = threading.Lock()


def zygote(interpret: bool) -> Spawner | None:
    """This process's zygote for the mode, started (importing in the background) if it is not
    running; None where workers are not forked (ZYGOTE_ENV=0, or no fork on this platform)."""
    if os.environ.get(ZYGOTE_ENV, "1") == "0" or not hasattr(os, "fork"):
        return None
    with _zygotes_lock:
        found = _zygotes.get(interpret)
        if found is None or not found.usable:
            if found is not None:
                found.close()
            found = _zygotes[interpret] = Spawner.start(zygote_env(interpret))
            if len(_zygotes) == 1:
                atexit.register(close_zygotes)
        return found


def close_zygotes() -> None:
    with _zygotes_lock:
        spawners = list(_zygotes.values())
        _zygotes.clear()
    for spawner in spawners:
        spawner.close()


def zygote_env(interpret: bool) -> dict[str, str]:
    """A zygote's environment: a worker's, less what belongs to one job (each fork gets its
    job's own environment before it runs anything)."""
    env = worker_env(Path(tempfile.gettempdir()), interpret, None)
    for key in ("TRITON_CACHE_DIR", "TMPDIR", "CUDA_CACHE_PATH"):
        env.pop(key, None)
    return env


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


def worker_env(
    job_dir: Path, interpret: bool, gpu: int | None, environ: dict[str, str] | None = None
) -> dict[str, str]:
    """The worker's environment: ours (or `environ`), less tpuzzle's own settings (the secret
    seed, the results database), with its own Triton cache."""
    environ = os.environ if environ is None else environ
    env = {
        k: v
        for k, v in environ.items()
        if not k.startswith("TPUZZLE_") or k in WORKER_VISIBLE  # no database, cache or secret
    }
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    env["TRITON_CACHE_DIR"] = str(job_dir / "triton-cache")
    env["TMPDIR"] = str(job_dir / "work")  # the compiler's files: in the folder it may write
    env["CUDA_CACHE_PATH"] = str(job_dir / "work" / "nv-cache")
    env.pop("TRITON_INTERPRET", None)
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible_device(gpu, environ)
    return env


KEEP_COMPILED_ENV = "TPUZZLE_KEEP_COMPILED"  # 0: every worker compiles into an empty cache
KEPT_COMPILED = 256  # the most recently used submission paths whose compiled kernels are kept


def compiled_dir(submission: Path, environ: dict[str, str]) -> Path | None:
    """The Triton cache kept for one submission file (by its resolved path), so that running
    the same file again does not compile its unchanged kernels again: Triton keys each entry by
    the kernel's source, options and versions, so an edited kernel is compiled anew. Each file
    has its own, as each worker had its own: nothing one submission compiled is seen by another.
    None when keeping is off (TPUZZLE_KEEP_COMPILED=0) or the cache cannot be written."""
    if environ.get(KEEP_COMPILED_ENV, "1") == "0":
        return None
    from judge.core.bench import cache_dir

    digest = hashlib.sha256(str(submission.resolve()).encode()).hexdigest()[:24]
    root = cache_dir() / "compiled"
    try:
        path = root / digest
        path.mkdir(parents=True, exist_ok=True)
        os.utime(path)
        prune(root, KEPT_COMPILED)
    except OSError:
        return None
    return path


def prune(root: Path, keep: int) -> None:
    """Remove all but the `keep` most recently used folders of root."""
    folders = sorted(root.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in folders[keep:]:
        shutil.rmtree(old, ignore_errors=True)


def visible_device(index: int, environ: Mapping[str, str] | None = None) -> str:
    """The CUDA_VISIBLE_DEVICES entry for device `index` as a process with this environment
    (ours, or the judge server's client's) numbers its devices: with CUDA_VISIBLE_DEVICES=2,3
    set, index 0 is device 2."""
    environ = os.environ if environ is None else environ
    visible = [d.strip() for d in environ.get("CUDA_VISIBLE_DEVICES", "").split(",")]
    visible = [d for d in visible if d]
    if "CUDA_VISIBLE_DEVICES" in environ and 0 <= index < len(visible):
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
