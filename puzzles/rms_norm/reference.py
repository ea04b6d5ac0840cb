"""PyTorch reference for rms_norm: the same arguments as solve(), as tensors."""

import torch


def reference(input, weight, output, N, C, eps):
    y = torch.nn.functional.rms_norm(input.view(N, C), (C,), weight, eps)
    output.view(N, C).copy_(y)


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_eps_outside_sqrt(input, weight, output, N, C, eps):
    """eps added to the root mean square: x / (sqrt(mean square) + eps)."""
    x = input.view(N, C)
    rms = x.square().mean(dim=1, keepdim=True).sqrt()
    output.view(N, C).copy_(x / (rms + eps) * weight)


def mistake_mean_over_block_size(input, weight, output, N, C, eps):
    """The sum of squares divided by the padded width, the next power of two of C, not by C."""
    block = 1 << (C - 1).bit_length()
    x = input.view(N, C)
    mean_square = x.square().sum(dim=1, keepdim=True) / block
    output.view(N, C).copy_(x / (mean_square + eps).sqrt() * weight)
