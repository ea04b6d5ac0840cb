import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


@triton.jit
def transpose_kernel(
    src_ptr,  # address of B, N x K, row-major
    dst_ptr,  # address of the scratch copy of B transposed, K x N, row-major
    N,  # rows of B
    K,  # columns of B
    TILE: tl.constexpr,  # each program moves one TILE x TILE square
):
    src_ptr = src_ptr.to(tl.pointer_type(tl.float32))
    dst_ptr = dst_ptr.to(tl.pointer_type(tl.float32))
    src_ptr = tl.multiple_of(src_ptr, 16)
    dst_ptr = tl.multiple_of(dst_ptr, 16)
    rows = tl.program_id(axis=0) * TILE + tl.arange(0, TILE)  # rows of B
    cols = tl.program_id(axis=1) * TILE + tl.arange(0, TILE)  # columns of B
    mask = (rows[:, None] < N) & (cols[None, :] < K)
    tile = tl.load(src_ptr + rows[:, None] * K + cols[None, :], mask=mask)
    # Row r of B becomes column r of the copy: stored along the rows of B, so writes coalesce too.
    tl.store(dst_ptr + cols[:, None] * N + rows[None, :], tl.trans(tile), mask=tl.trans(mask))


# Float32 tiles for Hopper: BLOCK_N = 32 keeps three or four stages of A and B tiles within
# shared memory (a 128 x 256 tile of C with 3 stages uses 3 * (128*32 + 256*32) * 4 = 144 KiB).
@triton.autotune(
    configs=[
        triton.Config(
            {"BLOCK_M": 128, "BLOCK_K": 256, "BLOCK_N": 32, "GROUP_M": 8}, num_stages=3, num_warps=8
        ),
        triton.Config(
            {"BLOCK_M": 128, "BLOCK_K": 256, "BLOCK_N": 32, "GROUP_M": 8}, num_stages=4, num_warps=8
        ),
        triton.Config(
            {"BLOCK_M": 256, "BLOCK_K": 128, "BLOCK_N": 32, "GROUP_M": 8}, num_stages=3, num_warps=8
        ),
        triton.Config(
            {"BLOCK_M": 128, "BLOCK_K": 128, "BLOCK_N": 64, "GROUP_M": 8}, num_stages=3, num_warps=8
        ),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(
    a_ptr,  # address of A, M x N, row-major
    bt_ptr,  # address of B transposed, K x N, row-major: the reduction runs along its rows
    c_ptr,  # address of C, M x K, row-major
    M,  # rows of A and of C
    N,  # columns of A, rows of B: the length of the reduction
    K,  # columns of B and of C
    BLOCK_M: tl.constexpr,  # rows of the tile of C that one program computes
    BLOCK_K: tl.constexpr,  # columns of that tile
    BLOCK_N: tl.constexpr,  # step along the reduction
    GROUP_M: tl.constexpr,  # tile rows per group in the launch order (L2 reuse)
):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    bt_ptr = bt_ptr.to(tl.pointer_type(tl.float32))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    # An address passed as an int tells Triton nothing about its alignment. The buffers start on
    # 16-byte boundaries: saying so lets the loads move 16 bytes at a time, asynchronously.
    a_ptr = tl.multiple_of(a_ptr, 16)
    bt_ptr = tl.multiple_of(bt_ptr, 16)
    c_ptr = tl.multiple_of(c_ptr, 16)

    # Grouped ordering: consecutive programs sweep GROUP_M tile rows column by column, so the
    # tiles of A and B they load are still in L2 when the next program needs them.
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_k = tl.cdiv(K, BLOCK_K)
    tiles_in_group = GROUP_M * tiles_k
    first_m = (pid // tiles_in_group) * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)  # the last group may be shorter
    pid_m = first_m + (pid % tiles_in_group) % group_rows
    pid_k = (pid % tiles_in_group) // group_rows

    # Rows and columns past the edge wrap around (% M, % K): every load stays inside A and B,
    # and the wrapped rows and columns of the result are never stored.
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_k = (pid_k * BLOCK_K + tl.arange(0, BLOCK_K)) % K
    offs_n = tl.arange(0, BLOCK_N)
    a_ptrs = a_ptr + offs_m[:, None] * N + offs_n[None, :]
    bt_ptrs = bt_ptr + offs_k[:, None] * N + offs_n[None, :]

    acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    for n in range(0, tl.cdiv(N, BLOCK_N)):
        remaining = N - n * BLOCK_N  # the last step of the reduction is usually partial
        a = tl.load(a_ptrs, mask=offs_n[None, :] < remaining, other=0.0)
        bt = tl.load(bt_ptrs, mask=offs_n[None, :] < remaining, other=0.0)
        acc = tl.dot(a, tl.trans(bt), acc)  # TF32 tensor cores, float32 accumulation
        a_ptrs += BLOCK_N
        bt_ptrs += BLOCK_N

    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    c_ptrs = c_ptr + rows[:, None] * K + cols[None, :]
    tl.store(c_ptrs, acc, mask=(rows[:, None] < M) & (cols[None, :] < K))


def solve(a_ptr: int, b_ptr: int, c_ptr: int, M: int, N: int, K: int):
    # Hopper's TF32 tensor-core instructions read both operands from shared memory with the
    # reduction dimension contiguous. A already is; B runs the other way, so a first kernel writes
    # B transposed into scratch memory (one read and one write of B, a few percent of the time).
    bt = torch.empty(K * N, dtype=torch.float32, device=DEVICE)
    TILE = 64
    transpose_kernel[(triton.cdiv(N, TILE), triton.cdiv(K, TILE))](
        b_ptr, bt.data_ptr(), N, K, TILE=TILE
    )
    grid = lambda meta: (  # noqa: E731
        triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(K, meta["BLOCK_K"]),
    )
    matmul_kernel[grid](a_ptr, bt.data_ptr(), c_ptr, M, N, K)
