# expect: failed wrong-answer
# mistake: drops_kernel_tail
# Walks the kernel in chunks of K_BLOCK taps but only over whole chunks: the last
# kernel_size % K_BLOCK taps (every tap, when kernel_size < K_BLOCK) are never summed.
import triton
import triton.language as tl


@triton.jit
def conv1d_kernel(
    input_ptr,  # address of the input signal (input_size values)
    kernel_ptr,  # address of the kernel (kernel_size taps)
    output_ptr,  # address of the output (input_size - kernel_size + 1 values)
    output_size,  # input_size - kernel_size + 1
    kernel_size,  # number of taps
    BLOCK_SIZE: tl.constexpr,  # outputs handled by one program
    K_BLOCK: tl.constexpr,  # taps per step of the loop
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    kernel_ptr = kernel_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < output_size
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for k0 in range(0, kernel_size // K_BLOCK * K_BLOCK, K_BLOCK):  # rounds down
        taps = k0 + tl.arange(0, K_BLOCK)
        w = tl.load(kernel_ptr + taps)
        x = tl.load(input_ptr + offsets[:, None] + taps[None, :], mask=mask[:, None], other=0.0)
        acc += tl.sum(x * w[None, :], axis=1)
    tl.store(output_ptr + offsets, acc, mask=mask)


def solve(input_ptr: int, kernel_ptr: int, output_ptr: int, input_size: int, kernel_size: int):
    output_size = input_size - kernel_size + 1
    BLOCK_SIZE = 128
    grid = (triton.cdiv(output_size, BLOCK_SIZE),)
    conv1d_kernel[grid](
        input_ptr,
        kernel_ptr,
        output_ptr,
        output_size,
        kernel_size,
        BLOCK_SIZE=BLOCK_SIZE,
        K_BLOCK=32,
    )
