# expect: failed wrong-answer
# mistake: ignores_beta
# Stores alpha * (A @ B) and forgets beta * C: the old values of C are simply overwritten.
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
    pid = tl.program_id(axis=0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = (pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, K, BLOCK_K):
        k = start + offs_k
        a_mask = (rows[:, None] < M) & (k[None, :] < K)
        b_mask = (k[:, None] < K) & (cols[None, :] < N)
        a = tl.load(a_ptr + rows[:, None] * K + k[None, :], mask=a_mask, other=0.0)
        b = tl.load(b_ptr + k[:, None] * N + cols[None, :], mask=b_mask, other=0.0)
        acc = tl.dot(a, b, acc)
    c_ptrs = c_ptr + rows[:, None] * N + cols[None, :]
    c_mask = (rows[:, None] < M) & (cols[None, :] < N)
    result = alpha * acc
    tl.store(c_ptrs, result.to(tl.float16), mask=c_mask)


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
