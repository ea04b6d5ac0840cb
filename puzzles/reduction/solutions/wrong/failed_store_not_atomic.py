# expect: failed wrong-answer
# mistake: store_not_atomic
# Every program stores its partial sum into output[0] with tl.store instead of adding it with
# tl.atomic_add: each store overwrites the last, so one block's sum is left, not the total.
import triton
import triton.language as tl


@triton.jit
def reduction_kernel(input_ptr, output_ptr, N, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(input_ptr + offsets, mask=offsets < N, other=0.0)
    tl.store(output_ptr, tl.sum(x, axis=0))


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 1024
    reduction_kernel[(triton.cdiv(N, BLOCK_SIZE),)](input_ptr, output_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
