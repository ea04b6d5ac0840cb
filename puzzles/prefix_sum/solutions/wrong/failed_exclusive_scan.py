# expect: failed wrong-answer
# mistake: exclusive_scan
# Computes an exclusive scan, output[i] = input[0] + ... + input[i-1]: every output misses its
# own element (and output[0] is 0).
import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


@triton.jit
def block_sums_kernel(input_ptr, sums_ptr, N, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    sums_ptr = sums_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(input_ptr + offsets, mask=offsets < N, other=0.0)
    tl.store(sums_ptr + tl.program_id(0), tl.sum(x, axis=0))


@triton.jit
def scan_sums_kernel(sums_ptr, num_blocks, BLOCK_SIZE: tl.constexpr):
    sums_ptr = sums_ptr.to(tl.pointer_type(tl.float32))
    carry = 0.0
    for start in range(0, num_blocks, BLOCK_SIZE):
        offsets = start + tl.arange(0, BLOCK_SIZE)
        mask = offsets < num_blocks
        s = tl.load(sums_ptr + offsets, mask=mask, other=0.0)
        tl.store(sums_ptr + offsets, tl.cumsum(s, axis=0) + carry, mask=mask)
        carry += tl.sum(s, axis=0)


@triton.jit
def scan_blocks_kernel(input_ptr, output_ptr, sums_ptr, N, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    sums_ptr = sums_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(input_ptr + offsets, mask=mask, other=0.0)
    before = tl.load(sums_ptr + pid - 1, mask=pid > 0, other=0.0)
    tl.store(output_ptr + offsets, tl.cumsum(x, axis=0) - x + before, mask=mask)


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 1024
    num_blocks = triton.cdiv(N, BLOCK_SIZE)
    sums = torch.empty(num_blocks, dtype=torch.float32, device=DEVICE)
    block_sums_kernel[(num_blocks,)](input_ptr, sums.data_ptr(), N, BLOCK_SIZE=BLOCK_SIZE)
    scan_sums_kernel[(1,)](sums.data_ptr(), num_blocks, BLOCK_SIZE=BLOCK_SIZE)
    scan_blocks_kernel[(num_blocks,)](
        input_ptr, output_ptr, sums.data_ptr(), N, BLOCK_SIZE=BLOCK_SIZE
    )
