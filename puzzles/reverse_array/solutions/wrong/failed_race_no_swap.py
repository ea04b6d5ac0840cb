# expect: failed wrong-answer
# mistake: overwrites_unread
# Each program loads its own block and stores it, reversed, at the mirrored place, as if there were
# a separate output: a program can overwrite values that a later program has not read yet.
import triton
import triton.language as tl


@triton.jit
def reverse_kernel(input_ptr, N, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(input_ptr + offsets, mask=mask)
    tl.store(input_ptr + (N - 1 - offsets), x, mask=mask)


def solve(input_ptr: int, N: int):
    BLOCK_SIZE = 256
    reverse_kernel[(triton.cdiv(N, BLOCK_SIZE),)](input_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
