# expect: failed hidden-case
# Right on every case but one size, the course catalogue's hidden case (N = 1500), where it
# leaves the last element unwritten: a student's own run must say that a hidden case failed, and
# nothing of its sizes, seed, inputs or expected values.
import triton
import triton.language as tl


@triton.jit
def vector_add_kernel(
    a_ptr,  # address of the first input vector
    b_ptr,  # address of the second input vector
    c_ptr,  # address of the output vector
    N,  # number of elements
    BLOCK_SIZE: tl.constexpr,  # elements handled by one program
):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)  # which block this program handles
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N  # the last block is usually partial
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(c_ptr + offsets, a + b, mask=mask)


def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    BLOCK_SIZE = 1024
    n = N - 1 if N == 1500 else N
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    vector_add_kernel[grid](a_ptr, b_ptr, c_ptr, n, BLOCK_SIZE=BLOCK_SIZE)
