import triton
import triton.language as tl

# Output tiles with loops over the kernel, arranged so that each load feeds several
# multiply-adds. A program computes R = 4 interleaved tiles of output rows: tile j holds the rows
# R*p + j of the program's block (p = 0 .. BLOCK_M - 1). At step m of the loop over input rows,
# all four tiles read the same input rows R*p + m, which tile j multiplies by kernel row m - j:
# one load serves four kernel rows.


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
    BLOCK_M: tl.constexpr,  # rows per tile: a program covers 4 * BLOCK_M output rows
    BLOCK_N: tl.constexpr,  # output columns per program
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    kernel_ptr = kernel_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    first_row = pid_m * (4 * BLOCK_M) + 4 * tl.arange(0, BLOCK_M)  # output rows 4p of the block
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < out_cols  # then cols + n < input_cols for every kernel column n
    acc0 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # output rows 4p + 0
    acc1 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # output rows 4p + 1
    acc2 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # output rows 4p + 2
    acc3 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # output rows 4p + 3
    for m in range(kernel_rows + 3):
        # the input rows read at this step; past the last row they only feed rows that are not
        # stored, so they are clamped to stay inside the input
        rows = tl.minimum(first_row + m, input_rows - 1)
        x_ptrs = input_ptr + rows[:, None] * input_cols + cols[None, :]
        # tile j multiplies them by kernel row m - j, when there is one
        w_ptr = kernel_ptr + m * kernel_cols
        ok0 = m < kernel_rows
        ok1 = (m >= 1) & (m - 1 < kernel_rows)
        ok2 = (m >= 2) & (m - 2 < kernel_rows)
        ok3 = (m >= 3) & (m - 3 < kernel_rows)
        for n in range(kernel_cols):
            x = tl.load(x_ptrs + n, mask=col_ok[None, :], other=0.0)
            acc0 += tl.load(w_ptr + n, mask=ok0, other=0.0) * x
            acc1 += tl.load(w_ptr + (n - kernel_cols), mask=ok1, other=0.0) * x
            acc2 += tl.load(w_ptr + (n - 2 * kernel_cols), mask=ok2, other=0.0) * x
            acc3 += tl.load(w_ptr + (n - 3 * kernel_cols), mask=ok3, other=0.0) * x
    out = output_ptr + first_row[:, None] * out_cols + cols[None, :]
    tl.store(out, acc0, mask=(first_row < out_rows)[:, None] & col_ok[None, :])
    tl.store(out + out_cols, acc1, mask=(first_row + 1 < out_rows)[:, None] & col_ok[None, :])
    tl.store(out + 2 * out_cols, acc2, mask=(first_row + 2 < out_rows)[:, None] & col_ok[None, :])
    tl.store(out + 3 * out_cols, acc3, mask=(first_row + 3 < out_rows)[:, None] & col_ok[None, :])


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
    BLOCK_M, BLOCK_N = 8, 256
    grid = (triton.cdiv(out_rows, 4 * BLOCK_M), triton.cdiv(out_cols, BLOCK_N))
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
