# expect: failed wrong-answer
# mistake: transposed
# Reads A with the column index as the one multiplied by N (column-major), but writes B row-major:
# B ends up as the transpose of A.
import triton
import triton.language as tl


@triton.jit
def matrix_copy_kernel(
    a_ptr,  # address of the source matrix A (N x N, row-major)
    b_ptr,  # address of the destination matrix B (N x N, row-major)
    N,  # number of rows and of columns
    BLOCK_M: tl.constexpr,  # rows of the tile handled by one program
    BLOCK_N: tl.constexpr,  # columns of the tile handled by one program
):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    rows = tl.program_id(axis=0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(axis=1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < N) & (cols[None, :] < N)
    tile = tl.load(a_ptr + rows[:, None] + cols[None, :] * N, mask=mask)  # strides swapped
    tl.store(b_ptr + rows[:, None] * N + cols[None, :], tile, mask=mask)


def solve(a_ptr: int, b_ptr: int, N: int):
    BLOCK_M = 32
    BLOCK_N = 32
    grid = (triton.cdiv(N, BLOCK_M), triton.cdiv(N, BLOCK_N))
    matrix_copy_kernel[grid](a_ptr, b_ptr, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
