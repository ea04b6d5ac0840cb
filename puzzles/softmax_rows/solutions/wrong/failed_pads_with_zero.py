# expect: failed wrong-answer
# mistake: pads_with_zero
# Masked columns load 0.0, not -inf: each padding lane adds exp(0 - max) to its row's sum.
import triton
import triton.language as tl


@triton.jit
def softmax_rows_kernel(input_ptr, output_ptr, cols, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    row_start = tl.program_id(axis=0) * cols
    col_ids = tl.arange(0, BLOCK_SIZE)
    mask = col_ids < cols
    x = tl.load(input_ptr + row_start + col_ids, mask=mask, other=0.0)
    numerator = tl.exp(x - tl.max(x, axis=0))
    tl.store(output_ptr + row_start + col_ids, numerator / tl.sum(numerator, axis=0), mask=mask)


def solve(input_ptr: int, output_ptr: int, rows: int, cols: int):
    BLOCK_SIZE = triton.next_power_of_2(cols)
    softmax_rows_kernel[(rows,)](input_ptr, output_ptr, cols, BLOCK_SIZE=BLOCK_SIZE)
