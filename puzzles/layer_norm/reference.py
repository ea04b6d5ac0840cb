"""PyTorch reference for layer_norm: the same arguments as solve(), as tensors."""

import torch


def reference(input, weight, bias, output, N, C, eps):
    y = torch.nn.functional.layer_norm(input.view(N, C), (C,), weight, bias, eps)
    output.view(N, C).copy_(y)


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def _centred(input, N, C):
    x = input.view(N, C)
    return x - x.mean(dim=1, keepdim=True)


def mistake_eps_outside_sqrt(input, weight, bias, output, N, C, eps):
    """eps added to the standard deviation: (x - mean) / (sqrt(var) + eps)."""
    centred = _centred(input, N, C)
    std = centred.square().mean(dim=1, keepdim=True).sqrt()
    output.view(N, C).copy_(centred / (std + eps) * weight + bias)


def mistake_padding_in_variance(input, weight, bias, output, N, C, eps):
    """Each row padded with zeros to the next power of two, and each padded column's
    (0 - mean)^2 added to the sum of squares (still divided by C)."""
    pad = (1 << (C - 1).bit_length()) - C
    x = input.view(N, C)
    mean = x.mean(dim=1, keepdim=True)
    centred = x - mean
    var = (centred.square().sum(dim=1, keepdim=True) + pad * mean.square()) / C
    output.view(N, C).copy_(centred / (var + eps).sqrt() * weight + bias)


def mistake_unbiased_variance(input, weight, bias, output, N, C, eps):
    """The sum of squares divided by C - 1 instead of C (0 / 0, NaN, at C = 1)."""
    centred = _centred(input, N, C)
    var = centred.square().sum(dim=1, keepdim=True) / (C - 1)
    output.view(N, C).copy_(centred / (var + eps).sqrt() * weight + bias)
