import triton
import triton.language as tl


@triton.jit
def histogram_kernel(
    input_ptr,  # address of the N input values, each in [0, num_bins)
    histogram_ptr,  # address of the num_bins counts (hold garbage on entry)
    N,  # number of input values
    num_bins,  # number of bins
    BLOCK_SIZE: tl.constexpr,  # values handled by one program
    NUM_BINS: tl.constexpr,  # num_bins rounded up to a power of two, for tl.histogram
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.int32))
    histogram_ptr = histogram_ptr.to(tl.pointer_type(tl.int32))
    # Your code: load this program's block (masked), count it locally, and add the local counts
    # to the histogram with tl.atomic_add (after zeroing the histogram in an earlier kernel).


# input_ptr, histogram_ptr are device addresses (Python ints); N is the number of input values,
# num_bins the number of bins.
def solve(input_ptr: int, histogram_ptr: int, N: int, num_bins: int):
    BLOCK_SIZE = 1024
    NUM_BINS = triton.next_power_of_2(num_bins)
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    histogram_kernel[grid](
        input_ptr, histogram_ptr, N, num_bins, BLOCK_SIZE=BLOCK_SIZE, NUM_BINS=NUM_BINS
    )
