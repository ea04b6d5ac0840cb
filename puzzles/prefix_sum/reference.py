"""PyTorch reference for prefix_sum: the same arguments as solve(), as tensors."""

import torch


def reference(input, output, N):
    torch.cumsum(input, dim=0, out=output)


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_block_local_scan(input, output, N, block=1024):
    """Each block of 1024 scanned on its own, without the totals of the blocks before it."""
    for start in range(0, N, block):
        torch.cumsum(input[start : start + block], dim=0, out=output[start : start + block])


def mistake_exclusive_scan(input, output, N):
    """output[i] = input[0] + ... + input[i - 1], output[0] = 0."""
    torch.cumsum(input, dim=0, out=output)
    output.sub_(input)


def mistake_own_block_counted_twice(input, output, N, block=1024):
    """The inclusive scan plus each element's own block total, added a second time."""
    torch.cumsum(input, dim=0, out=output)
    totals = torch.zeros(-(-N // block) * block, dtype=input.dtype)
    totals[:N] = input
    output.add_(totals.view(-1, block).sum(dim=1).repeat_interleave(block)[:N])
