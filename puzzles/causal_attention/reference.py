"""PyTorch reference for causal_attention: the same arguments as solve(), as tensors."""

import torch


def reference(q, k, v, output, N, d):
    out = torch.nn.functional.scaled_dot_product_attention(
        q.view(1, 1, N, d), k.view(1, 1, N, d), v.view(1, 1, N, d), is_causal=True
    )
    output.copy_(out.view(-1))
