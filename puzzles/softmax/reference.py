"""PyTorch reference for softmax: the same arguments as solve(), as tensors."""

import torch


def reference(input, output, N):
    torch.softmax(input, dim=0, out=output)


def composite(input, output, N):
    """The same output from four PyTorch operations, each a fast kernel over the whole vector
    (torch.softmax over one long row runs at a few percent of the copy bandwidth)."""
    torch.sub(input, input.max(), out=output)
    output.exp_()
    output.div_(output.sum())


# Other library means to the same output, timed beside the reference; the fastest is reported.
LIBRARY = {"exp(x - max) / sum (4 torch ops)": composite}


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_block_local(input, output, N, block=1024):
    """Each block of 1024 normalised by its own maximum and sum."""
    for start in range(0, N, block):
        torch.softmax(input[start : start + block], dim=0, out=output[start : start + block])


def mistake_no_max_subtraction(input, output, N):
    """exp(x) summed as it is, in float32: exp overflows to inf beyond 88, and inf / inf is NaN."""
    e = input.float().exp()
    output.copy_(e / e.sum())


def mistake_pads_with_zero(input, output, N, block=4096):
    """Each block's maximum and sum taken over 4096 lanes, the lanes past N loaded as 0.0."""
    padded = torch.zeros(-(-N // block) * block, dtype=input.dtype)
    padded[:N] = input
    blocks = padded.view(-1, block)
    maxima = blocks.max(dim=1).values
    sums = (blocks - maxima[:, None]).exp().sum(dim=1)
    top = maxima.max()
    output.copy_((input - top).exp() / (sums * (maxima - top).exp()).sum())
