"""PyTorch reference for mean_squared_error: the same arguments as solve(), as tensors."""

import torch.nn.functional as F


def reference(predictions, targets, mse, N):
    mse.copy_(F.mse_loss(predictions, targets))
