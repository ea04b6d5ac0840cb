import triton
import triton.language as tl


# Float16 tiles for Hopper tensor cores: 3 stages of a 128 x 256 tile with BLOCK_K = 64 hold
# 3 * (128*64 + 64*256) * 2 = 144 KiB of A and B in shared memory.
@triton.autotune(
    configs=[
        triton.Config(
            {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=3, num_warps=8
        ),
        triton.Config(
            {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=3, num_warps=8
        ),
        triton.Config(
            {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=4, num_warps=8
        ),
        triton.Config(
            {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=4, num_warps=4
        ),
    ],
    key=["M", "N", "K"],
)
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
    GROUP_M: tl.constexpr,  # tile rows per group in the launch order (L2 reuse)
):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float16))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float16))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float16))
    # An address passed as an int tells Triton nothing about its alignment. The buffers start on
    # 16-byte boundaries: saying so lets the loads and stores move 16 bytes at a time.
    a_ptr = tl.multiple_of(a_ptr, 16)
    b_ptr = tl.multiple_of(b_ptr, 16)
    c_ptr = tl.multiple_of(c_ptr, 16)

    # Grouped ordering: consecutive programs sweep GROUP_M tile rows column by column, so the
    # tiles of A and B they load are still in L2 when the next program needs them.
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles_in_group = GROUP_M * tiles_n
    first_m = (pid // tiles_in_group) * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)  # the last group may be shorter
    pid_m = first_m + (pid % tiles_in_group) % group_rows
    pid_n = (pid % tiles_in_group) // group_rows

    # Rows and columns past the edge wrap around (% M, % N): every load stays inside A and B,
    # and the wrapped rows and columns of the result are never stored.
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + offs_bn[None, :]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        remaining = K - k * BLOCK_K  # the last step of the reduction is usually partial
        a = tl.load(a_ptrs, mask=offs_k[None, :] < remaining, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < remaining, other=0.0)
        acc = tl.dot(a, b, acc)  # float16 tensor cores, float32 accumulation
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N

    # Epilogue: this program owns its tile of C, so it can read the old values and overwrite them.
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + rows[:, None] * N + cols[None, :]
    c_mask = (rows[:, None] < M) & (cols[None, :] < N)
    c_old = tl.load(c_ptrs, mask=c_mask, other=0.0).to(tl.float32)
    result = alpha * acc + beta * c_old
    tl.store(c_ptrs, result.to(tl.float16), mask=c_mask)


def solve(a_ptr: int, b_ptr: int, c_ptr: int, M: int, N: int, K: int, alpha: float, beta: float):
    grid = lambda meta: (  # noqa: E731
        triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),
    )
    gemm_kernel[grid](a_ptr, b_ptr, c_ptr, M, N, K, alpha, beta)
