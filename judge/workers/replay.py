"""A call of `solve()` as data: the launch sequence a trusted process replays, times and checks.

The worker records what one call of `solve()` did on the device (`judge.workers.recorder`):
each Triton kernel it launched (the compiled kernel, its grid and its arguments) and each scratch
allocation and fill it made through PyTorch, in order. Raw addresses are rewritten relative to
what they point into: a judge's buffer (`{"buf": name, "at": offset}`) or a scratch allocation of
the call (`{"scratch": i, "at": offset}`); every other argument is a plain value. A tensor
descriptor built on the host (`triton.tools.tensor_descriptor.TensorDescriptor`) is kept as its
base (an address, rewritten the same way), shape, strides and block, and the timer builds its own
on its own buffers; the memory it describes must lie inside the buffer its base points into.

The sequence is untrusted (the worker's interpreter runs the submission), so it is validated here
before anything acts on it, and it need not be believed: the timer replays exactly what it says,
on its own buffers and fresh inputs, and checks every replayed call's answer. A recorder that lies
only gets a lie timed and checked. What the sequence cannot carry, the submission cannot do while
timed: host code between launches, reading device data back to decide what to launch next, work
outside Triton kernels and PyTorch's fills. Such a `solve()` is not replayable, as a CUDA graph
capture would refuse it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

REASON = "not-replayable"
MAX_STEPS = 4096  # launches and fills in one call
MAX_SCRATCH_BYTES = 16 << 30  # scratch one call may allocate, all together
MAX_GRID = (1 << 31) - 1
# A Triton signature type: a scalar, a pointer to one, a constexpr slot, or a tiled tensor
# descriptor: of a plain block, or Gluon's, whose type also names its NVMMASharedLayout (keyword
# arguments of plain values). Nothing else reaches the launcher, which turns these into C. The
# launcher reads a descriptor's layout from the compiled kernel's account of it
# (`tensordesc_meta`, checked by the timer), never from this text: a Gluon descriptor is replayed
# as one of a plain block.
_SCALAR = (
    r"(i1|i8|i16|i32|i64|u1|u8|u16|u32|u64|"
    r"fp8e4nv|fp8e5|fp8e4b15|fp8e4b8|fp8e5b16|fp16|bf16|fp32|fp64)"
)
_TYPE = re.compile(rf"^(\*k?{_SCALAR}|{_SCALAR}|constexpr)$")
_VALUE = r"(?:True|False|None|[0-9]{1,5}|\[[]\[0-9, ]{0,200}\])"
_LAYOUT = rf"NVMMASharedLayout\((?:[a-z_][a-z0-9_]{{0,31}}={_VALUE}(?:, )?){{1,12}}\)"
_DESCRIPTOR = re.compile(
    rf"^tensordesc<{_SCALAR}\[([0-9]{{1,5}}(?:, [0-9]{{1,5}}){{0,4}})\](?:,{_LAYOUT})?>$"
)
# Bytes of an element of each scalar type (a descriptor's extent is counted in elements).
ELEMENT_BYTES = {
    **dict.fromkeys(("i1", "i8", "u1", "u8", "fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8"), 1),
    "fp8e5b16": 1,
    **dict.fromkeys(("i16", "u16", "fp16", "bf16"), 2),
    **dict.fromkeys(("i32", "u32", "fp32"), 4),
    **dict.fromkeys(("i64", "u64", "fp64"), 8),
}
DESCRIPTOR_KEYS = {"desc", "shape", "strides", "block", "padding", "tf32"}
MAX_DESCRIPTOR_DIM = 1 << 32  # TMA's bound on a dimension's size (elements) and stride (bytes)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,199}$")
_KEY = re.compile(r"^[0-9a-f]{16,128}$")
FILL_DTYPES = (
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "int8",
    "uint8",
    "int16",
    "int32",
    "int64",
    "bool",
)


class NotReplayable(Exception):
    """The recorded work cannot be replayed as a fixed launch sequence (with why)."""


@dataclass(frozen=True)
class Kernel:
    """A compiled Triton kernel the call launched, as its launcher needs it."""

    key: str  # Triton's hash of the compilation (the cache entry's key)
    name: str  # the compiled kernel's name, also its files' stem (<name>.json, <name>.cubin)
    signature: tuple[tuple[str, str], ...]  # (argument name, Triton type) in order
    directory: str  # where the worker's cache keeps its files (checked by the parent)

    @property
    def arg_names(self) -> list[str]:
        return [name for name, _ in self.signature]


@dataclass(frozen=True)
class Sequence:
    """One call of solve(): its scratch allocations (bytes each) and its steps, in order."""

    kernels: tuple[Kernel, ...]
    scratch: tuple[int, ...]
    steps: tuple[dict, ...]  # {"launch": key, "grid": [x, y, z], "args": [...]} or a fill

    def launches(self) -> int:
        return sum(1 for s in self.steps if "launch" in s)

    def describe(self) -> tuple[str, ...]:
        """One line per step, as a learner reads what solve() launched."""
        names = {k.key: k.name for k in self.kernels}
        lines = []
        for step in self.steps:
            if "launch" in step:
                grid = "x".join(str(g) for g in step["grid"])
                lines.append(f"{names[step['launch']]} grid {grid}")
            else:
                where = step["fill"]
                lines.append(
                    f"fill {step['nbytes']} bytes of scratch {where['scratch']} "
                    f"with {step['value']:g} ({step['dtype']})"
                )
        return tuple(lines)

    def to_dict(self) -> dict:
        return {
            "kernels": [
                {
                    "key": k.key,
                    "name": k.name,
                    "signature": [list(p) for p in k.signature],
                    "directory": k.directory,
                }
                for k in self.kernels
            ],
            "scratch": list(self.scratch),
            "steps": [dict(s) for s in self.steps],
        }

    def shape(self) -> str:
        """The sequence without where the kernels' files lie: equal for equal work."""
        data = self.to_dict()
        for kernel in data["kernels"]:
            kernel.pop("directory")
        return json.dumps(data, sort_keys=True)


