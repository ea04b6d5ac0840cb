# expect: failed wrong-answer
# mistake: ascending_order
# Writes the k largest values in ascending order (smallest of them first) instead of descending.
import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"

# The k largest values lie in the k groups with the largest maxima, whatever the grouping: a
# value above the k-th largest group maximum sits in a group whose maximum is above it too, and
# fewer than k groups are like that. So:
#
# 1. best_groups_kernel reads the input once. Each block of ROWS x K_PAD elements is split into
#    K_PAD groups (its columns); each program keeps the K_PAD best groups it has seen, as sorted
#    int64 keys (order-preserving bits of the group maximum, then the group number).
# 2. select_kernel merges the key lists of up to 16 programs (a team) into the K_PAD best groups
#    of the team, reads their elements and keeps the K_PAD largest values (narrowing to the best
#    sub-groups of SUB elements first, which is cheaper than sorting every element).
# 3. finish_kernel merges the teams' values and writes the k largest, in descending order.
#
# Sorted runs are built and combined with bitonic networks (`_bitonic`, `_keep_best`).

K_PAD = 128  # k <= 100, rounded up to a power of two
LOG_K = 7
ROWS = 128  # elements per group: a block is ROWS x K_PAD elements, K_PAD groups (its columns)
SUB = 16  # elements per sub-group in select_kernel
LOG_TEAM = 4  # up to 2**LOG_TEAM programs of best_groups_kernel merged by one of select_kernel
MAX_PROGRAMS = 264  # programs of best_groups_kernel (about two per SM)
LOG_SMALL = 12  # up to 2**LOG_SMALL elements, small_kernel sorts everything at once
SMALLEST = tl.constexpr(-(2**63))  # below every key


@triton.jit
def _bitonic(
    x,  # a tile of 2**LOG elements
    LOG: tl.constexpr,  # log2 of the tile size
    FIRST: tl.constexpr,  # first stage to run: stage s makes sorted runs of 2**s
    LAST: tl.constexpr,  # last stage to run
    descending,  # direction of a stage that spans the whole tile (s == LOG)
):
    # In stage s, element i is compared with i ^ 2**t for t = s-1 .. 0; the smaller goes first
    # where bit s of i is 0 (ascending run), second where it is 1 (descending run).
    for stage in tl.static_range(FIRST, LAST + 1):
        for step in tl.static_range(stage):
            # This step compares across index bit t = stage - 1 - step: view the tile as rows of
            # 2**t elements, pair each row with the row 2**t further on, and split the pairs.
            pairs = tl.reshape(x, [1 << (LOG - stage + step), 2, 1 << (stage - 1 - step)])
            first, second = tl.split(pairs.permute(0, 2, 1))
            if stage < LOG:  # the direction is bit `stage` of the index: bit `step` of the row
                down = ((tl.arange(0, 1 << (LOG - stage + step)) >> step) & 1)[:, None] != 0
            else:
                down = descending != 0
            low = tl.minimum(first, second)
            high = tl.maximum(first, second)
            pairs = tl.join(tl.where(down, high, low), tl.where(down, low, high))
            x = tl.reshape(pairs.permute(0, 2, 1), [1 << LOG])
    return x


@triton.jit
def _keep_best(
    x,  # 2**LOG elements in sorted runs of 2**RUN, alternately ascending and descending
    LOG: tl.constexpr,  # log2 of the number of elements
    RUN: tl.constexpr,  # log2 of the run length
    descending,  # direction of the single run returned
):
    # Halve until one run is left: the element-wise maximum of an ascending and a descending run
    # holds the 2**RUN largest of both (as a bitonic sequence), which one merge stage sorts.
    for level in tl.static_range(LOG - RUN):
        # pair each ascending run with the descending run after it; 2**(LOG - 1 - level) remain
        pairs = tl.reshape(x, [1 << (LOG - 1 - level - RUN), 2, 1 << RUN]).permute(0, 2, 1)
        up, down = tl.split(pairs)
        x = tl.reshape(tl.maximum(up, down), [1 << (LOG - 1 - level)])
        x = _bitonic(x, LOG - 1 - level, RUN, RUN, descending)
    return x


