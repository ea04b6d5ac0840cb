# expect: failed wrong-answer
# mistake: pads_with_zero
# Pads the last block with 0.0 instead of +inf: the zeros sort in among the data and push the
# largest values out of the first N places.
import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


@triton.jit
def _bitonic(
    x,  # a tile of 2**LOG elements
    LOG: tl.constexpr,  # log2 of the tile size
    FIRST: tl.constexpr,  # first stage to run
    LAST: tl.constexpr,  # last stage to run
    LOW: tl.constexpr,  # lowest index bit compared in each stage
    descending,  # direction of a stage that spans the whole tile (stage == LOG): 0 or 1
):
    for stage in tl.static_range(FIRST, LAST + 1):
        for step in tl.static_range(stage - LOW):
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
def sort_blocks_kernel(
    src_ptr,  # address to read from: the data
    dst_ptr,  # address to write to: the data (a single block) or the scratch buffer
    N,  # number of elements in the data; the rest of the last block reads as +inf
    limit,  # number of elements of dst that may be written
    LOG_B: tl.constexpr,  # log2 of the block size
):
    src_ptr = src_ptr.to(tl.pointer_type(tl.float32))
    dst_ptr = dst_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    offsets = pid * (1 << LOG_B) + tl.arange(0, 1 << LOG_B)
    x = tl.load(src_ptr + offsets, mask=offsets < N, other=0.0)  # should be +inf
    # blocks alternate ascending / descending (bit LOG_B of the index), ready to merge in pairs;
    # a single block (pid 0) ends ascending
    x = _bitonic(x, LOG_B, 1, LOG_B, 0, pid % 2)
    tl.store(dst_ptr + offsets, x, mask=offsets < limit)


@triton.jit
def merge_across_kernel(
    buf_ptr,  # address of the scratch buffer (NPAD elements)
    LOG_K: tl.constexpr,  # the stage: runs of 2**(LOG_K - 1) become runs of 2**LOG_K
    LOG_B: tl.constexpr,  # log2 of the block size: this kernel compares bits LOG_K-1 .. LOG_B
    LOG_C: tl.constexpr,  # log2 of the number of contiguous columns in a tile
):
    buf_ptr = buf_ptr.to(tl.pointer_type(tl.float32))
    ROWS: tl.constexpr = LOG_K - LOG_B  # index bits LOG_B .. LOG_K - 1 number the tile's rows
    pid = tl.program_id(axis=0)
    chunks: tl.constexpr = 1 << (LOG_B - LOG_C)  # tiles side by side across one block
    base = (pid // chunks) * (1 << LOG_K) + (pid % chunks) * (1 << LOG_C)
    rows = tl.arange(0, 1 << ROWS)
    cols = tl.arange(0, 1 << LOG_C)
    offsets = base + rows[:, None] * (1 << LOG_B) + cols[None, :]
    x = tl.reshape(tl.load(buf_ptr + offsets), [1 << (ROWS + LOG_C)])
    # in the flattened tile, row bit q is bit q + LOG_C; the whole tile runs one direction
    x = _bitonic(x, ROWS + LOG_C, ROWS + LOG_C, ROWS + LOG_C, LOG_C, (base >> LOG_K) & 1)
    tl.store(buf_ptr + offsets, tl.reshape(x, [1 << ROWS, 1 << LOG_C]))


@triton.jit
def merge_within_kernel(
    src_ptr,  # address of the scratch buffer
    dst_ptr,  # the scratch buffer again, or the data after the last stage
    limit,  # number of elements of dst that may be written
    LOG_K: tl.constexpr,  # the stage, as in merge_across_kernel
    LOG_B: tl.constexpr,  # log2 of the block size: this kernel compares bits LOG_B-1 .. 0
):
    src_ptr = src_ptr.to(tl.pointer_type(tl.float32))
    dst_ptr = dst_ptr.to(tl.pointer_type(tl.float32))
    pid = tl.program_id(axis=0)
    offsets = pid * (1 << LOG_B) + tl.arange(0, 1 << LOG_B)
    x = tl.load(src_ptr + offsets)
    x = _bitonic(x, LOG_B, LOG_B, LOG_B, 0, ((pid * (1 << LOG_B)) >> LOG_K) & 1)
    tl.store(dst_ptr + offsets, x, mask=offsets < limit)


def solve(data_ptr: int, N: int):
    log_n = max(4, (N - 1).bit_length())  # NPAD = 2**log_n >= N, at least 16
    LOG_B = min(log_n, 12)  # blocks of up to 4096 elements
    LOG_TILE = 12  # merge_across_kernel works on tiles of 4096 elements
    blocks = 1 << (log_n - LOG_B)
    if blocks == 1:
        sort_blocks_kernel[(1,)](data_ptr, data_ptr, N, N, LOG_B=LOG_B, num_warps=4)
        return
    npad = 1 << log_n
    scratch = torch.empty(npad, dtype=torch.float32, device=DEVICE)
    buf = scratch.data_ptr()
    sort_blocks_kernel[(blocks,)](data_ptr, buf, N, npad, LOG_B=LOG_B, num_warps=4)
    for log_k in range(LOG_B + 1, log_n + 1):
        LOG_C = min(LOG_B, LOG_TILE - (log_k - LOG_B))
        merge_across_kernel[(npad >> (log_k - LOG_B + LOG_C),)](
            buf, LOG_K=log_k, LOG_B=LOG_B, LOG_C=LOG_C, num_warps=4
        )
        last = log_k == log_n
        merge_within_kernel[(blocks,)](
            buf,
            data_ptr if last else buf,
            N if last else npad,
            LOG_K=log_k,
            LOG_B=LOG_B,
            num_warps=4,
        )
