# expect: failed wrong-answer
# mistake: precision
# Does the arithmetic in float16 to "save bandwidth": only about three decimal digits survive.
import triton
import triton.language as tl


@triton.jit
def fused_mul_add_sqrt_kernel(a_ptr, b_ptr, c_ptr, out_ptr, N, BLOCK_SIZE: tl.constexpr):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    out_ptr = out_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    a = tl.load(a_ptr + offsets, mask=mask).to(tl.float16)
    b = tl.load(b_ptr + offsets, mask=mask).to(tl.float16)
    c = tl.load(c_ptr + offsets, mask=mask).to(tl.float16)
    y = (a * b + c).to(tl.float32)
    tl.store(out_ptr + offsets, tl.sqrt(y), mask=mask)


def solve(a_ptr: int, b_ptr: int, c_ptr: int, out_ptr: int, N: int):
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    fused_mul_add_sqrt_kernel[grid](a_ptr, b_ptr, c_ptr, out_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
