# expect: failed wrong-answer
# mistake: drops_tail
# Launches N // BLOCK_SIZE programs (at least one): the values past the last full block are never
# added once N is above the block size.
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
    x = tl.load(input_ptr + offsets, mask=offsets < N, other=0.0)
    tl.atomic_add(output_ptr, tl.sum(x, axis=0))


def solve(input_ptr: int, output_ptr: int, N: int):
    zero_kernel[(1,)](output_ptr)
    BLOCK_SIZE = 1024
    grid = (max(N // BLOCK_SIZE, 1),)
    reduction_kernel[grid](input_ptr, output_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
