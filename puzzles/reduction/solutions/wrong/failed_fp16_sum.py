# expect: failed wrong-answer
# mistake: precision
# Converts the values to float16 "to halve the work" and sums each block in float16: about three
# significant digits survive, far from a float32 sum.
import triton
import triton.language as tl


@triton.jit
def zero_kernel(output_ptr):
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    tl.store(output_ptr, 0.0)


@triton.jit
def reduction_kernel(input_ptr, output_ptr, N, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(input_ptr + offsets, mask=offsets < N, other=0.0).to(tl.float16)
    partial = tl.sum(x, axis=0, dtype=tl.float16)
    tl.atomic_add(output_ptr, partial.to(tl.float32))


def solve(input_ptr: int, output_ptr: int, N: int):
    zero_kernel[(1,)](output_ptr)
    BLOCK_SIZE = 1024
    reduction_kernel[(triton.cdiv(N, BLOCK_SIZE),)](input_ptr, output_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
