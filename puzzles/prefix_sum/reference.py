"""PyTorch reference for prefix_sum: the same arguments as solve(), as tensors."""

import torch


def reference(input, output, N):
    torch.cumsum(input, dim=0, out=output)
