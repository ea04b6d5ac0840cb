"""Host tensor descriptors on a CUDA device: the timer builds its own on its own buffers from what
the worker recorded (base, shape, strides, block), so a descriptor that describes more than the
allocation its base points into (the buffer and its guard bands) would let a replayed kernel
read (or, through a descriptor's store, write) the judge's memory past it. Such a call is
`not-replayable`; an honest descriptor of the buffer passes.
"""

from __future__ import annotations

import pytest

from judge.core.results import Verdict
from judge.core.spec import Case
from judge.judging import runner

pytestmark = pytest.mark.gpu

CASES = (
    Case(name="N=1500", sizes=(("N", 1500),), seed=11),
    Case(name="N=1000003", sizes=(("N", 1_000_003),), seed=12),
)

# vector_add through 1-D descriptors of A and B; PAST elements more than the buffer described
SUBMISSION = """
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

PAST = {past}
BLOCK = 256  # a tensor map's box holds at most 256 elements a side


class Float32:
    def __init__(self, address):
        self.address, self.dtype = address, torch.float32

    def data_ptr(self):
        return self.address


@triton.jit
def add_kernel(a_desc, b_desc, c_ptr, n, BLOCK: tl.constexpr):
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    a = a_desc.load([pid * BLOCK])
    b = b_desc.load([pid * BLOCK])
    tl.store(c_ptr + offsets, a + b, mask=offsets < n)


def solve(a_ptr, b_ptr, c_ptr, N):
    a = TensorDescriptor(Float32(a_ptr), [N + PAST], [1], [BLOCK])
    b = TensorDescriptor(Float32(b_ptr), [N + PAST], [1], [BLOCK])
    add_kernel[(triton.cdiv(N, BLOCK),)](a, b, c_ptr, N, BLOCK=BLOCK)
"""


# The same in Gluon: its descriptors carry their shared layout, and the timer replays them as
# descriptors of a plain block (the launcher takes the layout from the compiled kernel).
GLUON_SUBMISSION = """
import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

PAST = {past}
BLOCK = 256  # a tensor map's box holds at most 256 elements a side
tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared


class Float32:
    def __init__(self, address):
        self.address, self.dtype = address, torch.float32

    def data_ptr(self):
        return self.address


@gluon.jit
def add_kernel(a_desc, b_desc, c_ptr, n, BLOCK: gl.constexpr):
    c_ptr = c_ptr.to(gl.pointer_type(gl.float32))
    pid = gl.program_id(0)
    a_s = gl.allocate_shared_memory(gl.float32, [BLOCK], a_desc.layout)
    b_s = gl.allocate_shared_memory(gl.float32, [BLOCK], b_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, 2 * BLOCK * 4)
    tma_load(a_desc, [pid * BLOCK], bar, a_s)
    tma_load(b_desc, [pid * BLOCK], bar, b_s)
    mbarrier.wait(bar, 0)
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    offsets = pid * BLOCK + gl.arange(0, BLOCK, layout)
    c = a_s.load(layout) + b_s.load(layout)
    gl.store(c_ptr + offsets, c, mask=offsets < n)


def solve(a_ptr, b_ptr, c_ptr, N):
    layout = gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=32, rank=1)
    a = TensorDescriptor(Float32(a_ptr), [N + PAST], [1], [BLOCK], layout)
    b = TensorDescriptor(Float32(b_ptr), [N + PAST], [1], [BLOCK], layout)
    add_kernel[(triton.cdiv(N, BLOCK),)](a, b, c_ptr, N, BLOCK=BLOCK, num_warps=4)
"""

SUBMISSIONS = {"triton": SUBMISSION, "gluon": GLUON_SUBMISSION}


def judged(vector_add, tmp_path, past: int, language: str = "triton"):
    path = tmp_path / "vector_add.py"
    path.write_text(SUBMISSIONS[language].format(past=past))
    options = runner.RunOptions(interpret=False, timing=False, timeout_s=120, cases=CASES)
    return runner.judge(vector_add, path, options)


@pytest.mark.parametrize("language", SUBMISSIONS)
def test_an_honest_host_descriptor_is_replayed_and_passes(vector_add, tmp_path, language):
    report = judged(vector_add, tmp_path, past=0, language=language)
    assert report.verdict is Verdict.PASSED, (report.reason, report.message)


@pytest.mark.parametrize("language", SUBMISSIONS)
def test_a_descriptor_into_its_buffer_s_guard_band_is_as_an_address_there(
    vector_add, tmp_path, language
):
    """A buffer's guard bands are part of its allocation, where a recorded address may point
    too: reading them changes no answer, and a write there is caught by the guard check."""
    report = judged(vector_add, tmp_path, past=1, language=language)
    assert report.verdict is Verdict.PASSED, (report.reason, report.message)


@pytest.mark.parametrize("language", SUBMISSIONS)
def test_a_descriptor_reaching_past_its_buffer_s_allocation_is_not_replayable(
    vector_add, tmp_path, language
):
    report = judged(vector_add, tmp_path, past=1 << 20, language=language)
    assert (report.verdict, report.reason) == (Verdict.REJECTED, "not-replayable"), report.message
    assert "reaches past the end" in report.message
