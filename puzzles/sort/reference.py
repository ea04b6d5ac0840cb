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
