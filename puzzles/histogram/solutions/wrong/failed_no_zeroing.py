# expect: failed unwritten|wrong-answer
# mistake: no_zeroing
# Adds the block counts into the histogram with atomics without zeroing it first: every count
# sits on top of the garbage that was there.
import triton
import triton.language as tl


@triton.jit
def histogram_kernel(
    input_ptr, histogram_ptr, N, num_bins, BLOCK_SIZE: tl.constexpr, NUM_BINS: tl.constexpr
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.int32))
    histogram_ptr = histogram_ptr.to(tl.pointer_type(tl.int32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    values = tl.load(input_ptr + offsets, mask=mask, other=0)
    counts = tl.histogram(values, NUM_BINS, mask=mask)
    bins = tl.arange(0, NUM_BINS)
    tl.atomic_add(histogram_ptr + bins, counts, mask=bins < num_bins)


def solve(input_ptr: int, histogram_ptr: int, N: int, num_bins: int):
    NUM_BINS = triton.next_power_of_2(num_bins)
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    histogram_kernel[grid](
        input_ptr, histogram_ptr, N, num_bins, BLOCK_SIZE=BLOCK_SIZE, NUM_BINS=NUM_BINS
    )
