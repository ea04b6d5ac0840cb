# expect: failed wrong-answer
# mistake: precision
# Computes in float16 to "save bandwidth": only about three decimal digits survive.
import triton
import triton.language as tl


@triton.jit
def leaky_relu_kernel(input_ptr, output_ptr, N, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(input_ptr + offsets, mask=mask).to(tl.float16)
    y = tl.where(x > 0, x, x * 0.01)
    tl.store(output_ptr + offsets, y.to(tl.float32), mask=mask)


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    leaky_relu_kernel[grid](input_ptr, output_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
