# expect: passed ok
# Right on every case, and prints what it was given (the sizes, the first inputs) with terminal
# escapes and XML, CSV and Markdown metacharacters around them: what it prints during a hidden case
# must reach no text a student sees, and none of it may reach any format unescaped.
import ctypes

import triton
import triton.language as tl


@triton.jit
def vector_add_kernel(
    a_ptr,  # address of the first input vector
    b_ptr,  # address of the second input vector
    c_ptr,  # address of the output vector
    N,  # number of elements
    BLOCK_SIZE: tl.constexpr,  # elements handled by one program
):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)  # which block this program handles
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N  # the last block is usually partial
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(c_ptr + offsets, a + b, mask=mask)


def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    first = ctypes.c_float.from_address(a_ptr).value
    print(f"\x1b[31mLEAK N={N} a[0]={first!r}\x1b[0m ]]> <b>&amp; =1+1 |x| \x1b]0;title\x07")
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    vector_add_kernel[grid](a_ptr, b_ptr, c_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
