import triton
import triton.language as tl


@triton.jit
def matrix_transpose_kernel(
    input_ptr,  # address of the input matrix (rows x cols, row-major)
    output_ptr,  # address of the output matrix (cols x rows, row-major)
    rows,  # rows of the input (= columns of the output)
    cols,  # columns of the input (= rows of the output)
    BLOCK_M: tl.constexpr,  # input rows in the tile handled by one program
    BLOCK_N: tl.constexpr,  # input columns in the tile handled by one program
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    pid_m = tl.program_id(axis=0)  # which block of input rows
    pid_n = tl.program_id(axis=1)  # which block of input columns
    r = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    c = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # Load a (BLOCK_M, BLOCK_N) tile: along axis 1 the addresses are consecutive.
    in_mask = (r[:, None] < rows) & (c[None, :] < cols)
    tile = tl.load(input_ptr + r[:, None] * cols + c[None, :], mask=in_mask)
    # Store its transpose, a (BLOCK_N, BLOCK_M) tile: output row c, column r. Along axis 1 the
    # addresses are consecutive again; the compiler reshuffles the tile through shared memory.
    out_mask = (c[:, None] < cols) & (r[None, :] < rows)
    tl.store(output_ptr + c[:, None] * rows + r[None, :], tl.trans(tile), mask=out_mask)


def solve(input_ptr: int, output_ptr: int, rows: int, cols: int):
    BLOCK_M = 64
    BLOCK_N = 64
    grid = (triton.cdiv(rows, BLOCK_M), triton.cdiv(cols, BLOCK_N))
    matrix_transpose_kernel[grid](
        input_ptr, output_ptr, rows, cols, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4
    )
