import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


@triton.jit
def partial_sums_kernel(
    input_ptr,  # address of the N input values
    partial_ptr,  # address of the scratch buffer: one partial sum per program
    N,  # number of input values
    BLOCK_SIZE: tl.constexpr,  # elements summed by one program
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    partial_ptr = partial_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N  # the last block is usually partial
    x = tl.load(input_ptr + offsets, mask=mask, other=0.0)  # masked lanes add nothing
    tl.store(partial_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def final_sum_kernel(
    partial_ptr,  # address of the scratch buffer of partial sums
    output_ptr,  # address of the single output value
    num_partials,  # number of partial sums
    BLOCK_SIZE: tl.constexpr,  # a power of two >= num_partials: one program reads them all
):
    partial_ptr = partial_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.arange(0, BLOCK_SIZE)
    partials = tl.load(partial_ptr + offsets, mask=offsets < num_partials, other=0.0)
    tl.store(output_ptr, tl.sum(partials, axis=0))


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 8192
    num_partials = triton.cdiv(N, BLOCK_SIZE)  # at most 12,208 for N = 100M
    partials = torch.empty(num_partials, dtype=torch.float32, device=DEVICE)
    partial_ptr = partials.data_ptr()  # kernels take addresses, like the other arguments
    partial_sums_kernel[(num_partials,)](
        input_ptr, partial_ptr, N, BLOCK_SIZE=BLOCK_SIZE, num_warps=16
    )
    # The second kernel starts after the first has finished (same stream, launch order).
    FINAL_BLOCK = max(triton.next_power_of_2(num_partials), 128)
    final_sum_kernel[(1,)](
        partial_ptr, output_ptr, num_partials, BLOCK_SIZE=FINAL_BLOCK, num_warps=8
    )
