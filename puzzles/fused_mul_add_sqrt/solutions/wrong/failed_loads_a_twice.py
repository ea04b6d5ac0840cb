# expect: failed wrong-answer
# mistake: loads_a_twice
# A copy-pasted load reads a where b was meant: computes sqrt(a * a + c).
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
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(a_ptr + offsets, mask=mask)
    c = tl.load(c_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.sqrt(a * b + c), mask=mask)


def solve(a_ptr: int, b_ptr: int, c_ptr: int, out_ptr: int, N: int):
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    fused_mul_add_sqrt_kernel[grid](a_ptr, b_ptr, c_ptr, out_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
