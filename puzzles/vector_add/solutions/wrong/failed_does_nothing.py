# expect: failed unwritten
# mistake: unwritten
# Launches a kernel that returns at once: c keeps whatever was there.
import triton
import triton.language as tl


@triton.jit
def vector_add_kernel(a_ptr, b_ptr, c_ptr, N, BLOCK_SIZE: tl.constexpr):
    pass


def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    BLOCK_SIZE = 1024
    vector_add_kernel[(triton.cdiv(N, BLOCK_SIZE),)](a_ptr, b_ptr, c_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
