# expect: failed unwritten|wrong-answer
# mistake: no_zeroing
# Adds the partial sums into output[0] with atomics without zeroing it first: the garbage there
# (a NaN) swallows every addition.
import triton
import triton.language as tl


@triton.jit
def reduction_kernel(input_ptr, output_ptr, N, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(input_ptr + offsets, mask=offsets < N, other=0.0)
    tl.atomic_add(output_ptr, tl.sum(x, axis=0))


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 1024
    reduction_kernel[(triton.cdiv(N, BLOCK_SIZE),)](input_ptr, output_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
