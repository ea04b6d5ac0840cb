# expect: failed wrong-answer
# mistake: no_program_id
# The offsets never use tl.program_id: every program adds the first block's products, so the
# result is (number of programs) x (first block) once N is above the block size.
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
    offsets = tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0)
    tl.atomic_add(result_ptr, tl.sum(a * b, axis=0))


def solve(a_ptr: int, b_ptr: int, result_ptr: int, N: int):
    zero_kernel[(1,)](result_ptr)
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    dot_product_kernel[grid](a_ptr, b_ptr, result_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
