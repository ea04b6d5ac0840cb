import triton
import triton.language as tl


@triton.jit
def relu_kernel(
    input_ptr,  # address of the input vector
    output_ptr,  # address of the output vector
    N,  # number of elements
    BLOCK_SIZE: tl.constexpr,  # elements handled by one program
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    # Your code: find this program's block, build its offsets and mask, load, clamp at zero, store.


# input_ptr, output_ptr are device addresses (Python ints); N is the number of elements.
def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    relu_kernel[grid](input_ptr, output_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