# ------------------------------------------------------------------------------ validation


def validated(raw) -> Sequence:
    """The sequence a worker sent, checked for shape and bounds; NotReplayable otherwise."""
    if not isinstance(raw, dict):
        raise NotReplayable("the recorded call is garbled")
    if raw.get("unsupported"):
        raise NotReplayable(str(raw["unsupported"])[:300])
    kernels = tuple(_kernel(k) for k in _list(raw.get("kernels"), "kernels"))
    keys = {k.key for k in kernels}
    scratch = tuple(
        _count(s, "a scratch size", 1 << 40) for s in _list(raw.get("scratch"), "scratch")
    )
    if sum(scratch) > MAX_SCRATCH_BYTES:
        raise NotReplayable(f"solve() allocated {sum(scratch)} bytes of scratch in one call")
    steps = _list(raw.get("steps"), "steps")
    if len(steps) > MAX_STEPS:
        raise NotReplayable(f"solve() made {len(steps)} launches and fills in one call")
    by_key = {k.key: k for k in kernels}
    checked = tuple(_step(s, by_key, len(scratch)) for s in steps)
    if not any("launch" in s for s in checked):
        raise NotReplayable("solve() launched no Triton kernel")
    used = {s["launch"] for s in checked if "launch" in s}
    return Sequence(tuple(k for k in kernels if k.key in used and k.key in keys), scratch, checked)


def _list(value, what: str) -> list:
    if not isinstance(value, list):
        raise NotReplayable(f"the recorded call's {what} are garbled")
    return value


