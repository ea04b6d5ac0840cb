"""PyTorch reference for leaky_relu: the same arguments as solve(), as tensors."""

import torch


def reference(input, output, N):
    # torch.nn.functional.leaky_relu, in its out= form: one kernel, written straight into output.
    torch.ops.aten.leaky_relu.out(input, 0.01, out=output)


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_constant_slope(input, output, N):
    """The slope itself, 0.01, written for the non-positive inputs."""
    torch.where(input > 0, input, torch.full_like(input, 0.01), out=output)


def mistake_slope_on_wrong_side(input, output, N):
    """The positive inputs scaled by 0.01, the others passed through."""
    torch.where(input > 0, 0.01 * input, input, out=output)
