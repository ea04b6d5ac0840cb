"""On the GPU: the device work a call of `solve()` launched that no Triton kernel of its own did.

The referee sees every PyTorch (ATen) operation, but a library can reach the device without
PyTorch: cuBLAS or `cudaMemcpy` through ctypes, CuPy, a hand-loaded CUDA module. The kernels,
copies and fills such a library launches are device activities that PyTorch's profiler lists
(through CUPTI), so one call is run under it and every activity is accounted for:

- a Triton kernel: its device name is the name Triton compiled it under, which is the
  `@triton.jit` function's name unless the function gives its own `repr`. The names are taken
  from Triton's launch hook (`knobs.runtime.launch_enter_hook`: a chain of hooks in Triton 3.5
  and later, a single hook in 3.4, `CompiledKernel.launch_enter_hook` before), whose metadata
  carries the compiled kernel's name: only kernels that were launched count, under the exact name
  the device reports, custom `repr` included. The names of every `JITFunction` alive would also
  count kernels that never ran, and miss a custom `repr`.
- launched by an ATen operation the referee allows (the fills of `torch.zeros` and of an
  autotuner's `reset_to_zero` run inside `aten::fill_`): PyTorch pushes the correlation id
  of each operation it records onto CUPTI's external correlation stack, so a device activity
  launched inside an operation carries that operation's id (`linked_correlation_id`), and the
  operation is the CPU event with that `correlation_id`. An activity launched by an operation the
  referee would have rejected (one that slipped past it) is foreign too, named with the operation.

Everything else is foreign. Every call whose output is checked or timed is listed: each case's
call alone, and a benchmark's timed calls and re-checks in one recording.

Like the referee, this is a check on the usual ways of cheating, not a sandbox: the submission
runs in the same process and can look for the profiler. Where the profiler cannot list device
work (no CUPTI, a failure inside it), the listing finds nothing and says so (`Recorder.events` is
None); an exception raised by the call itself always propagates.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

REASON = "foreign-launch"
SHOWN = 3  # activity names named in the message
NAME_CHARS = 80  # a name is cut to this many characters (cuBLAS's are long C++ signatures)
_WORK = {"kernel", "gpu_memcpy", "gpu_memset"}  # profiler activity types that are device work
_FILL = "FillFunctor"  # PyTorch's fill kernel: writes one value, computes nothing


@dataclass(frozen=True)
class Activity:
    """One piece of device work the profiler saw during the call."""

    name: str  # kernel name, or "Memcpy DtoD (Device -> Device)", "Memset (Device)"
    op: str = ""  # the ATen operation that launched it ("aten::fill_"), "" when none did
    start_ns: int = field(default=0, compare=False)  # on the device, in the profiler's clock
    end_ns: int = field(default=0, compare=False)
    launched_ns: int | None = field(default=None, compare=False)  # host time of its launch call
    thread: int | None = field(default=None, compare=False)  # host thread of its launch call


def foreign(
    activities: Iterable[Activity], triton_names: set[str], allowed_ops: set[str]
) -> list[str]:
    """The activities that were neither a Triton kernel that ran nor launched by an allowed ATen
    operation, as names (with the operation, where one launched it), in launch order, each once.
    PyTorch's fill kernel counts as allowed whatever launched it: the profiler records the
    operators of the judged thread only, so the fills of a torch.zeros (or an autotuner's L2
    flush) in a thread of the submission's have no operator to show, and a fill computes nothing."""
    found: dict[str, None] = {}
    for activity in activities:
        if activity.name in triton_names or _FILL in activity.name:
            continue
        if activity.op.startswith("aten::") and activity.op.removeprefix("aten::") in allowed_ops:
            continue
        label = f"{activity.name} (from {activity.op})" if activity.op else activity.name
        found.setdefault(label, None)
    return list(found)


def describe(names: list[str]) -> str:
    """The rejection message for foreign activities: the first few by name, long names cut."""
    shown = [n if len(n) <= NAME_CHARS else n[: NAME_CHARS - 3] + "..." for n in names[:SHOWN]]
    more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    return (
        f"solve() launched work that no Triton kernel of its own did: {', '.join(shown)}{more}; "
        "the work must be done by Triton kernels, not by cuBLAS, CUDA copies or another library"
    )


def device_activities(events) -> list[Activity]:
    """The device work among the profiler's raw events (`kineto_results.events()`), each with the
    ATen operation that launched it and the host time and thread of its launch, in start order."""
    from torch.autograd import DeviceType

    ops, calls, work = {}, {}, []
    for event in events:
        kind = _activity_type(event)
        if event.device_type() == DeviceType.CPU:
            name = event.name()
            if name.startswith("aten::") and event.scope() == 0 and kind in ("cpu_op", None):
                ops[event.correlation_id()] = name  # scope 0: RecordScope::FUNCTION, an operator
            elif name.startswith("cu") and kind in ("cuda_runtime", "cuda_driver", None):
                calls[event.correlation_id()] = event  # CUPTI's id, shared with its device work
        elif kind in _WORK or (kind is None and not _is_annotation(event)):
            work.append(event)
    work.sort(key=lambda e: e.start_ns())
    return [_activity(e, ops, calls.get(e.correlation_id())) for e in work]


def _activity(event, ops: dict, launch) -> Activity:
    return Activity(
        event.name(),
        ops.get(event.linked_correlation_id(), ""),
        start_ns=event.start_ns(),
        end_ns=_end_ns(event),
        launched_ns=launch.start_ns() if launch is not None else None,
        thread=_thread(launch) if launch is not None else None,
    )


