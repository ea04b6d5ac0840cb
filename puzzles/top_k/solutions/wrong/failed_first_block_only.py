# expect: failed wrong-answer
# mistake: first_block_only
# Sorts the first block of 1024 elements and writes its k largest: values past the first block
# are never looked at.
import triton
import triton.language as tl


@triton.jit
def top_k_kernel(input_ptr, output_ptr, N, k, LOG_B: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.arange(0, 1 << LOG_B)
    x = tl.load(input_ptr + offsets, mask=offsets < N, other=float("-inf"))
    # a bitonic sort of the block, descending
    for stage in tl.static_range(1, LOG_B + 1):
        for step in tl.static_range(stage):
            pairs = tl.reshape(x, [1 << (LOG_B - stage + step), 2, 1 << (stage - 1 - step)])
            first, second = tl.split(pairs.permute(0, 2, 1))
            if stage < LOG_B:
                down = ((tl.arange(0, 1 << (LOG_B - stage + step)) >> step) & 1)[:, None] != 0
            else:
                down = True
            low = tl.minimum(first, second)
            high = tl.maximum(first, second)
            pairs = tl.join(tl.where(down, high, low), tl.where(down, low, high))
            x = tl.reshape(pairs.permute(0, 2, 1), [1 << LOG_B])
    tl.store(output_ptr + offsets, x, mask=offsets < k)


def solve(input_ptr: int, output_ptr: int, N: int, k: int):
    top_k_kernel[(1,)](input_ptr, output_ptr, N, k, LOG_B=10, num_warps=4)
