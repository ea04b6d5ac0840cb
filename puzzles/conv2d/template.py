import triton
import triton.language as tl


@triton.jit
def conv2d_kernel(
    input_ptr,  # address of the input matrix (input_rows x input_cols, row-major)
    kernel_ptr,  # address of the kernel (kernel_rows x kernel_cols, row-major)
    output_ptr,  # address of the output matrix (out_rows x out_cols, row-major)
    input_rows,  # input height
    input_cols,  # input width: the row stride of the input
    kernel_rows,  # kernel height
    kernel_cols,  # kernel width
    out_rows,  # input_rows - kernel_rows + 1
    out_cols,  # input_cols - kernel_cols + 1
    BLOCK_M: tl.constexpr,  # output rows per program
    BLOCK_N: tl.constexpr,  # output columns per program
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    kernel_ptr = kernel_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    # Your code: find this program's tile of output rows and columns (tl.program_id(0) and (1)),
    # loop over the kernel's rows and columns accumulating input[i + m][j + n] * kernel[m][n],
    # then store the tile with a mask for the edges.


# The pointers are device addresses (Python ints); the sizes are ints.
def solve(
    input_ptr: int,
    kernel_ptr: int,
    output_ptr: int,
    input_rows: int,
    input_cols: int,
    kernel_rows: int,
    kernel_cols: int,
):
    out_rows = input_rows - kernel_rows + 1
    out_cols = input_cols - kernel_cols + 1
    BLOCK_M, BLOCK_N = 32, 64
    grid = (triton.cdiv(out_rows, BLOCK_M), triton.cdiv(out_cols, BLOCK_N))
    conv2d_kernel[grid](
        input_ptr,
        kernel_ptr,
        output_ptr,
        input_rows,
        input_cols,
        kernel_rows,
        kernel_cols,
        out_rows,
        out_cols,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
    )
