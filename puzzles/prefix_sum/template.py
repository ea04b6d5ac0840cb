import triton
import triton.language as tl


@triton.jit
def prefix_sum_kernel(
    input_ptr,  # address of the input vector
    output_ptr,  # address of the output vector
    N,  # number of elements
    BLOCK_SIZE: tl.constexpr,  # elements handled by one program
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    # Your code: scan this program's block (tl.cumsum), then add the total of every block
    # before it. That total needs more than one program: a second kernel over the blocks' totals
    # kept in scratch memory (torch.empty in solve()), or a look-back at totals published by the
    # programs that came before.


# input_ptr, output_ptr are device addresses (Python ints); N is the number of elements.
def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    prefix_sum_kernel[grid](input_ptr, output_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
