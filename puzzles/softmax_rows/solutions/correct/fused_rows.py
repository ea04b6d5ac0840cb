import triton
import triton.language as tl


@triton.jit
def softmax_rows_kernel(
    input_ptr,  # address of the input matrix, rows x cols, row-major
    output_ptr,  # address of the output matrix, same layout
    rows,  # number of rows
    cols,  # number of columns (elements per row)
    BLOCK_M: tl.constexpr,  # rows handled by one program
    BLOCK_N: tl.constexpr,  # cols rounded up to a power of two: a whole row per tile row
):
    # Every buffer starts 16-byte aligned: saying so lets Triton use 16-byte vector accesses.
    input_ptr = tl.multiple_of(input_ptr.to(tl.pointer_type(tl.float32)), 16)
    output_ptr = tl.multiple_of(output_ptr.to(tl.pointer_type(tl.float32)), 16)
    pid = tl.program_id(axis=0)
    row_ids = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    col_ids = tl.arange(0, BLOCK_N)
    row_mask = row_ids < rows  # the last program may run past the last row
    col_mask = col_ids < cols  # the tile is wider than a row unless cols is a power of two
    mask = row_mask[:, None] & col_mask[None, :]
    offsets = row_ids.to(tl.int64)[:, None] * cols + col_ids[None, :]
    # -inf padding neither wins the maximum nor adds to the sum.
    x = tl.load(input_ptr + offsets, mask=mask, other=-float("inf"))
    row_max = tl.max(x, axis=1)
    # Rows past the end are all padding: give them a finite maximum so they stay NaN-free.
    row_max = tl.where(row_mask, row_max, 0.0)
    numerator = tl.exp(x - row_max[:, None])
    denominator = tl.sum(numerator, axis=1)
    denominator = tl.where(row_mask, denominator, 1.0)
    y = numerator / denominator[:, None]
    tl.store(output_ptr + offsets, y, mask=mask)


def solve(input_ptr: int, output_ptr: int, rows: int, cols: int):
    BLOCK_N = triton.next_power_of_2(cols)
    BLOCK_M = max(1, min(4096 // BLOCK_N, triton.next_power_of_2(rows)))  # >= 4096 elements
    tile = BLOCK_M * BLOCK_N
    num_warps = min(32, max(4, tile // 512))  # about 16 elements per thread
    grid = (triton.cdiv(rows, BLOCK_M),)
    softmax_rows_kernel[grid](
        input_ptr, output_ptr, rows, cols, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=num_warps
    )
