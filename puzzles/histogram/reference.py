"""PyTorch reference for histogram: the same arguments as solve(), as tensors."""

import torch


def reference(input, histogram, N, num_bins):
    histogram.copy_(torch.bincount(input, minlength=num_bins))


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.

GARBAGE = 0x5A5A5A5A  # what the judge fills an int32 output with before each call


def mistake_counts_padding(input, histogram, N, num_bins, block=1024):
    """Blocks of 1024 counted whole: every lane past N adds a 0 to bin 0."""
    reference(input, histogram, N, num_bins)
    histogram[0] += -N % block


def mistake_no_atomics(input, histogram, N, num_bins, block=1024):
    """A load, +1 and store per lane, one program after another (as the interpreter runs them):
    each block adds 1 to every distinct value it holds, however often it holds it."""
    histogram.zero_()
    for start in range(0, N, block):
        histogram[torch.unique(input[start : start + block])] += 1


def mistake_no_zeroing(input, histogram, N, num_bins):
    """The right counts added to what the histogram held before the call."""
    histogram.copy_(torch.bincount(input, minlength=num_bins) + GARBAGE)


def mistake_only_256_bins(input, histogram, N, num_bins):
    """tl.histogram with 256 bins drops every value of 256 or more; those bins stay zero."""
    reference(input, histogram, N, num_bins)
    histogram[256:] = 0
