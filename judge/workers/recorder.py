"""In the worker: what one call of `solve()` launched, as a `replay` sequence.

Triton builds one launcher per compiled kernel through its driver's `launcher_cls(src,
metadata)` (Triton 3.2 to 3.9 alike); the recorder puts a recording launcher in its place before
the submission is imported, so every kernel compiled from then on launches through it: the
compiled kernel's hash, name and signature, its grid and its arguments are noted while a call is
recorded, and the launch goes on unchanged. PyTorch's scratch allocations and fills inside the
call are noted by the referee (`note_op`). Addresses are rewritten against the judge's buffers,
the call's allocations and every block PyTorch's allocator holds after the call (scratch kept
across calls).

Nothing here is trusted: the sequence only says what the timer should replay, and the timer checks
every replayed call's answer (see `judge.workers.replay`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from judge.workers.replay import Region, relative

# ATen operations that allocate (their result is new memory) and the value the new memory is
# filled with (None: left as it is)
ALLOCATING = {
    "empty": None,
    "empty_strided": None,
    "empty_like": None,
    "new_empty": None,
    "new_empty_strided": None,
    "zeros": 0,
    "zeros_like": 0,
    "new_zeros": 0,
    "ones": 1,
    "ones_like": 1,
    "new_ones": 1,
    "full": "arg1",
    "full_like": "arg1",
}
FILLING = {"fill_": "arg1", "zero_": 0}
LAUNCHER_PREFIX = 9  # what Triton passes its launcher before the kernel's own arguments


class LaunchRecorder:
    """Every Triton launch of this process, noted while `recording` is open."""

    def __init__(self) -> None:
        self.installed = False
        self._lock = threading.Lock()
        self._steps: list | None = None
        self._allocs: list[tuple[int, int]] = []  # (address, bytes) allocated inside the call
        self._kernels: dict[str, dict] = {}
        self._unsupported = ""

    def install(self) -> bool:
        """Put the recording launcher in Triton's driver; False where this Triton has none."""
        try:
            from triton.runtime import driver

            active = driver.active
            original = active.launcher_cls
        except Exception:  # noqa: BLE001 - no driver (no GPU), or a Triton of another shape
            return False
        recorder = self

        def launcher_cls(src, metadata):
            return _Recording(original(src, metadata), recorder, recorder.kernel_of(src, metadata))

        active.launcher_cls = launcher_cls
        self.installed = True
        return True

    def kernel_of(self, src, metadata) -> dict | str:
        """What the timer needs of a compiled kernel, or why it cannot have it."""
        try:
            from triton.runtime.cache import get_cache_manager

            names = list(src.fn.arg_names) if hasattr(src, "fn") else list(src.signature)
            signature = [[n, _type(src.signature.get(n, "constexpr"))] for n in names]
            key = str(metadata.hash)
            return {
                "key": key,
                "name": str(metadata.name),
                "signature": signature,
                "directory": str(get_cache_manager(key).cache_dir),
            }
        except Exception as exc:  # noqa: BLE001 - a kernel of a shape the judge cannot replay
            return f"a kernel whose compilation the judge cannot read ({type(exc).__name__})"

    # ------------------------------------------------------------------ during a call

    def note_launch(self, kernel: dict | str, grid: tuple, args: tuple) -> None:
        with self._lock:
            if self._steps is None:
                return
            if isinstance(kernel, str):
                self._unsupported = self._unsupported or kernel
                return
            self._kernels[kernel["key"]] = kernel
            args = [_snapshot(a) for a in args]
            self._steps.append(("launch", kernel["key"], [int(g) for g in grid], args))

    def note_op(self, name: str, args: tuple, result) -> None:
        """An ATen operation the referee let through inside the call."""
        with self._lock:
            if self._steps is None:
                return
            if name in ALLOCATING and _on_device(result):
                self._allocs.append((result.data_ptr(), _bytes(result)))
                value = _value(ALLOCATING[name], args)
                if value is not None:
                    self._fill(result, value)
            elif name in FILLING and args and _on_device(args[0]):
                self._fill(args[0], _value(FILLING[name], args))

    def _fill(self, tensor, value) -> None:
        if value is None or not tensor.is_contiguous():
            self._unsupported = self._unsupported or (
                "solve() filled a non-contiguous view, or with a tensor's value"
            )
            return
        dtype = str(tensor.dtype).removeprefix("torch.")
        self._steps.append(("fill", tensor.data_ptr(), _bytes(tensor), dtype, value))

    @contextlib.contextmanager
    def recording(self, buffers: list[Region]) -> Iterator[dict]:
        """Record the launches and fills inside the block; the yielded dict is then the call's
        sequence (replay.validated reads it)."""
        with self._lock:
            self._steps, self._allocs, self._kernels, self._unsupported = [], [], {}, ""
        sequence: dict = {}
        try:
            yield sequence
        finally:
            with self._lock:
                steps, allocs, self._steps = self._steps, self._allocs, None
            sequence.update(self._encoded(steps, allocs, buffers))

    def _encoded(self, steps: list, allocs: list, buffers: list[Region]) -> dict:
        if self._unsupported:
            return {"unsupported": self._unsupported}
        mine = {b.start for b in buffers}
        held = [(a, n) for a, n in _held_blocks() if not any(a <= s < a + n for s in mine)]
        candidates = held + [(a, n) for a, n in allocs if (a, n) not in held]
        regions = [*buffers, *(Region("scratch", i, a, n) for i, (a, n) in enumerate(candidates))]
        encoded = []
        for step in steps:
            if step[0] == "launch":
                _, key, grid, args = step
                args = [_encoded_arg(a, regions) for a in args]
                encoded.append({"launch": key, "grid": grid, "args": args})
            else:
                _, address, nbytes, dtype, value = step
                where = relative(address, regions)
                encoded.append({"fill": where, "nbytes": nbytes, "dtype": dtype, "value": value})
        used = sorted({ref["scratch"] for ref in _references(encoded) if "scratch" in ref})
        number = {old: new for new, old in enumerate(used)}
        for ref in _references(encoded):
            if "scratch" in ref:
                ref["scratch"] = number[ref["scratch"]]
        return {
            "kernels": list(self._kernels.values()),
            "scratch": [candidates[i][1] for i in used],
            "steps": encoded,
        }


