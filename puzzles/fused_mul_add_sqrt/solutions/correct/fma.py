import triton
import triton.language as tl


@triton.jit
def fused_mul_add_sqrt_kernel(
    a_ptr,  # address of the first factor
    b_ptr,  # address of the second factor
    c_ptr,  # address of the addend
    out_ptr,  # address of the output vector
    N,  # number of elements
    BLOCK_SIZE: tl.constexpr,  # elements handled by one program
):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    out_ptr = out_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    c = tl.load(c_ptr + offsets, mask=mask)
    # One fused multiply-add (a single rounding), then the correctly rounded square root.
    out = tl.sqrt_rn(tl.fma(a, b, c))
    tl.store(out_ptr + offsets, out, mask=mask)


def solve(a_ptr: int, b_ptr: int, c_ptr: int, out_ptr: int, N: int):
    BLOCK_SIZE = 4096
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    fused_mul_add_sqrt_kernel[grid](
        a_ptr, b_ptr, c_ptr, out_ptr, N, BLOCK_SIZE=BLOCK_SIZE, num_warps=8
    )
