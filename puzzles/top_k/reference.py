"""PyTorch reference for top_k: the same arguments as solve(), as tensors."""

import torch


def reference(input, output, N, k):
    output.copy_(torch.topk(input, k).values)  # largest first


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_ascending_order(input, output, N, k):
    """The k largest values, smallest of them first."""
    output.copy_(torch.topk(input, k).values.flip(0))


def mistake_first_block_only(input, output, N, k, block=1024):
    """The k largest of the first 1024 elements only."""
    output.copy_(torch.topk(input[:block], k).values)