@triton.jit
def _key(value, number):
    # int64 key that sorts like the float value, then like the (non-negative) number
    bits = value.to(tl.int32, bitcast=True)
    bits = tl.where(bits < 0, bits ^ 0x7FFFFFFF, bits)  # negative floats: flip magnitude bits
    return (bits.to(tl.int64) << 32) | number.to(tl.int64)


@triton.jit
def small_kernel(
    input_ptr,  # address of the input vector (N <= 2**LOG elements)
    output_ptr,  # address of the output vector (k elements)
    N,  # number of elements
    k,  # number of values to write
    LOG: tl.constexpr,  # log2 of the padded length
):
    # Few elements: one program sorts them all, descending, and writes the first k.
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.arange(0, 1 << LOG)
    x = tl.load(input_ptr + offsets, mask=offsets < N, other=float("-inf"))
    x = _bitonic(x, LOG, 1, LOG, 1)
    tl.store(output_ptr + (k - 1 - offsets), x, mask=offsets < k)  # back to front


@triton.jit
def best_groups_kernel(
    input_ptr,  # address of the input vector
    keys_ptr,  # address of the scratch list: K_PAD group keys per program
    N,  # number of elements
    iterations,  # blocks handled by each program (the last may lie past the end)
    K_PAD: tl.constexpr,  # groups per block, and groups kept per program
    LOG_K: tl.constexpr,  # log2(K_PAD)
    ROWS: tl.constexpr,  # elements per group
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    keys_ptr = keys_ptr.to(tl.pointer_type(tl.int64))
    pid = tl.program_id(axis=0)
    programs = tl.num_programs(axis=0)
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, K_PAD)
    best = tl.full([K_PAD], SMALLEST, tl.int64)  # ascending: the best group keys so far
    for i in range(iterations):
        block = i * programs + pid  # blocks are dealt out round-robin
        offsets = block * (ROWS * K_PAD) + rows[:, None] * K_PAD + cols[None, :]
        x = tl.load(input_ptr + offsets, mask=offsets < N, other=float("-inf"))
        keys = _key(tl.max(x, axis=0), block * K_PAD + cols)  # group = column of the block
        keys = _bitonic(keys, LOG_K, 1, LOG_K, 1)  # sorted descending
        best = _bitonic(tl.maximum(best, keys), LOG_K, LOG_K, LOG_K, 0)  # ascending again
    # lists alternate ascending / descending, as _keep_best expects
    best = _bitonic(best, LOG_K, LOG_K, LOG_K, pid % 2)
    tl.store(keys_ptr + pid * K_PAD + cols, best)


