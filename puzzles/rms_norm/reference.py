"""PyTorch reference for rms_norm: the same arguments as solve(), as tensors."""

import torch


def reference(input, weight, output, N, C, eps):
    y = torch.nn.functional.rms_norm(input.view(N, C), (C,), weight, eps)
    output.view(N, C).copy_(y)
