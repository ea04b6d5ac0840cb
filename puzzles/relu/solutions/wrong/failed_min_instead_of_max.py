# expect: failed wrong-answer
# mistake: minimum
# Clamps with tl.minimum instead of tl.maximum: keeps the negatives and zeroes the positives.
import triton
import triton.language as tl


@triton.jit
def relu_kernel(input_ptr, output_ptr, N, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(input_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, tl.minimum(x, 0.0), mask=mask)


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 1024
    relu_kernel[(triton.cdiv(N, BLOCK_SIZE),)](input_ptr, output_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