@triton.jit
def select_kernel(
    input_ptr,  # address of the input vector
    keys_ptr,  # address of the group keys from best_groups_kernel
    values_ptr,  # address of the scratch list: K_PAD values per program
    N,  # number of elements
    num_keys,  # number of group keys
    K_PAD: tl.constexpr,  # groups, sub-groups and values kept
    LOG_K: tl.constexpr,  # log2(K_PAD)
    ROWS: tl.constexpr,  # elements per group
    SUB: tl.constexpr,  # elements per sub-group
    LOG_TEAM: tl.constexpr,  # log2 of the key lists merged by one program
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    keys_ptr = keys_ptr.to(tl.pointer_type(tl.int64))
    values_ptr = values_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    # 1. the K_PAD best groups of this team of lists
    offsets = pid * (K_PAD << LOG_TEAM) + tl.arange(0, K_PAD << LOG_TEAM)
    keys = tl.load(keys_ptr + offsets, mask=offsets < num_keys, other=SMALLEST)
    best = _keep_best(keys, LOG_K + LOG_TEAM, LOG_K, 0)
    group = (best & 0xFFFFFFFF).to(tl.int32)
    # group g is column g % K_PAD of block g // K_PAD: its element r is at first + r * K_PAD
    first = (group // K_PAD) * (ROWS * K_PAD) + group % K_PAD
    # 2. their sub-groups of SUB consecutive rows, and the K_PAD best of those
    PARTS: tl.constexpr = ROWS // SUB
    r = tl.arange(0, ROWS)
    offsets = first[:, None] + r[None, :] * K_PAD
    valid = (offsets < N) & (best != SMALLEST)[:, None]
    x = tl.load(input_ptr + offsets, mask=valid, other=float("-inf"))
    maxima = tl.max(tl.reshape(x, [K_PAD, PARTS, SUB]), axis=2)
    part = group[:, None] * PARTS + tl.arange(0, PARTS)[None, :]
    LOG_P: tl.constexpr = LOG_K + PARTS.bit_length() - 1  # log2(K_PAD * PARTS)
    subs = tl.reshape(_key(maxima, part), [K_PAD * PARTS])
    subs = _keep_best(_bitonic(subs, LOG_P, 1, LOG_K, 0), LOG_P, LOG_K, 0)
    part = (subs & 0xFFFFFFFF).to(tl.int32)
    first = ((part // PARTS) // K_PAD) * (ROWS * K_PAD) + (part // PARTS) % K_PAD
    first += (part % PARTS) * SUB * K_PAD
    # 3. their elements, and the K_PAD largest of those
    offsets = first[:, None] + tl.arange(0, SUB)[None, :] * K_PAD
    valid = (offsets < N) & (subs != SMALLEST)[:, None]
    x = tl.reshape(tl.load(input_ptr + offsets, mask=valid, other=float("-inf")), [K_PAD * SUB])
    LOG_S: tl.constexpr = LOG_K + SUB.bit_length() - 1  # log2(K_PAD * SUB)
    x = _keep_best(_bitonic(x, LOG_S, 1, LOG_K, 0), LOG_S, LOG_K, pid % 2)
    tl.store(values_ptr + pid * K_PAD + tl.arange(0, K_PAD), x)


@triton.jit
def finish_kernel(
    values_ptr,  # address of the values from select_kernel
    output_ptr,  # address of the output vector (k elements)
    num_values,  # number of values
    k,  # number of values to write
    K_PAD: tl.constexpr,  # values per list (k rounded up to a power of two)
    LOG_K: tl.constexpr,  # log2(K_PAD)
    LOG_RUNS: tl.constexpr,  # log2 of the number of value lists (rounded up)
):
    values_ptr = values_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.arange(0, K_PAD << LOG_RUNS)
    x = tl.load(values_ptr + offsets, mask=offsets < num_values, other=float("-inf"))
    x = _keep_best(x, LOG_K + LOG_RUNS, LOG_K, 1)  # the K_PAD largest, descending
    lanes = tl.arange(0, K_PAD)
    tl.store(output_ptr + (k - 1 - lanes), x, mask=lanes < k)  # back to front


def solve(input_ptr: int, output_ptr: int, N: int, k: int):
    if N <= 1 << LOG_SMALL:
        LOG = max(LOG_K, (N - 1).bit_length())
        small_kernel[(1,)](input_ptr, output_ptr, N, k, LOG=LOG, num_warps=4)
        return
    blocks = triton.cdiv(N, ROWS * K_PAD)
    programs = min(blocks, MAX_PROGRAMS)
    iterations = triton.cdiv(blocks, programs)
    log_team = min(LOG_TEAM, (programs - 1).bit_length())  # no wider than needed
    teams = triton.cdiv(programs, 1 << log_team)
    # scratch: the group keys of every program, then the values of every team
    keys = torch.empty(programs * K_PAD, dtype=torch.int64, device=DEVICE)
    values = torch.empty(teams * K_PAD, dtype=torch.float32, device=DEVICE)
    best_groups_kernel[(programs,)](
        input_ptr,
        keys.data_ptr(),
        N,
        iterations,
        K_PAD=K_PAD,
        LOG_K=LOG_K,
        ROWS=ROWS,
        num_warps=8,
    )
    select_kernel[(teams,)](
        input_ptr,
        keys.data_ptr(),
        values.data_ptr(),
        N,
        programs * K_PAD,
        K_PAD=K_PAD,
        LOG_K=LOG_K,
        ROWS=ROWS,
        SUB=SUB,
        LOG_TEAM=log_team,
        num_warps=8,
    )
    finish_kernel[(1,)](
        values.data_ptr(),
        output_ptr,
        teams * K_PAD,
        k,
        K_PAD=K_PAD,
        LOG_K=LOG_K,
        LOG_RUNS=max(1, (teams - 1).bit_length()),
        num_warps=4,
    )
