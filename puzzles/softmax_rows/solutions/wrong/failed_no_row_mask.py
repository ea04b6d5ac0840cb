# expect: failed out-of-bounds
# mistake: mask
# Packs several short rows per program but masks only the columns: the last program runs past rows.
import triton
import triton.language as tl


@triton.jit
def softmax_rows_kernel(
    input_ptr, output_ptr, rows, cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    row_ids = tl.program_id(axis=0) * BLOCK_M + tl.arange(0, BLOCK_M)
    col_ids = tl.arange(0, BLOCK_N)
    mask = col_ids[None, :] < cols  # no row_ids < rows
    offsets = row_ids[:, None] * cols + col_ids[None, :]
    x = tl.load(input_ptr + offsets, mask=mask, other=-float("inf"))
    numerator = tl.exp(x - tl.max(x, axis=1)[:, None])
    y = numerator / tl.sum(numerator, axis=1)[:, None]
    tl.store(output_ptr + offsets, y, mask=mask)


def solve(input_ptr: int, output_ptr: int, rows: int, cols: int):
    BLOCK_N = triton.next_power_of_2(cols)
    BLOCK_M = max(1, 4096 // BLOCK_N)
    softmax_rows_kernel[(triton.cdiv(rows, BLOCK_M),)](
        input_ptr, output_ptr, rows, cols, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8
    )
