"""Matrix multiplication on TF32 tensor cores: tma_persistent.py, with B's transposing copy run
beside the product instead of before it.

Hopper's TF32 instructions read both operands with the reduction contiguous, so B is copied
transposed into scratch memory first, and in tma_persistent.py that copy (68 us on an H100 at the
benchmark's size) runs alone while every tensor core waits. Here the copy is a kernel of
persistent programs, one a multiprocessor, and the product starts beside it:

- Programmatic dependent launch: the copy's programs call `gdc_launch_dependents()` as they
  start, and the product, launched with `launch_pdl=True`, may begin once all of them have. It
  does not wait for the copy to end (no `gdc_wait()`): it waits for the chunks it needs.
- Chunks: the copy goes through B's columns in two groups (the halves of C's tile columns), each
  in chunks of CHUNK rows of B (the reduction), and every copy program adds one to a chunk's
  counter once its share is stored. A product program reading a group for the first time waits
  for each chunk's counter to reach the number of copy programs before its loads of that chunk.
- The order of the tiles: 16 tile rows a group, so that the first wave of 128 programs needs only
  the first half of B's columns, and the second half is copied while that wave computes.
- Sharing a multiprocessor: the product's programs need 176 KiB of shared memory (Triton 3.6) and
  the copy's just over 48 KiB; both fit in 228 KiB only if the copy's kernel asks for the largest
  shared-memory carveout, which Triton's launcher does for kernels of more than 48 KiB. Four stages
  of 64 x 64 tiles in flight plus a reduction's scratch bring the copy to 49,160 bytes (Triton
  3.6); the product's C goes out in quarters of its tile (32 KiB of staging instead of 64) to leave
  room. With a smaller copy the product waits until the copy's programs leave (measured: the
  product began 82 us into a 93 us copy).

Judged on an H100 (cuBLAS TF32 1028.0 us): 1072.6 and 1073.3 us against 1092.0 and 1091.6 us for
tma_persistent.py (0.958x against 0.942x of cuBLAS); tma_persistent.py with this tile order alone
took 1090.0 and 1091.3 us. On an H200 (cuBLAS 1008.0 us): 1051.4-1057.7 us against 1060.0-1065.4 us
(three rounds, alternated). The copy, beside the product, takes about 180 us instead of 68, and the
product about 60 us longer than alone: the two share the multiprocessors' issue slots and memory.

The counters are not zeroed by a fill (one more launch). Each holds COUNTER_TAG times 2^16 plus a
count, and anything else counts as zero: the first copy program to count in tags it by a
compare-and-swap, the others add. The last product program to finish sets every counter back to
zero, so the next call finds none tagged in reused memory. A counter is read by an atomic, whose
one answer reaches every thread: read by each thread's own load, threads of one program could see
different values and take different branches (a first draft computed wrong products that way).

TMA needs every row to start on a 16-byte boundary: N and K multiples of 4 float32 values. Other
sizes go to a plain tiled kernel. Programmatic dependent launch needs Hopper (sm_90) or later;
before it, and in Triton's interpreter, the copy runs first and the product after it.
"""

import os

import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_launch_dependents

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRET else "cuda"
COUNTER_TAG = 0x2D61F0C3A5  # marks a counter of a call under way (any number below 2^47)
CHUNK = 2048  # rows of B (steps along the reduction) a counter covers


@triton.jit
def count_in(count_ptr, TAG: tl.constexpr):
    """Add one to a counter that holds TAG * 2^16 plus a count, or anything else for zero, with
    release semantics (this program's stores before it are visible to whoever acquires the
    counter after). Returns the count before."""
    # Read by an atomic: one thread reads and every thread gets its answer, so all of them take
    # the same branch below.
    seen = tl.atomic_add(count_ptr, 0, sem="relaxed", scope="gpu")
    if (seen >> 16) == TAG:
        before = tl.atomic_add(count_ptr, 1, sem="acq_rel", scope="gpu")
    else:
        # Untagged: tag it from the value read; if another program tagged it first, add.
        before = tl.atomic_cas(count_ptr, seen, (TAG << 16) + 1, sem="acq_rel", scope="gpu")
        if before != seen:
            before = tl.atomic_add(count_ptr, 1, sem="acq_rel", scope="gpu")
        else:
            before = TAG << 16
    return before & 0xFFFF


