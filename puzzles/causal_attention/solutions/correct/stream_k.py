"""Causal attention, persistent "stream-K" schedule: equal work per program, one kernel.

The causal work of one head is a triangle of tiles: query block r (BLOCK_M queries) meets key
blocks 0 .. r (BLOCK_M keys each), the last one on the diagonal, so there are
T = n (n + 1) / 2 tiles for n = cdiv(N, BLOCK_M) query blocks (8256 for N = 8192, BLOCK_M = 64).
Lay the tiles of row 0, row 1, ..., row n - 1 end to end and cut that line into P ranges of
equal cost, one program each, P = twice the number of multiprocessors, all in a single wave
(two programs share each multiprocessor, below). A program
walks its range row by row: a row it holds whole is finished and stored at once; a row cut by a
range boundary leaves a partial result (its rows normalised, in float16, with each row's maximum
and sum in float32) in scratch memory. No second kernel merges them: each program that leaves a
partial then adds one to the row's counter (an atomic, after its stores), and the program that
brings the counter to the row's number of partials is the last: it reads the others' partials
back (from L2), two at a time, merges them with its own, still in registers, and stores the row.

The counters are not zeroed before the launch: a fill is one more launch. Without it (and with
the pieces merged two at a time) the call went from 50.0 to 48.8 us judged on an H200, and from
52.8 to 50.9 us on an H100. Each counter holds COUNTER_TAG times 2^16 plus the pieces arrived,
and whatever else it holds counts as none arrived: the first program to arrive replaces it (a
compare-and-swap), and every later one adds itself (an atomic add, which, unlike a
compare-and-swap, never has to be retried when pieces arrive together). The last one sets it
back to zero, so a call leaves no tagged counter behind
for the next one to find in reused memory. Scratch memory fresh from the allocator holds the tag
in its top 48 bits only by a chance of about 2^-48 a word, and the judge's timer fills scratch
with 0xFF bytes.

Equal cost is not equal tiles. Timed on an H200 with the GPU's clock read inside the kernel
(128-query tiles then), a tile took about 1.5-2 us, and every row a program starts cost about
5 us more (its queries loaded, two loops begun, its result stored): the program holding rows 0-4
whole finished last. So each row counts as its tiles plus ROW_COST units, and the line of units
is cut into equal ranges: the slowest program went from 52 to 48 us. The partials are float16
because the merging program reads them back at the very end of the kernel; half the bytes took
it to 45 us.

Two programs a multiprocessor, each one warp group on 64 queries. With 128-query tiles and 8
warps, the kernel's two warp groups wait at the same barriers (Triton puts them around every
copy), so the tensor cores idle during every softmax. Two programs on one multiprocessor wait
only for themselves, and the warp schedulers run one's softmax beside the other's products.
Each fits: 255 registers a thread for 128 threads, and 113 KiB of shared memory with three
stages of 64-key steps. Judged on an H200, the call went from 51.8-52.1 to 49.9-50.2 us; on an
H100 it stayed level (52.7 us).

A row segment is one loop over its key blocks, the diagonal one included: the steps of the
diagonal block mask their scores inside the loop (a branch on the step, not a second loop). Two
loops, one for the blocks before the diagonal and one for the diagonal block, each filled the
pipeline of K and V copies anew: in a copy of the file that stored the GPU's clock (H200), a
segment's loop cost 2.45 us beyond its tiles with two loops and 2.0 us with one. With one
division a row in the normalisation (`_normalised`), the call went from 46.4 to 45.8-45.9 us
judged on an H200, and ROW_COST from 4 to 3 took it to 45.5-45.9 us (2 and 3 were level then).

In those timelines the programs end between 35 us (the 10th percentile) and 42 us (the last).
The last are those that merge 3 or 4 other pieces of a long row: that epilogue takes 5-6 us,
against 2.7 us for leaving a partial behind. Merging four pieces at a time, or reading every
piece back (its own too) so that the merge works in the layout the loads come in, made the
call slower (judged on an H200: 46.7-47.1 against 46.3-46.6 us).

A piece's arrival reads the row's counter with a plain load as its loop ends, not with an
atomic after its partial is stored, and a piece that finds every other one already in knows it
is the last without counting itself in. With the load first and the stores after it (while it
was in flight), in the clock's timelines (H200), leaving a partial behind went from 2.36 to
1.87 us and merging one other piece from 3.25 to 2.65 us. Since a row's start now costs less,
ROW_COST is 2: judged on an H100, 47.5-48.0 us against 48.4-48.9 us (six rounds, alternated;
ROW_COST 3 with the read 48.1-48.3 us, 1 48.7-48.9 us); on an H200 45.4 and 45.5 us against
45.9 and 45.6 us. A piece that finds every other one in already is the last for sure: it stores
no partial and no statistics at all, and merges at once from its registers (judged on an H200,
44.5-44.9 against 44.9-45.1 us, four rounds alternated; on another H200, 45.0-45.2 against
45.1-45.4 us, three rounds).

The pieces of a long row end together, and each used to count itself in by a compare-and-swap,
retried whenever another piece got in first: the last of four could wait on L2 four times. A
tagged counter is now counted by an atomic add, once a piece. In the clock's timelines (H200),
the pieces of the tenth of the programs that end last took 1.6 against 2.1 us from their loop's
end to knowing whether they merge (means of six calls); judged, 45.3-45.4 us against
45.6-45.8 us on an H200 and 47.4-47.7 against 47.6-47.8 us on an H100 (three rounds each,
alternated).

On the GPU, where d is a multiple of 8 (every row on a 16-byte boundary), Q, K and V come in
and the output goes out through tensor descriptors: the tensor-memory accelerator copies each
tile between global and shared memory while the warps work, with no address computed per
element (judged at N = 8192, d = 128, K and V: 58.5 against 60.1 us on an H100, 57.9 against
58.7 us on an H200; Q and the output too: 49.0 against 49.6 us on an H100). Rows past N come in
as zeros and are not stored. The descriptors are built on the host (`TensorDescriptor`) and
reach the kernel as launch parameters; built by every program as it starts
(`tl.make_tensor_descriptor`, in global memory) the call took 47.9-48.2 us judged on an H200,
against 47.0-47.2 us. Triton's interpreter takes a descriptor's base only as a tensor, so there
every tile is read and written through its address.
"""

