import triton
import triton.language as tl


@triton.jit
def reverse_kernel(
    input_ptr,  # address of the vector, read and written in place
    N,  # number of elements
    BLOCK_SIZE: tl.constexpr,  # pairs (i, N - 1 - i) handled by one program
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)  # which block of pairs this program handles
    front = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)  # indices in the first half
    mask = front < N // 2  # the middle element of an odd N never moves
    back = N - 1 - front  # their mirrors in the second half
    x = tl.load(input_ptr + front, mask=mask)
    y = tl.load(input_ptr + back, mask=mask)
    # Both values are in registers before anything is stored, and no other program touches
    # this pair: the swap is safe whatever order the programs run in.
    tl.store(input_ptr + front, y, mask=mask)
    tl.store(input_ptr + back, x, mask=mask)


def solve(input_ptr: int, N: int):
    # A fixed block size: @triton.autotune would run the kernel once per trial, and every run
    # reverses the buffer again.
    BLOCK_SIZE = 4096
    # At least one program, so that N = 1 still launches a (no-op) kernel.
    grid = (max(1, triton.cdiv(N // 2, BLOCK_SIZE)),)
    reverse_kernel[grid](input_ptr, N, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
