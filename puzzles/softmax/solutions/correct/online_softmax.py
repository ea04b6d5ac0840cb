import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"

BLOCK_SIZE = 2048  # elements per loop step
MAX_PROGRAMS = 256  # programs of the first pass, so at most 256 partials
_scratch = {}  # number of partials -> (maxima, sums)


@triton.jit
def online_stats_kernel(
    input_ptr,  # address of the input vector
    max_ptr,  # scratch: one running maximum per program
    sum_ptr,  # scratch: one running sum of exp(x - running maximum) per program
    N,  # number of elements
    BLOCK_SIZE: tl.constexpr,  # elements per loop step
):
    # Every buffer starts 16-byte aligned: saying so lets Triton use 16-byte vector accesses.
    input_ptr = tl.multiple_of(input_ptr.to(tl.pointer_type(tl.float32)), 16)
    max_ptr = tl.multiple_of(max_ptr.to(tl.pointer_type(tl.float32)), 16)
    sum_ptr = tl.multiple_of(sum_ptr.to(tl.pointer_type(tl.float32)), 16)
    pid = tl.program_id(axis=0)
    step = tl.num_programs(axis=0) * BLOCK_SIZE
    m = -float("inf")  # running maximum of this program's elements
    s = 0.0  # running sum of exp(x - m)
    # Online softmax: one read of the data; the sum is rescaled whenever the maximum grows.
    for start in range(pid * BLOCK_SIZE, N, step):
        offsets = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(input_ptr + offsets, mask=offsets < N, other=-float("inf"))
        m_new = tl.maximum(m, tl.max(x, axis=0))  # finite: every block holds an element
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    tl.store(max_ptr + pid, m)  # a program with no block stores (-inf, 0), which adds nothing
    tl.store(sum_ptr + pid, s)


@triton.jit
def normalise_kernel(
    input_ptr,  # address of the input vector
    output_ptr,  # address of the output vector
    max_ptr,  # scratch: the partial maxima
    sum_ptr,  # scratch: the partial sums
    N,  # number of elements
    num_partials,  # programs of the first pass
    BLOCK_SIZE: tl.constexpr,  # elements handled by one program
    PARTIALS: tl.constexpr,  # num_partials rounded up to a power of two
):
    # Every buffer starts 16-byte aligned: saying so lets Triton use 16-byte vector accesses.
    input_ptr = tl.multiple_of(input_ptr.to(tl.pointer_type(tl.float32)), 16)
    output_ptr = tl.multiple_of(output_ptr.to(tl.pointer_type(tl.float32)), 16)
    max_ptr = tl.multiple_of(max_ptr.to(tl.pointer_type(tl.float32)), 16)
    sum_ptr = tl.multiple_of(sum_ptr.to(tl.pointer_type(tl.float32)), 16)
    p = tl.arange(0, PARTIALS)
    p_mask = p < num_partials
    part_max = tl.load(max_ptr + p, mask=p_mask, other=-float("inf"))
    part_sum = tl.load(sum_ptr + p, mask=p_mask, other=0.0)
    m = tl.max(part_max, axis=0)
    # exp(-inf - m) = 0 for the empty partials, so they add nothing.
    total = tl.sum(part_sum * tl.exp(part_max - m), axis=0)

    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(input_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, tl.exp(x - m) / total, mask=mask)


def solve(input_ptr: int, output_ptr: int, N: int):
    num_partials = min(triton.cdiv(N, BLOCK_SIZE), MAX_PROGRAMS)
    if num_partials not in _scratch:  # allocated once per size, reused by later calls
        _scratch[num_partials] = (
            torch.empty(num_partials, dtype=torch.float32, device=DEVICE),
            torch.empty(num_partials, dtype=torch.float32, device=DEVICE),
        )
    max_part, sum_part = (t.data_ptr() for t in _scratch[num_partials])
    online_stats_kernel[(num_partials,)](
        input_ptr, max_part, sum_part, N, BLOCK_SIZE=BLOCK_SIZE, num_warps=8
    )
    normalise_kernel[(triton.cdiv(N, BLOCK_SIZE),)](
        input_ptr,
        output_ptr,
        max_part,
        sum_part,
        N,
        num_partials,
        BLOCK_SIZE=BLOCK_SIZE,
        PARTIALS=triton.next_power_of_2(num_partials),
        num_warps=8,
    )
