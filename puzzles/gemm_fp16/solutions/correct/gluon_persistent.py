"""GEMM in float16 written in Gluon, Triton's lower-level language, so that the old C is read
while the tensor cores work instead of after them.

tma_persistent.py (the step before this one) already has the right shape: one persistent program
per SM, 128 x 256 tiles of C, A and B brought into shared memory by TMA. What costs it about 4%
against cuBLAS is the old C. Triton loads a tensor descriptor's block where the program names it
and waits for it there, so every program reads its 64 KiB of C after its last product, and since
the programs of a wave finish together, they all ask memory for C at the same moment.

Gluon says explicitly what `tl.dot` and a descriptor load leave to the compiler:

- shared memory is allocated by the kernel (`gl.allocate_shared_memory`): STAGES buffers of A
  and B, and one tile of C;
- a TMA copy (`tma_load`) only starts the transfer; it signals an mbarrier when its bytes have
  landed, and whoever needs them waits on that barrier (`mbarrier.wait`);
- `warpgroup_mma` starts the Hopper tensor-core product (wgmma) of two shared-memory tiles and
  `warpgroup_mma_wait(n)` waits until at most n of them are still running.

So the old C is fetched into shared memory at a step of the K loop that differs from program to
program (the program's number modulo the steps): the fetch overlaps the products, and the
programs spread their reads of C over the whole tile instead of all reading at once. The result
is written into the same shared tile and stored by TMA, which runs on while the next tile
starts; the next tile's first loads go out before this tile's epilogue.

Triton's interpreter cannot run Gluon, and TMA needs every row to start on a 16-byte boundary
(K and N multiples of 8): on the CPU, and for such sizes, solve() runs a plain tiled kernel.
"""

import os

import torch
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRET else "cuda"
# The TMA copies: async_load and async_store in newer Triton (3.9), the older names in 3.6.
tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global


