"""PyTorch reference for softmax_attention: the same arguments as solve(), as tensors."""

import torch


def reference(q, k, v, output, M, N, d):
    out = torch.nn.functional.scaled_dot_product_attention(
        q.view(1, 1, M, d), k.view(1, 1, N, d), v.view(1, 1, N, d)
    )
    output.copy_(out.view(-1))
