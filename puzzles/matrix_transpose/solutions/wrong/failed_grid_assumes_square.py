# expect: failed unwritten
# mistake: grid_from_rows
# Sizes both axes of the grid from rows, as if the matrix were square: when cols > rows the
# right-hand columns of the input (the bottom rows of the output) are never transposed.
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
    tile = tl.load(
        input_ptr + r[:, None] * cols + c[None, :],
        mask=(r[:, None] < rows) & (c[None, :] < cols),
    )
    tl.store(
        output_ptr + c[:, None] * rows + r[None, :],
        tl.trans(tile),
        mask=(c[:, None] < cols) & (r[None, :] < rows),
    )


def solve(input_ptr: int, output_ptr: int, rows: int, cols: int):
    BLOCK_M = 32
    BLOCK_N = 32
    grid = (triton.cdiv(rows, BLOCK_M), triton.cdiv(rows, BLOCK_N))  # should use cols
    matrix_transpose_kernel[grid](
        input_ptr, output_ptr, rows, cols, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N
    )