@gluon.jit
def tile_of(tile, tiles_m, tiles_n, GROUP_M: gl.constexpr):
    """(row, column) of tile number `tile` of C in the grouped order: GROUP_M rows of tiles are
    swept column by column, so consecutive tiles share rows of A and columns of B in L2."""
    tiles_in_group = GROUP_M * tiles_n
    first_m = (tile // tiles_in_group) * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)  # the last group may be shorter
    pid_m = first_m + (tile % tiles_in_group) % group_rows
    pid_n = (tile % tiles_in_group) // group_rows
    return pid_m, pid_n


@gluon.jit
def load_step(count, a_desc, b_desc, row, col, k, ready, a_bufs, b_bufs, STAGES: gl.constexpr):
    """Start the TMA copies of one step's tiles of A and B into buffer `count % STAGES`; its
    barrier completes when both have landed. Returns the count of steps loaded."""
    index = count % STAGES
    bar = ready.index(index)
    mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
    tma_load(a_desc, [row, k], bar, a_bufs.index(index))
    tma_load(b_desc, [k, col], bar, b_bufs.index(index))
    return count + 1


@gluon.jit
def gemm_gluon_kernel(
    a_ptr,  # address of A, M x K, row-major float16
    b_ptr,  # address of B, K x N, row-major float16
    c_ptr,  # address of C, M x N, row-major float16: read, then overwritten
    M,  # rows of A and of C
    N,  # columns of B and of C
    K,  # columns of A, rows of B: the length of the reduction
    alpha,  # scale of A @ B
    beta,  # scale of the old C
    programs,  # programs launched: each takes every programs-th tile
    BLOCK_M: gl.constexpr,  # rows of a tile of C
    BLOCK_N: gl.constexpr,  # columns of a tile of C
    BLOCK_K: gl.constexpr,  # step along the reduction
    GROUP_M: gl.constexpr,  # tile rows per group in the order of the tiles (L2 reuse)
    STAGES: gl.constexpr,  # steps of A and B in flight in shared memory
    A_LAYOUT: gl.constexpr,  # shared-memory layouts (swizzled, as wgmma reads them)
    B_LAYOUT: gl.constexpr,
    C_LAYOUT: gl.constexpr,
    ACC_LAYOUT: gl.constexpr,  # the accumulator's layout in registers, as wgmma writes it
):
    a_ptr = gl.multiple_of(a_ptr.to(gl.pointer_type(gl.float16)), 16)
    b_ptr = gl.multiple_of(b_ptr.to(gl.pointer_type(gl.float16)), 16)
    c_ptr = gl.multiple_of(c_ptr.to(gl.pointer_type(gl.float16)), 16)
    # Blocks that reach past the shape are padded with zeros on loads and clipped on stores.
    a_desc = tma.make_tensor_descriptor(
        a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K], layout=A_LAYOUT
    )
    b_desc = tma.make_tensor_descriptor(
        b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N], layout=B_LAYOUT
    )
    c_desc = tma.make_tensor_descriptor(
        c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N], layout=C_LAYOUT
    )
    # Shared memory: 3 * (128*64 + 64*256) * 2 bytes = 144 KiB of A and B, 64 KiB of C.
    a_bufs = gl.allocate_shared_memory(gl.float16, [STAGES, BLOCK_M, BLOCK_K], A_LAYOUT)
    b_bufs = gl.allocate_shared_memory(gl.float16, [STAGES, BLOCK_K, BLOCK_N], B_LAYOUT)
    c_smem = gl.allocate_shared_memory(gl.float16, [BLOCK_M, BLOCK_N], C_LAYOUT)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    c_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
    mbarrier.init(c_ready, count=1)

    tiles_m = gl.cdiv(M, BLOCK_M)
    tiles_n = gl.cdiv(N, BLOCK_N)
    tiles = tiles_m * tiles_n
    steps = gl.cdiv(K, BLOCK_K)
    first = gl.program_id(0)
    c_step = first % gl.maximum(steps - 4, 1)  # the step at which this program fetches C
    loaded = 0  # steps whose loads went out, over all of this program's tiles
    used = 0  # steps multiplied
    c_phase = 0  # c_ready completes once a tile

    pid_m, pid_n = tile_of(first, tiles_m, tiles_n, GROUP_M)
    for s in gl.static_range(STAGES - 1):  # the first tile's first steps
        if s < steps:
            loaded = load_step(
                loaded,
                a_desc,
                b_desc,
                pid_m * BLOCK_M,
                pid_n * BLOCK_N,
                s * BLOCK_K,
                ready,
                a_bufs,
                b_bufs,
                STAGES,
            )
    for tile in range(first, tiles, programs):
        pid_m, pid_n = tile_of(tile, tiles_m, tiles_n, GROUP_M)
        row = pid_m * BLOCK_M
        col = pid_n * BLOCK_N
        acc = gl.zeros((BLOCK_M, BLOCK_N), dtype=gl.float32, layout=ACC_LAYOUT)
        for k in range(steps):
            index = used % STAGES
            mbarrier.wait(ready.index(index), (used // STAGES) & 1)  # phase: 0, 1, 0, ...
            acc = warpgroup_mma(a_bufs.index(index), b_bufs.index(index), acc, is_async=True)
            # One product stays in flight: the one before it is done, so its buffers are free.
            acc = warpgroup_mma_wait(1, deps=(acc,))
            used += 1
            if k == c_step:
                tma.store_wait(0)  # the last tile's store has read c_smem
                mbarrier.expect(c_ready, BLOCK_M * BLOCK_N * 2)
                tma_load(c_desc, [row, col], c_ready, c_smem)
            if k + STAGES - 1 < steps:  # refill the freed buffers
                loaded = load_step(
                    loaded,
                    a_desc,
                    b_desc,
                    row,
                    col,
                    (k + STAGES - 1) * BLOCK_K,
                    ready,
                    a_bufs,
                    b_bufs,
                    STAGES,
                )
        acc = warpgroup_mma_wait(0, deps=(acc,))
        following = tile + programs
        if following < tiles:  # the next tile's first steps, before this tile's epilogue
            next_m, next_n = tile_of(following, tiles_m, tiles_n, GROUP_M)
            for s in gl.static_range(STAGES - 1):
                if s < steps:
                    loaded = load_step(
                        loaded,
                        a_desc,
                        b_desc,
                        next_m * BLOCK_M,
                        next_n * BLOCK_N,
                        s * BLOCK_K,
                        ready,
                        a_bufs,
                        b_bufs,
                        STAGES,
                    )
        # Epilogue: this program owns the tile of C; the old values wait in shared memory.
        mbarrier.wait(c_ready, c_phase)
        c_phase ^= 1
        c_old = c_smem.load(ACC_LAYOUT).to(gl.float32)
        c_smem.store((alpha * acc + beta * c_old).to(gl.float16))
        fence_async_shared()  # the writes above, before the TMA engine reads them
        tma_store(c_desc, [row, col], c_smem)
    tma.store_wait(0)


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
):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float16))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float16))
    c_ptr = c_ptr.to(tl.pointer_type(tl.float16))
    rows = tl.program_id(axis=0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(axis=1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        a_mask = (rows[:, None] < M) & (ks[None, :] < K)
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=a_mask, other=0.0)
        b_mask = (ks[:, None] < K) & (cols[None, :] < N)
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=b_mask, other=0.0)
        acc = tl.dot(a, b, acc)
    c_ptrs = c_ptr + rows[:, None] * N + cols[None, :]
    c_mask = (rows[:, None] < M) & (cols[None, :] < N)
    c_old = tl.load(c_ptrs, mask=c_mask, other=0.0).to(tl.float32)
    tl.store(c_ptrs, (alpha * acc + beta * c_old).to(tl.float16), mask=c_mask)


_SMS = {}  # SMs per device index, asked once


def sm_count() -> int:
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
    if INTERPRET or K % 8 or N % 8:
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
        gemm_tiled_kernel[grid](
            a_ptr, b_ptr, c_ptr, M, N, K, alpha, beta, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32
        )
        return
    triton.set_allocator(scratch)
    BLOCK_M, BLOCK_N, BLOCK_K, STAGES, WARPS = 128, 256, 64, 3, 8
    swizzled = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)
    # Waves of tiles, not SMs, set the time: 512 tiles on 132 SMs take four waves either way,
    # but 128 programs of four tiles each leave four SMs idle from the start instead of
    # sixteen in the last wave, and were measured 1.5% faster (the reason is not measured).
    programs = triton.cdiv(tiles, triton.cdiv(tiles, sm_count()))
    gemm_gluon_kernel[(programs,)](
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
        A_LAYOUT=swizzled,  # rows of 64 float16 values: 128 bytes, the widest swizzle
        B_LAYOUT=swizzled,
        C_LAYOUT=swizzled,
        # Two warp groups (8 warps) stacked along M, each running 64 x 256 x 16 wgmma steps.
        ACC_LAYOUT=gl.NVMMADistributedLayout(
            version=[3, 0], warps_per_cta=[WARPS, 1], instr_shape=[16, BLOCK_N, 16]
        ),
        num_warps=WARPS,
    )