import functools
import math
import os

import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
GPU_BLOCK_M = 64  # queries per tile on the GPU (and keys per tile)
PROGRAMS_PER_SM = 2  # programs sharing a multiprocessor on the GPU
INTERPRET_BLOCK_M = 32  # the interpreter's cases are tiny: small tiles, so they get cut too
INTERPRET_PROGRAMS = 5  # the interpreter's programs
ROW_COST = 2  # what starting a row costs a program beyond its tiles, in tiles
SHARED_MARGIN = 4096  # bytes of shared memory Triton may use beyond the tiles (barriers)
COUNTER_TAG = 0x3C5A96E1B7  # marks a row counter of a call under way (any number below 2^47)


@triton.jit
def _attend_keys(
    acc,  # [BLOCK_M, BLOCK_D] float32 running sum of p @ V, scaled to the running maximum
    l_i,  # [BLOCK_M] running sum of p
    m_i,  # [BLOCK_M] running maximum of the scores (base-2 units)
    q,  # [BLOCK_M, BLOCK_D] the tile's queries (float16)
    k_src,  # K: its tensor descriptor with TMA, else its address
    v_src,  # V: likewise
    lo,  # first key
    hi,  # one past the last key
    diagonal,  # the first key of the diagonal block: steps from there on are masked
    offs_m,  # the query rows of the tile
    N,  # sequence length
    d,  # head dimension
    qk_scale,  # log2(e) / sqrt(d)
    BLOCK_N: tl.constexpr,  # keys per step
    BLOCK_D: tl.constexpr,  # d rounded up to a power of two
    EVEN_D: tl.constexpr,  # d == BLOCK_D: no column mask
    EVEN_N: tl.constexpr,  # N is a multiple of BLOCK_M: no key lies past N
    TMA: tl.constexpr,  # k_src and v_src are tensor descriptors
):
    """The online softmax over keys lo .. hi - 1, BLOCK_N at a time (FlashAttention-2), in one
    loop: the steps of the diagonal block mask their scores, the others do not."""
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    for start_n in range(lo, hi, BLOCK_N):
        keys = start_n + offs_n
        kv_offsets = keys[:, None] * d + offs_d[None, :]
        if TMA:
            # The copy engine brings both tiles into shared memory; rows past N and columns
            # past d come back as zeros.
            k = k_src.load([start_n, 0])
            v = v_src.load([start_n, 0])
        elif EVEN_D and EVEN_N:
            # Every key is below N: no mask at all, plain 16-byte vectors.
            k = tl.load(k_src + kv_offsets)
            v = tl.load(v_src + kv_offsets)
        else:
            kv_mask = (keys[:, None] < N) & (offs_d[None, :] < d)
            k = tl.load(k_src + kv_offsets, mask=kv_mask, other=0.0)
            v = tl.load(v_src + kv_offsets, mask=kv_mask, other=0.0)
        qk = tl.dot(q, tl.trans(k))  # float32 scores, before the scale
        if start_n + BLOCK_N > diagonal:
            # Query i sees keys j <= i; keys past N lie after every real query. Every query row
            # sees at least key lo (lo <= i), so no row's maximum stays -inf.
            qk = tl.where(offs_m[:, None] >= keys[None, :], qk, float("-inf"))
        # The scale log2(e) / sqrt(d) folds into one multiply-add, ready for exp2.
        m_new = tl.maximum(m_i, tl.max(qk, axis=1) * qk_scale)
        qk = qk * qk_scale - m_new[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_new)  # rescales what was summed under the old maximum
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(tl.float16), v, acc)  # float16 operands, float32 accumulation
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _normalised(acc, l_i):
    """Each row of the accumulator over its sum: one division a row, then a multiply per
    element (on an H200, a row's epilogue took about 0.1 us less than with a division per
    element)."""
    return acc * (1.0 / l_i)[:, None]


