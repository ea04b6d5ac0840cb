# expect: failed wrong-answer
# mistake: sum_not_mean
# Adds up the squared differences but never divides by N: the sum, not the mean (right only
# when N = 1).
import triton
import triton.language as tl


@triton.jit
def zero_kernel(mse_ptr):
    mse_ptr = mse_ptr.to(tl.pointer_type(tl.float32))
    tl.store(mse_ptr, 0.0)


@triton.jit
def mse_kernel(predictions_ptr, targets_ptr, mse_ptr, N, BLOCK_SIZE: tl.constexpr):
    predictions_ptr = predictions_ptr.to(tl.pointer_type(tl.float32))
    targets_ptr = targets_ptr.to(tl.pointer_type(tl.float32))
    mse_ptr = mse_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    p = tl.load(predictions_ptr + offsets, mask=mask, other=0.0)
    t = tl.load(targets_ptr + offsets, mask=mask, other=0.0)
    diff = p - t
    tl.atomic_add(mse_ptr, tl.sum(diff * diff, axis=0))


def solve(predictions_ptr: int, targets_ptr: int, mse_ptr: int, N: int):
    zero_kernel[(1,)](mse_ptr)
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    mse_kernel[grid](predictions_ptr, targets_ptr, mse_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
