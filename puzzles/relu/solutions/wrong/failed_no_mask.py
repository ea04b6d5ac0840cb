# expect: failed out-of-bounds
# mistake: mask
# Stores the whole last block without a mask: the elements past N land after the end of output.
import triton
import triton.language as tl


@triton.jit
def relu_kernel(input_ptr, output_ptr, N, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(input_ptr + offsets)
    tl.store(output_ptr + offsets, tl.maximum(x, 0.0))


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 512
    relu_kernel[(triton.cdiv(N, BLOCK_SIZE),)](input_ptr, output_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
