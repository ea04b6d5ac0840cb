# expect: failed out-of-bounds
# mistake: mask
# Sizes the output as input_size (as if the input were zero-padded at the end) instead of
# input_size - kernel_size + 1: the last kernel_size - 1 stores land past the end of the output.
import triton
import triton.language as tl


@triton.jit
def conv1d_kernel(
    input_ptr,  # address of the input signal (input_size values)
    kernel_ptr,  # address of the kernel (kernel_size taps)
    output_ptr,  # address of the output (input_size - kernel_size + 1 values)
    input_size,  # length of the input
    output_size,  # number of outputs to write
    kernel_size,  # number of taps
    ROWS: tl.constexpr,  # rows of the output tile
    COLS: tl.constexpr,  # outputs per row: a program computes ROWS * COLS consecutive outputs
    K_BLOCK: tl.constexpr,  # input values per row consumed by one step of the loop
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    kernel_ptr = kernel_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    first = tl.program_id(axis=0) * (ROWS * COLS) + tl.arange(0, ROWS) * COLS
    r = tl.arange(0, COLS)
    acc = tl.zeros((ROWS, COLS), dtype=tl.float32)
    for u0 in range(0, COLS + kernel_size - 1, K_BLOCK):
        u = u0 + tl.arange(0, K_BLOCK)
        idx = first[:, None] + u[None, :]
        x = tl.load(input_ptr + idx, mask=idx < input_size, other=0.0)
        tap = u[:, None] - r[None, :]
        t = tl.load(kernel_ptr + tap, mask=(tap >= 0) & (tap < kernel_size), other=0.0)
        acc += tl.dot(x, t, input_precision="ieee")
    out = first[:, None] + r[None, :]
    tl.store(output_ptr + out, acc, mask=out < output_size)


def solve(input_ptr: int, kernel_ptr: int, output_ptr: int, input_size: int, kernel_size: int):
    output_size = input_size  # should be input_size - kernel_size + 1
    ROWS, COLS = 64, 64
    grid = (triton.cdiv(output_size, ROWS * COLS),)
    conv1d_kernel[grid](
        input_ptr,
        kernel_ptr,
        output_ptr,
        input_size,
        output_size,
        kernel_size,
        ROWS=ROWS,
        COLS=COLS,
        K_BLOCK=16,
    )
