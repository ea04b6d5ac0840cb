# expect: failed wrong-answer
# mistake: b_read_transposed
# Reads B[n, k] at n + k*N, as if B were stored K x N (the usual naming mixed up with LeetGPU's):
# every load stays in bounds, but the product is A times the wrong matrix.
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
    pid = tl.program_id(axis=0)
    tiles_k = tl.cdiv(K, BLOCK_K)
    rows = (pid // tiles_k) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % tiles_k) * BLOCK_K + tl.arange(0, BLOCK_K)
    offs_n = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        n = start + offs_n
        a_mask = (rows[:, None] < M) & (n[None, :] < N)
        b_mask = (n[:, None] < N) & (cols[None, :] < K)
        a = tl.load(a_ptr + rows[:, None] * N + n[None, :], mask=a_mask, other=0.0)
        b = tl.load(b_ptr + cols[None, :] * N + n[:, None], mask=b_mask, other=0.0)
        acc = tl.dot(a, b, acc)
    c_ptrs = c_ptr + rows[:, None] * K + cols[None, :]
    tl.store(c_ptrs, acc, mask=(rows[:, None] < M) & (cols[None, :] < K))


def solve(a_ptr: int, b_ptr: int, c_ptr: int, M: int, N: int, K: int):
    BLOCK_M, BLOCK_K, BLOCK_N = 64, 64, 32
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(K, BLOCK_K),)
    matmul_kernel[grid](
        a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K, BLOCK_N=BLOCK_N
    )
