# expect: failed wrong-answer
# mistake: precision
# Adds in float16 to "save bandwidth": about three decimal digits survive.
import triton
import triton.language as tl


@triton.jit
def vector_add_kernel(a_ptr, b_ptr, c_ptr, N, BLOCK_SIZE: tl.constexpr):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    a = tl.load(a_ptr + offsets, mask=mask).to(tl.float16)
    b = tl.load(b_ptr + offsets, mask=mask).to(tl.float16)
    tl.store(c_ptr + offsets, (a + b).to(tl.float32), mask=mask)


def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    BLOCK_SIZE = 1024
    vector_add_kernel[(triton.cdiv(N, BLOCK_SIZE),)](a_ptr, b_ptr, c_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