@triton.jit
def transpose_kernel(
    src_ptr,  # address of B, N x K, row-major
    dst_ptr,  # address of the scratch copy of B transposed, K x N, row-major
    count_ptr,  # int64 counters: group g, chunk c at g * chunks + c
    N,  # rows of B
    K,  # columns of B
    CHUNK: tl.constexpr,  # rows of B a counter covers
    TILE: tl.constexpr,  # each step moves one TILE x TILE square
    COLS: tl.constexpr,  # columns of a tile of C: a group holds whole tile columns
    TAG: tl.constexpr,  # COUNTER_TAG
    PDL: tl.constexpr,  # launched ahead of the product, which may start beside it
):
    if PDL:
        gdc_launch_dependents()
    src_ptr = tl.multiple_of(src_ptr.to(tl.pointer_type(tl.float32)), 16)
    dst_ptr = tl.multiple_of(dst_ptr.to(tl.pointer_type(tl.float32)), 16)
    count_ptr = count_ptr.to(tl.pointer_type(tl.int64))
    pid = tl.program_id(axis=0)
    programs = tl.num_programs(axis=0)
    chunks = tl.cdiv(N, CHUNK)
    half = tl.cdiv(tl.cdiv(K, COLS), 2) * COLS  # columns of B in the first group
    for g in range(2):
        first_col = g * half
        width = min(half, K - first_col)
        tiles_k = tl.cdiv(width, TILE)
        for c in range(chunks):
            first_row = c * CHUNK
            tiles = tl.cdiv(min(CHUNK, N - first_row), TILE) * tiles_k
            for t in tl.range(pid, tiles, programs, num_stages=4):
                rows = first_row + (t // tiles_k) * TILE + tl.arange(0, TILE)  # rows of B
                cols = first_col + (t % tiles_k) * TILE + tl.arange(0, TILE)  # columns of B
                mask = (rows[:, None] < N) & (cols[None, :] < first_col + width)
                tile = tl.load(src_ptr + rows[:, None] * K + cols[None, :], mask=mask)
                # Always true, but a reduction: its scratch takes the kernel's shared memory past
                # 48 KiB, so that Triton's launcher asks for the largest carveout (docstring).
                mask = mask & (rows[:, None] <= tl.max(rows, axis=0))
                tl.store(
                    dst_ptr + cols[:, None] * N + rows[None, :], tl.trans(tile), mask=tl.trans(mask)
                )
            tl.debug_barrier()  # every thread's stores issued before one thread's release
            count_in(count_ptr + g * chunks + c, TAG)


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
def fence_async():
    """Orders this thread's earlier reads of memory before the copy engine's later reads of it."""
    tl.inline_asm_elementwise(
        "fence.proxy.async.global; // dummy $0", "=r", [], dtype=tl.int32, is_pure=False, pack=1
    )


@triton.jit
def product(
    a_desc, bt_desc, row, col, step_lo, step_hi, acc, BLOCK_N: tl.constexpr, STAGES: tl.constexpr
):
    """acc plus the product of a tile row of A and a tile column of B over steps [lo, hi)."""
    for n in tl.range(step_lo, step_hi, num_stages=STAGES):
        a = a_desc.load([row, n * BLOCK_N])
        bt = bt_desc.load([col, n * BLOCK_N])
        acc = tl.dot(a, bt.T, acc)  # TF32 tensor cores, float32 accumulation
    return acc


@triton.jit
def store_tile(c_desc, row, col, acc, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    """The tile of C in four quarters of its columns, through a 32 KiB staging buffer."""
    halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_K // 2)), (0, 2, 1))
    left, right = tl.split(halves)
    q0, q1 = tl.split(tl.permute(tl.reshape(left, (BLOCK_M, 2, BLOCK_K // 4)), (0, 2, 1)))
    q2, q3 = tl.split(tl.permute(tl.reshape(right, (BLOCK_M, 2, BLOCK_K // 4)), (0, 2, 1)))
    c_desc.store([row, col], q0)
    c_desc.store([row, col + BLOCK_K // 4], q1)
    c_desc.store([row, col + BLOCK_K // 2], q2)
    c_desc.store([row, col + 3 * BLOCK_K // 4], q3)


@triton.jit
def matmul_tma_kernel(
    a_ptr,  # address of A, M x N, row-major
    bt_ptr,  # address of B transposed, K x N, row-major: the reduction runs along its rows
    c_ptr,  # address of C, M x K, row-major
    count_ptr,  # the copy's counters, then one counting the programs of this kernel that ended
    M,  # rows of A and of C
    N,  # columns of A, rows of B: the length of the reduction
    K,  # columns of B and of C
    programs,  # programs launched: each takes every programs-th tile
    writers,  # programs of the copy: each counts in once a chunk
    BLOCK_M: tl.constexpr,  # rows of a tile of C
    BLOCK_K: tl.constexpr,  # columns of a tile of C
    BLOCK_N: tl.constexpr,  # step along the reduction
    GROUP_M: tl.constexpr,  # tile rows per group in the order of the tiles (L2 reuse)
    STAGES: tl.constexpr,  # tiles of A and B in flight in shared memory
    CHUNK: tl.constexpr,  # rows of B a counter covers (a multiple of BLOCK_N)
    TAG: tl.constexpr,  # COUNTER_TAG
    FENCE: tl.constexpr,  # on the GPU: a proxy fence between a counter and the copy engine
):
    a_ptr = tl.multiple_of(a_ptr.to(tl.pointer_type(tl.float32)), 16)
    bt_ptr = tl.multiple_of(bt_ptr.to(tl.pointer_type(tl.float32)), 16)
    c_ptr = tl.multiple_of(c_ptr.to(tl.pointer_type(tl.float32)), 16)
    count_ptr = count_ptr.to(tl.pointer_type(tl.int64))
    a_desc = tl.make_tensor_descriptor(
        a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N]
    )
    bt_desc = tl.make_tensor_descriptor(
        bt_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N]
    )
    c_desc = tl.make_tensor_descriptor(  # a quarter of a tile of C per store
        c_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K // 4]
    )

    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_k = tl.cdiv(K, BLOCK_K)
    steps = tl.cdiv(N, BLOCK_N)
    chunks = tl.cdiv(N, CHUNK)
    half = tl.cdiv(tiles_k, 2)  # tile columns in the copy's first group
    STEPS_A_CHUNK: tl.constexpr = CHUNK // BLOCK_N
    seen_groups = 0  # bit g set: every chunk of group g was seen complete
    for tile in tl.range(tl.program_id(axis=0), tiles_m * tiles_k, programs):
        pid_m, pid_k = tile_of(tile, tiles_m, tiles_k, GROUP_M)
        row = pid_m * BLOCK_M
        col = pid_k * BLOCK_K
        acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
        g = (pid_k >= half).to(tl.int32)
        if ((seen_groups >> g) & 1) == 0:
            # The group's first tile here: chunk by chunk, each waited for.
            for c in range(chunks):
                counter = count_ptr + g * chunks + c
                seen = tl.atomic_add(counter, 0, sem="acquire", scope="gpu")
                while ((seen >> 16) != TAG) | ((seen & 0xFFFF) < writers):
                    seen = tl.atomic_add(counter, 0, sem="acquire", scope="gpu")
                tl.debug_barrier()  # every thread after the one that acquired
                if FENCE:  # the chunk was written by plain stores; the copy engine reads it next
                    fence_async()
                step_lo = c * STEPS_A_CHUNK
                step_hi = min(step_lo + STEPS_A_CHUNK, steps)
                acc = product(a_desc, bt_desc, row, col, step_lo, step_hi, acc, BLOCK_N, STAGES)
            seen_groups = seen_groups | (1 << g)
        else:
            acc = product(a_desc, bt_desc, row, col, 0, steps, acc, BLOCK_N, STAGES)
        store_tile(c_desc, row, col, acc, BLOCK_M, BLOCK_K)
    # The last program to end puts every counter back to zero: no reader is left.
    tl.debug_barrier()
    if count_in(count_ptr + 2 * chunks, TAG) == programs - 1:
        for i in range(2 * chunks + 1):
            tl.atomic_xchg(count_ptr + i, 0, sem="relaxed", scope="gpu")


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


def dependent_launch() -> bool:
    """Programmatic dependent launch: Hopper (sm_90) and later, never in the interpreter."""
    if INTERPRET:
        return False
    target = triton.runtime.driver.active.get_current_target()
    return isinstance(target.arch, int) and target.arch >= 90


def solve(a_ptr: int, b_ptr: int, c_ptr: int, M: int, N: int, K: int):
    if N % 4 or K % 4:  # a row of A, B or C would not start on a 16-byte boundary
        grid = (triton.cdiv(M, 64), triton.cdiv(K, 64))
        matmul_tiled_kernel[grid](a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M=64, BLOCK_K=64, BLOCK_N=32)
        return
    triton.set_allocator(scratch)
    bt = torch.empty(K * N, dtype=torch.float32, device=DEVICE)  # kept alive until solve returns
    # Not filled: COUNTER_TAG. Two groups of chunks, then the product's count of ended programs.
    counts = torch.empty(2 * triton.cdiv(N, CHUNK) + 1, dtype=torch.int64, device=DEVICE)
    BLOCK_M, BLOCK_K, BLOCK_N, STAGES = 128, 256, 32, 3
    writers = sm_count()
    pdl = dependent_launch()
    transpose_kernel[(writers,)](
        b_ptr, bt.data_ptr(), counts.data_ptr(), N, K,
        CHUNK=CHUNK, TILE=64, COLS=BLOCK_K, TAG=COUNTER_TAG, PDL=pdl, num_warps=4,
    )  # fmt: skip
    # Shared memory per SM: 3 stages of a 128 x 32 tile of A and a 256 x 32 tile of B transposed
    # (144 KiB) and a quarter of a 128 x 256 tile of C (32 KiB), beside the copy's 48 KiB.
    tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(K, BLOCK_K)
    programs = triton.cdiv(tiles, triton.cdiv(tiles, sm_count()))
    launch = {"launch_pdl": True} if pdl else {}
    matmul_tma_kernel[(programs,)](
        a_ptr, bt.data_ptr(), c_ptr, counts.data_ptr(), M, N, K, programs, writers,
        BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K, BLOCK_N=BLOCK_N, GROUP_M=16, STAGES=STAGES,
        CHUNK=CHUNK, TAG=COUNTER_TAG, FENCE=not INTERPRET, num_warps=8, num_stages=STAGES,
        **launch,
    )  # fmt: skip
