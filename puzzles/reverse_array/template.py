import triton
import triton.language as tl


@triton.jit
def reverse_kernel(
    input_ptr,  # address of the vector, read and written in place
    N,  # number of elements
    BLOCK_SIZE: tl.constexpr,  # pairs (i, N - 1 - i) handled by one program
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    # Your code: find this program's block of indices i < N // 2, load input[i] and
    # input[N - 1 - i], store them swapped.


# input_ptr is a device address (Python int); N is the number of elements.
def solve(input_ptr: int, N: int):
    BLOCK_SIZE = 1024
    grid = (max(1, triton.cdiv(N // 2, BLOCK_SIZE)),)
    reverse_kernel[grid](input_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
