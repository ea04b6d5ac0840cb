# expect: failed wrong-answer
# mistake: output_transposed
# Swaps rows and columns when storing: output[j * out_rows + i] instead of output[i * out_cols + j].
import triton
import triton.language as tl


@triton.jit
def conv2d_kernel(
    input_ptr,  # address of the input matrix (input_rows x input_cols, row-major)
    kernel_ptr,  # address of the kernel (kernel_rows x kernel_cols, row-major)
    output_ptr,  # address of the output matrix (out_rows x out_cols, row-major)
    input_rows,  # input height (every window fits, so it is not needed here)
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
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows < out_rows)[:, None] & (cols < out_cols)[None, :]
    # top-left input element of each output's window; the window never leaves the input
    window = input_ptr + rows[:, None] * input_cols + cols[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for m in range(kernel_rows):
        for n in range(kernel_cols):
            w = tl.load(kernel_ptr + m * kernel_cols + n)
            x = tl.load(window + (m * input_cols + n), mask=mask, other=0.0)
            acc += x * w
    tl.store(output_ptr + cols[None, :] * out_rows + rows[:, None], acc, mask=mask)


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
        num_warps=4,
    )
