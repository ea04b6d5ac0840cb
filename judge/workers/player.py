"""In the timer, a trusted process that never imports a submission: a recorded launch sequence
(`judge.workers.replay`) replayed on the judge's own buffers, every call timed and checked.

The kernels are loaded from the compiled files the parent copied out of the worker's Triton cache
(`<name>.json` and `<name>.cubin`: data, no Python of the submission's) and launched through
Triton's own launcher, built here from the recorded signature. Each timed call:

1. its input set's buffers back to their state before a call (inputs as drawn, in-place buffers
   refilled, outputs poisoned with the sentinel, guard bands restored), its scratch poisoned
   (0xFF bytes: NaN for floats), so that nothing survives from one call to the next;
2. the L2 cache flushed, then a sleep on the device while the host queues the call (a head start,
   as in the worker's do_bench);
3. the sequence, between two CUDA events;
4. every buffer checked on the device against the truth the parent computed (outputs within the
   tolerance, inputs and guard bands bit for bit); the count of wrong elements kept per call.

The input sets were drawn from seeds the worker never saw, and rotate through the calls.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from pathlib import Path
from types import SimpleNamespace

import torch
import triton

from judge.core import bench, check, inputs
from judge.core.spec import Tolerance
from judge.workers import device_checks, replay
from judge.workers.referee import Rejected
from judge.workers.replay import MAX_SCRATCH_BYTES, Sequence

SCRATCH_POISON = 0xFF
# Calls per shape: do_bench's budgets (25 ms of warm-up, 100 ms timed) for kernels slower than
# about 0.3 ms; faster ones stop at these counts, which give a median and a p20-p80 spread as
# steady as a thousand calls do, while each call's checks cost several times the call itself.
MAX_WARMUP_CALLS = 50
MAX_CALLS = 300
ESTIMATE_CALLS = 5


def load_kernels(kernels, directory: Path) -> dict:
    """Compiled kernels (a sequence's `kernels`), loaded on the current device, by key."""
    from triton.compiler.compiler import CompiledKernel

    loaded = {}
    for kernel in kernels:
        folder = directory / kernel.key
        group = {
            f"{kernel.name}.json": str(folder / f"{kernel.name}.json"),
            f"{kernel.name}.cubin": str(folder / f"{kernel.name}.cubin"),
        }
        src = SimpleNamespace(
            fn=SimpleNamespace(arg_names=kernel.arg_names),
            signature=dict(kernel.signature),
            constants={},
            attrs={},
        )
        compiled = CompiledKernel(src, group, kernel.key)
        compiled._init_handles()  # the module loaded, resources checked, before any timing
        loaded[kernel.key] = compiled
    return loaded


class _Base:
    """The base of a tensor descriptor the timer builds: an address of its own buffers, with
    the element type the kernel's signature names (what TensorDescriptor reads of a tensor)."""

    def __init__(self, address: int, dtype: torch.dtype):
        self.address, self.dtype = address, dtype

    def data_ptr(self) -> int:
        return self.address


TORCH_TYPES = {
    "i8": torch.int8,
    "u8": torch.uint8,
    "i16": torch.int16,
    "i32": torch.int32,
    "i64": torch.int64,
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
    "fp32": torch.float32,
    "fp64": torch.float64,
    "fp8e4nv": torch.float8_e4m3fn,
    "fp8e5": torch.float8_e5m2,
}


def launch_scratch(size: int, alignment: int, stream) -> torch.Tensor:
    """Global memory a compiled kernel asks Triton's launcher for at each launch (the tensor
    descriptors a kernel makes with `tl.make_tensor_descriptor` live there): the timer's own,
    like every buffer of a replayed call. PyTorch's blocks start on 512-byte boundaries, past
    any alignment Triton asks for. The size comes from the kernel's compiled metadata, which
    the worker wrote: it is held to the limit on a call's recorded scratch."""
    if size > MAX_SCRATCH_BYTES:
        raise ValueError(
            f"a replayed kernel asked its launcher for {size} bytes of global scratch "
            f"(at most {MAX_SCRATCH_BYTES})"
        )
    return torch.empty(size, dtype=torch.int8, device="cuda")


class Player:
    """Replays one sequence on given buffers and scratch."""

    def __init__(self, sequence: Sequence, kernels: dict):
        self.sequence, self.kernels = sequence, kernels
        self.signatures = {k.key: k.signature for k in sequence.kernels}
        # Triton keeps its allocator per thread (a context variable): the timer plays every
        # call on the thread that makes its player, so it is set here, once per command.
        triton.set_allocator(launch_scratch)

    def play(self, bases: dict[str, tuple[int, int]], scratch: list[torch.Tensor]) -> None:
        """One call: `bases` maps a buffer's name to (address, bytes) of its full allocation."""
        stream = torch.cuda.current_stream().cuda_stream
        for step in self.sequence.steps:
            if "launch" in step:
                kernel = self.kernels[step["launch"]]
                signature = self.signatures[step["launch"]]
                args = [
                    self.resolve(a, bases, scratch, kind)
                    for a, (_, kind) in zip(step["args"], signature, strict=True)
                ]
                x, y, z = step["grid"]
                kernel.run(
                    x,
                    y,
                    z,
                    stream,
                    kernel.function,
                    kernel.packed_metadata,
                    None,
                    None,
                    None,
                    *args,
                )
            else:
                where = step["fill"]
                region = scratch[where["scratch"]]
                raw = region[where["at"] : where["at"] + step["nbytes"]]
                raw.view(getattr(torch, step["dtype"])).fill_(step["value"])

    @staticmethod
    def resolve(arg: dict, bases: dict, scratch: list[torch.Tensor], kind: str = ""):
        """A recorded argument on this call's buffers: a value, an address, or (for a tensor
        descriptor) a TensorDescriptor of the timer's own, built on them."""
        if "v" in arg:
            return arg["v"]
        if "desc" in arg:
            return _descriptor(arg, bases, scratch, kind)
        start, nbytes = _region(arg, bases, scratch)
        if arg["at"] > nbytes:
            raise ValueError("a recorded address lies past the end of its buffer")
        return start + arg["at"]


def _region(ref: dict, bases: dict, scratch: list[torch.Tensor]) -> tuple[int, int]:
    """(address, bytes) of the buffer or scratch region an address was recorded against."""
    if "buf" in ref:
        return bases[ref["buf"]]
    region = scratch[ref["scratch"]]
    return region.data_ptr(), region.numel()


def _descriptor(arg: dict, bases: dict, scratch: list[torch.Tensor], kind: str):
    from triton.tools.tensor_descriptor import TensorDescriptor

    start, nbytes = _region(arg["desc"], bases, scratch)
    if arg["desc"]["at"] + replay.extent(arg, kind) > nbytes:
        raise Rejected(
            "solve() passed a kernel a tensor descriptor that reaches past the end of the buffer "
            "its base points into",
            replay.REASON,
        )
    dtype, _ = replay.descriptor_type(kind)
    if dtype not in TORCH_TYPES:
        raise ValueError(f"a tensor descriptor of {dtype} elements is not replayed")
    base = _Base(start + arg["desc"]["at"], TORCH_TYPES[dtype])
    options = {"padding": arg["padding"]}
    if arg["tf32"]:
        options["round_f32_to_tf32"] = True
    try:
        return TensorDescriptor(base, arg["shape"], arg["strides"], arg["block"], **options)
    except (AssertionError, TypeError) as exc:
        raise ValueError(f"a recorded tensor descriptor this Triton refuses: {exc}") from None


def addresses(fulls: dict) -> dict[str, tuple[int, int]]:
    """(address, bytes) of each full allocation, by name, as `Player.play` takes them."""
    return {name: (t.data_ptr(), t.numel() * t.element_size()) for name, t in fulls.items()}


class CheckedSet:
    """One input set on the device: the buffers a call uses, their state before a call, the
    truths, the scratch, and the check of a call's result."""

    def __init__(
        self,
        spec,
        sizes,
        initial: dict,
        outputs: dict | None,
        tolerance: Tolerance,
        scratch: tuple[int, ...] = (),
        device: str = "cuda",
    ):
        self.layouts = inputs.layouts(spec, sizes)
        self.device = device
        self.tol = device_checks.tolerances(tolerance.atol, tolerance.rtol, device)
        self.fulls, self.starts, self.truths = {}, {}, {}
        for lay in self.layouts:
            name = lay.arg.name
            self.starts[name] = inputs.guarded(lay, initial.get(name), device)
            self.fulls[name] = self.starts[name].clone()
            if lay.arg.role != "in" and outputs is not None:  # None: see own_answers
                self.truths[name] = outputs[name].to(device, torch.float64)
        self.allocate(scratch)
        self.bases = addresses(self.fulls)

    def allocate(self, scratch: tuple[int, ...]) -> None:
        """The scratch regions of the recorded calls (bytes each), on the device."""
        self.scratch = [torch.empty(n, dtype=torch.uint8, device=self.device) for n in scratch]

    def reset(self) -> None:
        for lay in self.layouts:
            if lay.arg.role != "in":
                self.fulls[lay.arg.name].copy_(self.starts[lay.arg.name])
        for region in self.scratch:
            region.fill_(SCRATCH_POISON)

    def own_answers(self, replayer: Player | LibraryCall) -> None:
        """The set's first call, made now: its outputs become the truths that the timed calls
        are held to. For a puzzle whose reference's `check` judges the outputs (which need not
        equal the reference's), the parent judges that call's buffers with the check; for a
        library call timed beside the submission, the check after each call is the same work
        as a submission's."""
        self.reset()
        replayer.play(self.bases, self.scratch)
        if self.device == "cuda":
            torch.cuda.synchronize()
        for lay in self.layouts:
            if lay.arg.role != "in":
                g, n = lay.guard, lay.n
                self.truths[lay.arg.name] = self.fulls[lay.arg.name][g : g + n].to(torch.float64)

    def wrong(self, counter: torch.Tensor) -> None:
        """Add the wrong elements of the last call to `counter` (one int64 element on the
        device), each buffer in one pass (judge.workers.device_checks), with no host
        synchronisation."""
        for lay in self.layouts:
            name = lay.arg.name
            full, start = self.fulls[name], self.starts[name]
            if lay.arg.role == "in":
                device_checks.differing(full, start, counter)
                continue
            g, n = lay.guard, lay.n
            device_checks.differing(full[:g], start[:g], counter)
            device_checks.differing(full[g + n :], start[g + n :], counter)
            device_checks.outside_tolerance(full[g : g + n], self.truths[name], self.tol, counter)


def _by_address(bases: dict[str, tuple[int, int]]) -> tuple:
    return tuple(sorted((name, address) for name, (address, _) in bases.items()))


class LibraryCall:
    """A PyTorch function of solve()'s arguments (the reference, or a library call that
    reference.py lists in LIBRARY), played on a CheckedSet's own buffers as `Player.play`
    plays a recorded sequence. `timed` then times the library exactly as it times a
    submission: the set reset, the L2 cache flushed, the same head start, the same check after
    each call. A long call that draws much power slows down when the tensor cores rest less
    between calls, so a library timed in another loop (do_bench's, with only a flush and a head
    start between calls) would be held to a different clock than the submission beside it."""

    def __init__(
        self, fn, spec, sizes: dict, sets: list[CheckedSet], scalars=None, pointers: bool = False
    ):
        """`pointers`: fn takes each buffer's address, as solve() does (a script that times a
        solution in its own process, the way the judge times the replay of its calls)."""
        self.fn = fn
        self.args = {}
        for one in sets:
            views = {
                lay.arg.name: inputs.data_view(one.fulls[lay.arg.name], lay) for lay in one.layouts
            }
            if pointers:
                views = {name: view.data_ptr() for name, view in views.items()}
            self.args[_by_address(one.bases)] = inputs.call_args(spec, sizes, views, "", scalars)

    def play(self, bases: dict[str, tuple[int, int]], scratch: list[torch.Tensor]) -> None:
        self.fn(*self.args[_by_address(bases)])


def timed(
    player: Player | LibraryCall,
    sets: list[CheckedSet],
    warmup_ms: float = bench.WARMUP_MS,
    rep_ms: float = bench.REP_MS,
) -> dict:
    """Every timed call of the sequence, rotating through the sets, each checked; as the timer
    answers: times (ms), wrong elements per call, the host time of one replay."""
    cache = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    hosts: list[float] = []

    def call(i: int, starts, ends, wrong) -> None:
        one = sets[i % len(sets)]
        one.reset()
        cache.zero_()
        sleep(wait_us)
        starts[i].record()
        t0 = time.perf_counter()
        player.play(one.bases, one.scratch)
        hosts.append((time.perf_counter() - t0) * 1e3)
        ends[i].record()
        one.wrong(wrong[i : i + 1])

    wait_us = bench.HEAD_START_US
    estimate = run(call, ESTIMATE_CALLS)
    wait_us = max(
        bench.HEAD_START_US, bench.HEAD_START_HOST_FACTOR * statistics.median(hosts) * 1e3
    )
    mean_ms = max(statistics.fmean(estimate["times"]), 1e-4)
    warmup = run(call, min(MAX_WARMUP_CALLS, max(1, int(warmup_ms / mean_ms))))
    hosts.clear()
    measured = run(call, min(MAX_CALLS, max(1, int(rep_ms / mean_ms))))
    counts = tally([estimate["wrong"], warmup["wrong"], measured["wrong"]], len(sets))
    return {"times": measured["times"], **counts, "host_ms": statistics.median(hosts)}


def tally(runs: list[list[int]], sets: int) -> dict:
    """The wrong elements of every call of the runs (each run rotating through the sets from
    the first), counted: the first wrong call and its set, and per set its calls and wrong
    ones. A set both right and wrong in its calls was given the same inputs each time."""
    wrong = [n for run in runs for n in run]
    rotation = [i % sets for run in runs for i in range(len(run))]
    first = next((i for i, n in enumerate(wrong) if n), None)
    return {
        "calls": len(wrong),
        "first_wrong": first,
        "first_wrong_set": rotation[first] if first is not None else None,
        "wrong_elements": wrong[first] if first is not None else 0,
        "wrong_calls": sum(1 for n in wrong if n),
        "calls_by_set": [rotation.count(j) for j in range(sets)],
        "wrong_by_set": [
            sum(1 for n, k in zip(wrong, rotation, strict=True) if n and k == j)
            for j in range(sets)
        ],
    }


UNTIMED = {"times": [], **tally([], 0)}


def run(call, calls: int) -> dict:
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
    wrong = torch.zeros(calls, dtype=torch.int64, device="cuda")
    for i in range(calls):
        call(i, starts, ends, wrong)
    torch.cuda.synchronize()
    return {
        "times": [float(s.elapsed_time(e)) for s, e in zip(starts, ends, strict=True)],
        "wrong": [int(n) for n in wrong.tolist()],
    }


def sleep(microseconds: float) -> None:
    """A spin on the device, so that the host queues the call behind it."""
    spin = getattr(torch.cuda, "_sleep", None)
    if spin is not None:
        spin(int(microseconds * _clock_mhz()))


_CLOCK: list[float] = []


def _clock_mhz() -> float:
    if not _CLOCK:
        from triton import runtime

        _CLOCK.append(bench._clock_khz(runtime.driver.active) / 1000)
    return _CLOCK[0]


# ------------------------------------------------------------------------------- checked after


def played_once(
    player: Player, spec, sizes: dict, initial: dict, scratch: tuple[int, ...]
) -> tuple[dict, dict]:
    """One call of the sequence on new buffers (inputs as drawn, outputs the sentinel, guard
    bands, scratch poisoned), waited for: (the buffers, copies of the input buffers made before
    the call), by name."""
    fulls = {
        lay.arg.name: inputs.guarded(lay, initial.get(lay.arg.name), "cuda")
        for lay in inputs.layouts(spec, sizes)
    }
    before = {
        lay.arg.name: fulls[lay.arg.name].clone()
        for lay in inputs.layouts(spec, sizes)
        if lay.arg.role == "in"
    }
    regions = [torch.full((n,), SCRATCH_POISON, dtype=torch.uint8, device="cuda") for n in scratch]
    player.play(addresses(fulls), regions)
    torch.cuda.synchronize()
    return fulls, before


def warm_up(spec, sizes: dict, tolerance: Tolerance, device: str = "cuda") -> tuple[int, float]:
    """The check of a call made once on new buffers of the given sizes, each output's truth
    what it holds (the answer: nothing wrong): the first check in a process loads the checking
    kernels and PyTorch's own (a few tenths of a second in all), which the timer does ahead,
    as the judging begins, while the parent computes the references."""
    layouts = inputs.layouts(spec, sizes)
    fulls = {lay.arg.name: inputs.guarded(lay, None, device) for lay in layouts}
    before = {lay.arg.name: fulls[lay.arg.name].clone() for lay in layouts if lay.arg.role == "in"}
    truths = {}
    for lay in layouts:
        if lay.arg.role != "in":
            data = inputs.data_view(fulls[lay.arg.name], lay)
            truths[lay.arg.name] = data.double() if data.is_floating_point() else data.clone()
    return checked_after(spec, sizes, fulls, before, truths, tolerance)


def checked_after(
    spec, sizes: dict, fulls: dict, before: dict, truths: dict, tolerance: Tolerance
) -> tuple[int, float]:
    """(wrong elements, largest error of an output) of a call whose kernels have all ended.

    What decides the outputs is put on the device only now (the truths, from the parent's
    sealed files, the guard patterns, the counter), so no kernel of the call can have found or
    changed it: the same check as the parent's, made where the buffers are. Input buffers are
    compared bit for bit with their copies made before the call (`before`, by name): a kernel
    that changed an input and its copy alike gains nothing, its outputs being held to the truth
    of the inputs as drawn."""
    device = next(iter(fulls.values())).device  # the GPU's (the CPU's in the tests)
    counter = torch.zeros(1, dtype=torch.int64, device=device)
    tol = device_checks.tolerances(tolerance.atol, tolerance.rtol, device)
    worst = torch.zeros(1, dtype=torch.int64, device=device)  # a float64's bits
    for lay in inputs.layouts(spec, sizes):
        name, full = lay.arg.name, fulls[lay.arg.name]
        if lay.arg.role == "in":
            device_checks.differing(full, before[name], counter)
            continue
        g, n = lay.guard, lay.n
        pattern = torch.empty(g, dtype=full.dtype, device=device)
        pattern.view(torch.uint8).fill_(inputs.guard_byte(lay.arg))
        device_checks.differing(full[:g], pattern, counter)
        device_checks.differing(full[g + n :], pattern, counter)
        truth = truths[name].to(device)
        device_checks.outside_tolerance(full[g : g + n], truth, tol, counter)
        device_checks.largest_error(full[g : g + n], truth, worst)
    return int(counter.item()), float(worst.view(torch.float64).item())


def described(
    spec, sizes: dict, fulls: dict, initial: dict, truths: dict, tolerance: Tolerance
) -> list[dict]:
    """The report's account of each buffer of a wrong call (judge.core.check's BufferCheck, as
    JSON), made here on the device against the inputs as drawn and the truths: what the parent
    shows, without moving the buffers (`check.check_output` and `check_input` run alike on the
    device)."""
    found = []
    for lay in inputs.layouts(spec, sizes):
        full = fulls[lay.arg.name]
        if lay.arg.role == "in":
            made = check.check_input(lay, full, initial[lay.arg.name].to(full.device))
        else:
            truth = truths[lay.arg.name].to(full.device)
            made = check.check_output(lay, full, truth, tolerance, lay.arg.role == "out")
        found.append(dataclasses.asdict(made))
    return found
