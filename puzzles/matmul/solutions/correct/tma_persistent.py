"""Matrix multiplication on TF32 tensor cores with tensor-memory-accelerator (TMA) loads and one
persistent program per SM.

Over the tiled kernel of autotuned.py:

- TMA: a tensor descriptor (`tl.make_tensor_descriptor`) gives the hardware a matrix's shape and
  strides once; each load then names only a tile's corner, and the copy engine brings the whole
  tile into shared memory (zeros past the edges) while the warps compute. No per-element address,
  no mask.
- Persistence: at most one program per SM (the fewest that take as many waves of tiles), each
  taking every `programs`-th tile of C in the grouped order that keeps rows of A and columns of B
  in L2; no SM waits for a new program to be scheduled.
- A split epilogue: the 128 x 256 float32 tile of C is stored as two 128 x 128 halves, so the
  staging buffer of the store (64 KiB instead of 128) leaves room for three stages of A and B.

Hopper's TF32 instructions read both operands with the reduction contiguous, so B is first
copied transposed into scratch memory, as in autotuned.py. TMA needs every row to start on a
16-byte boundary: N and K multiples of 4 float32 values. Other sizes go to a plain tiled kernel.
"""

import os

import torch
import triton
import triton.language as tl

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRET else "cuda"


@triton.jit
def transpose_kernel(
    src_ptr,  # address of B, N x K, row-major
    dst_ptr,  # address of the scratch copy of B transposed, K x N, row-major
    N,  # rows of B
    K,  # columns of B
    TILE: tl.constexpr,  # each program moves one TILE x TILE square
):
    src_ptr = tl.multiple_of(src_ptr.to(tl.pointer_type(tl.float32)), 16)
    dst_ptr = tl.multiple_of(dst_ptr.to(tl.pointer_type(tl.float32)), 16)
    rows = tl.program_id(axis=0) * TILE + tl.arange(0, TILE)  # rows of B
    cols = tl.program_id(axis=1) * TILE + tl.arange(0, TILE)  # columns of B
    mask = (rows[:, None] < N) & (cols[None, :] < K)
    tile = tl.load(src_ptr + rows[:, None] * K + cols[None, :], mask=mask)
    tl.store(dst_ptr + cols[:, None] * N + rows[None, :], tl.trans(tile), mask=tl.trans(mask))


