"""PyTorch reference for layer_norm: the same arguments as solve(), as tensors."""

import torch


def reference(input, weight, bias, output, N, C, eps):
    y = torch.nn.functional.layer_norm(input.view(N, C), (C,), weight, bias, eps)
    output.view(N, C).copy_(y)
