import triton
import triton.language as tl


@triton.jit
def leaky_relu_kernel(
    input_ptr,  # address of the input vector
    output_ptr,  # address of the output vector
    N,  # number of elements
    alpha,  # slope for the non-positive inputs
    BLOCK_SIZE: tl.constexpr,  # elements handled by one program
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(input_ptr + offsets, mask=mask)
    # For a slope below 1, max(x, alpha * x) picks x when x > 0 and alpha * x otherwise.
    y = tl.maximum(x, alpha * x)
    tl.store(output_ptr + offsets, y, mask=mask)


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 4096
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    leaky_relu_kernel[grid](input_ptr, output_ptr, N, 0.01, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
