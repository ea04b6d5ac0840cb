"""Matrix multiplication on TF32 tensor cores, swap_in_registers.py's kernel run by clusters of two
programs that share A's tiles: one TMA copy brings each tile of A into both programs' shared
memory (multicast). cuBLAS's kernel for this product runs its programs in pairs too (a grid of
66 x 2) and reads 15% less from L2 than swap_in_registers.py.

swap_in_registers.py computes C's transpose, C^T = B^T A^T: a program's tile of C is 256 rows x
128 columns; B's tile (32 steps of the reduction x 128 columns) is read transposed from shared
memory into registers, A's tile (256 rows x 32 steps) is read by wgmma from shared memory. Each
stage brings 32 KiB of A and 16 KiB of B from L2 into an SM. At a locked clock that kernel takes
as many cycles as cuBLAS's, but Nsight Compute counts 18% more L2 traffic in it, and
free-running, at the GPU's power limit, it ran 2% behind. Here two programs launched together as
a cluster (`num_ctas=2`) take neighbouring tiles of the same 256 rows:

- the cluster covers 256 rows x 256 columns of C, each program its own 128 columns, so the two
  programs need the same tile of A at every step and their own tiles of B;
- the first program's producer warp copies A's tile with `multicast=True`: the copy lands in both
  programs' shared memory and signals both programs' `ready` barriers, which expect A's bytes and
  their own B's; each producer copies its own B;
- a stage may be refilled with A only when all four consumer warp groups of the cluster are
  through with it: each frees it on its own program's `empty` barrier (its B may be refilled) and
  on the cluster's `empty_pair` barrier (A may be refilled), which lives on the first program and
  is the one its producer waits for before the multicast.

Each program reads 32 KiB a stage from L2 instead of 48 (its B and half of A). A cluster's shape
is a layout's `cga_layout`: how the programs of a cluster split a tensor (B's and C's tiles along
their columns, the accumulator along its rows) or hold it alike (A's tile).

Everything else is swap_in_registers.py's: a producer warp and two consumer warp groups a program
(`gl.warp_specialize`), four stages, m64n256k8 steps, each stage's four k8 products issued back
to back and waited for at once while the next stage's fragments are read (so that ptxas, which
compiles the kernel for 168 registers a thread, serialises none of them), B's columns renumbered
inside each group of 32 (bits 2 and 4 swapped) under the 128-byte swizzle, and C leaving in eight
64 x 32 pieces a warp group through two staging buffers in turn.

Multicast copies came with Triton 3.9. Under an older Triton, and where K is not a multiple of
128 (the cluster's tiles of B and C are views of 128 columns), the same kernel runs one program a
cluster: it is then swap_in_registers.py, with B's tile copied as two halves of 64 columns, one
for each warp group.

Judged (`python -m judge run matmul FILE --json --no-save`, two rounds alternated with
swap_in_registers.py) on an H200 with Triton 3.9.0: 1010.1 and 1005.6 us, 1.010x and 1.014x the
library timed in the same loop, against 0.998x and 1.005x for swap_in_registers.py. Raced
against cuBLAS TF32 by `tests/benchmarks/library_race.py`: 1006.0 us against 1006.2 (1.00x),
swap_in_registers.py 1018.4 us (0.99x).

Triton's interpreter cannot run Gluon, and TMA needs every row to start on a 16-byte boundary
(N and K multiples of 4): on the CPU, and for such sizes, solve() runs a plain tiled kernel.
"""

import inspect
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
# The TMA copies: async_load and async_store in newer Triton (3.9), the older names in 3.6.
tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global
MULTICAST = "multicast" in inspect.signature(tma_load).parameters
# Barriers shared by a cluster's programs (Triton 3.9); absent, and not used, in 3.6.
allocate_mbarrier = getattr(mbarrier, "allocate_mbarrier", None)
BM, BN = 256, 32  # a program's tile of C has BM rows (and 128 columns); BN steps of the reduction
STAGES = 4
GROUP_M = 8


