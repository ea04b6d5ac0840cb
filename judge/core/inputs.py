"""Seeded inputs, sentinels and guard bands.

The same function draws a case's inputs in the trusted parent (for the reference) and in the worker
(for the submission): values come from a CPU generator seeded per argument, so both sides get the
same bytes without sending them.

Every buffer the worker hands to `solve()` is the middle of a larger allocation:

    [ guard band | data | guard band ]

The guard bands hold a byte pattern (NaNs around inputs); outputs start filled with a sentinel
(a NaN with a payload for
floats) so that "never written" and "written past the end" are both visible afterwards.
"""

from __future__ import annotations

import hashlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np
import torch

from judge.core.spec import FLOAT_DTYPES, Arg, Case, Draw, PuzzleSpec, evaluate, numel

GUARD_BYTES = 16384  # per side; a multiple of 16 keeps the data 16-byte aligned
GUARD_BYTE = 0xA5  # every byte of an output's guard band: a store past the end changes it
INPUT_GUARD_BYTE = 0xFF  # every byte of an input's guard band: a NaN for every float type (and -1
# for signed integers), so an unmasked load past the end poisons a sum instead of adding nothing

# Bit patterns that fill an output before each call. For floats: a quiet NaN with a payload that
# arithmetic does not produce (float8 has few NaNs: a negative one, where a GPU's arithmetic makes
# positive NaNs); for integers: a value unlikely to be an answer.
SENTINEL_BITS = {
    "float16": 0x7E5A,
    "bfloat16": 0x7FC5,
    "float32": 0x7FC5A5A5,
    "float64": 0x7FF8A5A5A5A5A5A5,
    "float8_e4m3fn": 0xFF,  # its only NaNs are 0x7F and 0xFF
    "float8_e5m2": 0xFD,  # a NaN of payload 01; a positive NaN converts to 0x7E or 0x7F
    "int8": 0x5A,
    "uint8": 0x5A,
    "int16": 0x5A5A,
    "int32": 0x5A5A5A5A,
    "uint32": 0x5A5A5A5A,
    "int64": 0x5A5A5A5A5A5A5A5A,
}
# Types NumPy lacks, stored (.npz) as integers of their width: their bits
STORED_AS_BITS = {"bfloat16": "int16", "float8_e4m3fn": "uint8", "float8_e5m2": "uint8"}
_BITS_VIEW = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}  # by item size


def torch_dtype(name: str) -> torch.dtype:
    return getattr(torch, name)


def guard_byte(arg: Arg) -> int:
    """The byte an argument's guard bands are filled with (different for inputs and outputs, so
    that copying an input's guard into an output's is still seen)."""
    return INPUT_GUARD_BYTE if arg.role == "in" else GUARD_BYTE


def guard_elems(dtype: str) -> int:
    return GUARD_BYTES // torch_dtype(dtype).itemsize


def sentinel(dtype: str) -> torch.Tensor:
    """A one-element tensor holding the sentinel of dtype."""
    item = torch_dtype(dtype).itemsize
    bits = SENTINEL_BITS[dtype]
    if bits >= 1 << (8 * item - 1):  # two's complement for the signed view
        bits -= 1 << (8 * item)
    return torch.tensor([bits], dtype=_BITS_VIEW[item]).view(torch_dtype(dtype))


def as_bits(t: torch.Tensor) -> torch.Tensor:
    """The tensor's elements as integers of the same width, for bit-for-bit comparisons (NaN
    payloads and -0.0 included)."""
    return t.contiguous().view(_BITS_VIEW[t.element_size()])


