import triton
import triton.language as tl


@triton.jit
def zero_kernel(
    output_ptr,  # address of the single output value
):
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    tl.store(output_ptr, 0.0)


@triton.jit
def reduction_kernel(
    input_ptr,  # address of the N input values
    output_ptr,  # address of the output value, already set to 0.0
    N,  # number of input values
    BLOCK_SIZE: tl.constexpr,  # elements summed by one program
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N  # the last block is usually partial
    x = tl.load(input_ptr + offsets, mask=mask, other=0.0)  # masked lanes add nothing
    partial = tl.sum(x, axis=0)
    tl.atomic_add(output_ptr, partial, sem="relaxed")  # one atomic per program


def solve(input_ptr: int, output_ptr: int, N: int):
    zero_kernel[(1,)](output_ptr)  # runs before reduction_kernel: same stream, launch order
    BLOCK_SIZE = 8192
    grid = lambda meta: (triton.cdiv(N, meta["BLOCK_SIZE"]),)  # noqa: E731
    reduction_kernel[grid](input_ptr, output_ptr, N, BLOCK_SIZE=BLOCK_SIZE, num_warps=16)