@gluon.jit
def tile_of(tile, tiles_m, tiles_k, GROUP_M: gl.constexpr):
    """(row, column) of tile number `tile` of C in the grouped order: GROUP_M rows of tiles are
    swept column by column, so consecutive tiles share rows of A and columns of B in L2."""
    tiles_in_group = GROUP_M * tiles_k
    first_m = (tile // tiles_in_group) * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (tile % tiles_in_group) % group_rows
    pid_k = (tile % tiles_in_group) // group_rows
    return pid_m, pid_k


@gluon.jit
def swap_cols(view, CTAS: gl.constexpr):
    """[R, (CTAS,) 64 columns] -> [CTAS * 64, R], transposed, with bits 2 and 4 of the column
    swapped: a warp group's 64 columns of B or C in each program of the cluster."""
    R: gl.constexpr = view.shape[0]
    v = view.reshape([R, CTAS, 2, 2, 2, 2, 4])
    v = v.permute((1, 2, 5, 4, 3, 6, 0))
    return v.reshape([CTAS * 64, R])


@gluon.jit
def producer(
    a_desc,
    b_desc,
    a_bufs,
    b_bufs,
    ready,
    empty,
    empty_pair,
    M,
    N,
    K,
    programs,
    CTAS: gl.constexpr,
    BM: gl.constexpr,
    BN: gl.constexpr,
    GROUP_M: gl.constexpr,
    STAGES: gl.constexpr,
):
    """One warp: for every step of this cluster's tiles, A's tile (multicast by the first
    program) and this program's tile of B as two halves, one for each consumer warp group."""
    tiles_m = gl.cdiv(M, BM)
    tiles_k = gl.cdiv(K, 128 * CTAS)
    steps = gl.cdiv(N, BN)
    p = 0
    for tile in range(gl.program_id(0), tiles_m * tiles_k, programs):
        pid_m, pid_k = tile_of(tile, tiles_m, tiles_k, GROUP_M)
        for n in range(steps):
            s = p % STAGES
            phase = ((p // STAGES) & 1) ^ 1
            mbarrier.wait(empty.index(s), phase)
            bar = ready.index(s)
            if CTAS == 1:
                mbarrier.expect(bar, a_desc.block_type.nbytes + 2 * b_desc.block_type.nbytes)
                tma_load(a_desc, [pid_m * BM, n * BN], bar, a_bufs.index(s))
                for w in gl.static_range(2):
                    tma_load(
                        b_desc, [n * BN, pid_k * 128 + 64 * w], bar, b_bufs.index(w * STAGES + s)
                    )
            else:
                mbarrier.wait(empty_pair.index(s), phase)  # waited for on the first program only
                mbarrier.expect(bar, a_desc.nbytes_per_cta + 2 * b_desc.nbytes_per_cta)
                tma_load(a_desc, [pid_m * BM, n * BN], bar, a_bufs.index(s), multicast=True)
                for w in gl.static_range(2):
                    tma_load(b_desc, [n * BN, 2 * pid_k, w, 0], bar, b_bufs.index(w * STAGES + s))
            p += 1


@gluon.jit
def fragments(
    used,
    ready,
    b_bufs,
    W: gl.constexpr,
    CTAS: gl.constexpr,
    STAGES: gl.constexpr,
    OP_LAYOUT: gl.constexpr,
):
    """This warp group's 64 columns of step `used`'s tile of B, transposed into registers."""
    s = used % STAGES
    mbarrier.wait(ready.index(s), (used // STAGES) & 1)
    return swap_cols(b_bufs.index(W * STAGES + s), CTAS).load(OP_LAYOUT)


@gluon.jit
def release(used, empty, empty_pair, CTAS: gl.constexpr, STAGES: gl.constexpr):
    """This warp group is through with step `used`'s stage: its B, and in a cluster its A."""
    mbarrier.arrive(empty.index(used % STAGES))
    if CTAS == 2:
        mbarrier.arrive(empty_pair.index(used % STAGES))


@gluon.jit
def store_piece(
    c_desc, c_smem, piece, row, pid_k, W: gl.constexpr, B: gl.constexpr, CTAS: gl.constexpr
):
    """A CTAS * 64 x 32 piece of C^T through staging buffer B of this warp group into C."""
    buf = c_smem.index(2 * W + B)
    tma.store_wait(1)  # the store that last read this buffer is through with it
    swap_cols(buf, CTAS).store(piece)
    fence_async_shared()
    if CTAS == 1:
        tma_store(c_desc, [row, pid_k * 128 + 64 * W], buf)
    else:
        tma_store(c_desc, [row, 2 * pid_k, 64 * W], buf)


@gluon.jit
def consumer(
    c_desc,
    a_bufs,
    b_bufs,
    c_smem,
    ready,
    empty,
    empty_pair,
    M,
    N,
    K,
    programs,
    W: gl.constexpr,
    CTAS: gl.constexpr,
    BM: gl.constexpr,
    BN: gl.constexpr,
    GROUP_M: gl.constexpr,
    STAGES: gl.constexpr,
    ACC_LAYOUT: gl.constexpr,
    OP_LAYOUT: gl.constexpr,
):
    """One warp group: columns 64 W to 64 W + 63 of each of this program's tiles of C."""
    tiles_m = gl.cdiv(M, BM)
    tiles_k = gl.cdiv(K, 128 * CTAS)
    steps = gl.cdiv(N, BN)
    used = 0
    for tile in range(gl.program_id(0), tiles_m * tiles_k, programs):
        pid_m, pid_k = tile_of(tile, tiles_m, tiles_k, GROUP_M)
        row = pid_m * BM
        # 64 columns of C^T a program of the cluster
        acc = gl.zeros((CTAS * 64, BM), dtype=gl.float32, layout=ACC_LAYOUT)
        # Two register sets of fragments, two steps an iteration: a step's four k8 products
        # go out back to back, the next step's fragments are read while they run, then they
        # are waited for (and the stage freed) before the next step's products go out.
        frag_a = fragments(used, ready, b_bufs, W, CTAS, STAGES, OP_LAYOUT)
        for n in range(0, steps - 1, 2):
            a_tile = a_bufs.index(used % STAGES).permute((1, 0))
            acc = warpgroup_mma(frag_a, a_tile, acc, is_async=True)
            frag_b = fragments(used + 1, ready, b_bufs, W, CTAS, STAGES, OP_LAYOUT)
            acc = warpgroup_mma_wait(0, deps=(acc,))
            release(used, empty, empty_pair, CTAS, STAGES)
            a_tile = a_bufs.index((used + 1) % STAGES).permute((1, 0))
            acc = warpgroup_mma(frag_b, a_tile, acc, is_async=True)
            if n + 2 < steps:
                frag_a = fragments(used + 2, ready, b_bufs, W, CTAS, STAGES, OP_LAYOUT)
            acc = warpgroup_mma_wait(0, deps=(acc,))
            release(used + 1, empty, empty_pair, CTAS, STAGES)
            used += 2
        if steps % 2 == 1:
            a_tile = a_bufs.index(used % STAGES).permute((1, 0))
            acc = warpgroup_mma(frag_a, a_tile, acc, is_async=True)
            acc = warpgroup_mma_wait(0, deps=(acc,))
            release(used, empty, empty_pair, CTAS, STAGES)
            used += 1
        # C^T's rows by 256 in eight pieces of 32 rows of C, through two staging buffers in turn
        R: gl.constexpr = CTAS * 64
        h0, h1 = gl.split(gl.permute(gl.reshape(acc, (R, 2, BM // 2)), (0, 2, 1)))
        q0, q1 = gl.split(gl.permute(gl.reshape(h0, (R, 2, BM // 4)), (0, 2, 1)))
        q2, q3 = gl.split(gl.permute(gl.reshape(h1, (R, 2, BM // 4)), (0, 2, 1)))
        e0, e1 = gl.split(gl.permute(gl.reshape(q0, (R, 2, BM // 8)), (0, 2, 1)))
        e2, e3 = gl.split(gl.permute(gl.reshape(q1, (R, 2, BM // 8)), (0, 2, 1)))
        e4, e5 = gl.split(gl.permute(gl.reshape(q2, (R, 2, BM // 8)), (0, 2, 1)))
        e6, e7 = gl.split(gl.permute(gl.reshape(q3, (R, 2, BM // 8)), (0, 2, 1)))
        store_piece(c_desc, c_smem, e0, row, pid_k, W, 0, CTAS)
        store_piece(c_desc, c_smem, e1, row + BM // 8, pid_k, W, 1, CTAS)
        store_piece(c_desc, c_smem, e2, row + 2 * BM // 8, pid_k, W, 0, CTAS)
        store_piece(c_desc, c_smem, e3, row + 3 * BM // 8, pid_k, W, 1, CTAS)
        store_piece(c_desc, c_smem, e4, row + 4 * BM // 8, pid_k, W, 0, CTAS)
        store_piece(c_desc, c_smem, e5, row + 5 * BM // 8, pid_k, W, 1, CTAS)
        store_piece(c_desc, c_smem, e6, row + 6 * BM // 8, pid_k, W, 0, CTAS)
        store_piece(c_desc, c_smem, e7, row + 7 * BM // 8, pid_k, W, 1, CTAS)
    tma.store_wait(0)


@gluon.jit
def matmul_pairs_kernel(
    a_desc,
    b_desc,
    c_desc,
    M,
    N,
    K,
    programs,
    CTAS: gl.constexpr,
    BM: gl.constexpr,
    BN: gl.constexpr,
    GROUP_M: gl.constexpr,
    STAGES: gl.constexpr,
    C_SMEM: gl.constexpr,
    ACC_LAYOUT: gl.constexpr,
    OP_LAYOUT: gl.constexpr,
):
    a_bufs = gl.allocate_shared_memory(gl.float32, [STAGES, BM, BN], a_desc.layout)
    if CTAS == 1:
        b_bufs = gl.allocate_shared_memory(gl.float32, [2 * STAGES, BN, 64], b_desc.layout)
        c_smem = gl.allocate_shared_memory(gl.float32, [4, 32, 64], C_SMEM)
        ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        empty_pair = empty  # not used: no cluster
    else:
        b_bufs = gl.allocate_shared_memory(gl.float32, [2 * STAGES, BN, 2, 1, 64], b_desc.layout)
        c_smem = gl.allocate_shared_memory(gl.float32, [4, 32, 2, 64], C_SMEM)
        ready = allocate_mbarrier(batch=STAGES)
        empty = allocate_mbarrier(batch=STAGES)
        empty_pair = allocate_mbarrier(batch=STAGES, two_ctas=True)
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=2)  # one arrive from each consumer warp group
        if CTAS == 2:
            mbarrier.init(empty_pair.index(i), count=2)  # from each of the cluster's too
    # fmt: off
    gl.warp_specialize(
        [
            (consumer, (c_desc, a_bufs, b_bufs, c_smem, ready, empty, empty_pair, M, N, K,
                        programs, 0, CTAS, BM, BN, GROUP_M, STAGES, ACC_LAYOUT, OP_LAYOUT)),
            (consumer, (c_desc, a_bufs, b_bufs, c_smem, ready, empty, empty_pair, M, N, K,
                        programs, 1, CTAS, BM, BN, GROUP_M, STAGES, ACC_LAYOUT, OP_LAYOUT)),
            (producer, (a_desc, b_desc, a_bufs, b_bufs, ready, empty, empty_pair, M, N, K,
                        programs, CTAS, BM, BN, GROUP_M, STAGES)),
        ],
        [4, 1],
        [232, 24],  # registers a thread: the consumers', the producer's
    )
    # fmt: on


@triton.jit
def matmul_tiled_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_K: tl.constexpr,
    BLOCK_N: tl.constexpr,
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
    tl.store(
        c_ptr + rows[:, None] * K + cols[None, :],
        acc,
        mask=(rows[:, None] < M) & (cols[None, :] < K),
    )


class _Float32:
    """A device address with a dtype: what Gluon's TensorDescriptor reads of a tensor."""

    def __init__(self, address: int):
        self.address, self.dtype = address, torch.float32

    def data_ptr(self) -> int:
        return self.address


_SMS = {}  # SMs per device index, asked once


def sm_count() -> int:
    from triton.runtime import driver

    device = driver.active.get_current_device()
    if device not in _SMS:
        _SMS[device] = driver.active.utils.get_device_properties(device)["multiprocessor_count"]
    return _SMS[device]


def descriptors(a_ptr: int, b_ptr: int, c_ptr: int, M: int, N: int, K: int, ctas: int):
    """A's, B's and C's tensor descriptors, and C's staging layout, for clusters of `ctas`."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    def shared(rank, cga=None):  # cga: how a cluster's programs split the tile (None: alike)
        if ctas == 1:
            return gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=32, rank=rank)
        return gl.NVMMASharedLayout(
            swizzle_byte_width=128, element_bitwidth=32, rank=rank, cga_layout=[cga or [0] * rank]
        )

    a_desc = TensorDescriptor(_Float32(a_ptr), [M, N], [N, 1], [BM, BN], shared(2))
    if ctas == 1:
        b_desc = TensorDescriptor(_Float32(b_ptr), [N, K], [K, 1], [BN, 64], shared(2))
        c_desc = TensorDescriptor(_Float32(c_ptr), [M, K], [K, 1], [32, 64], shared(2))
        return a_desc, b_desc, c_desc, shared(2)
    # a cluster's 256 columns as [K // 128, 2, 64]: a program's 128, a warp group's 64
    b_split, c_split = [0, 1, 0, 0], [0, 1, 0]
    b_desc = TensorDescriptor(
        _Float32(b_ptr), [N, K // 128, 2, 64], [K, 128, 64, 1], [BN, 2, 1, 64], shared(4, b_split)
    )
    c_desc = TensorDescriptor(
        _Float32(c_ptr), [M, K // 128, 128], [K, 128, 1], [32, 2, 64], shared(3, c_split)
    )
    return a_desc, b_desc, c_desc, shared(3, c_split)


def solve(a_ptr: int, b_ptr: int, c_ptr: int, M: int, N: int, K: int):
    if INTERPRET or N % 4 or K % 4:  # no Gluon in the interpreter; rows off 16-byte bounds
        grid = (triton.cdiv(M, 64), triton.cdiv(K, 64))
        matmul_tiled_kernel[grid](a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M=64, BLOCK_K=64, BLOCK_N=32)
        return
    ctas = 2 if MULTICAST and K % 128 == 0 else 1
    a_desc, b_desc, c_desc, c_smem = descriptors(a_ptr, b_ptr, c_ptr, M, N, K, ctas)
    tiles = triton.cdiv(M, BM) * triton.cdiv(K, 128 * ctas)
    clusters = sm_count() // ctas
    programs = triton.cdiv(tiles, triton.cdiv(tiles, clusters))
    # a warp group: 64 rows of C^T (columns of C) a program by 256 columns (rows of C), m64n256k8
    cga = {} if ctas == 1 else {"cga_layout": [[1, 0]]}  # the programs split C^T's rows
    acc_layout = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BM, 8], **cga
    )
    matmul_pairs_kernel[(programs,)](
        a_desc,
        b_desc,
        c_desc,
        M,
        N,
        K,
        programs,
        CTAS=ctas,
        BM=BM,
        BN=BN,
        GROUP_M=GROUP_M,
        STAGES=STAGES,
        C_SMEM=c_smem,
        ACC_LAYOUT=acc_layout,
        OP_LAYOUT=gl.DotOperandLayout(operand_index=0, parent=acc_layout, k_width=1),
        num_warps=4,
        num_ctas=ctas,
    )
