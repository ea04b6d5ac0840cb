import triton
import triton.language as tl


@triton.jit
def conv1d_kernel(
    input_ptr,  # address of the input signal (input_size values)
    kernel_ptr,  # address of the kernel (kernel_size taps)
    output_ptr,  # address of the output (input_size - kernel_size + 1 values)
    input_size,  # length of the input
    kernel_size,  # number of taps
    BLOCK_SIZE: tl.constexpr,  # outputs handled by one program
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    kernel_ptr = kernel_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    # Your code: find this program's block of outputs and mask it, accumulate
    # input[i + j] * kernel[j] over the taps j (in float32), store the sums.


# input_ptr, kernel_ptr and output_ptr are device addresses (Python ints).
def solve(input_ptr: int, kernel_ptr: int, output_ptr: int, input_size: int, kernel_size: int):
    output_size = input_size - kernel_size + 1
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(output_size, BLOCK_SIZE),)
    conv1d_kernel[grid](
        input_ptr, kernel_ptr, output_ptr, input_size, kernel_size, BLOCK_SIZE=BLOCK_SIZE
    )
