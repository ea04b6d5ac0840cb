"""Attacks that reach the GPU without a Triton kernel, and honest solutions that must not be
mistaken for them: the verdict and reason each gets on a CUDA device.

PyTorch on tensors made from the raw addresses is the referee's to catch; cuBLAS and CUDA copies
called through ctypes never pass through PyTorch, and are caught by the listing of the first case's
device work (judge.workers.launches). Every attack wraps a puzzle's shipped solution (loaded
as `honest`).
"""

from __future__ import annotations

import pytest
from hostile import inlined

from judge.core import registry
from judge.core.results import Verdict
from judge.core.spec import Case
from judge.judging import runner

pytestmark = pytest.mark.gpu

PUZZLES = {"vector_add": 2, "relu": 1}  # the output's position among the arguments
CASES = (
    Case(name="N=1500", sizes=(("N", 1500),), seed=11),
    Case(name="N=1000003", sizes=(("N", 1_000_003),), seed=12),
)

PRELUDE = """
import ctypes
import importlib.util

import torch

{honest}
OUT = {out}


class Raw:
    '''A device buffer of n float32 at a raw address, as CUDA array interface consumers see it.'''

    def __init__(self, address, n):
        self.__cuda_array_interface__ = {{
            "shape": (n,),
            "typestr": "<f4",
            "data": (address, False),
            "version": 3,
        }}


def loaded(fragment):
    '''A shared library this process already mapped (PyTorch loads the CUDA runtime and cuBLAS).'''
    with open("/proc/self/maps") as maps:
        paths = [line.split()[-1] for line in maps if "/" in line]
    path = next(p for p in paths if fragment in p.rsplit("/", 1)[-1])
    return ctypes.CDLL(path)


cudart = loaded("libcudart.so")
DEVICE_TO_DEVICE = 3  # cudaMemcpyKind


def device_copy(dst, src, n):
    cudart.cudaMemcpy(ctypes.c_void_p(dst), ctypes.c_void_p(src), ctypes.c_size_t(4 * n),
                      DEVICE_TO_DEVICE)
"""

ATTACKS = {
    # PyTorch on tensors made from the addresses through __cuda_array_interface__
    "torch_on_cuda_array_interface": (
        """
def solve(*args):
    n = args[-1]
    views = [torch.as_tensor(Raw(a, n), device="cuda") for a in args[:-1]]
    if len(views) == 3:
        torch.add(views[0], views[1], out=views[2])
    else:
        torch.clamp(views[0], min=0.0, out=views[1])
""",
        "torch-in-solve",
        "aten.",
    ),
    # the honest kernel writes a scratch buffer; a CUDA copy through ctypes fills the output
    "honest_kernel_then_cuda_copy": (
        """
def solve(*args):
    n = args[-1]
    scratch = torch.empty(n, dtype=torch.float32, device="cuda")
    honest.solve(*args[:OUT], scratch.data_ptr(), *args[OUT + 1:])
    device_copy(args[OUT], scratch.data_ptr(), n)
""",
        "foreign-launch",
        "Memcpy DtoD",
    ),
}

# c = a, then c += 1.0 * b, by cudaMemcpy and cuBLAS through ctypes: no kernel of its own
CUBLAS_ADD = """
cublas = loaded("libcublas.so")
handle = ctypes.c_void_p()


def solve(a_ptr, b_ptr, c_ptr, N):
    device_copy(c_ptr, a_ptr, N)
    if not handle.value:
        cublas.cublasCreate_v2(ctypes.byref(handle))
    one = ctypes.c_float(1.0)
    cublas.cublasSaxpy_v2(handle, N, ctypes.byref(one), ctypes.c_void_p(b_ptr), 1,
                          ctypes.c_void_p(c_ptr), 1)
"""

# honest work beside allocation and fills PyTorch launches: a zeroed scratch buffer in solve()
ZEROED_SCRATCH = """
def solve(*args):
    scratch = torch.zeros(args[-1], dtype=torch.float32, device="cuda")
    scratch.zero_()
    honest.solve(*args)
"""

# an autotuner whose reset_to_zero clears the accumulator (aten::zero_) between the configs it
# tries; the sum is accumulated with atomics into a zeroed scratch buffer, then copied by Triton
RESET_TO_ZERO = """
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})],
    key=["N"],
    reset_to_zero=["acc"],
)
@triton.jit
def accumulate(a_ptr, b_ptr, acc, N, BLOCK: tl.constexpr):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < N
    tl.atomic_add(acc + offsets, tl.load(a_ptr + offsets, mask=mask), mask=mask)
    tl.atomic_add(acc + offsets, tl.load(b_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def copy(src, c_ptr, N, BLOCK: tl.constexpr):
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < N
    tl.store(c_ptr + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def solve(a_ptr, b_ptr, c_ptr, N):
    acc = torch.zeros(N, dtype=torch.float32, device="cuda")
    accumulate[lambda meta: (triton.cdiv(N, meta["BLOCK"]),)](a_ptr, b_ptr, acc, N)
    copy[(triton.cdiv(N, 1024),)](acc, c_ptr, N, BLOCK=1024)
"""


