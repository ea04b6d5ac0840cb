# expect: failed wrong-answer
# mistake: only_256_bins
# Hard-codes 256 bins, the benchmark's: tl.histogram(values, 256) never counts a value of 256 or
# more, so the upper bins of a larger histogram stay at zero.
import triton
import triton.language as tl


@triton.jit
def zero_kernel(histogram_ptr, num_bins, NUM_BINS: tl.constexpr):
    histogram_ptr = histogram_ptr.to(tl.pointer_type(tl.int32))
    bins = tl.arange(0, NUM_BINS)
    tl.store(histogram_ptr + bins, tl.zeros([NUM_BINS], dtype=tl.int32), mask=bins < num_bins)


@triton.jit
def histogram_kernel(input_ptr, histogram_ptr, N, num_bins, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.int32))
    histogram_ptr = histogram_ptr.to(tl.pointer_type(tl.int32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    values = tl.load(input_ptr + offsets, mask=mask, other=0)
    counts = tl.histogram(values, 256, mask=mask)
    bins = tl.arange(0, 256)
    tl.atomic_add(histogram_ptr + bins, counts, mask=bins < num_bins)


def solve(input_ptr: int, histogram_ptr: int, N: int, num_bins: int):
    zero_kernel[(1,)](histogram_ptr, num_bins, NUM_BINS=triton.next_power_of_2(num_bins))
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    histogram_kernel[grid](input_ptr, histogram_ptr, N, num_bins, BLOCK_SIZE=BLOCK_SIZE)