def _end_ns(event) -> int:
    getter = getattr(event, "end_ns", None)
    return getter() if getter is not None else event.start_ns() + event.duration_ns()


def _thread(event) -> int:
    """The host thread of a CPU event (the profiler keeps it as the event's resource id)."""
    return int(event.device_resource_id())


def _activity_type(event) -> str | None:
    getter = getattr(event, "activity_type", None)  # absent in PyTorch 2.11, there in 2.13
    return getter() if getter is not None else None


def _is_annotation(event) -> bool:
    getter = getattr(event, "is_user_annotation", None)
    return bool(getter()) if getter is not None else False


class TritonLaunches:
    """The names of the Triton kernels launched while attached, from Triton's launch hook."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self._detach: Callable[[], None] | None = None

    def note(self, metadata) -> None:
        # Triton passes a LazyDict; its .get() would run the kernel's own launch_metadata code
        data = getattr(metadata, "data", metadata)
        if isinstance(data, dict) and isinstance(data.get("name"), str):
            self.names.add(data["name"])

    def attach(self) -> bool:
        """Start noting launches; False where this Triton has no launch hook to join."""
        try:
            self._detach = attach(*hook_slot(), self.note)
        except Exception:  # noqa: BLE001 - a Triton of another shape
            return False
        return True

    def detach(self) -> None:
        if self._detach is not None:
            self._detach()
            self._detach = None


def hook_slot() -> tuple[object, str]:
    """(object, attribute) where this Triton keeps its launch-enter hook."""
    import triton

    knobs = getattr(triton, "knobs", None)
    if knobs is not None and hasattr(knobs.runtime, "launch_enter_hook"):
        return knobs.runtime, "launch_enter_hook"
    from triton.compiler.compiler import CompiledKernel

    return CompiledKernel, "launch_enter_hook"


def attach(holder: object, attribute: str, hook: Callable) -> Callable[[], None]:
    """Add `hook` to the launch hook at `holder.attribute`, keeping any hook already there;
    returns what removes it again."""
    current = getattr(holder, attribute)
    if hasattr(current, "add") and hasattr(current, "remove"):  # Triton's HookChain
        current.add(hook)
        return lambda: current.remove(hook)

    def both(metadata) -> None:
        hook(metadata)
        if current is not None:
            current(metadata)

    setattr(holder, attribute, both)
    return lambda: setattr(holder, attribute, current)


class Recorder:
    """Device work and Triton launches recorded while open (PyTorch's profiler and Triton's
    launch hook). After the block, `events` holds the profiler's raw events, or None where the
    profiler could not run or its record could not be read."""

    def __init__(self, launches: TritonLaunches | None = None) -> None:
        """`launches`: a launch hook already attached (and left so), whose names of earlier
        launches count too: a CUDA graph replays kernels Triton launched when it was captured."""
        self.launches = launches or TritonLaunches()
        self._own = launches is None
        self.events = None
        self._profiler = None

    def __enter__(self) -> Recorder:
        if not self._own or self.launches.attach():
            self._profiler = _start()
        return self

    def __exit__(self, *exc) -> None:
        if self._own:
            self.launches.detach()
        if self._profiler is not None:
            self.events = _stop(self._profiler)

    def activities(self) -> list[Activity] | None:
        try:
            return device_activities(self.events) if self.events is not None else None
        except Exception:  # noqa: BLE001 - events of another shape: nothing can be read
            return None


def listed(
    call: Callable[[], None], allowed_ops: set[str], seen: TritonLaunches | None = None
) -> list[str]:
    """Run `call` once while recording; the foreign activities it launched (see `foreign`).
    Nothing is found where the profiler cannot be used."""
    with Recorder(seen) as record:
        call()
    found = record.activities()
    return foreign(found, record.launches.names, allowed_ops) if found else []


def works() -> bool:
    """Whether this process's profiler records device work: a fill, recorded."""
    import torch

    with Recorder() as record:
        torch.zeros(1, device="cuda")
        torch.cuda.synchronize()
    return bool(record.activities())


def _start():
    """A started profiler of ATen operations and CUDA activities (no shapes, stacks or memory),
    or None where it cannot run.

    PyTorch's autograd profiler, not `torch.profiler.profile`: the latter's start asks for
    `torch._inductor`, whose import took 4 s in a fresh worker on an H100; this one starts in
    about 20 ms there, and stops with a first call's events (an autotuner's included) listed in
    about 0.3 s.
    """
    try:
        from torch.autograd.profiler import profile
        from torch.profiler import ProfilerActivity, supported_activities

        if ProfilerActivity.CUDA not in supported_activities():
            return None
        profiler = profile(use_device="cuda", use_kineto=True)
        with _quiet_stderr():
            profiler.__enter__()
        return profiler
    except Exception:  # noqa: BLE001 - no CUPTI, or a profiler already running
        return None


def _stop(profiler):
    """The profiler's raw events, or None where stopping it failed."""
    try:
        with _quiet_stderr():
            profiler.__exit__(None, None, None)
        return profiler.kineto_results.events()
    except Exception:  # noqa: BLE001 - stopped from inside solve(), or no results
        return None


@contextlib.contextmanager
def _quiet_stderr():
    """Kineto logs its start and stop on the process's stderr, which the judge would show as the
    submission's output."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
