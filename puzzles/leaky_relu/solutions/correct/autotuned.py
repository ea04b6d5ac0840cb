import triton
import triton.language as tl


@triton.autotune(
    configs=[
        # From 512 elements a program (one 16-byte access a thread) up to 8192.
        triton.Config({"BLOCK_SIZE": 512}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 2048}, num_warps=8),
        triton.Config({"BLOCK_SIZE": 4096}, num_warps=8),
        triton.Config({"BLOCK_SIZE": 8192}, num_warps=16),
    ],
    key=["N"],
)
@triton.jit
def leaky_relu_kernel(
    input_ptr,  # address of the input vector
    output_ptr,  # address of the output vector
    N,  # number of elements
    BLOCK_SIZE: tl.constexpr,  # chosen by the autotuner
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)  # which block this program handles
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N  # the last block is usually partial
    x = tl.load(input_ptr + offsets, mask=mask)
    y = tl.where(x > 0, x, x * 0.01)
    tl.store(output_ptr + offsets, y, mask=mask)


def solve(input_ptr: int, output_ptr: int, N: int):
    grid = lambda meta: (triton.cdiv(N, meta["BLOCK_SIZE"]),)  # noqa: E731
    leaky_relu_kernel[grid](input_ptr, output_ptr, N)
