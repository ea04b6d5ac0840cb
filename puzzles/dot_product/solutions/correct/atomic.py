import triton
import triton.language as tl


@triton.jit
def zero_kernel(
    result_ptr,  # address of the single output value
):
    result_ptr = result_ptr.to(tl.pointer_type(tl.float32))
    tl.store(result_ptr, 0.0)


@triton.jit
def dot_product_kernel(
    a_ptr,  # address of the first input vector
    b_ptr,  # address of the second input vector
    result_ptr,  # address of the output value, already set to 0.0
    N,  # number of elements of each vector
    BLOCK_SIZE: tl.constexpr,  # elements handled by one program
):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    result_ptr = result_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N  # the last block is usually partial
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0)  # masked lanes contribute 0 * 0
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0)
    partial = tl.sum(a * b, axis=0)
    tl.atomic_add(result_ptr, partial, sem="relaxed")  # one atomic per program


def solve(a_ptr: int, b_ptr: int, result_ptr: int, N: int):
    zero_kernel[(1,)](result_ptr)  # runs before dot_product_kernel: same stream, launch order
    BLOCK_SIZE = 8192
    grid = lambda meta: (triton.cdiv(N, meta["BLOCK_SIZE"]),)  # noqa: E731
    dot_product_kernel[grid](a_ptr, b_ptr, result_ptr, N, BLOCK_SIZE=BLOCK_SIZE, num_warps=16)
