import triton
import triton.language as tl


@triton.jit
def gemm_kernel(
    a_ptr,  # address of A, M x K, row-major float16
    b_ptr,  # address of B, K x N, row-major float16
    c_ptr,  # address of C, M x N, row-major float16: read, then overwritten
    M,  # rows of A and of C
    N,  # columns of B and of C
    K,  # columns of A, rows of B: the length of the reduction
    alpha,  # scale of A @ B
    beta,  # scale of the old C
    BLOCK_M: tl.constexpr,  # rows of the tile of C that one program computes
    BLOCK_N: tl.constexpr,  # columns of that tile
    BLOCK_K: tl.constexpr,  # step along the reduction
):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float16))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float16))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float16))
    # Your code: find this program's tile of C from tl.program_id(0); walk along K, loading
    # masked tiles of A and B and accumulating tl.dot of the two in float32; then load the tile of
    # C, compute alpha * acc + beta * c in float32, and store it back as float16 (masked).


# a_ptr, b_ptr, c_ptr are device addresses (Python ints); A is M x K, B is K x N, C is M x N.
def solve(a_ptr: int, b_ptr: int, c_ptr: int, M: int, N: int, K: int, alpha: float, beta: float):
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    gemm_kernel[grid](
        a_ptr,
        b_ptr,
        c_ptr,
        M,
        N,
        K,
        alpha,
        beta,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
    )
