# expect: failed out-of-bounds
# mistake: mirror_off_by_one
# Mirrors index i to N - i instead of N - 1 - i: the first swap writes one element past the end.
import triton
import triton.language as tl


@triton.jit
def reverse_kernel(input_ptr, N, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    front = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = front < N // 2
    back = N - front
    x = tl.load(input_ptr + front, mask=mask)
    y = tl.load(input_ptr + back, mask=mask)
    tl.store(input_ptr + front, y, mask=mask)
    tl.store(input_ptr + back, x, mask=mask)


def solve(input_ptr: int, N: int):
    BLOCK_SIZE = 1024
    reverse_kernel[(max(1, triton.cdiv(N // 2, BLOCK_SIZE)),)](input_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
