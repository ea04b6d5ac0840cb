"""Truths kept on disk between processes: a `bench` or `grade` started again reads the reference
outputs it computed before instead of computing them again on the CPU.

They live under cache_dir()/truths, inside the judge's cache folder that no confined worker can
see (launcher.forbidden_dirs). A truth's key hashes everything it follows from: the puzzle's spec
and reference (their bytes), the other files of its folder (their sizes and times: stored inputs,
a source's code), the judge's code that draws inputs and calls the reference, PyTorch's version,
and the case (sizes, seed, draw). A truth is kept only where computing it took longer than
reading it back would (`worth_keeping`), within a byte budget and never filling the disk past
MIN_FREE of it. When room is needed, the truths that save the fewest seconds per byte go first
(the least recently read among equals): a catalogue larger than the budget, run again and again,
keeps the same slow truths instead of pushing each out before it is read. TPUZZLE_TRUTH_DISK_MB
sets the budget (default 16384); 0 turns the store off.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import shutil
import tempfile
import time
import weakref
from pathlib import Path
from typing import NamedTuple

import torch

from judge.core.bench import cache_dir
from judge.core.spec import Case, PuzzleSpec

FORMAT = 1
DEFAULT_BUDGET_MB = 16384
MIN_FREE = 0.1  # the share of the disk a kept truth never takes
# reading a kept truth back: a plain NVMe disk (the page cache: 9-12 GB/s on an H100 host)
READ_BYTES_PER_S = 3e9
KEEP_MIN_S = 0.2  # truths computed faster than this are never worth a file
SKIPPED_DIRS = {"solutions", "__pycache__"}  # a puzzle's folders no truth depends on


def budget_bytes() -> int:
    raw = os.environ.get("TPUZZLE_TRUTH_DISK_MB", "")
    try:
        return int(float(raw) * 2**20) if raw else DEFAULT_BUDGET_MB * 2**20
    except ValueError:
        return DEFAULT_BUDGET_MB * 2**20


def root() -> Path:
    return cache_dir() / "truths"


def worth_keeping(seconds: float, nbytes: int) -> bool:
    """Whether a truth that took `seconds` to compute is read back faster than computed."""
    return seconds >= KEEP_MIN_S + nbytes / READ_BYTES_PER_S


def key(spec: PuzzleSpec, case: Case) -> str:
    """The hex digest naming a case's truth: changes whenever anything it follows from does."""
    digest = hashlib.sha256(_puzzle_digest(spec.directory, _folder_stamp(spec.directory)).encode())
    digest.update(repr((case.sizes, case.seed, case.draw, case.inputs)).encode())
    return digest.hexdigest()[:40]


def _folder_stamp(directory: Path) -> tuple:
    """Each file of the puzzle's folder (solutions aside) with its size and modification time."""
    stamps = []
    for base, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
            path = Path(base, name)
            with contextlib.suppress(OSError):
                stat = path.stat()
                stamps.append((str(path.relative_to(directory)), stat.st_size, stat.st_mtime_ns))
    return tuple(stamps)


@functools.lru_cache(maxsize=256)
def _puzzle_digest(directory: Path, stamp: tuple) -> str:
    digest = hashlib.sha256(f"{FORMAT} {torch.__version__}".encode())
    for name in ("puzzle.yaml", "reference.py"):
        with contextlib.suppress(OSError):
            digest.update((directory / name).read_bytes())
    digest.update(repr(stamp).encode())
    digest.update(_judge_digest().encode())
    return digest.hexdigest()


@functools.cache
def _judge_digest() -> str:
    """The judge's code that a truth follows from: how inputs are drawn and outputs computed."""
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in ("inputs.py", "truth.py", "spec.py", "spec_reader.py", "yaml_reader.py"):
        digest.update((here / name).read_bytes())
    return digest.hexdigest()


class Held:
    """An open file the judge's own processes read at `path` (this process's /proc/PID/fd/N),
    closed when this object is collected. A kept truth's files are held while a truth uses them,
    so the store may remove them meanwhile to make room: what is open stays readable."""

    def __init__(self, fd: int):
        self.fd = fd
        self._closer = weakref.finalize(self, os.close, fd)
        self.path = f"/proc/{os.getpid()}/fd/{fd}"
        self.nbytes = os.fstat(fd).st_size

    @classmethod
    def opened(cls, path: Path) -> Held:
        return cls(os.open(path, os.O_RDONLY | os.O_CLOEXEC))

    def tensor(self, dtype: torch.dtype) -> torch.Tensor:
        """The file's bytes, mapped (copy-on-write, so nothing reaches the file)."""
        if self.nbytes == 0:
            return torch.empty(0, dtype=dtype)
        return torch.from_file(self.path, shared=False, size=self.nbytes, dtype=torch.uint8).view(
            dtype
        )


class Kept(NamedTuple):
    """A truth read back from the store: its tensors, mapped from the files held open."""

    initial: dict[str, torch.Tensor]  # the drawn inputs
    outputs: dict[str, torch.Tensor]  # the expected outputs
    files: dict[str, dict[str, Held]]  # "initial" and "outputs": each tensor's file, by name


def load(name: str) -> Kept | None:
    """The drawn inputs and expected outputs kept under `name`, mapped from their files
    (copy-on-write: nothing reaches the files), which stay open with the truth; None when not
    kept or unreadable."""
    if budget_bytes() <= 0:
        return None
    folder = root() / name
    try:
        meta = json.loads((folder / "meta.json").read_text())
        if meta.get("format") != FORMAT:
            return None
        files = {
            part: {entry["name"]: _held(folder, entry) for entry in meta[part]}
            for part in ("initial", "outputs")
        }
        tensors = [
            {entry["name"]: _mapped(files[part][entry["name"]], entry) for entry in meta[part]}
            for part in ("initial", "outputs")
        ]
        os.utime(folder / "meta.json")  # read now: the last to go
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RuntimeError):
        return None
    return Kept(*tensors, files)


