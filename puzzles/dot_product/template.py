import triton
import triton.language as tl


@triton.jit
def dot_product_kernel(
    a_ptr,  # address of the first input vector (N values)
    b_ptr,  # address of the second input vector (N values)
    result_ptr,  # address of the single output value (holds garbage on entry)
    N,  # number of elements of each vector
    BLOCK_SIZE: tl.constexpr,  # elements handled by one program
):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    result_ptr = result_ptr.to(tl.pointer_type(tl.float32))
    # Your code: load this program's block of a and b (masked), multiply, reduce with tl.sum,
    # and combine the partial sums into result[0] (tl.atomic_add after zeroing it, or a second
    # kernel).


# a_ptr, b_ptr, result_ptr are device addresses (Python ints); N is the length of the vectors.
def solve(a_ptr: int, b_ptr: int, result_ptr: int, N: int):
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    dot_product_kernel[grid](a_ptr, b_ptr, result_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