@triton.jit
def _store_rows(rows, o_desc, o_ptr, offsets, mask, r, BLOCK_M: tl.constexpr, TMA: tl.constexpr):
    """Store a finished query block (normalised, float32) as float16: through the output's
    descriptor (rows past N are not written), else through its address."""
    if TMA:
        o_desc.store([r * BLOCK_M, 0], rows.to(tl.float16))
    else:
        tl.store(o_ptr + offsets, rows.to(tl.float16), mask=mask)


# The split in units: row r is S units of fixed cost followed by its r + 1 tiles, so it starts
# at unit r (r + 1) / 2 + r S, and program p takes units [p U / P, (p + 1) U / P) of the U in all.


@triton.jit
def _units_before(r, S):
    """Units before row r: the tiles of rows 0 .. r - 1 and their S units each."""
    return r * (r + 1) // 2 + r * S


@triton.jit
def _row_of(u, S):
    """The row r holding unit u: _units_before(r) <= u < _units_before(r + 1)."""
    b = S.to(tl.float32) + 0.5
    r = (tl.sqrt(b * b + 2.0 * u.to(tl.float32)) - b).to(tl.int32)
    # The square root may be a rounding off: one step either way puts it right.
    r = tl.where(_units_before(r + 1, S) <= u, r + 1, r)
    r = tl.where(_units_before(r, S) > u, r - 1, r)
    return r


@triton.jit
def _tile_at(u, S):
    """The first tile at or after unit u (a range that starts among a row's S units of fixed
    cost starts at the row's first tile)."""
    r = _row_of(u, S)
    return r * (r + 1) // 2 + tl.maximum(u - _units_before(r, S) - S, 0)


@triton.jit
def _program_of(x, r, S, units, programs):
    """The program whose range holds tile x of row r."""
    u = _units_before(r, S) + S + x - r * (r + 1) // 2
    return ((u + 1) * programs - 1) // units