def _references(steps: list[dict]) -> Iterator[dict]:
    """Every argument and fill target of encoded steps (to renumber in place)."""
    for step in steps:
        for arg in step.get("args", []):
            yield arg.get("desc", arg)
        if "fill" in step:
            yield step["fill"]


class _Recording:
    """A kernel's launcher that notes each launch before making it."""

    def __init__(self, inner, recorder: LaunchRecorder, kernel: dict | str):
        self._inner, self._recorder, self._kernel = inner, recorder, kernel

    def __call__(self, *launch):
        """Triton's launcher call: grid x, y, z, stream, function, packed metadata, launch
        metadata, enter and exit hooks, then the kernel's arguments."""
        self._recorder.note_launch(self._kernel, launch[:3], launch[LAUNCHER_PREFIX:])
        return self._inner(*launch)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _snapshot(value):
    """A launch argument as it was at the launch: a host tensor descriptor as a dict of plain
    values (its base's address), anything else as it is."""
    if type(value).__name__ != "TensorDescriptor" or not hasattr(value, "block_shape"):
        return value
    try:
        return {
            "desc": int(value.base.data_ptr()),
            "shape": [int(n) for n in value.shape],
            "strides": [int(n) for n in value.strides],
            "block": [int(n) for n in value.block_shape],
            "padding": str(value.padding),
            "tf32": bool(getattr(value, "round_f32_to_tf32", False)),
        }
    except Exception:  # noqa: BLE001 - a descriptor of another shape: validation refuses it
        return None


def _encoded_arg(value, regions: list[Region]) -> dict:
    if isinstance(value, dict):  # a descriptor's snapshot
        return {**value, "desc": relative(value["desc"], regions)}
    return relative(_plain(value), regions)


def _type(kind) -> str:
    """A signature entry as text (a tuple's or descriptor's text fails validation later)."""
    return kind if isinstance(kind, str) else repr(kind)


def _plain(value):
    """A launch argument as a number: a tensor (or anything with data_ptr) as its address."""
    if hasattr(value, "data_ptr") and callable(value.data_ptr):
        return int(value.data_ptr())
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    return None  # a constexpr's value: the launcher skips it


def _on_device(tensor) -> bool:
    return getattr(getattr(tensor, "device", None), "type", "") == "cuda"


def _bytes(tensor) -> int:
    return tensor.numel() * tensor.element_size()


def _value(rule, args):
    if rule == "arg1":
        value = args[1] if len(args) > 1 else None
        return value if isinstance(value, (bool, int, float)) else None
    return rule


def _held_blocks() -> list[tuple[int, int]]:
    """(address, bytes) of every block PyTorch's CUDA allocator holds for this process."""
    try:
        import torch

        blocks = []
        for segment in torch.cuda.memory_snapshot():
            address = segment["address"]
            for block in segment["blocks"]:
                if block["state"] == "active_allocated":
                    blocks.append((address, block["size"]))
                address += block["size"]
        return blocks
    except Exception:  # noqa: BLE001 - an allocator that cannot say
        return []
