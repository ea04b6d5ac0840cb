"""GEMM in float16 the way Hopper likes it: tensor-memory-accelerator (TMA) loads and one
persistent program per SM.

Two changes over a tiled kernel with pointer arithmetic (autotuned.py):

- TMA: a tensor descriptor (`tl.make_tensor_descriptor`) tells the hardware the shape and the
  strides of a matrix once; each load then names only the corner of a tile, and the copy engine
  moves the whole tile into shared memory, edges padded with zeros, while the warps compute.
  No address is computed per element and no mask is needed.
- Persistence: at most as many programs as the GPU has SMs (the fewest that take as many waves
  of tiles), each walking the tiles of C with a stride of the program count, so no SM waits for
  a new program to be scheduled and the tiles still run in the grouped order that keeps A and B
  in L2.

TMA needs every row of a matrix to start on a 16-byte boundary: K and N multiples of 8 float16
values. Other sizes go to a plain tiled kernel.
"""

import os

import torch
import triton
import triton.language as tl

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRET else "cuda"


@triton.jit
def tile_of(tile, tiles_m, tiles_n, GROUP_M: tl.constexpr):
    """(row, column) of tile number `tile` of C in the grouped order: GROUP_M rows of tiles are
    swept column by column, so consecutive tiles share rows of A and columns of B in L2."""
    tiles_in_group = GROUP_M * tiles_n
    first_m = (tile // tiles_in_group) * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)  # the last group may be shorter
    pid_m = first_m + (tile % tiles_in_group) % group_rows
    pid_n = (tile % tiles_in_group) // group_rows
    return pid_m, pid_n


@triton.jit
def gemm_tma_kernel(
    a_ptr,  # address of A, M x K, row-major float16
    b_ptr,  # address of B, K x N, row-major float16
    c_ptr,  # address of C, M x N, row-major float16: read, then overwritten
    M,  # rows of A and of C
    N,  # columns of B and of C
    K,  # columns of A, rows of B: the length of the reduction
    alpha,  # scale of A @ B
    beta,  # scale of the old C
    programs,  # programs launched: each takes every programs-th tile
    BLOCK_M: tl.constexpr,  # rows of a tile of C
    BLOCK_N: tl.constexpr,  # columns of a tile of C
    BLOCK_K: tl.constexpr,  # step along the reduction
    GROUP_M: tl.constexpr,  # tile rows per group in the order of the tiles (L2 reuse)
    STAGES: tl.constexpr,  # tiles of A and B in flight in shared memory
):
    a_ptr = tl.multiple_of(a_ptr.to(tl.pointer_type(tl.float16)), 16)
    b_ptr = tl.multiple_of(b_ptr.to(tl.pointer_type(tl.float16)), 16)
    c_ptr = tl.multiple_of(c_ptr.to(tl.pointer_type(tl.float16)), 16)
    # The descriptors: each matrix's shape and strides, and the block one load or store moves.
    # Blocks that reach past the shape are padded with zeros on loads and clipped on stores.
    a_desc = tl.make_tensor_descriptor(
        a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K]
    )
    b_desc = tl.make_tensor_descriptor(
        b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N]
    )
    c_desc = tl.make_tensor_descriptor(
        c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N]
    )

    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    steps = tl.cdiv(K, BLOCK_K)
    for tile in tl.range(tl.program_id(axis=0), tiles_m * tiles_n, programs):
        pid_m, pid_n = tile_of(tile, tiles_m, tiles_n, GROUP_M)
        row = pid_m * BLOCK_M
        col = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in tl.range(steps, num_stages=STAGES):
            a = a_desc.load([row, k * BLOCK_K])
            b = b_desc.load([k * BLOCK_K, col])
            acc = tl.dot(a, b, acc)  # float16 tensor cores, float32 accumulation
        # Epilogue: this program owns the tile of C, so it reads the old values and overwrites.
        c_old = c_desc.load([row, col]).to(tl.float32)
        c_desc.store([row, col], (alpha * acc + beta * c_old).to(tl.float16))


@triton.jit
def gemm_tiled_kernel(
    a_ptr,  # address of A, M x K, row-major float16
    b_ptr,  # address of B, K x N, row-major float16
    c_ptr,  # address of C, M x N, row-major float16: read, then overwritten
    M,  # rows of A and of C
    N,  # columns of B and of C
    K,  # the length of the reduction
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
    pid_m, pid_n = tile_of(tl.program_id(axis=0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        a = tl.load(
            a_ptr + rows[:, None] * K + ks[None, :],
            mask=(rows[:, None] < M) & (ks[None, :] < K),
            other=0.0,
        )
        b = tl.load(
            b_ptr + ks[:, None] * N + cols[None, :],
            mask=(ks[:, None] < K) & (cols[None, :] < N),
            other=0.0,
        )
        acc = tl.dot(a, b, acc)
    c_ptrs = c_ptr + rows[:, None] * N + cols[None, :]
    c_mask = (rows[:, None] < M) & (cols[None, :] < N)
    c_old = tl.load(c_ptrs, mask=c_mask, other=0.0).to(tl.float32)
    tl.store(c_ptrs, (alpha * acc + beta * c_old).to(tl.float16), mask=c_mask)


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


def solve(a_ptr: int, b_ptr: int, c_ptr: int, M: int, N: int, K: int, alpha: float, beta: float):
    if K % 8 or N % 8:  # a row of A or of B (and C) would not start on a 16-byte boundary
        grid = (triton.cdiv(M, 64) * triton.cdiv(N, 64),)
        gemm_tiled_kernel[grid](
            a_ptr, b_ptr, c_ptr, M, N, K, alpha, beta, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8
        )
        return
    triton.set_allocator(scratch)
    # Shared memory per SM: 3 stages of a 128 x 64 tile of A and a 64 x 256 tile of B
    # (3 * (128*64 + 64*256) * 2 bytes = 144 KiB) and the 128 x 256 tile of C (64 KiB).
    BLOCK_M, BLOCK_N, BLOCK_K, STAGES = 128, 256, 64, 3
    tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)
    # Waves of tiles, not SMs, set the time: 512 tiles on 132 SMs take four waves either way,
    # but 128 programs of four tiles each leave four SMs idle from the start instead of
    # sixteen in the last wave, and were measured 1.5% faster (the reason is not measured).
    programs = triton.cdiv(tiles, triton.cdiv(tiles, sm_count()))
    gemm_tma_kernel[(programs,)](
        a_ptr,
        b_ptr,
        c_ptr,
        M,
        N,
        K,
        alpha,
        beta,
        programs,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        GROUP_M=8,
        STAGES=STAGES,
        num_warps=8,
        num_stages=STAGES,
    )