@triton.jit
def _piece(
    i,
    pieces,
    p_first,
    pid,
    row_first,
    S,
    units,
    programs,
    part_ptr,
    stats_ptr,
    offs_i,
    offs_d,
    BLOCK_M: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    """The i-th of the other pieces of a row (program order, this program's skipped): its row
    maxima, row sums and normalised partial; for i past the last, maxima -inf and zeros."""
    there = i < pieces - 1
    p = p_first + tl.minimum(i, pieces - 2)
    p += (p >= pid).to(tl.int32)
    # The row is the first segment of every program after p_first; for p_first, only if that
    # program starts at the row's first tile.
    p_start = _tile_at(p * units // programs, S)
    other = 2 * p + (p_start < row_first).to(tl.int32)
    stats = stats_ptr + other * (2 * BLOCK_M)
    part = part_ptr + other * (BLOCK_M * BLOCK_D)
    rows = offs_i < there.to(tl.int32) * BLOCK_M  # every row, or none
    # .cg: read through L2, where the other multiprocessor wrote.
    m = tl.load(stats + offs_i, mask=rows, other=float("-inf"), cache_modifier=".cg")
    l_sum = tl.load(stats + BLOCK_M + offs_i, mask=rows, other=0.0, cache_modifier=".cg")
    o = tl.load(
        part + offs_i[:, None] * BLOCK_D + offs_d[None, :],
        mask=rows[:, None],
        other=0.0,
        cache_modifier=".cg",
    )
    return m, l_sum, o


def _configs_that_fit(configs, named_args, **kwargs):
    """Only key steps that tile a query block (and so a tile) exactly and, on the GPU, the first
    config whose queries and stages of K and V fit the device's shared memory: one config, so
    nothing is timed (two timed close together could swap places from run to run)."""
    tiling = [c for c in configs if c.kwargs["BLOCK_N"] <= kwargs["BLOCK_M"]]
    if DEVICE == "cpu":
        return tiling
    room = _device_properties()["max_shared_mem"] - SHARED_MARGIN
    for c in tiling:
        tiles = kwargs["BLOCK_M"] + 2 * c.num_stages * c.kwargs["BLOCK_N"]  # Q, then K and V
        if 2 * kwargs["BLOCK_D"] * tiles <= room:  # float16
            return [c]
    return tiling[-1:]


class _Float16:
    """A float16 buffer known by its address: what a TensorDescriptor reads of its base."""

    def __init__(self, address: int):
        import torch

        self.address, self.dtype = address, torch.float16

    def data_ptr(self) -> int:
        return self.address


def _set_block(nargs):
    """The autotuner's pre-hook: each descriptor's block is one step of keys, all of d."""
    for name in ("k_desc", "v_desc"):
        if not isinstance(nargs[name], int):
            nargs[name].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_D"]]


if DEVICE == "cuda":
    # One warp group a program. Three stages fit two programs in a multiprocessor's shared
    # memory on Hopper; two stages are for GPUs with less of it (the first that fits is used).
    CONFIGS = [
        triton.Config({"BLOCK_N": 64}, num_warps=4, num_stages=3, pre_hook=_set_block),
        triton.Config({"BLOCK_N": 64}, num_warps=4, num_stages=2, pre_hook=_set_block),
    ]
else:
    CONFIGS = [triton.Config({"BLOCK_N": 16}), triton.Config({"BLOCK_N": 32})]


@triton.autotune(
    configs=CONFIGS,
    key=["N", "BLOCK_D", "BLOCK_M", "TMA"],
    prune_configs_by={"early_config_prune": _configs_that_fit},
)
@triton.jit(do_not_specialize=["N", "S"])
def attention_kernel(
    q_ptr,  # address of Q, N x d, row-major, float16
    k_ptr,  # address of K, N x d, row-major, float16
    v_ptr,  # address of V, N x d, row-major, float16
    o_ptr,  # address of the output, N x d, row-major, float16
    part_ptr,  # scratch: 2 P x BLOCK_M x BLOCK_D float16 partial results, rows normalised
    stats_ptr,  # scratch: 2 P x 2 x BLOCK_M float32 row maxima, then row sums
    count_ptr,  # scratch: one int64 counter per query block, not initialised (COUNTER_TAG)
    q_desc,  # Q's tensor descriptor (TMA), else Q's address again
    k_desc,  # K's tensor descriptor (TMA), else K's address again
    v_desc,  # V's likewise
    o_desc,  # the output's likewise
    N,  # sequence length
    d,  # head dimension
    qk_scale,  # log2(e) / sqrt(d)
    S,  # units of fixed cost per row in the split of the work (ROW_COST, or 0)
    BLOCK_M: tl.constexpr,  # queries per tile, and keys per tile
    BLOCK_D: tl.constexpr,  # d rounded up to a power of two, at least 16
    EVEN_D: tl.constexpr,  # d == BLOCK_D
    EVEN_N: tl.constexpr,  # N % BLOCK_M == 0
    BLOCK_N: tl.constexpr,  # keys per step (chosen by the autotuner, divides BLOCK_M)
    TMA: tl.constexpr,  # load K and V through tensor descriptors (rows on 16-byte boundaries)
    TAG: tl.constexpr,  # COUNTER_TAG
):
    # Every buffer the judge passes starts on a 16-byte boundary, and so does torch.empty's.
    q_ptr = tl.multiple_of(q_ptr.to(tl.pointer_type(tl.float16)), 16)
    k_ptr = tl.multiple_of(k_ptr.to(tl.pointer_type(tl.float16)), 16)
    v_ptr = tl.multiple_of(v_ptr.to(tl.pointer_type(tl.float16)), 16)
    o_ptr = tl.multiple_of(o_ptr.to(tl.pointer_type(tl.float16)), 16)
    part_ptr = tl.multiple_of(part_ptr.to(tl.pointer_type(tl.float16)), 16)
    stats_ptr = tl.multiple_of(stats_ptr.to(tl.pointer_type(tl.float32)), 16)
    count_ptr = count_ptr.to(tl.pointer_type(tl.int64))
    if TMA:
        k_src = k_desc
        v_src = v_desc
    else:
        k_src = k_ptr
        v_src = v_ptr

    # This program's range of tiles: [start, end) of the T tiles, row 0's first.
    pid = tl.program_id(axis=0)
    programs = tl.num_programs(axis=0)
    rows = tl.cdiv(N, BLOCK_M)
    tiles = rows * (rows + 1) // 2
    units = tiles + rows * S
    start = _tile_at(pid * units // programs, S)
    end = _tile_at((pid + 1) * units // programs, S)

    offs_i = tl.arange(0, BLOCK_M)  # query row within the tile
    offs_d = tl.arange(0, BLOCK_D)
    r = _row_of(pid * units // programs, S)  # the row of tile `start`
    row_first = r * (r + 1) // 2  # the tile index of (row r, key block 0)
    x = start
    while x < end:
        # The segment of row r in this range: key blocks j0 .. j1 - 1 (j1 - 1 <= r).
        seg_end = tl.minimum(end, row_first + r + 1)
        j0 = x - row_first
        j1 = seg_end - row_first
        offs_m = r * BLOCK_M + offs_i
        q_offsets = offs_m[:, None] * d + offs_d[None, :]
        q_mask = (offs_m[:, None] < N) & (offs_d[None, :] < d)
        if TMA:
            q = q_desc.load([r * BLOCK_M, 0])
        else:
            q = tl.load(q_ptr + q_offsets, mask=q_mask, other=0.0)

        m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
        acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
        # Key blocks j0 .. j1 - 1; the diagonal block, if it is among them, masked.
        acc, l_i, m_i = _attend_keys(
            acc, l_i, m_i, q, k_src, v_src,
            j0 * BLOCK_M, tl.minimum(j1 * BLOCK_M, N), r * BLOCK_M,
            offs_m, N, d, qk_scale,
            BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D, EVEN_D=EVEN_D, EVEN_N=EVEN_N, TMA=TMA,
        )  # fmt: skip
        if (j0 == 0) & (j1 == r + 1):
            # The whole row is ours: normalise and store it.
            _store_rows(_normalised(acc, l_i), o_desc, o_ptr, q_offsets, q_mask, r, BLOCK_M, TMA)
        else:
            # A cut row. The row's counter is read first, by a plain load (an atomic read
            # would stall here): if every other piece is in already, this one is the last and
            # merges at once, leaving nothing in scratch. Every thread loads the word; the
            # largest value any of them saw stands for all, so that every thread takes the
            # same branch below. While the load is in flight, the partial is made ready:
            # normalised, each value is an average of rows of V, so float16 keeps it within
            # 2^-11 of itself.
            seen_v = tl.load(count_ptr + r + offs_i * 0, volatile=True)
            partial = _normalised(acc, l_i).to(tl.float16)
            # The programs that hold a piece of row r: those of its first and last tiles, and
            # every one between (each range holds at least one tile).
            p_first = _program_of(row_first, r, S, units, programs)
            p_last = _program_of(row_first + r, r, S, units, programs)
            pieces = p_last - p_first + 1
            seen = tl.max(seen_v, axis=0)
            tagged = (seen >> 16) == TAG
            if tagged & ((seen & 0xFFFF) == pieces - 1):
                # Every other piece was in when the counter was read, so this one is the last
                # and need not count itself in. The exchange puts the counter back to zero,
                # untagged, for whatever uses this memory next, and acquires the others'
                # partials. One thread makes the exchange: the barrier after it puts every
                # thread's reads of the other partials after its acquire.
                tl.atomic_xchg(count_ptr + r, 0, sem="acquire", scope="gpu")
                tl.debug_barrier()
                last = True
            else:
                # Leave the partial in this program's slot 0 (the range's first segment) or
                # slot 1 (its last). All BLOCK_M rows are stored (padding rows hold finite
                # values, l_i > 0 in every row), so no mask is needed.
                slot = 2 * pid + (x != start).to(tl.int32)
                part = part_ptr + slot * (BLOCK_M * BLOCK_D)
                tl.store(part + offs_i[:, None] * BLOCK_D + offs_d[None, :], partial)
                stats = stats_ptr + slot * (2 * BLOCK_M)
                tl.store(stats + offs_i, m_i)
                tl.store(stats + BLOCK_M + offs_i, l_i)
                # Every thread's stores are done (barrier) before one thread's atomic publishes
                # them (release, GPU scope); its acquire makes the others' partials visible here.
                tl.debug_barrier()
                # The counter: TAG times 2^16 plus the pieces arrived, or anything else for none.
                # Tagged, the counter only grows until the last piece resets it: one atomic add
                # counts this piece in. Untagged, a compare-and-swap from the value read tags
                # it; if another piece tagged it first, the add counts this one.
                if tagged:
                    before = tl.atomic_add(count_ptr + r, 1, sem="acq_rel", scope="gpu")
                else:
                    before = tl.atomic_cas(
                        count_ptr + r, seen, (TAG << 16) + 1, sem="acq_rel", scope="gpu"
                    )
                    if before != seen:
                        before = tl.atomic_add(count_ptr + r, 1, sem="acq_rel", scope="gpu")
                    else:
                        before = TAG << 16
                last = (before & 0xFFFF) == pieces - 1
                if last:
                    tl.atomic_xchg(count_ptr + r, 0, sem="relaxed", scope="gpu")
            if last:
                # The others' pieces in program order, ours skipped, two at a time: the loads
                # of both are in flight at once, so the merge waits on L2 once a pair.
                for i in range(0, pieces - 1, 2):
                    m_0, l_0, o_0 = _piece(
                        i, pieces, p_first, pid, row_first, S, units, programs,
                        part_ptr, stats_ptr, offs_i, offs_d, BLOCK_M, BLOCK_D,
                    )  # fmt: skip
                    m_1, l_1, o_1 = _piece(
                        i + 1, pieces, p_first, pid, row_first, S, units, programs,
                        part_ptr, stats_ptr, offs_i, offs_d, BLOCK_M, BLOCK_D,
                    )  # fmt: skip
                    m_new = tl.maximum(m_i, tl.maximum(m_0, m_1))
                    alpha = tl.math.exp2(m_i - m_new)
                    # Both rescaled to the largest maximum; a piece is normalised, so times its
                    # sum. A missing piece (maximum -inf, sum 0) weighs nothing.
                    w_0 = tl.math.exp2(m_0 - m_new) * l_0
                    w_1 = tl.math.exp2(m_1 - m_new) * l_1
                    l_i = l_i * alpha + w_0 + w_1
                    acc = acc * alpha[:, None] + o_0.to(tl.float32) * w_0[:, None]
                    acc += o_1.to(tl.float32) * w_1[:, None]
                    m_i = m_new
                _store_rows(
                    _normalised(acc, l_i), o_desc, o_ptr, q_offsets, q_mask, r, BLOCK_M, TMA
                )
        # On to the next row.
        x = seg_end
        row_first += r + 1
        r += 1


@functools.cache
def _device_properties() -> dict:
    from triton.runtime import driver

    return driver.active.utils.get_device_properties(driver.active.get_current_device())


def _programs() -> int:
    """Programs launched: PROGRAMS_PER_SM a multiprocessor (the interpreter's own number)."""
    if DEVICE == "cpu":
        return INTERPRET_PROGRAMS
    return PROGRAMS_PER_SM * _device_properties()["multiprocessor_count"]


# q_ptr, k_ptr, v_ptr, output_ptr are device addresses (Python ints) of N x d float16 matrices,
# row-major.
def solve(q_ptr: int, k_ptr: int, v_ptr: int, output_ptr: int, N: int, d: int):
    import torch  # scratch memory only: torch.empty allocates, it computes nothing

    BLOCK_D = max(16, triton.next_power_of_2(d))  # tl.dot needs at least 16 along K
    BLOCK_M = GPU_BLOCK_M if DEVICE == "cuda" else INTERPRET_BLOCK_M
    qk_scale = math.log2(math.e) / math.sqrt(d)
    # The tensor-memory accelerator needs every row of K and V on a 16-byte boundary.
    TMA = d % 8 == 0 and DEVICE == "cuda"
    if TMA:
        from triton.tools.tensor_descriptor import TensorDescriptor

        # The block is the autotuner's choice: its pre-hook sets it (_set_block).
        q_desc = TensorDescriptor(_Float16(q_ptr), [N, d], [d, 1], [BLOCK_M, BLOCK_D])
        k_desc = TensorDescriptor(_Float16(k_ptr), [N, d], [d, 1], [BLOCK_M, BLOCK_D])
        v_desc = TensorDescriptor(_Float16(v_ptr), [N, d], [d, 1], [BLOCK_M, BLOCK_D])
        o_desc = TensorDescriptor(_Float16(output_ptr), [N, d], [d, 1], [BLOCK_M, BLOCK_D])
    else:
        q_desc, k_desc, v_desc, o_desc = q_ptr, k_ptr, v_ptr, output_ptr
    rows = triton.cdiv(N, BLOCK_M)
    tiles = rows * (rows + 1) // 2
    # PROGRAMS_PER_SM programs a multiprocessor, each with the same cost (one wave).
    programs = min(_programs(), tiles)
    # Every row costs ROW_COST units besides its tiles, where a share holds more than that;
    # otherwise (a few tiles a program) S = 0 and the split is by tiles alone. Either way every
    # range holds at least one tile.
    S = ROW_COST if (tiles + rows * ROW_COST) // programs > ROW_COST else 0
    # Two slots per program: the partial of its first segment and of its last.
    part = torch.empty(2 * programs * BLOCK_M * BLOCK_D, dtype=torch.float16, device=DEVICE)
    stats = torch.empty(2 * programs * 2 * BLOCK_M, dtype=torch.float32, device=DEVICE)
    counts = torch.empty(rows, dtype=torch.int64, device=DEVICE)  # not filled: COUNTER_TAG
    attention_kernel[(programs,)](
        q_ptr,
        k_ptr,
        v_ptr,
        output_ptr,
        part.data_ptr(),
        stats.data_ptr(),
        counts.data_ptr(),
        q_desc,
        k_desc,
        v_desc,
        o_desc,
        N,
        d,
        qk_scale,
        S,
        BLOCK_M=BLOCK_M,
        BLOCK_D=BLOCK_D,
        EVEN_D=d == BLOCK_D,
        EVEN_N=N % BLOCK_M == 0,
        TMA=TMA,
        TAG=COUNTER_TAG,
    )
