"""The parent's side of the timer: a benchmark's recorded launch sequence handed to the timer
(a process that never imported the submission) with the compiled kernels it needs, and its
answer awaited.

The kernels' files are copied by the parent out of the worker's Triton cache into the timer's
job folder: only `<name>.json` and `<name>.cubin`, only from inside that cache, only plain files,
so the worker can name neither a file elsewhere nor change one after it was copied.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

from judge.core.spec import Case
from judge.judging.plan import Plan
from judge.workers.channel import WorkerFailure, WorkerProcess, WorkerReported
from judge.workers.replay import (
    ELEMENT_BYTES,
    MAX_SCRATCH_BYTES,
    REASON,
    NotReplayable,
    Sequence,
    descriptor_type,
)

KERNEL_FILE_BYTES = 256 << 20  # a compiled kernel's file, at most
QUIET_TIMEOUT_S = 30.0  # the device's quiet probe (a kernel of 20 ms, on a device others share)


def copy_kernels(sequence: Sequence, cache: Path, destination: Path) -> None:
    """Each kernel's metadata and binary from the worker's cache into destination/<key>/."""
    root = cache.resolve()
    for kernel in sequence.kernels:
        source = Path(kernel.directory).resolve()
        if not source.is_relative_to(root):
            raise NotReplayable(f"kernel {kernel.name}: its files are not in the worker's cache")
        folder = destination / kernel.key
        if folder.is_dir():  # copied (and checked) for an earlier call: the timer loads that
            metadata = json.loads((folder / f"{kernel.name}.json").read_text())
            _check_launch_scratch(sequence, kernel, metadata)
            continue
        part = destination / f"{kernel.key}.part"
        shutil.rmtree(part, ignore_errors=True)
        part.mkdir(parents=True)
        for suffix in ("json", "cubin"):
            found = source / f"{kernel.name}.{suffix}"
            if found.is_symlink() or not found.is_file():
                raise NotReplayable(f"kernel {kernel.name}: no compiled {suffix} file to replay")
            if found.stat().st_size > KERNEL_FILE_BYTES:
                raise NotReplayable(f"kernel {kernel.name}: a {suffix} file too large to replay")
            shutil.copyfile(found, part / found.name, follow_symlinks=False)
        metadata = _check_metadata(part / f"{kernel.name}.json", kernel)
        _check_launch_scratch(sequence, kernel, metadata)
        part.rename(folder)  # only a whole, checked copy is ever found there


def _check_launch_scratch(sequence: Sequence, kernel, metadata: dict) -> None:
    """Triton's launcher gives a kernel that asks for global scratch (tensor descriptors made
    inside it) `global_scratch_size` bytes per program, allocated in the timer at each launch:
    every launch of the sequence, with the call's own scratch, stays within the replay's limit.
    The size is read from metadata the worker wrote."""
    size = metadata.get("global_scratch_size", 0) or 0
    if not isinstance(size, int) or size < 0:
        raise NotReplayable(f"kernel {kernel.name}: its compiled metadata gives no scratch size")
    room = MAX_SCRATCH_BYTES - sum(sequence.scratch)
    for step in sequence.steps:
        if step.get("launch") == kernel.key and size * math.prod(step["grid"]) > room:
            raise NotReplayable(
                f"kernel {kernel.name}: {size} bytes of global scratch for each of "
                f"{math.prod(step['grid'])} programs, past the {MAX_SCRATCH_BYTES} bytes a "
                "replayed call may hold"
            )


def _check_metadata(path: Path, kernel) -> dict:
    """The copied metadata, which must describe the kernel recorded, for CUDA, with an account of
    its tensor descriptors that agrees with its signature (`_check_descriptors`)."""
    name = kernel.name
    try:
        metadata = json.loads(path.read_text())
    except (OSError, ValueError):
        metadata = None
    if not isinstance(metadata, dict) or metadata.get("name") != name:
        raise NotReplayable(f"kernel {name}: its compiled metadata does not describe it")
    target = metadata.get("target")
    if not isinstance(target, dict) or target.get("backend") != "cuda":
        raise NotReplayable(f"kernel {name}: compiled for another backend than CUDA")
    _check_descriptors(metadata.get("tensordesc_meta"), kernel)
    return metadata


def _check_descriptors(metas, kernel) -> None:
    """The compiled kernel's account of its tensor descriptors (`tensordesc_meta`, written by the
    worker) against its signature. Triton's launcher builds each descriptor's tensor map from
    it: the element size must be the signature's (the map spans the recorded shape in elements
    of that size, and the replay bounds that extent by the buffer), a plain tiled map (no packed
    fp4 columns, no im2col), a box of at most 256 elements a side, one per dimension. No account
    at all is the launcher's other way: each descriptor passed as its base, shape and strides."""
    if not metas:
        return
    kinds = [descriptor_type(kind) for _, kind in kernel.signature]
    kinds = [k for k in kinds if k is not None]
    if not isinstance(metas, list) or len(metas) != len(kinds):
        raise NotReplayable(
            f"kernel {kernel.name}: its account of its tensor descriptors is garbled"
        )
    for meta, (dtype, block) in zip(metas, kinds, strict=True):
        box = meta.get("block_size") if isinstance(meta, dict) else None
        if not (
            isinstance(box, list)
            and len(box) == len(block)
            and all(isinstance(n, int) and 1 <= n <= 256 for n in box)
            and meta.get("elem_size") == ELEMENT_BYTES[dtype]
            and isinstance(meta.get("swizzle"), int)
            and isinstance(meta.get("elem_type"), int)
            and not meta.get("fp4_padded")
            and not meta.get("is_im2col")
        ):
            raise NotReplayable(
                f"kernel {kernel.name}: its account of a tensor descriptor does not match its "
                "signature"
            )


