# expect: failed unwritten
# mistake: mask_uses_n
# Copies the matrix as one long vector but masks with N instead of N * N: only the first row
# arrives.
import triton
import triton.language as tl


@triton.jit
def matrix_copy_kernel(
    a_ptr,  # address of the source matrix A (N x N, row-major)
    b_ptr,  # address of the destination matrix B (N x N, row-major)
    N,  # side of the matrices
    BLOCK_SIZE: tl.constexpr,  # elements handled by one program
):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N  # the matrix has N * N elements, not N
    values = tl.load(a_ptr + offsets, mask=mask)
    tl.store(b_ptr + offsets, values, mask=mask)


def solve(a_ptr: int, b_ptr: int, N: int):
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N * N, BLOCK_SIZE),)
    matrix_copy_kernel[grid](a_ptr, b_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
