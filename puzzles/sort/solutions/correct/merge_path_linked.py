"""Sort by merging, each merge program searching one co-rank instead of two.

This is merge_path.py with half of its searches taken out. There, each program of a merge pass
searches two co-ranks: where its T outputs begin and where they end. The end of one program's
outputs is the beginning of the next one's, so every boundary is searched twice.

Here a program searches only the boundary it shares with the program after it (in the pass's
order: pass by pass the programs run forwards or backwards through the data) and publishes it
in one int64 word of scratch memory: the pass number plus one in the high 32 bits, the co-rank
in the low 32. It takes its other boundary from the word the program before it published. A
boundary at the edge of a pair of runs needs no search: its co-rank is 0 or the first run's
length.

- One atomic exchange publishes, and atomic reads poll. Value and tag travel in one word, so
  the ordering needs no fence.
- The pass number tells this pass's words from the earlier passes'. The block sort zeroes every
  word before the first pass, so nothing left by an earlier call can pass for one of this call's.
- Programs are started in the order of their ids, so the program before has nearly always
  published by the time its word is read. Nothing depends on that: a program that polls SPINS
  times without finding the word searches that boundary itself.

The rest is merge_path.py's. Blocks of 2**LOG_B are sorted by a bitonic network inside one
program. Then pass after pass merges pairs of runs of L into runs of 2L, T outputs a program,
alternating between the data and a scratch buffer. Each program's part of A (ascending) and of
B (read backwards), padded with +inf, is a bitonic sequence whose smaller half a bitonic merge
sorts.
"""

import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
LOG_B = 11 if DEVICE == "cuda" else 10  # blocks sorted inside one program: 2048 elements
LOG_T = 12 if DEVICE == "cuda" else 10  # outputs per program of a merge pass: 4096
PROBES = 32  # positions tried at once by each round of the co-rank search
SPINS = 32  # reads of the word the program before publishes, before searching it instead
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
    links_ptr,  # address of the merge passes' words, one a program of a pass: zeroed here
    links,  # how many words
    N,  # elements
    LOG_B: tl.constexpr,  # log2 of the block size
):
    src_ptr = src_ptr.to(tl.pointer_type(tl.float32))
    dst_ptr = dst_ptr.to(tl.pointer_type(tl.float32))
    links_ptr = links_ptr.to(tl.pointer_type(tl.int64))
    for z in range(tl.program_id(axis=0), links, tl.num_programs(axis=0)):
        tl.store(links_ptr + z, 0)
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
    links_ptr,  # address of the words: (pass + 1) << 32 | a co-rank, one a program
    N,  # elements
    L,  # run length
    BACKWARDS,  # 1: program 0 takes the last chunk (this pass reads what the last wrote last)
    TAG,  # (this pass's number + 1) << 32: the high half of the words this pass publishes
    LOG_T: tl.constexpr,  # log2 of the outputs per program
    PROBES: tl.constexpr,
    SPINS: tl.constexpr,
):
    src_ptr = src_ptr.to(tl.pointer_type(tl.float32))
    dst_ptr = dst_ptr.to(tl.pointer_type(tl.float32))
    links_ptr = links_ptr.to(tl.pointer_type(tl.int64))
    T: tl.constexpr = 1 << LOG_T
    backwards = BACKWARDS != 0
    pid = tl.program_id(axis=0)
    chunk = tl.where(backwards, tl.num_programs(axis=0) - 1 - pid, pid)
    first_out = chunk * T
    start = (first_out // (2 * L)) * (2 * L)  # the pair of runs this program's outputs are in
    la = tl.minimum(L, N - start)
    lb = tl.maximum(tl.minimum(L, N - start - L), 0)
    a_ptr = src_ptr + start
    b_ptr = a_ptr + la
    k0 = first_out - start
    k1 = tl.minimum(k0 + T, la + lb)
    # The boundary shared with the program after this one (pid + 1): searched and published.
    own = _co_rank(a_ptr, b_ptr, tl.where(backwards, k0, k1), la, lb, PROBES)
    tl.atomic_xchg(links_ptr + chunk, TAG | own.to(tl.int64), sem="relaxed")
    # The boundary shared with the program before (pid - 1): its word, unless the pair's edge.
    other = tl.where(backwards, la, 0)
    if not tl.where(backwards, k1 == la + lb, k0 == 0):
        word = links_ptr + tl.where(backwards, chunk + 1, chunk - 1)
        link = tl.atomic_add(word, 0, sem="relaxed")
        spins = 0
        while ((link >> 32) != (TAG >> 32)) & (spins < SPINS):
            link = tl.atomic_add(word, 0, sem="relaxed")
            spins += 1
        if (link >> 32) == (TAG >> 32):
            other = (link & 0xFFFFFFFF).to(tl.int32)
        else:  # not published yet: search it here
            other = _co_rank(a_ptr, b_ptr, tl.where(backwards, k1, k0), la, lb, PROBES)
    i0 = tl.where(backwards, own, other)
    i1 = tl.where(backwards, other, own)
    j0 = k0 - i0
    j1 = k1 - i1
    offs = tl.arange(0, T)
    a = tl.load(a_ptr + i0 + offs, mask=offs < i1 - i0, other=float("inf"))
    reverse = T - 1 - offs
    b = tl.load(b_ptr + j0 + reverse, mask=reverse < j1 - j0, other=float("inf"))
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
        sort_blocks_kernel[(1,)](data_ptr, data_ptr, data_ptr, 0, N, LOG_B=LOG_B, num_warps=4)
        return
    programs = triton.cdiv(N, 1 << LOG_T)  # of each merge pass
    # scratch (allocation only, kept alive until the end): the other buffer, then the words
    buffer = torch.empty(N + 1 + 2 * programs, dtype=torch.float32, device=DEVICE)
    scratch = buffer.data_ptr()
    links = scratch + 4 * (N + N % 2)  # 8-byte aligned
    # the passes alternate buffers: start where an even count of them ends in the data
    src = data_ptr if passes % 2 == 0 else scratch
    sort_blocks_kernel[(blocks,)](data_ptr, src, links, programs, N, LOG_B=LOG_B, num_warps=4)
    run = 1 << LOG_B
    for p in range(passes):
        # the block sort ran forwards, so the first merge pass runs backwards, and so on
        dst = scratch if src == data_ptr else data_ptr
        merge_kernel[(programs,)](
            src, dst, links, N, run, (p + 1) % 2, (p + 1) << 32,
            LOG_T=LOG_T, PROBES=PROBES, SPINS=SPINS, num_warps=4,
        )  # fmt: skip
        src, run = dst, 2 * run
