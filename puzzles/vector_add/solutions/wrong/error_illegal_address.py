# expect: error crash|cuda-error
# mistake: verdict while case
# Stores through address 2**44, which nothing maps: an illegal address on the GPU, a crash
# in the interpreter.
import triton
import triton.language as tl


@triton.jit
def vector_add_kernel(c_ptr, N, BLOCK_SIZE: tl.constexpr):
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(c_ptr + offsets, 1.0, mask=offsets < N)


def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    BLOCK_SIZE = 1024
    vector_add_kernel[(triton.cdiv(N, BLOCK_SIZE),)](1 << 44, N, BLOCK_SIZE=BLOCK_SIZE)
