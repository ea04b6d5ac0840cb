# expect: failed wrong-answer
# mistake: counts_padding
# Loads the last, partial block with other=0 and counts it whole: every lane past N adds a
# phantom 0 to bin 0.
import triton
import triton.language as tl


@triton.jit
def zero_kernel(histogram_ptr, num_bins, NUM_BINS: tl.constexpr):
    histogram_ptr = histogram_ptr.to(tl.pointer_type(tl.int32))
    bins = tl.arange(0, NUM_BINS)
    tl.store(histogram_ptr + bins, tl.zeros([NUM_BINS], dtype=tl.int32), mask=bins < num_bins)


@triton.jit
def histogram_kernel(
    input_ptr, histogram_ptr, N, num_bins, BLOCK_SIZE: tl.constexpr, NUM_BINS: tl.constexpr
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.int32))
    histogram_ptr = histogram_ptr.to(tl.pointer_type(tl.int32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    values = tl.load(input_ptr + offsets, mask=offsets < N, other=0)
    counts = tl.histogram(values, NUM_BINS)
    bins = tl.arange(0, NUM_BINS)
    tl.atomic_add(histogram_ptr + bins, counts, mask=bins < num_bins)


def solve(input_ptr: int, histogram_ptr: int, N: int, num_bins: int):
    NUM_BINS = triton.next_power_of_2(num_bins)
    zero_kernel[(1,)](histogram_ptr, num_bins, NUM_BINS=NUM_BINS)
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    histogram_kernel[grid](
        input_ptr, histogram_ptr, N, num_bins, BLOCK_SIZE=BLOCK_SIZE, NUM_BINS=NUM_BINS
    )
