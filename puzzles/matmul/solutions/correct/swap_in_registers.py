"""Matrix multiplication on TF32 tensor cores with no copy of B: Gluon computes C's transpose,
C^T = B^T A^T, and reads B's tiles transposed from shared memory into registers.

Hopper's TF32 instructions (wgmma) read a shared-memory operand only with the reduction
contiguous. A lies that way; B lies with the reduction across its rows, which is why
tma_persistent.py copies B transposed first and copy_beside.py (the step before this one) runs
that copy beside the product: the copy cost copy_beside.py about 5% of cuBLAS's time. But wgmma's
left operand may come from registers, and registers can be filled in any order. So:

- A tile of C is 256 rows x 128 columns, and its transpose (128 x 256) is wgmma's product. B's
  tile (32 rows of the reduction x 128 columns of C), TMA-loaded as it lies, is read transposed
  into registers as the left operand; A's tile (256 x 32) is the right operand, which wgmma reads
  from shared memory.
- Three partitions a program (`gl.warp_specialize`): a producer warp issues the TMA copies into
  four stages of 48 KiB; two consumer warp groups each own 64 of the tile's 128 columns of C
  (m64n256k8 steps, 128 accumulator registers a thread) and free a stage by an arrive of their
  own on its `empty` barrier (count 2), so neither waits for the other. Persistent programs, one
  an SM at most, go through the tiles in groups of 8 tile rows.
- B's columns are renumbered inside each group of 32 (bits 2 and 4 swapped), for the reads of B
  and the stores of C alike, so that under the 128-byte swizzle the four rows of B that a warp
  reads at once fall in four different bank groups.
- C leaves in eight 64 x 32 pieces of C^T per warp group, through two staging buffers in turn:
  each piece is written while the TMA store of the one before runs.

How the products are issued decides the speed. A warp-specialised kernel of 9 warps is launched
as 12 (three warp groups, for the register reallocation of `setmaxnreg`), so ptxas compiles it for
65536 / 384 = 168 registers a thread, whatever each partition is given later. With one product in
flight while the next is issued (`warpgroup_mma_wait(1)`) and two register sets of fragments,
ptxas finds too few registers for its wgmma pipeline and serialises every k8 instruction ("wgmma.
mma_async instructions are serialized due to insufficient register resources"): the first Gluon
draft of this design ran at 0.91x cuBLAS that way. Here each warp group issues a stage's four k8
products back to back and waits for all of them (`warpgroup_mma_wait(0)`), while the other warp
group's products keep the tensor cores busy; the next stage's fragments are read into a second
register set while the products run, so that the next products go out as soon as these are done.
Reading them into the same registers instead computes wrong products: a running product would
read fragments already overwritten.

Judged (`python -m judge run matmul FILE --json --no-save`, two rounds alternated with
copy_beside.py) on an H100: 1050.6 and 1052.6 us, 0.993x and 0.991x the library timed in the same
loop, against 0.958x and 0.955x for copy_beside.py; on an H200: 1042.2 and 1043.5 us, 1.030x and
1.017x, against 0.979x and 0.994x. Raced against cuBLAS TF32 by `tests/benchmarks/
library_race.py`: 1040.1 us against 1023.1 on the H100 (0.983x), 1035.8 against 1015.5 on the
H200 (0.98x).

Triton's interpreter cannot run Gluon, and TMA needs every row to start on a 16-byte boundary
(N and K multiples of 4): on the CPU, and for such sizes, solve() runs a plain tiled kernel.
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
# The TMA copies: async_load and async_store in newer Triton (3.9), the older names in 3.6.
tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global
BM, BK, BN = 256, 128, 32  # a tile of C: BM rows x BK columns; BN steps of the reduction a stage
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
def swap_cols(view, ROWS: gl.constexpr, COLS: gl.constexpr):
    """[ROWS, COLS] -> [COLS, ROWS], transposed, with bits 2 and 4 of the column swapped."""
    v = view.reshape([ROWS, COLS // 32, 2, 2, 2, 4])
    v = v.permute((1, 4, 3, 2, 5, 0))
    return v.reshape([COLS, ROWS])


@gluon.jit
def producer(
    a_desc,
    b_desc,
    a_bufs,
    b_bufs,
    ready,
    empty,
    M,
    N,
    K,
    programs,
    BM: gl.constexpr,
    BK: gl.constexpr,
    BN: gl.constexpr,
    GROUP_M: gl.constexpr,
    STAGES: gl.constexpr,
):
    """One warp: the TMA copies of A's and B's tiles for every step of this program's tiles, each
    into the next stage once both consumers have freed it."""
    tiles_m = gl.cdiv(M, BM)
    tiles_k = gl.cdiv(K, BK)
    steps = gl.cdiv(N, BN)
    p = 0
    for tile in range(gl.program_id(0), tiles_m * tiles_k, programs):
        pid_m, pid_k = tile_of(tile, tiles_m, tiles_k, GROUP_M)
        for n in range(steps):
            s = p % STAGES
            mbarrier.wait(empty.index(s), ((p // STAGES) & 1) ^ 1)
            bar = ready.index(s)
            mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
            tma_load(a_desc, [pid_m * BM, n * BN], bar, a_bufs.index(s))
            tma_load(b_desc, [n * BN, pid_k * BK], bar, b_bufs.index(s))
            p += 1


@gluon.jit
def store_piece(c_desc, c_smem, piece, row, col, W: gl.constexpr, B: gl.constexpr):
    """A 64 x 32 piece of C^T through staging buffer B of this warp group into C."""
    buf = c_smem.index(2 * W + B)
    tma.store_wait(1)  # the store that last read this buffer is through with it
    swap_cols(buf, 32, 64).store(piece)
    fence_async_shared()
    tma_store(c_desc, [row, col], buf)


@gluon.jit
def fragments(
    used,
    ready,
    b_bufs,
    W: gl.constexpr,
    BN: gl.constexpr,
    STAGES: gl.constexpr,
    OP_LAYOUT: gl.constexpr,
):
    """This warp group's 64 columns of step `used`'s tile of B, transposed into registers."""
    s = used % STAGES
    mbarrier.wait(ready.index(s), (used // STAGES) & 1)
    return swap_cols(b_bufs.index(s), BN, 128).slice(64 * W, 64, dim=0).load(OP_LAYOUT)


@gluon.jit
def consumer(
    c_desc,
    a_bufs,
    b_bufs,
    c_smem,
    ready,
    empty,
    M,
    N,
    K,
    programs,
    W: gl.constexpr,
    BM: gl.constexpr,
    BK: gl.constexpr,
    BN: gl.constexpr,
    GROUP_M: gl.constexpr,
    STAGES: gl.constexpr,
    ACC_LAYOUT: gl.constexpr,
    OP_LAYOUT: gl.constexpr,
):
    """One warp group: columns 64 W to 64 W + 63 of each of this program's tiles of C."""
    tiles_m = gl.cdiv(M, BM)
    tiles_k = gl.cdiv(K, BK)
    steps = gl.cdiv(N, BN)
    used = 0
    for tile in range(gl.program_id(0), tiles_m * tiles_k, programs):
        pid_m, pid_k = tile_of(tile, tiles_m, tiles_k, GROUP_M)
        row = pid_m * BM
        col = pid_k * BK + 64 * W
        acc = gl.zeros((64, BM), dtype=gl.float32, layout=ACC_LAYOUT)  # 64 columns of C^T
        # Two register sets of fragments, two steps an iteration: a step's four k8 products
        # go out back to back, the next step's fragments are read while they run, then they
        # are waited for (and the stage freed) before the next step's products go out.
        frag_a = fragments(used, ready, b_bufs, W, BN, STAGES, OP_LAYOUT)
        for n in range(0, steps - 1, 2):
            acc = warpgroup_mma(
                frag_a, a_bufs.index(used % STAGES).permute((1, 0)), acc, is_async=True
            )
            frag_b = fragments(used + 1, ready, b_bufs, W, BN, STAGES, OP_LAYOUT)
            acc = warpgroup_mma_wait(0, deps=(acc,))
            mbarrier.arrive(empty.index(used % STAGES))
            acc = warpgroup_mma(
                frag_b, a_bufs.index((used + 1) % STAGES).permute((1, 0)), acc, is_async=True
            )
            if n + 2 < steps:
                frag_a = fragments(used + 2, ready, b_bufs, W, BN, STAGES, OP_LAYOUT)
            acc = warpgroup_mma_wait(0, deps=(acc,))
            mbarrier.arrive(empty.index((used + 1) % STAGES))
            used += 2
        if steps % 2 == 1:
            acc = warpgroup_mma(
                frag_a, a_bufs.index(used % STAGES).permute((1, 0)), acc, is_async=True
            )
            acc = warpgroup_mma_wait(0, deps=(acc,))
            mbarrier.arrive(empty.index(used % STAGES))
            used += 1
        # C^T's 64 x 256 in eight 64 x 32 pieces, through two staging buffers in turn
        h0, h1 = gl.split(gl.permute(gl.reshape(acc, (64, 2, BM // 2)), (0, 2, 1)))
        q0, q1 = gl.split(gl.permute(gl.reshape(h0, (64, 2, BM // 4)), (0, 2, 1)))
        q2, q3 = gl.split(gl.permute(gl.reshape(h1, (64, 2, BM // 4)), (0, 2, 1)))
        e0, e1 = gl.split(gl.permute(gl.reshape(q0, (64, 2, BM // 8)), (0, 2, 1)))
        e2, e3 = gl.split(gl.permute(gl.reshape(q1, (64, 2, BM // 8)), (0, 2, 1)))
        e4, e5 = gl.split(gl.permute(gl.reshape(q2, (64, 2, BM // 8)), (0, 2, 1)))
        e6, e7 = gl.split(gl.permute(gl.reshape(q3, (64, 2, BM // 8)), (0, 2, 1)))
        store_piece(c_desc, c_smem, e0, row, col, W, 0)
        store_piece(c_desc, c_smem, e1, row + BM // 8, col, W, 1)
        store_piece(c_desc, c_smem, e2, row + 2 * BM // 8, col, W, 0)
        store_piece(c_desc, c_smem, e3, row + 3 * BM // 8, col, W, 1)
        store_piece(c_desc, c_smem, e4, row + 4 * BM // 8, col, W, 0)
        store_piece(c_desc, c_smem, e5, row + 5 * BM // 8, col, W, 1)
        store_piece(c_desc, c_smem, e6, row + 6 * BM // 8, col, W, 0)
        store_piece(c_desc, c_smem, e7, row + 7 * BM // 8, col, W, 1)
    tma.store_wait(0)


@gluon.jit
def matmul_rs_kernel(
    a_desc,
    b_desc,
    c_desc,
    M,
    N,
    K,
    programs,
    BM: gl.constexpr,
    BK: gl.constexpr,
    BN: gl.constexpr,
    GROUP_M: gl.constexpr,
    STAGES: gl.constexpr,
    SMEM: gl.constexpr,
    ACC_LAYOUT: gl.constexpr,
    OP_LAYOUT: gl.constexpr,
):
    a_bufs = gl.allocate_shared_memory(gl.float32, [STAGES, BM, BN], SMEM)
    b_bufs = gl.allocate_shared_memory(gl.float32, [STAGES, BN, BK], SMEM)
    c_smem = gl.allocate_shared_memory(gl.float32, [4, 32, 64], SMEM)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=2)  # one arrive from each consumer warp group
    # fmt: off
    gl.warp_specialize(
        [
            (consumer, (c_desc, a_bufs, b_bufs, c_smem, ready, empty, M, N, K, programs,
                        0, BM, BK, BN, GROUP_M, STAGES, ACC_LAYOUT, OP_LAYOUT)),
            (consumer, (c_desc, a_bufs, b_bufs, c_smem, ready, empty, M, N, K, programs,
                        1, BM, BK, BN, GROUP_M, STAGES, ACC_LAYOUT, OP_LAYOUT)),
            (producer, (a_desc, b_desc, a_bufs, b_bufs, ready, empty, M, N, K, programs,
                        BM, BK, BN, GROUP_M, STAGES)),
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


def solve(a_ptr: int, b_ptr: int, c_ptr: int, M: int, N: int, K: int):
    if INTERPRET or N % 4 or K % 4:  # no Gluon in the interpreter; rows off 16-byte bounds
        grid = (triton.cdiv(M, 64), triton.cdiv(K, 64))
        matmul_tiled_kernel[grid](a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M=64, BLOCK_K=64, BLOCK_N=32)
        return
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    smem = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=32, rank=2)
    a_desc = TensorDescriptor(_Float32(a_ptr), [M, N], [N, 1], [BM, BN], smem)
    b_desc = TensorDescriptor(_Float32(b_ptr), [N, K], [K, 1], [BN, BK], smem)
    c_desc = TensorDescriptor(_Float32(c_ptr), [M, K], [K, 1], [32, 64], smem)
    tiles = triton.cdiv(M, BM) * triton.cdiv(K, BK)
    programs = triton.cdiv(tiles, triton.cdiv(tiles, sm_count()))
    # one warp group: 64 rows of C^T (columns of C) by 256 columns (rows of C), m64n256k8 steps
    acc_layout = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BM, 8]
    )
    matmul_rs_kernel[(programs,)](
        a_desc,
        b_desc,
        c_desc,
        M,
        N,
        K,
        programs,
        BM=BM,
        BK=BK,
        BN=BN,
        GROUP_M=GROUP_M,
        STAGES=STAGES,
        SMEM=smem,
        ACC_LAYOUT=acc_layout,
        OP_LAYOUT=gl.DotOperandLayout(operand_index=0, parent=acc_layout, k_width=1),
        num_warps=4,
    )
