"""PyTorch reference for relu: the same arguments as solve(), as tensors."""

import torch


def reference(input, output, N):
    torch.clamp(input, min=0.0, out=output)


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_minimum(input, output, N):
    """min(x, 0) in place of max(x, 0): the negatives kept, the positives zeroed."""
    torch.clamp(input, max=0.0, out=output)
