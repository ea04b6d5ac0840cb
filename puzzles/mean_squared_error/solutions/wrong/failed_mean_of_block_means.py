# expect: failed wrong-answer
# mistake: mean_of_block_means
# Each program takes the mean of its block with tl.sum(...) / BLOCK_SIZE, and the block means are
# averaged: the masked lanes of a partial block count as zeros, so the answer is too small
# whenever N is not a multiple of the block size.
import triton
import triton.language as tl


@triton.jit
def zero_kernel(mse_ptr):
    mse_ptr = mse_ptr.to(tl.pointer_type(tl.float32))
    tl.store(mse_ptr, 0.0)


@triton.jit
def mse_kernel(predictions_ptr, targets_ptr, mse_ptr, N, num_blocks, BLOCK_SIZE: tl.constexpr):
    predictions_ptr = predictions_ptr.to(tl.pointer_type(tl.float32))
    targets_ptr = targets_ptr.to(tl.pointer_type(tl.float32))
    mse_ptr = mse_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    p = tl.load(predictions_ptr + offsets, mask=mask, other=0.0)
    t = tl.load(targets_ptr + offsets, mask=mask, other=0.0)
    diff = p - t
    block_mean = tl.sum(diff * diff, axis=0) / BLOCK_SIZE
    tl.atomic_add(mse_ptr, block_mean / num_blocks)


def solve(predictions_ptr: int, targets_ptr: int, mse_ptr: int, N: int):
    zero_kernel[(1,)](mse_ptr)
    BLOCK_SIZE = 1024
    num_blocks = triton.cdiv(N, BLOCK_SIZE)
    mse_kernel[(num_blocks,)](
        predictions_ptr, targets_ptr, mse_ptr, N, num_blocks, BLOCK_SIZE=BLOCK_SIZE
    )
