"""PyTorch reference for causal_attention: the same arguments as solve(), as tensors."""

import torch


def reference(q, k, v, output, N, d):
    out = torch.nn.functional.scaled_dot_product_attention(
        q.view(1, 1, N, d), k.view(1, 1, N, d), v.view(1, 1, N, d), is_causal=True
    )
    output.copy_(out.view(-1))


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint. They take the
# queries in chunks, so that no N x N score matrix is materialised whole.

CHUNK = 1024  # queries at a time


def _scores(q, k, N, d, start, keep):
    """The scaled scores of queries start.. against every key, -inf where keep(i, j) is False."""
    rows = q.view(N, d)[start : start + CHUNK]
    scores = rows @ k.view(N, d).t() / d**0.5
    i = torch.arange(start, start + rows.shape[0])[:, None]
    j = torch.arange(N)[None, :]
    return scores.masked_fill(~keep(i, j), float("-inf"))


def _attention(q, k, v, output, N, d, keep):
    for start in range(0, N, CHUNK):
        p = torch.softmax(_scores(q, k, N, d, start, keep), dim=1)
        output.view(N, d)[start : start + CHUNK] = p @ v.view(N, d)


def mistake_mask_off_by_one(q, k, v, output, N, d):
    """Query i attends to keys j < i only: row 0 has no key at all, and comes out NaN."""
    _attention(q, k, v, output, N, d, lambda i, j: j < i)


def mistake_no_causal_mask(q, k, v, output, N, d):
    """Every query attends to every key."""
    _attention(q, k, v, output, N, d, lambda i, j: j >= 0)


def mistake_no_rescale(q, k, v, output, N, d, block=16):
    """A causal online softmax over blocks of 16 keys whose running maximum grows, but whose
    running sums are never rescaled: each block's weights are exp(score - the maximum so far)."""
    blocks = -(-N // block)
    for start in range(0, N, CHUNK):
        scores = _scores(q, k, N, d, start, lambda i, j: j <= i)
        padded = torch.full((scores.shape[0], blocks * block), float("-inf"), dtype=scores.dtype)
        padded[:, :N] = scores
        running = padded.view(-1, blocks, block).amax(dim=2).cummax(dim=1).values
        p = (padded.view(-1, blocks, block) - running[:, :, None]).exp().view(-1, blocks * block)
        p = p[:, :N]
        output.view(N, d)[start : start + CHUNK] = p @ v.view(N, d) / p.sum(dim=1, keepdim=True)
