"""PyTorch reference for mean_squared_error: the same arguments as solve(), as tensors."""

import torch.nn.functional as F


def reference(predictions, targets, mse, N):
    mse.copy_(F.mse_loss(predictions, targets))


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_mean_of_block_means(predictions, targets, mse, N, block=1024):
    """Block sums divided by 1024, averaged over the blocks: the sum over blocks * 1024 lanes."""
    blocks = -(-N // block)
    mse[0] = (predictions - targets).square().sum() / (block * blocks)


def mistake_no_zeroing(predictions, targets, mse, N):
    """The partial means added to mse[0]'s garbage, a NaN: it stays NaN."""
    mse[0] = float("nan") + (predictions - targets).square().mean()


def mistake_sum_not_mean(predictions, targets, mse, N):
    """The sum of the squared differences, never divided by N."""
    mse[0] = (predictions - targets).square().sum()
