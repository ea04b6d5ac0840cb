"""PyTorch reference for matmul: the same arguments as solve(), as tensors."""

import torch


def reference(a, b, c, M, N, K):
    # LeetGPU's naming: A is M x N, B is N x K, C is M x K.
    torch.matmul(a.view(M, N), b.view(N, K), out=c.view(M, K))


def tf32(a, b, c, M, N, K):
    """cuBLAS with TF32 tensor cores, which the puzzle's tolerance accepts."""
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        reference(a, b, c, M, N, K)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


# Other library means to the same output, timed beside the reference; the fastest is reported.
LIBRARY = {"cuBLAS TF32 (torch.matmul)": tf32}


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_accumulator_overwritten(a, b, c, M, N, K, block=32):
    """Each step of 32 along the reduction replaces the accumulator: only the last one counts."""
    last = (N - 1) // block * block
    torch.matmul(a.view(M, N)[:, last:], b.view(N, K)[last:], out=c.view(M, K))


def mistake_b_read_transposed(a, b, c, M, N, K):
    """B[n, k] read at n + k*N, as if B were stored K x N: A times the transpose of that."""
    torch.matmul(a.view(M, N), b.view(K, N).t(), out=c.view(M, K))


def mistake_reduction_drops_tail(a, b, c, M, N, K, block=32):
    """The reduction stops at the last multiple of 32 at or below N: the partial step is lost
    (all of it when N < 32)."""
    full = N // block * block
    torch.matmul(a.view(M, N)[:, :full], b.view(N, K)[:full], out=c.view(M, K))