def _held(folder: Path, entry: dict) -> Held:
    path = folder / entry["file"]
    held = Held.opened(path)
    if held.nbytes != entry["nbytes"]:
        raise ValueError(f"{path}: {held.nbytes} bytes, expected {entry['nbytes']}")
    return held


def _mapped(held: Held, entry: dict) -> torch.Tensor:
    dtype = getattr(torch, entry["dtype"])
    return held.tensor(dtype).view(tuple(entry["shape"]))


def keep(
    name: str,
    initial: dict[str, torch.Tensor],
    outputs: dict[str, torch.Tensor],
    seconds: float,
) -> bool:
    """Write a truth under `name` when it is worth keeping and fits the budget (truths worth
    less leaving); whether it was written. Room is made and reserved under a lock shared by
    every process; the files are written into a folder of their own, renamed into place
    complete, so a reader never sees half a truth."""
    budget = budget_bytes()
    # an inout buffer is in both, under one name: each copy is written and counted
    nbytes = sum(t.numel() * t.element_size() for g in (initial, outputs) for t in g.values())
    if budget <= 0 or nbytes > budget // 2 or not worth_keeping(seconds, nbytes):
        return False
    base = root()
    try:
        base.mkdir(parents=True, exist_ok=True)
        with _locked(base):
            if not _make_room(base, budget - nbytes, seconds / max(nbytes, 1)):
                return False
            disk = shutil.disk_usage(base)
            if disk.free - nbytes < MIN_FREE * disk.total:
                return False
            staging = Path(tempfile.mkdtemp(prefix=".new-", dir=base))
            (staging / "reserved").write_text(str(nbytes))
        meta = {"format": FORMAT, "seconds": seconds, "nbytes": nbytes}
        for part, group in (("initial", initial), ("outputs", outputs)):
            meta[part] = [_written(staging, part, n, t) for n, t in group.items()]
        (staging / "meta.json").write_text(json.dumps(meta))
        (staging / "reserved").unlink()
        try:
            staging.rename(base / name)
        except OSError:  # kept meanwhile by another process
            shutil.rmtree(staging, ignore_errors=True)
    except OSError:
        return False
    return True


@contextlib.contextmanager
def _locked(base: Path):
    with open(base / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _written(folder: Path, part: str, name: str, tensor: torch.Tensor) -> dict:
    file = f"{part}.{name}.bin"
    flat = tensor.detach().contiguous().view(-1)
    raw = flat.view(torch.uint8) if flat.numel() else torch.empty(0, dtype=torch.uint8)
    with open(folder / file, "wb") as f:
        f.write(memoryview(raw.numpy()))
    return {
        "name": name,
        "file": file,
        "dtype": str(tensor.dtype).removeprefix("torch."),
        "shape": list(tensor.shape),
        "nbytes": raw.numel(),
    }


def _make_room(base: Path, allowed: int, worth: float) -> bool:
    """Remove kept truths until those left (and those being written) hold at most `allowed`
    bytes, the ones saving the fewest seconds per byte first, never one worth more than `worth`
    (the newcomer's): whether the room was made. Folders left half-written by a process that
    died go too."""
    kept, writing = [], 0
    for folder in base.iterdir():
        if not folder.is_dir():
            continue
        try:
            if (folder / "reserved").exists() and not _older_than(folder, 3600):
                writing += int((folder / "reserved").read_text())
                continue
            meta = json.loads((folder / "meta.json").read_text())
            value = meta["seconds"] / max(meta["nbytes"], 1)
            kept.append((value, (folder / "meta.json").stat().st_mtime, meta["nbytes"], folder))
        except (OSError, ValueError, KeyError, TypeError):
            if folder.name.startswith(".new-") and _older_than(folder, 3600):
                shutil.rmtree(folder, ignore_errors=True)
    total = writing + sum(entry[2] for entry in kept)
    for value, _, used, folder in sorted(kept, key=lambda entry: entry[:2]):
        if total <= allowed or value > worth:
            break
        shutil.rmtree(folder, ignore_errors=True)
        total -= used
    return total <= allowed


class Usage(NamedTuple):
    """What the store holds and what it may still take."""

    kept: int  # truths kept
    nbytes: int  # their bytes
    budget: int  # the byte budget (TPUZZLE_TRUTH_DISK_MB)
    free: int  # the disk's free bytes
    floor: int  # the free bytes the store never goes below (MIN_FREE of the disk)

    def line(self) -> str:
        gb = 1e9
        return (
            f"truths kept on disk: {self.kept}, {self.nbytes / gb:.1f} of {self.budget / gb:.1f}"
            f" GB; disk free {self.free / gb:.1f} GB, the store's floor {self.floor / gb:.1f} GB"
        )


def usage() -> Usage:
    """The kept truths (each folder's meta.json) and the disk they lie on."""
    base = root()
    kept = nbytes = 0
    if base.is_dir():
        for folder in base.iterdir():
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
                nbytes += json.loads((folder / "meta.json").read_text())["nbytes"]
                kept += 1
    where = base
    while not where.exists():
        where = where.parent
    disk = shutil.disk_usage(where)
    return Usage(kept, nbytes, budget_bytes(), disk.free, int(MIN_FREE * disk.total))


def _older_than(path: Path, seconds: float) -> bool:
    try:
        return time.time() - path.stat().st_mtime > seconds
    except OSError:
        return False
