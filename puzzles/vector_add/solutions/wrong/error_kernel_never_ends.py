# expect: error timeout
# mistake: verdict a kernel that never ends
# A kernel whose loop condition never turns false.
import triton
import triton.language as tl


@triton.jit
def vector_add_kernel(a_ptr, c_ptr, N):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    x = tl.load(a_ptr)
    i = 0
    while x == x:  # a is never NaN
        x = tl.load(a_ptr + (i % N))
        i += 1
    tl.store(c_ptr, x)


def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    vector_add_kernel[(1,)](a_ptr, c_ptr, N)
