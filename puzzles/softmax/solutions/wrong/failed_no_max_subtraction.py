# expect: failed wrong-answer
# mistake: no_max_subtraction
# Sums exp(x) without subtracting the maximum: exp(1000) is inf in float32, and inf / inf is NaN.
import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


@triton.jit
def block_sum_kernel(input_ptr, sums_ptr, N, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    sums_ptr = sums_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(input_ptr + offsets, mask=offsets < N, other=-float("inf"))
    tl.store(sums_ptr + pid, tl.sum(tl.exp(x), axis=0))


@triton.jit
def normalise_kernel(
    input_ptr,
    output_ptr,
    sums_ptr,
    N,
    num_blocks,
    BLOCK_SIZE: tl.constexpr,
    PARTIALS: tl.constexpr,
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    sums_ptr = sums_ptr.to(tl.pointer_type(tl.float32))
    p = tl.arange(0, PARTIALS)
    total = tl.sum(tl.load(sums_ptr + p, mask=p < num_blocks, other=0.0), axis=0)
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(input_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, tl.exp(x) / total, mask=mask)


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 4096
    num_blocks = triton.cdiv(N, BLOCK_SIZE)
    scratch = torch.empty(num_blocks, dtype=torch.float32, device=DEVICE)
    sums = scratch.data_ptr()  # scratch stays referenced until solve() returns
    block_sum_kernel[(num_blocks,)](input_ptr, sums, N, BLOCK_SIZE=BLOCK_SIZE)
    normalise_kernel[(num_blocks,)](
        input_ptr,
        output_ptr,
        sums,
        N,
        num_blocks,
        BLOCK_SIZE=BLOCK_SIZE,
        PARTIALS=triton.next_power_of_2(num_blocks),
    )
