"""judge.workers.interp: raw-pointer kernels in Triton's interpreter with buffers below 2**32."""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent

# Three float32 buffers in one mapping placed below 2**32 (a hint to mmap, which Linux honours
# where the range is free), then vector_add's shipped solution on them in the interpreter.
SCRIPT = textwrap.dedent(
    """
    import ctypes, importlib.util, mmap, sys
    import torch
    from judge.workers import interp

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    size = 3 * 4096
    at = libc.mmap(0x20000000, size, mmap.PROT_READ | mmap.PROT_WRITE,
                   mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    if at is None or at >= 2**32:
        print("no low mapping"); sys.exit(3)
    memory = (ctypes.c_float * (size // 4)).from_address(at)
    a, b, c = torch.frombuffer(memory, dtype=torch.float32).view(3, -1)
    a.copy_(torch.arange(1024.0)); b.fill_(0.5); c.fill_(-1.0)
    if sys.argv[1] == "widen":
        assert interp.widen_int_to_ptr() and interp.widen_int_to_ptr()  # twice: one patch
    spec = importlib.util.spec_from_file_location("plain", sys.argv[2])
    plain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain)
    try:
        plain.solve(a.data_ptr(), b.data_ptr(), c.data_ptr(), 1000)
    except Exception as exc:
        print("raised", type(exc).__name__, exc); sys.exit(4)
    assert torch.equal(c[:1000], a[:1000] + 0.5) and bool((c[1000:] == -1.0).all())
    print("ok")
    """
)


def interpreted(script: str, *argv: str) -> subprocess.CompletedProcess:
    """A script run by a new Python with Triton's interpreter on."""
    return subprocess.run(
        [sys.executable, "-c", script, *argv],
        cwd=ROOT,
        env={"TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def run(mode: str) -> subprocess.CompletedProcess:
    solution = ROOT / "puzzles" / "vector_add" / "solutions" / "correct" / "plain.py"
    return interpreted(SCRIPT, mode, str(solution))


def test_addresses_below_4_gib_work_once_widened_and_fail_without():
    widened = run("widen")
    if widened.returncode == 3:
        pytest.skip("the kernel placed no mapping below 4 GiB here")
    assert widened.returncode == 0 and widened.stdout.strip() == "ok", widened.stderr[-2000:]
    plain = run("plain")
    assert plain.returncode == 4 and "raised" in plain.stdout, plain.stdout + plain.stderr[-2000:]


LOOP = textwrap.dedent(
    """
    import sys
    import torch
    import triton
    import triton.language as tl
    from judge.workers import interp

    @triton.jit
    def column_sums(x_ptr, out_ptr, rows, BLOCK: tl.constexpr):
        x_ptr = x_ptr.to(tl.pointer_type(tl.float32))
        out_ptr = out_ptr.to(tl.pointer_type(tl.float32))
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for r in range(0, rows):  # a runtime bound: the interpreter turns it into an int
            acc += tl.load(x_ptr + r * BLOCK + tl.arange(0, BLOCK))
        tl.store(out_ptr + tl.arange(0, BLOCK), acc)

    assert interp.scalar_index() and interp.scalar_index()  # twice: one patch
    x, out = torch.arange(48.0).view(3, 16), torch.zeros(16)
    column_sums[(1,)](x.data_ptr(), out.data_ptr(), 3, BLOCK=16)
    assert torch.equal(out, x.sum(0)), out
    print("ok")
    """
)


def test_runtime_loop_bounds_run_in_the_interpreter_once_patched():
    done = interpreted(LOOP)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_the_patched_index_takes_the_element_of_a_one_element_array():
    from triton.runtime import interpreter

    from judge.workers import interp

    class Scope:
        def set_attr(self, obj, name, value):
            setattr(obj, name, value)

    class Handle:
        data = np.array([7], dtype=np.int32)  # how the interpreter holds a scalar

    class Tensor:
        handle = Handle()

    saved = interpreter._patch_lang_tensor
    try:
        assert interp.scalar_index()
        interpreter._patch_lang_tensor(Tensor, Scope())
        assert list(range(Tensor())) == list(range(7))
    finally:
        interpreter._patch_lang_tensor = saved