def submission(puzzle, body: str, tmp_path, autotuned: bool = False):
    """A submission file: the prelude with the puzzle's shipped solution as `honest`, then body."""
    correct = sorted((puzzle.directory / "solutions" / "correct").glob("*.py"))
    honest = next(p for p in correct if ("autotune" in p.read_text()) == autotuned)
    path = tmp_path / "submission.py"
    path.write_text(PRELUDE.format(honest=inlined(honest), out=PUZZLES[puzzle.id]) + body)
    return path


def judged(puzzle, path):
    options = runner.RunOptions(interpret=False, timing=False, timeout_s=120, cases=CASES)
    return runner.judge(puzzle, path, options)


@pytest.fixture(params=sorted(PUZZLES))
def puzzle(request, puzzles_root):
    return registry.get(request.param, puzzles_root)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_attack_on_the_gpu_is_rejected_with_its_reason(attack, puzzle, tmp_path):
    body, reason, named = ATTACKS[attack]
    report = judged(puzzle, submission(puzzle, body, tmp_path))
    assert (report.verdict, report.reason) == (Verdict.REJECTED, reason), report.message
    assert named in report.message


def test_cublas_through_ctypes_is_rejected_as_a_foreign_launch(vector_add, tmp_path):
    report = judged(vector_add, submission(vector_add, CUBLAS_ADD, tmp_path))
    assert (report.verdict, report.reason) == (Verdict.REJECTED, "foreign-launch"), report.message
    assert "Memcpy DtoD (Device -> Device)" in report.message
    assert "axpy" in report.message


@pytest.mark.parametrize("autotuned", [False, True])
def test_fills_pytorch_launches_in_solve_are_not_foreign(puzzle, autotuned, tmp_path):
    report = judged(puzzle, submission(puzzle, ZEROED_SCRATCH, tmp_path, autotuned))
    assert report.verdict is Verdict.PASSED, (report.reason, report.message)


def test_an_autotuner_resetting_to_zero_is_not_foreign(vector_add, tmp_path):
    report = judged(vector_add, submission(vector_add, RESET_TO_ZERO, tmp_path))
    assert report.verdict is Verdict.PASSED, (report.reason, report.message)


# The worker's own buffers are not believed. This kernel never writes the last partial block;
# the judge's code in the worker is patched so that, whenever it would hand the buffers on, the
# missing tail is filled in first (by a second launch that no recorded call contains). A judge
# that read the worker's buffers would pass it; the timer replays only what solve() launched.
FORGED_BUFFERS = """
import triton
import triton.language as tl

import judge.workers.worker as judge_worker


@triton.jit
def add_from(a_ptr, b_ptr, c_ptr, start, N, BLOCK: tl.constexpr):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    offsets = start + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < N
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(c_ptr + offsets, a + b, mask=mask)


LAST = {}


def solve(a_ptr, b_ptr, c_ptr, N):
    LAST["call"] = (a_ptr, b_ptr, c_ptr, N)
    whole = N // 1024 * 1024
    if whole:
        add_from[(whole // 1024,)](a_ptr, b_ptr, c_ptr, 0, N, BLOCK=1024)


def finish_the_tail():
    a_ptr, b_ptr, c_ptr, N = LAST["call"]
    whole = N // 1024 * 1024
    if whole < N:
        add_from[(1,)](a_ptr, b_ptr, c_ptr, whole, N, BLOCK=1024)


for name in ("dump", "send"):
    original = getattr(judge_worker.Worker, name)

    def patched(self, *args, _original=original, **kwargs):
        if LAST:
            finish_the_tail()
            self.sync()
        return _original(self, *args, **kwargs)

    setattr(judge_worker.Worker, name, patched)
"""


@pytest.mark.parametrize("timing", [False, True])
def test_buffers_completed_behind_the_judges_back_are_not_believed(vector_add, timing, tmp_path):
    path = tmp_path / "forged.py"
    path.write_text(FORGED_BUFFERS)
    options = runner.RunOptions(interpret=False, timing=timing, timeout_s=120, cases=CASES)
    report = runner.judge(vector_add, path, options)
    assert (report.verdict, report.reason) == (Verdict.FAILED, "unwritten"), report.message
    assert report.cases[0].name == "N=1500" and report.cases[0].status == "failed"
