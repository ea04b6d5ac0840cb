"""Sort by merging: blocks sorted by a bitonic network, then merged in pairs, pass after pass.

Pass 0 sorts each block of 2**LOG_B elements inside one program. Every later pass merges pairs
of sorted runs of L elements into runs of 2L, reading one buffer and writing the other, until
one run holds all N; the passes alternate between the data and a scratch buffer so that the
last one writes the data.

A merge pass gives each program T = 2**LOG_T consecutive outputs. Output k of a pair of runs A
and B is preceded by i elements of A and k - i of B, where i (the co-rank) is the least with
A[i] >= B[k - i - 1]: a monotone test, so it is found by search, here PROBES positions at a
time (five rounds for a run of 8M). The program's outputs are then A[i0:i1] and B[j0:j1]
merged. Laid out as A's part ascending and B's part descending (loaded backwards), padded with
+inf, they form a bitonic sequence of 2T elements; one compare-exchange of element t with
element t + T keeps the smaller half, the T outputs (the padding is all in the larger half),
still bitonic, and LOG_T more steps sort it. Every load and store is contiguous (one run read
backwards), and each pass moves the data once each way. The passes alternate the order of
their programs, so that each begins with the chunks the pass before wrote last, still in L2.
"""

import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
LOG_B = 11 if DEVICE == "cuda" else 10  # blocks sorted inside one program: 2048 elements
LOG_T = 12 if DEVICE == "cuda" else 10  # outputs per program of a merge pass: 4096
PROBES = 32  # positions tried at once by each round of the co-rank search
# A program's outputs must lie in one pair of runs: T divides 2L, the shortest pair's length.
assert LOG_T <= LOG_B + 1


@triton.jit
def _exchange(x, LOG: tl.constexpr, t: tl.constexpr, STAGE: tl.constexpr):
    """One compare-exchange step of a bitonic network on 2**LOG elements: element i against
    element i + 2**t (bit t of i clear). Runs of 2**STAGE alternate ascending and descending
    (bit STAGE of i); at STAGE == LOG, all ascend."""
    ROWS: tl.constexpr = 1 << (LOG - t - 1)
    pairs = tl.reshape(x, [ROWS, 2, 1 << t])
    first, second = tl.split(tl.permute(pairs, 0, 2, 1))
    low = tl.minimum(first, second)
    high = tl.maximum(first, second)
    if STAGE < LOG:
        # bit STAGE of the index is bit STAGE - t - 1 of the row
        down = ((tl.arange(0, ROWS) >> (STAGE - t - 1)) & 1)[:, None] != 0
        low, high = tl.where(down, high, low), tl.where(down, low, high)
    return tl.reshape(tl.permute(tl.join(low, high), 0, 2, 1), [1 << LOG])


@triton.jit
def sort_blocks_kernel(
    src_ptr,  # address of the data
    dst_ptr,  # address of the sorted blocks: the data itself or the scratch buffer
    N,  # elements
    LOG_B: tl.constexpr,  # log2 of the block size
):
    src_ptr = src_ptr.to(tl.pointer_type(tl.float32))
    dst_ptr = dst_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(axis=0) * (1 << LOG_B) + tl.arange(0, 1 << LOG_B)
    x = tl.load(src_ptr + offsets, mask=offsets < N, other=float("inf"))
    for stage in tl.static_range(1, LOG_B + 1):
        for step in tl.static_range(stage):
            x = _exchange(x, LOG_B, stage - 1 - step, stage)
    tl.store(dst_ptr + offsets, x, mask=offsets < N)


