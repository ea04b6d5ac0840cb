import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"

BLOCK_SIZE = 4096  # elements per program in both kernels
_scratch = {}  # number of blocks -> scratch buffer, allocated once and reused


@triton.jit
def block_stats_kernel(
    input_ptr,  # address of the input vector
    stats_ptr,  # scratch: the block maxima, then the block sums
    N,  # number of elements
    num_blocks,  # number of programs, one per block
    BLOCK_SIZE: tl.constexpr,  # elements handled by one program
):
    # Every buffer starts 16-byte aligned: saying so lets Triton use 16-byte vector accesses.
    input_ptr = tl.multiple_of(input_ptr.to(tl.pointer_type(tl.float32)), 16)
    stats_ptr = tl.multiple_of(stats_ptr.to(tl.pointer_type(tl.float32)), 16)
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    # Padding must not win the maximum nor add to the sum: -inf does neither (exp(-inf) = 0).
    x = tl.load(input_ptr + offsets, mask=mask, other=-float("inf"))
    block_max = tl.max(x, axis=0)
    block_sum = tl.sum(tl.exp(x - block_max), axis=0)
    tl.store(stats_ptr + pid, block_max)
    tl.store(stats_ptr + num_blocks + pid, block_sum)


@triton.jit
def normalise_kernel(
    input_ptr,  # address of the input vector
    output_ptr,  # address of the output vector
    stats_ptr,  # scratch written by block_stats_kernel
    N,  # number of elements
    num_blocks,  # number of partials in stats_ptr
    BLOCK_SIZE: tl.constexpr,  # elements handled by one program
    PARTIALS: tl.constexpr,  # num_blocks rounded up to a power of two
):
    # Every buffer starts 16-byte aligned: saying so lets Triton use 16-byte vector accesses.
    input_ptr = tl.multiple_of(input_ptr.to(tl.pointer_type(tl.float32)), 16)
    output_ptr = tl.multiple_of(output_ptr.to(tl.pointer_type(tl.float32)), 16)
    stats_ptr = tl.multiple_of(stats_ptr.to(tl.pointer_type(tl.float32)), 16)
    # Every program combines the partials itself: a few hundred floats, read from L2.
    p = tl.arange(0, PARTIALS)
    p_mask = p < num_blocks
    block_max = tl.load(stats_ptr + p, mask=p_mask, other=-float("inf"))
    block_sum = tl.load(stats_ptr + num_blocks + p, mask=p_mask, other=0.0)
    m = tl.max(block_max, axis=0)
    # Each partial sum was taken relative to its own block maximum: bring it to m.
    total = tl.sum(block_sum * tl.exp(block_max - m), axis=0)
    inv_total = 1.0 / total

    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(input_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, tl.exp(x - m) * inv_total, mask=mask)


def solve(input_ptr: int, output_ptr: int, N: int):
    num_blocks = triton.cdiv(N, BLOCK_SIZE)
    if num_blocks not in _scratch:
        _scratch[num_blocks] = torch.empty(2 * num_blocks, dtype=torch.float32, device=DEVICE)
    stats = _scratch[num_blocks].data_ptr()  # an address, like the other pointers
    grid = (num_blocks,)
    block_stats_kernel[grid](input_ptr, stats, N, num_blocks, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
    normalise_kernel[grid](
        input_ptr,
        output_ptr,
        stats,
        N,
        num_blocks,
        BLOCK_SIZE=BLOCK_SIZE,
        PARTIALS=triton.next_power_of_2(num_blocks),
        num_warps=8,
    )
