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
    # Your code: find this program's block, build its offsets and mask, load, add, store.


# a_ptr, b_ptr, c_ptr are device addresses (Python ints); N is the number of elements.
def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    vector_add_kernel[grid](a_ptr, b_ptr, c_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