@triton.jit
def tile_of(tile, tiles_m, tiles_k, GROUP_M: tl.constexpr):
    """(row, column) of tile number `tile` of C in the grouped order: GROUP_M rows of tiles are
    swept column by column, so consecutive tiles share rows of A and columns of B in L2."""
    tiles_in_group = GROUP_M * tiles_k
    first_m = (tile // tiles_in_group) * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)  # the last group may be shorter
    pid_m = first_m + (tile % tiles_in_group) % group_rows
    pid_k = (tile % tiles_in_group) // group_rows
    return pid_m, pid_k


@triton.jit
def matmul_tma_kernel(
    a_ptr,  # address of A, M x N, row-major
    bt_ptr,  # address of B transposed, K x N, row-major: the reduction runs along its rows
    c_ptr,  # address of C, M x K, row-major
    M,  # rows of A and of C
    N,  # columns of A, rows of B: the length of the reduction
    K,  # columns of B and of C
    programs,  # programs launched: each takes every programs-th tile
    BLOCK_M: tl.constexpr,  # rows of a tile of C
    BLOCK_K: tl.constexpr,  # columns of a tile of C
    BLOCK_N: tl.constexpr,  # step along the reduction
    GROUP_M: tl.constexpr,  # tile rows per group in the order of the tiles (L2 reuse)
    STAGES: tl.constexpr,  # tiles of A and B in flight in shared memory
):
    a_ptr = tl.multiple_of(a_ptr.to(tl.pointer_type(tl.float32)), 16)
    bt_ptr = tl.multiple_of(bt_ptr.to(tl.pointer_type(tl.float32)), 16)
    c_ptr = tl.multiple_of(c_ptr.to(tl.pointer_type(tl.float32)), 16)
    a_desc = tl.make_tensor_descriptor(
        a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N]
    )
    bt_desc = tl.make_tensor_descriptor(
        bt_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N]
    )
    c_desc = tl.make_tensor_descriptor(  # half a tile of C per store
        c_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K // 2]
    )

    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_k = tl.cdiv(K, BLOCK_K)
    steps = tl.cdiv(N, BLOCK_N)
    for tile in tl.range(tl.program_id(axis=0), tiles_m * tiles_k, programs):
        pid_m, pid_k = tile_of(tile, tiles_m, tiles_k, GROUP_M)
        row = pid_m * BLOCK_M
        col = pid_k * BLOCK_K
        acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
        for n in tl.range(steps, num_stages=STAGES):
            a = a_desc.load([row, n * BLOCK_N])
            bt = bt_desc.load([col, n * BLOCK_N])
            acc = tl.dot(a, bt.T, acc)  # TF32 tensor cores, float32 accumulation
        # The two halves of the tile, columns [0, BLOCK_K/2) and [BLOCK_K/2, BLOCK_K).
        halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_K // 2)), (0, 2, 1))
        left, right = tl.split(halves)
        c_desc.store([row, col], left)
        c_desc.store([row, col + BLOCK_K // 2], right)


@triton.jit
def matmul_tiled_kernel(
    a_ptr,  # address of A, M x N, row-major
    b_ptr,  # address of B, N x K, row-major
    c_ptr,  # address of C, M x K, row-major
    M,  # rows of A and of C
    N,  # the length of the reduction
    K,  # columns of B and of C
    BLOCK_M: tl.constexpr,  # rows of the tile of C that one program computes
    BLOCK_K: tl.constexpr,  # columns of that tile
    BLOCK_N: tl.constexpr,  # step along the reduction
):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
    rows = tl.program_id(axis=0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(axis=1) * BLOCK_K + tl.arange(0, BLOCK_K)
    offs_n = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        ns = n0 + offs_n
        a = tl.load(
            a_ptr + rows[:, None] * N + ns[None, :],
            mask=(rows[:, None] < M) & (ns[None, :] < N),
            other=0.0,
        )
        b = tl.load(
            b_ptr + ns[:, None] * K + cols[None, :],
            mask=(ns[:, None] < N) & (cols[None, :] < K),
            other=0.0,
        )
        acc = tl.dot(a, b, acc)
    c_ptrs = c_ptr + rows[:, None] * K + cols[None, :]
    tl.store(c_ptrs, acc, mask=(rows[:, None] < M) & (cols[None, :] < K))


_SMS = {}  # SMs per device index, asked once


def sm_count() -> int:
    if INTERPRET:  # Triton's interpreter on the CPU: a few programs are enough
        return 4
    from triton.runtime import driver

    device = driver.active.get_current_device()
    if device not in _SMS:
        _SMS[device] = driver.active.utils.get_device_properties(device)["multiprocessor_count"]
    return _SMS[device]


def scratch(size: int, alignment: int, stream):
    """Global memory Triton asks for at launch: the descriptors made inside the kernel live
    there. Scratch only: torch.empty allocates and computes nothing."""
    return torch.empty(size, dtype=torch.int8, device=DEVICE)


def solve(a_ptr: int, b_ptr: int, c_ptr: int, M: int, N: int, K: int):
    if N % 4 or K % 4:  # a row of A, B or C would not start on a 16-byte boundary
        grid = (triton.cdiv(M, 64), triton.cdiv(K, 64))
        matmul_tiled_kernel[grid](a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M=64, BLOCK_K=64, BLOCK_N=32)
        return
    triton.set_allocator(scratch)
    bt = torch.empty(K * N, dtype=torch.float32, device=DEVICE)  # kept alive until solve returns
    TILE = 64
    transpose_kernel[(triton.cdiv(N, TILE), triton.cdiv(K, TILE))](
        b_ptr, bt.data_ptr(), N, K, TILE=TILE
    )
    # Shared memory per SM: 3 stages of a 128 x 32 tile of A and a 256 x 32 tile of B transposed
    # (3 * (128*32 + 256*32) * 4 bytes = 144 KiB) and half a 128 x 256 tile of C (64 KiB).
    BLOCK_M, BLOCK_K, BLOCK_N, STAGES = 128, 256, 32, 3
    tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(K, BLOCK_K)
    # Waves of tiles, not SMs, set the time: 1024 tiles on 132 SMs take eight waves either way,
    # but 128 programs of eight tiles each leave four SMs idle from the start instead of
    # 32 in the last wave, and were measured 1-2% faster (the reason is not measured).
    programs = triton.cdiv(tiles, triton.cdiv(tiles, sm_count()))
    matmul_tma_kernel[(programs,)](
        a_ptr,
        bt.data_ptr(),
        c_ptr,
        M,
        N,
        K,
        programs,
        BLOCK_M=BLOCK_M,
        BLOCK_K=BLOCK_K,
        BLOCK_N=BLOCK_N,
        GROUP_M=8,
        STAGES=STAGES,
        num_warps=8,
        num_stages=STAGES,
    )
