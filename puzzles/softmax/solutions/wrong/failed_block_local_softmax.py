# expect: failed wrong-answer
# mistake: block_local
# Each program uses the maximum and sum of its own block only: right for N <= 1024, wrong beyond.
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(input_ptr, output_ptr, N, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(input_ptr + offsets, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(output_ptr + offsets, e / tl.sum(e, axis=0), mask=mask)


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 1024
    softmax_kernel[(triton.cdiv(N, BLOCK_SIZE),)](input_ptr, output_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