def replay(
    timer: WorkerProcess,
    worker: WorkerProcess,
    plan: Plan,
    case: Case,
    tag: str,
    sequence: Sequence,
    timeout: float,
    timed: bool = True,
) -> dict:
    """The timer's answer for one shape: times, the count of wrong calls (see player.timed), and
    the input sets whose last call was wrong when checked after it ended (`wrong_sets`, their
    buffers left in the timer's folder as TAG_setJ). Untimed: one call per set, no times."""
    kernels = copied(sequence, worker, timer)
    command = plan.replay_command(case, tag, sequence.to_dict(), kernels, timed)
    return _asked(timer, command, "replayed", timeout, f"benchmark {case.name}")


def ask_case(
    timer: WorkerProcess,
    worker: WorkerProcess,
    plan: Plan,
    case: Case,
    tag: str,
    sequence: Sequence,
) -> None:
    """Send the timer one case's recorded call, to replay once and check there after it ended
    against the parent's truth; its answer (`case_answer`) is read later, so that the worker
    goes on with the next cases meanwhile (the timer answers in the order it was asked)."""
    kernels = copied(sequence, worker, timer)
    timer.send(plan.check_command(case, tag, sequence.to_dict(), kernels), f"case {case.name}")


def quiet(timer: WorkerProcess) -> bool:
    """Whether the timer found the device quiet (no other process's kernel running)."""
    answer = timer.expect_ok({"op": "quiet"}, "quiet", QUIET_TIMEOUT_S, "probing the device")
    value = answer.get("value")
    return isinstance(value, dict) and value.get("quiet") is True


def case_answer(timer: WorkerProcess, case: Case, timeout: float) -> dict:
    """The timer's answer to `ask_case`: {"wrong": elements, "max_error": largest error}; when
    wrong, the call's buffers are left in the timer's folder as TAG_NAME."""
    what = f"case {case.name}"
    return _answered(lambda: timer.expect("case_checked", timeout, what), what)


def copied(sequence: Sequence, worker: WorkerProcess, timer: WorkerProcess) -> Path:
    """The sequence's kernels in the timer's folder (each copied once per judging)."""
    kernels = timer.dir / "kernels"
    copy_kernels(sequence, worker.cache_dir, kernels)
    return kernels


def _asked(timer: WorkerProcess, command: dict, answer: str, timeout: float, what: str) -> dict:
    return _answered(lambda: timer.expect_ok(command, answer, timeout, what), what)


def _answered(wait, what: str) -> dict:
    try:
        return wait()
    except WorkerFailure as exc:  # the kernels' fault (the timer runs no other untrusted code)
        # A recorded call the timer found it cannot replay safely (a tensor descriptor past its
        # buffer) is refused, as one refused before it reached the timer is.
        verdict = "rejected" if (exc.verdict, exc.kind) == ("rejected", REASON) else "error"
        raise WorkerReported(
            verdict, exc.kind, f"{what}, replaying what solve() launched: {exc}"
        ) from None