def arg_seed(seed: int, arg: Arg) -> int:
    """An independent seed per argument, stable across processes and versions."""
    digest = hashlib.sha256(f"{seed}:{arg.name}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


DRAW_CHUNK = 1 << 22  # elements each generator of a large draw fills, side by side
DRAW_THREADS = max(1, min(8, os.cpu_count() or 1))  # threads filling a large draw's chunks
_drawing: tuple[int, ThreadPoolExecutor] | None = None  # (pid, pool): made when first needed
_drawing_made = threading.Lock()


def draw_input(
    arg: Arg,
    n: int,
    seed: int,
    override: str = "",
    sizes: dict[str, int] | None = None,
    own: Draw | None = None,
) -> torch.Tensor:
    """The values of one input buffer, drawn on the CPU from generators seeded per argument
    (with `own`, the case's draw of it instead of the argument's). Each DRAW_CHUNK elements
    come from a generator of their own, chunks filled side by side: the first from the
    argument's seed alone (a buffer of one chunk is the same as one generator would draw),
    chunk i from (that seed, i)."""
    draw = own or arg.draw or Draw(dist="uniform")
    draw = replace(
        draw,
        low=float(evaluate(draw.low, sizes or {})),
        high=float(evaluate(draw.high, sizes or {})),
    )
    dtype = torch_dtype(arg.dtype)
    if draw.dist == "full":
        return torch.full((n,), draw.value, dtype=torch.float64).to(dtype)
    mixed = override == "mixed" and arg.dtype in FLOAT_DTYPES
    kind = np.float64 if mixed else np.int64 if draw.dist == "randint" else np.float32
    values = np.empty(n, dtype=kind)
    root = arg_seed(seed, arg)

    def fill(i: int) -> None:
        rng = np.random.default_rng(root if i == 0 else [root, i])
        _drawn(rng, values[i * DRAW_CHUNK : (i + 1) * DRAW_CHUNK], draw, mixed)

    chunks = -(-n // DRAW_CHUNK)
    if chunks <= 1:
        fill(0)
    else:
        list(_pool().map(fill, range(chunks)))
    return torch.from_numpy(values).to(dtype)


def _drawn(rng: np.random.Generator, out: np.ndarray, draw: Draw, mixed: bool) -> None:
    """Fill `out` with values of `draw` from one generator (`mixed`: the float mix of zeros and
    magnitudes)."""
    if mixed:
        out[:] = _mixed(len(out), rng, draw)
    elif draw.dist == "randint":
        out[:] = rng.integers(int(draw.low), int(draw.high), len(out), dtype=np.int64)
    elif draw.dist == "normal":
        rng.standard_normal(out=out, dtype=np.float32)
        out *= np.float32(draw.std)
        out += np.float32(draw.mean)
    else:
        rng.random(out=out, dtype=np.float32)
        out *= np.float32(draw.high - draw.low)
        out += np.float32(draw.low)


def _pool() -> ThreadPoolExecutor:
    """This process's drawing threads (a process forked from one that had them has none)."""
    global _drawing
    with _drawing_made:
        if _drawing is None or _drawing[0] != os.getpid():
            pool = ThreadPoolExecutor(DRAW_THREADS, thread_name_prefix="tpuzzle-draw")
            _drawing = (os.getpid(), pool)
        return _drawing[1]


def _mixed(n: int, rng: np.random.Generator, draw: Draw) -> np.ndarray:
    """Zeros, negatives and magnitudes from 1e-3 to 1e3, within the draw's own range."""
    values = 10.0 ** (rng.random(n) * 6 - 3) * np.where(rng.random(n) < 0.5, -1.0, 1.0)
    values[rng.random(n) < 0.1] = 0.0
    low = draw.low if draw.dist != "normal" else -np.inf
    high = draw.high if draw.dist != "normal" else np.inf
    return np.clip(values, min(low, 0.0), max(high, 0.0))


@dataclass(frozen=True)
class Layout:
    """Where one buffer's data sits inside its guarded allocation (in elements)."""

    arg: Arg
    n: int  # data elements
    guard: int  # guard elements on each side

    @property
    def total(self) -> int:
        return self.n + 2 * self.guard


def layouts(spec: PuzzleSpec, sizes: dict[str, int]) -> list[Layout]:
    return [Layout(a, numel(a, sizes), guard_elems(a.dtype)) for a in spec.buffers]


def pristine(spec: PuzzleSpec, sizes: dict[str, int], seed: int, override: str = "") -> dict:
    """Each input (and in-place) buffer's initial values, keyed by argument name, on the CPU:
    drawn from the seed, or (a case with inputs of its own, `override` naming it) read from the
    case's stored file or drawn with the case's own draw of each argument."""
    case = spec.variant(override)
    if case is not None and case.inputs:
        return stored(spec, case, sizes)
    own = dict(case.draws) if case is not None else {}
    plain = "" if case is not None else override
    return {
        lay.arg.name: draw_input(lay.arg, lay.n, seed, plain, sizes, own.get(lay.arg.name))
        for lay in layouts(spec, sizes)
        if lay.arg.role != "out"
    }


def stored(spec: PuzzleSpec, case: Case, sizes: dict[str, int]) -> dict:
    """A case's inputs as stored beside its puzzle.yaml (a .npz with one array per input
    buffer), checked against the buffers' dtypes and element counts."""
    path = spec.directory / case.inputs
    found = {}
    with np.load(path, allow_pickle=False) as arrays:
        for lay in layouts(spec, sizes):
            if lay.arg.role == "out":
                continue
            if lay.arg.name not in arrays.files:
                raise ValueError(f"{path}: no array {lay.arg.name!r}")
            values = arrays[lay.arg.name].reshape(-1)
            if values.size != lay.n:
                raise ValueError(
                    f"{path}: {lay.arg.name} holds {values.size} elements, the case needs {lay.n}"
                )
            found[lay.arg.name] = _from_numpy(values, lay.arg.dtype)
    return found


def _from_numpy(values: np.ndarray, dtype: str) -> torch.Tensor:
    """A stored array as a tensor of the argument's dtype; a type NumPy lacks (bfloat16,
    float8) is stored as its bits (STORED_AS_BITS)."""
    bits = STORED_AS_BITS.get(dtype)
    if bits is not None:
        return torch.from_numpy(values.astype(bits, copy=True)).view(torch_dtype(dtype))
    return torch.from_numpy(np.ascontiguousarray(values)).to(torch_dtype(dtype))


def to_numpy(t: torch.Tensor, dtype: str) -> np.ndarray:
    """A tensor as the array a case's .npz stores: its bits for a type NumPy lacks."""
    data = t.detach().contiguous().cpu()
    bits = STORED_AS_BITS.get(dtype)
    return data.view(torch_dtype(bits)).numpy() if bits else data.numpy()


def guarded(lay: Layout, initial: torch.Tensor | None, device: str) -> torch.Tensor:
    """A guarded allocation: guard pattern, initial data (or the sentinel), guard pattern."""
    full = torch.empty(lay.total, dtype=torch_dtype(lay.arg.dtype), device=device)
    full.view(torch.uint8).fill_(guard_byte(lay.arg))
    refill(full, lay, initial)
    return full


def refill(full: torch.Tensor, lay: Layout, initial: torch.Tensor | None) -> None:
    """Put a buffer back to its state before a call: initial data, or the sentinel for outputs."""
    data = full[lay.guard : lay.guard + lay.n]
    if initial is None:
        data.copy_(sentinel(lay.arg.dtype).to(full.device).expand(lay.n))
    else:
        data.copy_(initial)


def data_view(full: torch.Tensor, lay: Layout) -> torch.Tensor:
    return full[lay.guard : lay.guard + lay.n]


def call_args(
    spec: PuzzleSpec,
    sizes: dict[str, int],
    pointers: dict[str, object],
    override: str = "",
    scalars: dict[str, float] | None = None,
) -> list:
    """The positional arguments of solve() (or of the reference): buffers, sizes and scalars
    (a case's own value of a scalar where the case that `override` names has one; `scalars`,
    where given, are those values: a worker is handed them, not the cases)."""
    if scalars is None:
        case = spec.variant(override)
        scalars = dict(case.scalars) if case is not None else {}
    values = []
    for arg in spec.args:
        if arg.is_buffer:
            values.append(pointers[arg.name])
        elif arg.role == "size":
            values.append(int(sizes[arg.name]))
        else:
            values.append(float(scalars.get(arg.name, arg.value)))
    return values


def mapped(path: str, dtype: str, n: int) -> torch.Tensor:
    """n elements of `dtype` mapped copy-on-write from a file (a buffer the worker wrote, or the
    parent's sealed inputs): read without a copy, and nothing done to the tensor reaches the
    file."""
    element = torch_dtype(dtype).itemsize
    size = os.stat(path).st_size
    if size != n * element:
        raise ValueError(f"{path}: expected {n} elements, found {size / element:g}")
    if n == 0:
        return torch.empty(0, dtype=torch_dtype(dtype))
    raw = torch.from_file(path, shared=False, size=size, dtype=torch.uint8)
    return raw.view(torch_dtype(dtype))
