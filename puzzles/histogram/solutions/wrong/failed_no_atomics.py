# expect: failed wrong-answer
# mistake: no_atomics
# Increments the counts with a plain load, add and store per element: when a block holds the same
# value twice, both lanes read the same old count and both write old + 1, so counts are lost
# (and programs running at once overwrite each other's updates on the GPU).
import triton
import triton.language as tl


@triton.jit
def zero_kernel(histogram_ptr, num_bins, NUM_BINS: tl.constexpr):
    histogram_ptr = histogram_ptr.to(tl.pointer_type(tl.int32))
    bins = tl.arange(0, NUM_BINS)
    tl.store(histogram_ptr + bins, tl.zeros([NUM_BINS], dtype=tl.int32), mask=bins < num_bins)


@triton.jit
def histogram_kernel(input_ptr, histogram_ptr, N, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.int32))
    histogram_ptr = histogram_ptr.to(tl.pointer_type(tl.int32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    values = tl.load(input_ptr + offsets, mask=mask, other=0)
    old = tl.load(histogram_ptr + values, mask=mask)
    tl.store(histogram_ptr + values, old + 1, mask=mask)


def solve(input_ptr: int, histogram_ptr: int, N: int, num_bins: int):
    zero_kernel[(1,)](histogram_ptr, num_bins, NUM_BINS=triton.next_power_of_2(num_bins))
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    histogram_kernel[grid](input_ptr, histogram_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