def _count(value, what: str, most: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= most:
        raise NotReplayable(f"{what} is out of range: {value!r}"[:200])
    return value


def _kernel(raw) -> Kernel:
    if not isinstance(raw, dict):
        raise NotReplayable("a recorded kernel is garbled")
    key, name, directory = raw.get("key"), raw.get("name"), raw.get("directory")
    if not (isinstance(key, str) and _KEY.match(key)):
        raise NotReplayable("a recorded kernel has no valid key")
    if not (isinstance(name, str) and _NAME.match(name)):
        raise NotReplayable(f"a recorded kernel has an invalid name: {name!r}"[:200])
    if not isinstance(directory, str):
        raise NotReplayable(f"kernel {name}: no cache directory")
    signature = []
    for pair in _list(raw.get("signature"), f"kernel {name}'s signature"):
        if not (
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
        ):
            raise NotReplayable(f"kernel {name}: a garbled signature")
        arg, kind = pair
        if not _NAME.match(arg):
            raise NotReplayable(f"kernel {name}: an invalid argument name {arg!r}"[:200])
        if not (_TYPE.match(kind) or _DESCRIPTOR.match(kind)):
            raise NotReplayable(
                f"kernel {name}: argument {arg} is of type {kind!r}, which the judge does not "
                "replay (scalars, pointers and tiled tensor descriptors, Gluon's with an "
                "NVMMASharedLayout; no tuples, no im2col descriptors)"[:300]
            )
        signature.append((arg, kind))
    return Kernel(key, name, tuple(signature), directory)


def _step(raw, kernels: dict[str, Kernel], scratch: int) -> dict:
    if not isinstance(raw, dict):
        raise NotReplayable("a recorded step is garbled")
    if "launch" in raw:
        kernel = kernels.get(raw["launch"])
        if kernel is None:
            raise NotReplayable("a launch names a kernel that was not recorded")
        grid = _list(raw.get("grid"), "grid")
        if len(grid) != 3:
            raise NotReplayable(f"kernel {kernel.name}: a grid of {len(grid)} dimensions")
        grid = [_count(g, f"kernel {kernel.name}'s grid", MAX_GRID) for g in grid]
        args = _list(raw.get("args"), f"kernel {kernel.name}'s arguments")
        if len(args) != len(kernel.signature):
            raise NotReplayable(
                f"kernel {kernel.name}: {len(args)} arguments "
                f"for {len(kernel.signature)} parameters"
            )
        checked = [
            _descriptor(a, kind, scratch, kernel.name)
            if _DESCRIPTOR.match(kind)
            else _arg(a, scratch)
            for a, (_, kind) in zip(args, kernel.signature, strict=True)
        ]
        return {"launch": kernel.key, "grid": grid, "args": checked}
    if "fill" in raw:
        where = _arg(raw["fill"], scratch)
        if "scratch" not in where:
            raise NotReplayable("solve() filled memory that is not scratch it allocated")
        dtype = raw.get("dtype")
        if dtype not in FILL_DTYPES:
            raise NotReplayable(f"a fill of an unsupported type {dtype!r}"[:200])
        value = raw.get("value")
        if not isinstance(value, (int, float)):
            raise NotReplayable("a fill with a garbled value")
        nbytes = _count(raw.get("nbytes"), "a fill's size", 1 << 40)
        return {"fill": where, "dtype": dtype, "value": value, "nbytes": nbytes}
    raise NotReplayable("a recorded step is neither a launch nor a fill")


def descriptor_type(kind: str) -> tuple[str, list[int]] | None:
    """A descriptor's element type and block, from its signature type; None for the rest."""
    match = _DESCRIPTOR.match(kind)
    if match is None:
        return None
    return match.group(1), [int(n) for n in match.group(2).split(", ")]


def _descriptor(raw, kind: str, scratch: int, name: str) -> dict:
    """A host tensor descriptor as recorded: its base must point into a buffer or scratch, and
    what TMA requires of it must hold (16-byte aligned base and strides, the last dimension
    contiguous, the block of the compiled kernel's type). Whether the memory it describes lies
    inside that buffer is checked where the buffer's size is known (`extent`, in the timer)."""
    if not isinstance(raw, dict) or set(raw) != DESCRIPTOR_KEYS:
        raise NotReplayable(f"kernel {name}: a tensor descriptor argument is garbled")
    dtype, block = descriptor_type(kind)
    base = _arg(raw["desc"], scratch)
    if "v" in base:
        raise NotReplayable(
            f"kernel {name}: a tensor descriptor's base points into neither a judge's buffer nor "
            "memory solve() allocated on the device"
        )
    shape, strides = raw["shape"], raw["strides"]
    if not (
        isinstance(shape, list)
        and isinstance(strides, list)
        and len(shape) == len(strides) == len(block)
    ):
        raise NotReplayable(f"kernel {name}: a tensor descriptor of the wrong rank")
    shape = [_count(n, f"kernel {name}: a descriptor's size", MAX_DESCRIPTOR_DIM) for n in shape]
    strides = [
        _count(n, f"kernel {name}: a descriptor's stride", MAX_DESCRIPTOR_DIM) for n in strides
    ]
    size = ELEMENT_BYTES[dtype]
    if (
        0 in shape
        or strides[-1] != 1
        or base["at"] % 16
        or any(n * size % 16 for n in strides[:-1])
    ):
        raise NotReplayable(
            f"kernel {name}: a tensor descriptor TMA cannot use (an empty dimension, a last "
            "dimension that is not contiguous, or a base or stride off a 16-byte boundary)"
        )
    if raw["block"] != block:
        raise NotReplayable(f"kernel {name}: a tensor descriptor's block is not its type's")
    if raw["padding"] not in ("zero", "nan") or not isinstance(raw["tf32"], bool):
        raise NotReplayable(f"kernel {name}: a tensor descriptor's options are garbled")
    return {
        "desc": base,
        "shape": shape,
        "strides": strides,
        "block": block,
        "padding": raw["padding"],
        "tf32": raw["tf32"],
    }


def extent(desc: dict, kind: str) -> int:
    """Bytes from a descriptor's base to one past the last element it describes."""
    dtype, _ = descriptor_type(kind)
    last = sum((n - 1) * stride for n, stride in zip(desc["shape"], desc["strides"], strict=True))
    return (last + 1) * ELEMENT_BYTES[dtype]


def _arg(raw, scratch: int) -> dict:
    if not isinstance(raw, dict) or len(raw) not in (1, 2):
        raise NotReplayable("a recorded argument is garbled")
    if "v" in raw and len(raw) == 1:
        value = raw["v"]
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= ADDRESS_CEILING:
            raise NotReplayable(
                f"solve() passed a kernel the address {value:#x}, which points into neither a "
                "judge's buffer nor memory it allocated on the device"
            )
        if value is None or isinstance(value, (bool, int, float)):
            return {"v": value}
        raise NotReplayable("a recorded argument is neither a number nor an address")
    at = _count(raw.get("at"), "an address offset", 1 << 42)
    if "buf" in raw and isinstance(raw["buf"], str) and _NAME.match(raw["buf"]):
        return {"buf": raw["buf"], "at": at}
    if "scratch" in raw:
        if not scratch:
            raise NotReplayable("a recorded address points into scratch that was not allocated")
        return {"scratch": _count(raw["scratch"], "a scratch index", scratch - 1), "at": at}
    raise NotReplayable("a recorded address points nowhere")


def agreed(raws: list) -> Sequence:
    """The one sequence every recorded call of a shape made (one call per input set): a solve()
    whose work depends on its inputs' values, not only their sizes, cannot be replayed."""
    if not raws:
        raise NotReplayable("no call of solve() was recorded")
    sequences = [validated(r) for r in raws]
    first = sequences[0]
    for j, other in enumerate(sequences[1:], start=1):
        if other.shape() != first.shape():
            raise NotReplayable(
                f"solve() launched different work for input set {j} than for input set 0 of the "
                f"same sizes ({_difference(first, other)}): the judge times a fixed sequence of "
                "launches per size, so what solve() launches may depend on the sizes only, not "
                "on the values it reads back from the device"
            )
    return first


def _difference(a: Sequence, b: Sequence) -> str:
    if len(a.steps) != len(b.steps):
        return f"{len(a.steps)} steps against {len(b.steps)}"
    for i, (x, y) in enumerate(zip(a.describe(), b.describe(), strict=True)):
        if x != y:
            return f"step {i}: {x} against {y}"
    return "the same kernels with other arguments"


# ------------------------------------------------------------------------------ addresses


@dataclass(frozen=True)
class Region:
    """Device memory an address may point into: a judge's buffer or a scratch allocation."""

    kind: str  # "buf" or "scratch"
    ref: str | int  # the buffer's name, or the scratch allocation's index
    start: int  # its first byte's address
    nbytes: int

    def holds(self, address: int) -> bool:
        return self.start <= address <= self.start + self.nbytes  # one past the end is an address


ADDRESS_FLOOR = 1 << 20  # below this an integer is a size, never an address
# At or above this an integer is an address (sizes and their products stay far below): one that
# points into no buffer or scratch of the worker's cannot be replayed, since the same number in
# the timer's address space could point at anything of the judge's.
ADDRESS_CEILING = 1 << 40


def relative(value, regions: list[Region]) -> dict:
    """An argument as the sequence keeps it: an address as an offset into its region (the
    latest region holding it: scratch freed and allocated again reuses addresses), else the
    value itself."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= ADDRESS_FLOOR:
        for region in reversed(regions):
            if region.holds(value):
                return {region.kind: region.ref, "at": value - region.start}
    return {"v": value}
