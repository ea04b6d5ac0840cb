"""PyTorch reference for dot_product: the same arguments as solve(), as tensors."""

import torch


def reference(a, b, result, N):
    torch.dot(a, b, out=result[0])


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_no_program_id(a, b, result, N, block=1024):
    """Each of the cdiv(N, 1024) programs adds the dot product of the first block."""
    programs = -(-N // block)
    result[0] = programs * torch.dot(a[:block], b[:block])


def mistake_no_zeroing(a, b, result, N):
    """The partial sums added to result[0]'s garbage, a NaN: it stays NaN."""
    result[0] = float("nan") + torch.dot(a, b)
