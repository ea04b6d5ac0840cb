# expect: failed unwritten
# mistake: grid_rounds_down
# Launches N // BLOCK programs along each axis: the partial tiles at the right and bottom edges
# (and the whole matrix when N < BLOCK) are never copied.
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
    offsets = rows[:, None] * N + cols[None, :]
    mask = (rows[:, None] < N) & (cols[None, :] < N)
    tl.store(b_ptr + offsets, tl.load(a_ptr + offsets, mask=mask), mask=mask)


def solve(a_ptr: int, b_ptr: int, N: int):
    BLOCK_M = 32
    BLOCK_N = 64
    grid = (N // BLOCK_M, N // BLOCK_N)  # rounds down: should be triton.cdiv
    matrix_copy_kernel[grid](a_ptr, b_ptr, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
