# expect: failed wrong-answer
# mistake: precision
# Computes in float16 to "save bandwidth": about three decimal digits survive, and exp(-x)
# overflows float16 already for x < -11.
import triton
import triton.language as tl


@triton.jit
def silu_kernel(input_ptr, output_ptr, N, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(input_ptr + offsets, mask=mask).to(tl.float16)
    one = tl.full(x.shape, 1.0, tl.float16)
    y = x / (one + tl.exp(-x.to(tl.float32)).to(tl.float16))
    tl.store(output_ptr + offsets, y.to(tl.float32), mask=mask)


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 1024
    silu_kernel[(triton.cdiv(N, BLOCK_SIZE),)](input_ptr, output_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
