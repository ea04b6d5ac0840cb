import triton
import triton.language as tl


@triton.jit
def softmax_rows_kernel(
    input_ptr,  # address of the input matrix, rows x cols, row-major
    output_ptr,  # address of the output matrix, same layout
    cols,  # number of columns (elements per row)
    BLOCK_SIZE: tl.constexpr,  # columns per chunk
):
    # Every buffer starts 16-byte aligned: saying so lets Triton use 16-byte vector accesses.
    input_ptr = tl.multiple_of(input_ptr.to(tl.pointer_type(tl.float32)), 16)
    output_ptr = tl.multiple_of(output_ptr.to(tl.pointer_type(tl.float32)), 16)
    row = tl.program_id(axis=0)  # one program per row: the grid has exactly rows programs
    row_start = row.to(tl.int64) * cols
    # Pass 1, online: a running maximum m and a running sum s of exp(x - m); whenever a chunk
    # raises the maximum, the sum so far is rescaled by exp(old m - new m).
    m = -float("inf")
    s = 0.0
    for start in range(0, cols, BLOCK_SIZE):
        col_ids = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(input_ptr + row_start + col_ids, mask=col_ids < cols, other=-float("inf"))
        m_new = tl.maximum(m, tl.max(x, axis=0))  # finite: every chunk holds a column
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    inv_s = 1.0 / s
    # Pass 2: normalise. The row was just read, so this second read mostly hits the cache.
    for start in range(0, cols, BLOCK_SIZE):
        col_ids = start + tl.arange(0, BLOCK_SIZE)
        mask = col_ids < cols
        x = tl.load(input_ptr + row_start + col_ids, mask=mask)
        tl.store(output_ptr + row_start + col_ids, tl.exp(x - m) * inv_s, mask=mask)


def solve(input_ptr: int, output_ptr: int, rows: int, cols: int):
    BLOCK_SIZE = min(triton.next_power_of_2(cols), 4096)
    num_warps = 4 if BLOCK_SIZE <= 1024 else 8
    softmax_rows_kernel[(rows,)](
        input_ptr, output_ptr, cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps
    )
