"""PyTorch reference for reduction: the same arguments as solve(), as tensors."""

import torch


def reference(input, output, N):
    torch.sum(input, dim=0, keepdim=True, out=output)


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_drops_tail(input, output, N, block=1024):
    """max(N // 1024, 1) programs: the values after the last full block are never added."""
    programs = max(N // block, 1)
    output[0] = input[: programs * block].sum()


def mistake_no_zeroing(input, output, N):
    """The partial sums added to output[0]'s garbage, a NaN: it stays NaN."""
    output[0] = float("nan") + input.sum()


def mistake_store_not_atomic(input, output, N, block=1024):
    """Each program stores its block's sum; the last store (the last block's, in the
    interpreter, which runs the programs in order) is left."""
    last = (N - 1) // block * block
    output[0] = input[last:].sum()
