"""PyTorch reference for gemm_fp16: the same arguments as solve(), as tensors."""


def reference(a, b, c, M, N, K, alpha, beta):
    # C = alpha * A @ B + beta * C, in place; A is M x K, B is K x N, C is M x N.
    c.view(M, N).addmm_(a.view(M, K), b.view(K, N), beta=beta, alpha=alpha)


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_alpha_scales_c_too(a, b, c, M, N, K, alpha, beta):
    """alpha * (A @ B + beta * C): the old C scaled by alpha * beta."""
    c.view(M, N).addmm_(a.view(M, K), b.view(K, N), beta=beta, alpha=1.0).mul_(alpha)


def mistake_b_read_transposed(a, b, c, M, N, K, alpha, beta):
    """B[k, n] read at k + n * K: A times the transpose of B's memory seen as N x K."""
    c.view(M, N).addmm_(a.view(M, K), b.view(N, K).t(), beta=beta, alpha=alpha)


def mistake_ignores_beta(a, b, c, M, N, K, alpha, beta):
    """alpha * (A @ B) stored over C, the old C never read."""
    c.view(M, N).addmm_(a.view(M, K), b.view(K, N), beta=0.0, alpha=alpha)
