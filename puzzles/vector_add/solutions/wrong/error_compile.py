# expect: error compile-error
# mistake: verdict did not compile
# tl.arange needs a power-of-two range.
import triton
import triton.language as tl


@triton.jit
def vector_add_kernel(a_ptr, b_ptr, c_ptr, N):
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.arange(0, 1000)
    tl.store(c_ptr + offsets, 0.0, mask=offsets < N)


def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    vector_add_kernel[(1,)](a_ptr, b_ptr, c_ptr, N)
