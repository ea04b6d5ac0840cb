# expect: failed wrong-answer
# mistake: not_transposed
# Stores the tile at the same offsets it was loaded from (row * cols + col): the output is a copy
# of the input, not its transpose.
import triton
import triton.language as tl


@triton.jit
def matrix_transpose_kernel(
    input_ptr,  # address of the input matrix (rows x cols, row-major)
    output_ptr,  # address of the output matrix (cols x rows, row-major)
    rows,  # rows of the input
    cols,  # columns of the input
    BLOCK_M: tl.constexpr,  # input rows in the tile handled by one program
    BLOCK_N: tl.constexpr,  # input columns in the tile handled by one program
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    r = tl.program_id(axis=0) * BLOCK_M + tl.arange(0, BLOCK_M)
    c = tl.program_id(axis=1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offsets = r[:, None] * cols + c[None, :]
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    tile = tl.load(input_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, tile, mask=mask)  # should be c * rows + r


def solve(input_ptr: int, output_ptr: int, rows: int, cols: int):
    BLOCK_M = 32
    BLOCK_N = 32
    grid = (triton.cdiv(rows, BLOCK_M), triton.cdiv(cols, BLOCK_N))
    matrix_transpose_kernel[grid](
        input_ptr, output_ptr, rows, cols, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N
    )