@triton.jit
def _co_rank(a_ptr, b_ptr, k, la, lb, PROBES: tl.constexpr):
    """How many of the first k elements of merge(A, B) come from A (A and B sorted, of la and
    lb elements): the least i in [max(0, k - lb), min(k, la)] with not A[i] < B[k - i - 1]
    (every i below it has A[i] < B[k - i - 1], every i from it on has not)."""
    lo = tl.maximum(k - lb, 0)
    hi = tl.minimum(k, la)
    t = tl.arange(0, PROBES)
    while lo < hi:
        # Try PROBES positions of [lo, hi) at once; the answer lies after the last that passes
        # the test and no later than the first that fails it.
        span = hi - lo
        q = lo + (t * span) // PROBES
        before = tl.load(a_ptr + q) < tl.load(b_ptr + (k - 1 - q))
        passed = tl.sum(before.to(tl.int32), axis=0)
        new_lo = tl.where(passed > 0, lo + ((passed - 1) * span) // PROBES + 1, lo)
        hi = tl.where(passed < PROBES, lo + (passed * span) // PROBES, hi)
        lo = new_lo
    return lo


@triton.jit
def merge_kernel(
    src_ptr,  # address of the runs of L sorted elements
    dst_ptr,  # address of the merged runs of 2L
    N,  # elements
    L,  # run length
    BACKWARDS,  # 1: program 0 takes the last chunk (this pass reads what the last wrote last)
    LOG_T: tl.constexpr,  # log2 of the outputs per program
    PROBES: tl.constexpr,
):
    src_ptr = src_ptr.to(tl.pointer_type(tl.float32))
    dst_ptr = dst_ptr.to(tl.pointer_type(tl.float32))
    T: tl.constexpr = 1 << LOG_T
    pid = tl.program_id(axis=0)
    pid = tl.where(BACKWARDS != 0, tl.num_programs(axis=0) - 1 - pid, pid)
    first_out = pid * T
    start = (first_out // (2 * L)) * (2 * L)  # the pair of runs this program's outputs are in
    la = tl.minimum(L, N - start)
    lb = tl.maximum(tl.minimum(L, N - start - L), 0)
    a_ptr = src_ptr + start
    b_ptr = a_ptr + la
    k0 = first_out - start
    k1 = tl.minimum(k0 + T, la + lb)
    i0 = _co_rank(a_ptr, b_ptr, k0, la, lb, PROBES)
    i1 = _co_rank(a_ptr, b_ptr, k1, la, lb, PROBES)
    j0 = k0 - i0
    j1 = k1 - i1
    offs = tl.arange(0, T)
    a = tl.load(a_ptr + i0 + offs, mask=offs < i1 - i0, other=float("inf"))
    backwards = T - 1 - offs
    b = tl.load(b_ptr + j0 + backwards, mask=backwards < j1 - j0, other=float("inf"))
    # [a, b backwards] is bitonic; the smaller of each pair t, t + T is its smaller half
    x = tl.minimum(a, b)
    for step in tl.static_range(LOG_T):
        x = _exchange(x, LOG_T, LOG_T - 1 - step, LOG_T)
    out = first_out + offs
    tl.store(dst_ptr + out, x, mask=out < N)


def solve(data_ptr: int, N: int):
    blocks = triton.cdiv(N, 1 << LOG_B)
    passes = (blocks - 1).bit_length()  # merges until one run holds every element
    if passes == 0:
        sort_blocks_kernel[(1,)](data_ptr, data_ptr, N, LOG_B=LOG_B, num_warps=4)
        return
    buffer = torch.empty(N, dtype=torch.float32, device=DEVICE)  # kept alive until the end
    scratch = buffer.data_ptr()
    # the passes alternate buffers: start where an even count of them ends in the data
    src = data_ptr if passes % 2 == 0 else scratch
    sort_blocks_kernel[(blocks,)](data_ptr, src, N, LOG_B=LOG_B, num_warps=4)
    run = 1 << LOG_B
    for p in range(passes):
        # the block sort ran forwards, so the first merge pass runs backwards, and so on
        dst = scratch if src == data_ptr else data_ptr
        merge_kernel[(triton.cdiv(N, 1 << LOG_T),)](
            src, dst, N, run, (p + 1) % 2, LOG_T=LOG_T, PROBES=PROBES, num_warps=4
        )
        src, run = dst, 2 * run
