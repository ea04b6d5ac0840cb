"""PyTorch reference for softmax_attention: the same arguments as solve(), as tensors."""

import torch


def reference(q, k, v, output, M, N, d):
    out = torch.nn.functional.scaled_dot_product_attention(
        q.view(1, 1, M, d), k.view(1, 1, N, d), v.view(1, 1, N, d)
    )
    output.copy_(out.view(-1))


def tf32_matmuls(q, k, v, output, M, N, d):
    """The same attention as two cuBLAS products in TF32, which the puzzle's tolerance accepts,
    around a row softmax; for float32, scaled_dot_product_attention runs no tensor-core kernel."""
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        scores = torch.mm(q.view(M, d), k.view(N, d).t()).mul_(d**-0.5)
        torch.mm(torch.softmax(scores, dim=1), v.view(N, d), out=output.view(M, d))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


# Other library means to the same output, timed beside the reference; the fastest is reported.
LIBRARY = {"softmax(Q K^T / sqrt(d)) V, cuBLAS TF32 (3 torch ops)": tf32_matmuls}


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint. They take the
# queries in chunks, so that no M x N score matrix is materialised whole.

CHUNK = 1024  # queries at a time


def _attention(q, k, v, output, M, N, d, scale, pad=0):
    """softmax(Q K^T * scale) V, with `pad` more keys of score 0 and value 0 after the N."""
    keys, values = k.view(N, d), v.view(N, d)
    for start in range(0, M, CHUNK):
        scores = q.view(M, d)[start : start + CHUNK] @ keys.t() * scale
        top = scores.max(dim=1, keepdim=True).values
        if pad:
            top = top.clamp(min=0.0)
        p = (scores - top).exp()
        total = p.sum(dim=1, keepdim=True) + pad * (-top).exp()
        output.view(M, d)[start : start + CHUNK] = p @ values / total


def mistake_no_rescale(q, k, v, output, M, N, d, block=16):
    """An online softmax over blocks of 16 keys whose running maximum grows, but whose running
    sums are never rescaled: each block's weights are exp(score - the maximum so far)."""
    blocks = -(-N // block)
    keys, values = k.view(N, d), v.view(N, d)
    for start in range(0, M, CHUNK):
        scores = q.view(M, d)[start : start + CHUNK] @ keys.t() / d**0.5
        padded = torch.full((scores.shape[0], blocks * block), float("-inf"), dtype=scores.dtype)
        padded[:, :N] = scores
        running = padded.view(-1, blocks, block).amax(dim=2).cummax(dim=1).values
        p = (padded.view(-1, blocks, block) - running[:, :, None]).exp().view(-1, blocks * block)
        p = p[:, :N]
        output.view(M, d)[start : start + CHUNK] = p @ values / p.sum(dim=1, keepdim=True)


def mistake_no_scale(q, k, v, output, M, N, d):
    """softmax(Q K^T) V: the scores never divided by sqrt(d)."""
    _attention(q, k, v, output, M, N, d, 1.0)


def mistake_tail_keys_unmasked(q, k, v, output, M, N, d, block=16):
    """The keys padding the last block of 16 past N loaded as zeros and left in the softmax:
    each has score 0 and value 0."""
    _attention(q, k, v, output, M, N, d, d**-0.5, pad=-(-N // block) * block - N)
