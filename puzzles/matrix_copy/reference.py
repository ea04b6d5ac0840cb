"""PyTorch reference for matrix_copy: the same arguments as solve(), as tensors."""


def reference(a, b, N):
    b.copy_(a)


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint. Elements a
# kernel never writes keep the output's sentinel, a NaN.


def mistake_grid_rounds_down(a, b, N, block_m=32, block_n=64):
    """A grid of N // 32 by N // 64 tiles: only the full tiles of the top left are copied."""
    rows, cols = N // block_m * block_m, N // block_n * block_n
    b.fill_(float("nan"))
    b.view(N, N)[:rows, :cols] = a.view(N, N)[:rows, :cols]


def mistake_mask_uses_n(a, b, N):
    """The flat offsets masked against N: only the first row is copied."""
    b.fill_(float("nan"))
    b[:N] = a[:N]


def mistake_transposed(a, b, N):
    """A read column-major and B written row-major: B is A's transpose."""
    b.view(N, N).copy_(a.view(N, N).t())
