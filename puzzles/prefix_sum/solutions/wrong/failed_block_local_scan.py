# expect: failed wrong-answer
# mistake: block_local_scan
# Scans each block on its own: every block after the first is missing the total of the blocks
# before it.
import triton
import triton.language as tl


@triton.jit
def prefix_sum_kernel(input_ptr, output_ptr, N, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(input_ptr + offsets, mask=mask, other=0.0)
    tl.store(output_ptr + offsets, tl.cumsum(x, axis=0), mask=mask)


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    prefix_sum_kernel[grid](input_ptr, output_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
