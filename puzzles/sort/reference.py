"""PyTorch reference for sort: the same arguments as solve(), as tensors."""

import numpy as np
import torch


def reference(data, N):
    if not data.is_cuda:
        # The judge's float64 truth, on the CPU: torch.sort takes over 2 s there at N = 2^24 on
        # two cores, NumPy's sort a tenth of that. Both sort exactly, so the values are the same.
        data.copy_(torch.from_numpy(np.sort(data.numpy())))
        return
    data.copy_(torch.sort(data).values)


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_pads_with_zero(data, N):
    """N padded to a power of two (at least 16) with 0.0, sorted, the first N kept."""
    padded = torch.zeros(max(16, 1 << (N - 1).bit_length()), dtype=data.dtype)
    padded[:N] = data
    data.copy_(padded.sort().values[:N])


def mistake_sorts_blocks_only(data, N, block=1024):
    """Each block of 1024 sorted on its own, never merged."""
    for start in range(0, N, block):
        data[start : start + block] = data[start : start + block].sort().values
