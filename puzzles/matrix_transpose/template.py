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
    # Your code: find this program's tile, load it from the input (offsets row * cols + col),
    # and store it transposed into the output (offsets col * rows + row), with masks.


# input_ptr and output_ptr are device addresses (Python ints); the input is rows x cols.
def solve(input_ptr: int, output_ptr: int, rows: int, cols: int):
    BLOCK_M = 32
    BLOCK_N = 32
    grid = (triton.cdiv(rows, BLOCK_M), triton.cdiv(cols, BLOCK_N))
    matrix_transpose_kernel[grid](
        input_ptr, output_ptr, rows, cols, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N
    )
