# expect: failed wrong-answer
# mistake: pads_with_zero
# Masked lanes load 0.0, not -inf: each padding lane adds exp(0 - max) to the sum of its block.
import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


@triton.jit
def block_stats_kernel(input_ptr, stats_ptr, N, num_blocks, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    stats_ptr = stats_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(input_ptr + offsets, mask=offsets < N, other=0.0)
    block_max = tl.max(x, axis=0)
    tl.store(stats_ptr + pid, block_max)
    tl.store(stats_ptr + num_blocks + pid, tl.sum(tl.exp(x - block_max), axis=0))


@triton.jit
def normalise_kernel(
    input_ptr,
    output_ptr,
    stats_ptr,
    N,
    num_blocks,
    BLOCK_SIZE: tl.constexpr,
    PARTIALS: tl.constexpr,
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    stats_ptr = stats_ptr.to(tl.pointer_type(tl.float32))
    p = tl.arange(0, PARTIALS)
    block_max = tl.load(stats_ptr + p, mask=p < num_blocks, other=-float("inf"))
    block_sum = tl.load(stats_ptr + num_blocks + p, mask=p < num_blocks, other=0.0)
    m = tl.max(block_max, axis=0)
    total = tl.sum(block_sum * tl.exp(block_max - m), axis=0)
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(input_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, tl.exp(x - m) / total, mask=mask)


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 4096
    num_blocks = triton.cdiv(N, BLOCK_SIZE)
    scratch = torch.empty(2 * num_blocks, dtype=torch.float32, device=DEVICE)
    stats = scratch.data_ptr()  # scratch stays referenced until solve() returns
    block_stats_kernel[(num_blocks,)](input_ptr, stats, N, num_blocks, BLOCK_SIZE=BLOCK_SIZE)
    normalise_kernel[(num_blocks,)](
        input_ptr,
        output_ptr,
        stats,
        N,
        num_blocks,
        BLOCK_SIZE=BLOCK_SIZE,
        PARTIALS=triton.next_power_of_2(num_blocks),
    )
