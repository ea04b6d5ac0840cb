# expect: failed wrong-answer
# mistake: precision
# Loads a and b as float16 "to save bandwidth": each value keeps about three significant digits,
# and so does every product.
import triton
import triton.language as tl


@triton.jit
def zero_kernel(result_ptr):
    result_ptr = result_ptr.to(tl.pointer_type(tl.float32))
    tl.store(result_ptr, 0.0)


@triton.jit
def dot_product_kernel(a_ptr, b_ptr, result_ptr, N, BLOCK_SIZE: tl.constexpr):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    result_ptr = result_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float16)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float16)
    tl.atomic_add(result_ptr, tl.sum((a * b).to(tl.float32), axis=0))


def solve(a_ptr: int, b_ptr: int, result_ptr: int, N: int):
    zero_kernel[(1,)](result_ptr)
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    dot_product_kernel[grid](a_ptr, b_ptr, result_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
