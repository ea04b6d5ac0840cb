# expect: failed wrong-answer
# mistake: no_max_subtraction
# Divides exp(x) by the row sum of exp(x), no max subtracted: exp(1000) is inf, inf / inf NaN.
import triton
import triton.language as tl


@triton.jit
def softmax_rows_kernel(input_ptr, output_ptr, cols, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    row_start = tl.program_id(axis=0) * cols
    col_ids = tl.arange(0, BLOCK_SIZE)
    mask = col_ids < cols
    x = tl.load(input_ptr + row_start + col_ids, mask=mask, other=-float("inf"))
    numerator = tl.exp(x)
    tl.store(output_ptr + row_start + col_ids, numerator / tl.sum(numerator, axis=0), mask=mask)


def solve(input_ptr: int, output_ptr: int, rows: int, cols: int):
    BLOCK_SIZE = triton.next_power_of_2(cols)
    softmax_rows_kernel[(rows,)](input_ptr, output_ptr, cols, BLOCK_SIZE=BLOCK_SIZE)
