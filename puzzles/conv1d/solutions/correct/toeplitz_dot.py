import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"ROWS": 64, "COLS": 64, "K_BLOCK": 16}, num_warps=4, num_stages=3),
        triton.Config({"ROWS": 64, "COLS": 64, "K_BLOCK": 32}, num_warps=4, num_stages=3),
        triton.Config({"ROWS": 32, "COLS": 64, "K_BLOCK": 32}, num_warps=4, num_stages=3),
        triton.Config({"ROWS": 128, "COLS": 64, "K_BLOCK": 16}, num_warps=8, num_stages=3),
    ],
    key=["output_size", "kernel_size"],
)
@triton.jit
def conv1d_kernel(
    input_ptr,  # address of the input signal (input_size values)
    kernel_ptr,  # address of the kernel (kernel_size taps)
    output_ptr,  # address of the output (output_size values)
    input_size,  # length of the input
    output_size,  # input_size - kernel_size + 1
    kernel_size,  # number of taps
    ROWS: tl.constexpr,  # rows of the output tile
    COLS: tl.constexpr,  # outputs per row: a program computes ROWS * COLS consecutive outputs
    K_BLOCK: tl.constexpr,  # input values per row consumed by one step of the loop
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    kernel_ptr = kernel_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    # The program's ROWS * COLS consecutive outputs, seen as a (ROWS, COLS) tile: row p holds the
    # outputs first[p] + r for r in [0, COLS).
    first = pid * (ROWS * COLS) + tl.arange(0, ROWS) * COLS
    r = tl.arange(0, COLS)
    # Row p reads the input window X[p, u] = input[first[p] + u], u in [0, COLS + kernel_size - 1),
    # and output[first[p] + r] = sum over u of X[p, u] * T[u, r] with T[u, r] = kernel[u - r]
    # (zero where u - r is not a tap): a band of the kernel. The whole tile is the matrix product
    # X @ T, computed K_BLOCK columns of X at a time: each input value loaded feeds COLS
    # multiply-adds and each tap ROWS of them.
    acc = tl.zeros((ROWS, COLS), dtype=tl.float32)
    for u0 in range(0, COLS + kernel_size - 1, K_BLOCK):
        u = u0 + tl.arange(0, K_BLOCK)
        idx = first[:, None] + u[None, :]  # (ROWS, K_BLOCK) input offsets
        x = tl.load(input_ptr + idx, mask=idx < input_size, other=0.0)
        tap = u[:, None] - r[None, :]  # (K_BLOCK, COLS) kernel offsets
        t = tl.load(kernel_ptr + tap, mask=(tap >= 0) & (tap < kernel_size), other=0.0)
        # input_precision="ieee": float32 products and sums on the FMA units. The default
        # ("tf32") would round the operands to 10-bit mantissas, too coarse for this puzzle.
        acc += tl.dot(x, t, input_precision="ieee")
    out = first[:, None] + r[None, :]
    tl.store(output_ptr + out, acc, mask=out < output_size)


def solve(input_ptr: int, kernel_ptr: int, output_ptr: int, input_size: int, kernel_size: int):
    output_size = input_size - kernel_size + 1
    grid = lambda meta: (triton.cdiv(output_size, meta["ROWS"] * meta["COLS"]),)  # noqa: E731
    conv1d_kernel[grid](input_ptr, kernel_ptr, output_ptr, input_size, output_size, kernel_size)
