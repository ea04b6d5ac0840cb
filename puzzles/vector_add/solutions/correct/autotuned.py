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
def vector_add_kernel(
    a_ptr,  # address of the first input vector
    b_ptr,  # address of the second input vector
    c_ptr,  # address of the output vector
    N,  # number of elements
    BLOCK_SIZE: tl.constexpr,  # chosen by the autotuner
):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(c_ptr + offsets, a + b, mask=mask)


def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    grid = lambda meta: (triton.cdiv(N, meta["BLOCK_SIZE"]),)  # noqa: E731
    vector_add_kernel[grid](a_ptr, b_ptr, c_ptr, N)
