"""PyTorch reference for softmax_rows: the same arguments as solve(), as tensors."""

import torch


def reference(input, output, rows, cols):
    torch.softmax(input.view(rows, cols), dim=1, out=output.view(rows, cols))


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_no_max_subtraction(input, output, rows, cols):
    """exp(x) divided by its row sum as it is, in float32: exp overflows to inf beyond 88, and
    inf / inf is NaN."""
    e = input.view(rows, cols).float().exp()
    output.view(rows, cols).copy_(e / e.sum(dim=1, keepdim=True))


def mistake_pads_with_zero(input, output, rows, cols):
    """Each row padded to the next power of two with 0.0, the padding counted in its maximum and
    its sum."""
    pad = (1 << (cols - 1).bit_length()) - cols
    x = input.view(rows, cols)
    top = x.max(dim=1, keepdim=True).values
    if pad:
        top = top.clamp(min=0.0)
    e = (x - top).exp()
    output.view(rows, cols).copy_(e / (e.sum(dim=1, keepdim=True) + pad * (-top).exp()))
