import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"

# Three passes: the total of every block, a scan of those totals, then each block's own scan
# plus the totals of the blocks before it. Simple, but it reads the input twice.


@triton.jit
def block_sums_kernel(
    input_ptr,  # address of the input vector
    sums_ptr,  # address of the scratch vector: one total per block
    N,  # number of elements
    BLOCK_SIZE: tl.constexpr,  # elements per block
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    sums_ptr = sums_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(input_ptr + offsets, mask=offsets < N, other=0.0)
    tl.store(sums_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def scan_sums_kernel(
    sums_ptr,  # address of the block totals, replaced by their inclusive scan
    num_blocks,  # number of blocks
    BLOCK_SIZE: tl.constexpr,  # totals scanned per step
):
    sums_ptr = sums_ptr.to(tl.pointer_type(tl.float32))
    carry = 0.0  # the sum of every total before this step's
    for start in range(0, num_blocks, BLOCK_SIZE):
        offsets = start + tl.arange(0, BLOCK_SIZE)
        mask = offsets < num_blocks
        s = tl.load(sums_ptr + offsets, mask=mask, other=0.0)
        tl.store(sums_ptr + offsets, tl.cumsum(s, axis=0) + carry, mask=mask)
        carry += tl.sum(s, axis=0)


@triton.jit
def scan_blocks_kernel(
    input_ptr,  # address of the input vector
    output_ptr,  # address of the output vector
    sums_ptr,  # address of the inclusive scan of the block totals
    N,  # number of elements
    BLOCK_SIZE: tl.constexpr,  # elements per block
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    sums_ptr = sums_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(input_ptr + offsets, mask=mask, other=0.0)
    before = tl.load(sums_ptr + pid - 1, mask=pid > 0, other=0.0)  # blocks 0 .. pid-1
    tl.store(output_ptr + offsets, tl.cumsum(x, axis=0) + before, mask=mask)


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 4096
    num_blocks = triton.cdiv(N, BLOCK_SIZE)
    sums = torch.empty(num_blocks, dtype=torch.float32, device=DEVICE)  # scratch, not computed
    grid = (num_blocks,)
    block_sums_kernel[grid](input_ptr, sums.data_ptr(), N, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
    scan_sums_kernel[(1,)](sums.data_ptr(), num_blocks, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
    scan_blocks_kernel[grid](
        input_ptr, output_ptr, sums.data_ptr(), N, BLOCK_SIZE=BLOCK_SIZE, num_warps=8
    )
