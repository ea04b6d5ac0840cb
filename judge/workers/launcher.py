"""Starting a worker: its job directory (a copy of the submission, the puzzle's worker view,
job.json), its environment (no tpuzzle setting, its own Triton cache, its GPU), the confinement
rules it applies to itself, and where it comes from (forked from this process's zygote for its
mode, else started from nothing, or under a tool). Also the timer's launch, and whether a CUDA
device is here at all.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import yaml

from judge.core.spec_reader import worker_view
from judge.workers import confine, sanitize
from judge.workers.channel import WorkerProcess
from judge.workers.spawner import Spawner
from judge.workers.watchdog import Watchdog

SECRET_ENV = "TPUZZLE_SECRET_SEED"  # an instructor's secret seed: never passed to a worker
SECRET_FILE_ENV = "TPUZZLE_SECRET_SEED_FILE"
SHM_MIN_FREE = 16 << 30  # /dev/shm holds job directories only when this much is free


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
    tool = bool(sanitizer or prefix)
    confined = not tool and confining(environ)
    job = {"interpret": interpret, "parent": None if tool else os.getpid()}
    worker = _submission_worker(
        spec_file, submission, job_dir, env, environ, job, confined, not interpret,
        sanitizer, prefix,
    )  # fmt: skip
    worker.relaunch = lambda: launch(
        spec_file, submission, interpret, gpu, sanitizer, environ, prefix
    )
    return worker


def _submission_worker(
    spec_file: Path,
    submission: Path,
    job_dir: Path,
    env: dict[str, str],
    environ: dict[str, str],
    job: dict,
    confined: bool,
    gpu_files: bool,
    sanitizer: Path | None = None,
    prefix: tuple[str, ...] = (),
) -> WorkerProcess:
    """A worker started in `job_dir` on `job` (its mode and parent, and anything else it is
    sent), completed with what every submission's worker gets: the puzzle's worker view, its
    own copy of the submission, the moment it was launched and, when `confined`, the rules it
    applies to itself (the GPU's device files open to it with `gpu_files`), watched by the
    parent. Its Triton cache is env's TRITON_CACHE_DIR."""
    cache = Path(env["TRITON_CACHE_DIR"])
    rules = None
    if confined:
        forbidden = forbidden_dirs(spec_file, submission, environ)
        limits = confine.limits_from(environ)
        rules = confine.rules([job_dir, cache], forbidden, gpu_files, limits).to_json()
    job = {
        "spec": str(staged_spec(spec_file, job_dir)),
        "submission": str(staged_submission(submission, job_dir)),
        "launched": time.monotonic(),
        "confine": rules,
        **job,
    }
    (job_dir / "job.json").write_text(json.dumps(job))
    worker = _started(job_dir, job["interpret"], sanitizer, env, prefix)
    worker.cache_dir = cache
    if rules is not None:
        worker.watchdog = Watchdog([job_dir, cache], confine.Limits(**rules["limits"]))
    worker.shown = {job["submission"]: str(Path(submission).resolve())}
    return worker


AHEAD_ENV = "TPUZZLE_COMPILE_AHEAD"  # 0: a batch compiles no kernels ahead (judge.workers.ahead)


def launch_ahead(
    spec_file: Path,
    submission: Path,
    target: dict,
    calls: list[dict],
    environ: dict[str, str] | None = None,
) -> WorkerProcess | None:
    """A worker with no GPU that compiles the submission's kernels into the file's kept Triton
    cache (judge.workers.ahead) for the GPU `target` (`device_target`), calling solve() once per
    entry of `calls` (sizes and scalars). None where it would not be safe or of use: no cache
    kept per file, compiling ahead turned off (TPUZZLE_COMPILE_AHEAD=0), or workers not
    confined to their files (only Landlock keeps this process away from the GPU's device
    files; it runs outside the device's gate), or this file compiled ahead before for the same
    target and calls (`compiled_all`)."""
    environ = dict(os.environ if environ is None else environ)
    kept = compiled_dir(submission, environ)
    if kept is None or environ.get(AHEAD_ENV, "1") == "0" or not confining(environ):
        return None
    if "files" in confine.available():
        return None
    source = Path(submission).read_bytes()
    digest = hashlib.sha256(source + json.dumps([target, calls]).encode()).hexdigest()[:24]
    marker = kept / f"compiled-ahead-{digest}"
    if marker.exists():  # this very file, target and calls compiled before: nothing new
        return None
    job_dir = Path(tempfile.mkdtemp(prefix="tpuzzle-ahead-", dir=job_root()))
    env = worker_env(job_dir, False, None, environ)
    env["TRITON_CACHE_DIR"] = str(kept)
    env["CUDA_VISIBLE_DEVICES"] = ""  # and no device file may be opened (confined, gpu_files off)
    job = {"interpret": False, "parent": os.getpid(), "ahead": {**target, "calls": calls}}
    worker = _submission_worker(spec_file, submission, job_dir, env, environ, job, True, False)
    worker.marker = marker  # made by the parent once every call compiled (`compiled_all`)
    return worker


def compiled_all(worker: WorkerProcess, answer: dict) -> None:
    """After a compile ahead whose every call went through: its marker, so that the same file
    (same bytes, target and calls) is not compiled ahead again. The marker lies in the file's
    own cache, where its worker may write: a forged one only spares that file's compile."""
    marker = getattr(worker, "marker", None)
    if marker is not None and not answer.get("stopped"):
        with contextlib.suppress(OSError):
            marker.touch()


# CUdevice_attribute values (CUDA's driver API) for the properties Triton's driver reports
_ATTRIBUTES = {
    "max_shared_mem": 97,  # MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    "max_num_regs": 12,  # MAX_REGISTERS_PER_BLOCK
    "multiprocessor_count": 16,
    "warpSize": 10,
    "sm_clock_rate": 13,  # kHz
    "mem_clock_rate": 36,  # kHz
    "mem_bus_width": 37,  # bits
}


def device_target(gpu: int) -> dict | None:
    """What a compiler needs to know of CUDA device `gpu` (numbered as this process sees them):
    its architecture (major * 10 + minor), warp size and the properties Triton's driver gives,
    asked of the driver API without creating a context. None without a driver or device."""
    import ctypes

    cuda, device, value = cuda_driver(), ctypes.c_int(0), ctypes.c_int(0)
    if cuda is None or cuda.cuDeviceGet(ctypes.byref(device), gpu) != 0:
        return None

    def attribute(number: int) -> int | None:
        status = cuda.cuDeviceGetAttribute(ctypes.byref(value), number, device)
        return value.value if status == 0 else None

    major, minor = attribute(75), attribute(76)  # COMPUTE_CAPABILITY_MAJOR, _MINOR
    properties = {name: attribute(number) for name, number in _ATTRIBUTES.items()}
    if major is None or minor is None or None in properties.values():
        return None
    arch = major * 10 + minor
    return {"arch": arch, "warp_size": properties["warpSize"], "properties": properties}


def launch_timer(
    spec_file: Path,
    gpu: int | None,
    environ: dict[str, str] | None = None,
    warm_up: bool = False,
):
    """The timer of one judging: a worker process that never imports a submission (it refuses
    to). It measures the device and the reference, and replays, times and checks the launch
    sequences a submission's worker recorded (judge.workers.player). It runs no submission
    code, so it is not confined: it reads the puzzle's reference.

    With `warm_up`, it is asked at once to make its first check (`warm`): for a timer started
    before its judging, on a device no other judging is timing (the judge server's spare)."""
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
    timer = _started(job_dir, False, None, env, ())
    if warm_up:
        try:
            warm(timer)
        except BaseException:
            discard(timer)
            raise
    return timer


def warm(timer: WorkerProcess) -> None:
    """Ask a timer to make its first check ahead (op_warm_up), once: its answer, `warmed`,
    waits in the pipe until the judging reads it."""
    if not timer.warming:
        timer.send({"op": "warm_up"}, "warming up the timer's checks")
        timer.warming = True


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
FP_FUSION_ENV = "TRITON_DEFAULT_FP_FUSION"  # Triton 3.9+: fuse a * b + c by default or not


def judge_first(env: dict[str, str]) -> dict[str, str]:
    """env with this judge's package first on PYTHONPATH: a process started in another folder
    (a worker in its job folder, the judge server in /) imports this judge, installed or not."""
    package_root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return {**env, "PYTHONPATH": path}


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
    env = judge_first(env)
    env["PYTHONUNBUFFERED"] = "1"
    env["TRITON_CACHE_DIR"] = str(job_dir / "triton-cache")
    env["TMPDIR"] = str(job_dir / "work")  # the compiler's files: in the folder it may write
    env["CUDA_CACHE_PATH"] = str(job_dir / "work" / "nv-cache")
    env.pop("TRITON_INTERPRET", None)
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible_device(gpu, environ)
    # Floating-point fusion (a * b + c as one fma) as Triton has always compiled it, unless the
    # user says otherwise: Triton 3.9 warns into every submission's output when this is unset,
    # and 3.10 turns it off by default, which would move every figure and rounding error.
    env.setdefault(FP_FUSION_ENV, "1")
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


def interpreting(choice: bool | None) -> bool:
    """A run's mode: the interpreter when asked for (True) or refused (False); left undecided
    (None), the interpreter exactly when no CUDA device is present."""
    return choice if choice is not None else not cuda_present()


def cuda_present() -> bool:
    """Whether a CUDA device is visible, asked of the driver directly (no PyTorch import)."""
    return cuda_device_count() > 0


def cuda_driver():
    """CUDA's driver API (libcuda), initialised, or None without a driver. cuInit creates no
    context: nothing here holds or changes a device."""
    import ctypes

    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    return cuda if cuda.cuInit(0) == 0 else None


def cuda_device_count() -> int:
    """CUDA devices visible to this process (CUDA_VISIBLE_DEVICES applies), from the driver API."""
    import ctypes

    cuda, count = cuda_driver(), ctypes.c_int(0)
    if cuda is None or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value
