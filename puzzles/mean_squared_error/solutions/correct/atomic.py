import triton
import triton.language as tl


@triton.jit
def zero_kernel(
    mse_ptr,  # address of the single output value
):
    mse_ptr = mse_ptr.to(tl.pointer_type(tl.float32))
    tl.store(mse_ptr, 0.0)


@triton.jit
def mse_kernel(
    predictions_ptr,  # address of the N predictions
    targets_ptr,  # address of the N targets
    mse_ptr,  # address of the output value, already set to 0.0
    N,  # number of elements of each input
    BLOCK_SIZE: tl.constexpr,  # elements handled by one program
):
    predictions_ptr = predictions_ptr.to(tl.pointer_type(tl.float32))
    targets_ptr = targets_ptr.to(tl.pointer_type(tl.float32))
    mse_ptr = mse_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N  # the last block is usually partial
    p = tl.load(predictions_ptr + offsets, mask=mask, other=0.0)  # masked lanes: 0 - 0
    t = tl.load(targets_ptr + offsets, mask=mask, other=0.0)
    diff = p - t
    partial = tl.sum(diff * diff, axis=0)
    tl.atomic_add(mse_ptr, partial / N, sem="relaxed")  # the mean is the sum of partial / N


def solve(predictions_ptr: int, targets_ptr: int, mse_ptr: int, N: int):
    zero_kernel[(1,)](mse_ptr)  # runs before mse_kernel: same stream, launch order
    BLOCK_SIZE = 8192
    grid = lambda meta: (triton.cdiv(N, meta["BLOCK_SIZE"]),)  # noqa: E731
    mse_kernel[grid](predictions_ptr, targets_ptr, mse_ptr, N, BLOCK_SIZE=BLOCK_SIZE, num_warps=16)
