# expect: failed unwritten|wrong-answer
# mistake: no_zeroing
# Adds the partial sums into result[0] with atomics without zeroing it first: the garbage there
# (a NaN) swallows every addition.
import triton
import triton.language as tl


@triton.jit
def dot_product_kernel(a_ptr, b_ptr, result_ptr, N, BLOCK_SIZE: tl.constexpr):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    result_ptr = result_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0)
    tl.atomic_add(result_ptr, tl.sum(a * b, axis=0))


def solve(a_ptr: int, b_ptr: int, result_ptr: int, N: int):
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    dot_product_kernel[grid](a_ptr, b_ptr, result_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
