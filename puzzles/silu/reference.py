"""PyTorch reference for silu: the same arguments as solve(), as tensors."""

import torch


def reference(input, output, N):
    # torch.nn.functional.silu, in its out= form: one kernel, written straight into output.
    torch.ops.aten.silu.out(input, out=output)


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_exp_overflow(input, output, N):
    """x * exp(x) / (1 + exp(x)) in float32: exp overflows to inf past 88.7, and inf / inf is
    NaN."""
    x = input.float()
    e = x.exp()
    output.copy_(x * (e / (1.0 + e)))


def mistake_sigmoid_only(input, output, N):
    """sigmoid(x), never multiplied by x."""
    torch.sigmoid(input, out=output)
