# expect: failed wrong-answer
# mistake: swaps_twice
# Swaps every index with its mirror, not just the first half: each pair is swapped twice, once
# from each end, so the blocks of pairs that two different programs share come back unreversed.
import triton
import triton.language as tl


@triton.jit
def reverse_kernel(input_ptr, N, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    front = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = front < N
    back = N - 1 - front
    x = tl.load(input_ptr + front, mask=mask)
    y = tl.load(input_ptr + back, mask=mask)
    tl.store(input_ptr + front, y, mask=mask)
    tl.store(input_ptr + back, x, mask=mask)


def solve(input_ptr: int, N: int):
    BLOCK_SIZE = 1024
    reverse_kernel[(triton.cdiv(N, BLOCK_SIZE),)](input_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
