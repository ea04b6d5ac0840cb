"""Compiling a submission's kernels ahead, in a process with no GPU (a worker started for it).

A batch judges each new file in a fresh worker, and the first call of each kernel compiles it
there, a second or more of CPU work inside the device's gate, where the other lanes wait for it.
This process compiles the same kernels earlier, on spare cores and outside the gate, into the
file's own Triton cache, where its worker then finds them.

It runs the submission's `solve()` on the puzzle's visible test sizes and benchmark shapes with
addresses that point nowhere: Triton's driver is replaced by one that knows only the GPU's target
(its architecture and warp size, and the properties a solution may ask for, such as the number
of SMs), every kernel launch compiles without launching (Triton's `warmup`), an autotuned
kernel compiles every config it offers, and scratch memory asked of PyTorch lives on its meta
device (no memory at all). The process is confined with no GPU device file it may
open, so whatever the submission does, nothing it runs here reaches the device, and it never
sees a hidden case: it is sent only the sizes a learner may read. Nothing it does decides a
verdict: the worker that judges the file calls everything again; a kernel compiled here only
saves that worker the compile, and a solve() that fails here (it reads a value back from the
device, say) leaves the rest to that worker.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

FAKE_BASE = 0x7F00_0000_0000  # where the addresses handed to solve() start: 16-byte aligned,
FAKE_STRIDE = 1 << 36  # and far apart, as the judge's buffers are (only their alignment matters)
FAKE_SCRATCH = FAKE_BASE - FAKE_STRIDE  # the address of every scratch tensor solve() allocates


class TargetOnlyDriver:
    """Triton's driver for a process with no GPU: the device's target and properties, no
    streams, no memory, nothing launched."""

    def __init__(self, arch: int, warp_size: int, properties: dict):
        from triton.backends.compiler import GPUTarget

        self.target = GPUTarget("cuda", arch, warp_size)
        self.properties = dict(properties)
        self.utils = self  # driver.active.utils.get_device_properties(device)

    @staticmethod
    def is_active() -> bool:
        return True

    def get_current_target(self):
        return self.target

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device: int) -> None:
        pass

    def get_current_stream(self, device: int | None = None) -> int:
        return 0

    def get_device_properties(self, device: int) -> dict:
        return dict(self.properties)

    def get_device_interface(self):
        import torch

        return torch.cuda

    def get_active_torch_device(self):
        import torch

        return torch.device("cuda", 0)


def install(arch: int, warp_size: int, properties: dict) -> None:
    """Make every Triton launch in this process a compile: the target-only driver, JIT launches
    as `warmup` (compiled, never run, their host code built), and autotuners compiling every
    config they offer instead of timing them."""
    from triton.runtime import autotuner, driver, jit

    build_host_code()
    scratch_on_meta()
    driver.set_active(TargetOnlyDriver(arch, warp_size, properties))
    launch = jit.JITFunction.run

    def compile_only(self, *args, grid, warmup, **kwargs):
        kernel = launch(self, *args, grid=grid, warmup=True, **kwargs)
        build_launcher(kernel)
        return kernel

    def compile_configs(self, *args, **kwargs):
        self.nargs = dict(zip(self.arg_names, args, strict=False))
        try:
            configs = self.prune_configs(kwargs)
        except Exception:  # noqa: BLE001 - a pruning hook of the submission's: offer them all
            configs = self.configs
        for config in configs:
            self.fn.run(*args, **kwargs, **config.all_kwargs())
        self.nargs = None

    jit.JITFunction.run = compile_only
    autotuner.Autotuner.run = compile_configs


ALLOCATIONS = (  # PyTorch's factories a solve() may call for scratch memory on the device
    "empty", "zeros", "ones", "full", "empty_strided",
    "empty_like", "zeros_like", "ones_like", "full_like",
)  # fmt: skip


def scratch_on_meta() -> None:
    """PyTorch's factories give device tensors on the meta device instead (no memory), whose
    `data_ptr()` is an address that points nowhere, 64 bits wide and aligned as a device
    allocation is (a meta tensor's own is 0, which Triton would type as a 32-bit integer), so
    a solve() that allocates its scratch memory with torch.empty(..., device="cuda") still
    reaches its launches, with the kernels' signatures of the GPU. Anything that reads or
    computes on them fails, and the call stops there."""
    import torch

    address = torch.Tensor.data_ptr

    def data_ptr(tensor) -> int:
        return FAKE_SCRATCH if tensor.is_meta else address(tensor)

    torch.Tensor.data_ptr = data_ptr

    def on_meta(factory):
        def made(*args, **kwargs):
            device = kwargs.get("device")
            if isinstance(device, int) or (
                isinstance(device, (str, torch.device)) and torch.device(device).type == "cuda"
            ):
                kwargs["device"] = "meta"
            return factory(*args, **kwargs)

        return made

    for name in ALLOCATIONS:
        setattr(torch, name, on_meta(getattr(torch, name)))


def build_host_code() -> None:
    """Triton's host module for CUDA (the driver's utilities), compiled with the C compiler into
    this Triton cache, once per cache: the judging worker would build it before its first
    launch. Loading it needs CUDA's library, which a machine without a GPU may lack; the module
    is kept in the cache before it is loaded."""
    try:
        from triton.backends.nvidia.driver import CudaUtils

        CudaUtils()
    except Exception:  # noqa: BLE001 - built and kept, or left to the judging worker
        pass


def build_launcher(kernel) -> None:
    """The host code that launches `kernel`: Triton 3.6 compiles one C module per kernel
    signature (kept in the cache) the first time a kernel is launched; later Triton has one
    launcher for all, and this does nothing of use."""
    if kernel is None:
        return
    try:
        from triton.backends.nvidia.driver import CudaLauncher

        CudaLauncher(kernel.src, kernel.metadata)
    except Exception:  # noqa: BLE001 - built and kept, or left to the judging worker
        pass


def fake_pointers(names: Iterable[str]) -> dict[str, int]:
    """An address for each buffer: aligned as the judge's are, and pointing nowhere."""
    return {name: FAKE_BASE + i * FAKE_STRIDE for i, name in enumerate(names)}


def compile_calls(solve: Callable, calls: list[list]) -> dict:
    """solve() once per argument list, each launch a compile. Returns how many calls went
    through, how many stopped early (by the error's type) and the first such error's text, and
    the seconds."""
    started = time.monotonic()
    done, stopped, first = 0, {}, ""
    for args in calls:
        try:
            solve(*args)
            done += 1
        except Exception as exc:  # noqa: BLE001 - the judging worker meets it again, and says so
            name = type(exc).__name__
            stopped[name] = stopped.get(name, 0) + 1
            first = first or f"{name}: {exc}"[:300]
    seconds = round(time.monotonic() - started, 3)
    return {"calls": done, "stopped": stopped, "first_stop": first, "seconds": seconds}
