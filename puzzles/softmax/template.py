import os

import triton
import triton.language as tl

# Where scratch memory goes if your design needs it (torch.empty(..., device=DEVICE)).
DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


@triton.jit
def softmax_kernel(
    input_ptr,  # address of the input vector
    output_ptr,  # address of the output vector
    N,  # number of elements
    BLOCK_SIZE: tl.constexpr,  # elements handled by one program
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    # Your code: the maximum and the sum of exp(x - max) cover all N elements, so one kernel
    # alone cannot finish its block before the other blocks are reduced. Split the work into
    # kernels (per-block partials in scratch memory, then normalise), each with its own grid.


# input_ptr and output_ptr are device addresses (Python ints); N is the number of elements.
def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    softmax_kernel[grid](input_ptr, output_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
