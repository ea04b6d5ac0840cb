import triton
import triton.language as tl


@triton.jit
def matmul_kernel(
    a_ptr,  # address of A, M x N, row-major
    b_ptr,  # address of B, N x K, row-major
    c_ptr,  # address of C, M x K, row-major
    M,  # rows of A and of C
    N,  # columns of A, rows of B: the length of the reduction
    K,  # columns of B and of C
    BLOCK_M: tl.constexpr,  # rows of the tile of C that one program computes
    BLOCK_K: tl.constexpr,  # columns of that tile
    BLOCK_N: tl.constexpr,  # step along the reduction
):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    # Your code: find this program's tile of C from tl.program_id(0), then walk along the
    # reduction: load a BLOCK_M x BLOCK_N tile of A and a BLOCK_N x BLOCK_K tile of B (masked),
    # accumulate tl.dot of the two in float32, and store the tile of C (masked).


# a_ptr, b_ptr, c_ptr are device addresses (Python ints); A is M x N, B is N x K, C is M x K.
def solve(a_ptr: int, b_ptr: int, c_ptr: int, M: int, N: int, K: int):
    BLOCK_M, BLOCK_K, BLOCK_N = 64, 64, 32
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(K, BLOCK_K),)
    matmul_kernel[grid](
        a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K, BLOCK_N=BLOCK_N
    )
