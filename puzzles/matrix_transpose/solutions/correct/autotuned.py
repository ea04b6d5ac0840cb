import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=8),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32}, num_warps=4),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 128}, num_warps=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8),
    ],
    key=["rows", "cols"],
)
@triton.jit
def matrix_transpose_kernel(
    input_ptr,  # address of the input matrix (rows x cols, row-major)
    output_ptr,  # address of the output matrix (cols x rows, row-major)
    rows,  # rows of the input (= columns of the output)
    cols,  # columns of the input (= rows of the output)
    BLOCK_M: tl.constexpr,  # input rows in the tile handled by one program (autotuned)
    BLOCK_N: tl.constexpr,  # input columns in the tile handled by one program (autotuned)
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    pid_m = tl.program_id(axis=0)  # which block of input rows
    pid_n = tl.program_id(axis=1)  # which block of input columns
    r = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    c = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # Coalesced load: consecutive columns of one input row are consecutive addresses.
    tile = tl.load(
        input_ptr + r[:, None] * cols + c[None, :],
        mask=(r[:, None] < rows) & (c[None, :] < cols),
    )
    # Coalesced store: the transposed tile's rows are output rows, consecutive in r. The
    # compiler moves the values between threads through shared memory.
    tl.store(
        output_ptr + c[:, None] * rows + r[None, :],
        tl.trans(tile),
        mask=(c[:, None] < cols) & (r[None, :] < rows),
    )


def solve(input_ptr: int, output_ptr: int, rows: int, cols: int):
    grid = lambda meta: (  # noqa: E731
        triton.cdiv(rows, meta["BLOCK_M"]),
        triton.cdiv(cols, meta["BLOCK_N"]),
    )
    matrix_transpose_kernel[grid](input_ptr, output_ptr, rows, cols)
