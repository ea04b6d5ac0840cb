# expect: failed wrong-answer
# mistake: sorts_blocks_only
# Sorts each block of 1024 elements and stops: the blocks are never merged with each other.
import triton
import triton.language as tl


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
    x = tl.load(src_ptr + offsets, mask=offsets < N, other=float("inf"))
    x = _bitonic(x, LOG_B, 1, LOG_B, 0, 0)  # every block ascending
    tl.store(dst_ptr + offsets, x, mask=offsets < limit)


def solve(data_ptr: int, N: int):
    LOG_B = 10
    blocks = triton.cdiv(N, 1 << LOG_B)
    sort_blocks_kernel[(blocks,)](data_ptr, data_ptr, N, N, LOG_B=LOG_B, num_warps=4)
