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
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(input_ptr + offsets, mask=mask)
    # Keep the positive values, replace the others by zero.
    y = tl.where(x > 0, x, 0.0)
    tl.store(output_ptr + offsets, y, mask=mask)


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 4096
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    relu_kernel[grid](input_ptr, output_ptr, N, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
