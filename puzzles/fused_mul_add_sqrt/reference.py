"""PyTorch reference for fused_mul_add_sqrt: the same arguments as solve(), as tensors."""

import torch


def reference(a, b, c, out, N):
    # c + a * b in one call (addcmul), then the square root in place.
    torch.addcmul(c, a, b, out=out)
    out.sqrt_()


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_loads_a_twice(a, b, c, out, N):
    """b loaded from a's address: sqrt(a * a + c)."""
    torch.sqrt(a * a + c, out=out)


def mistake_sqrt_before_add(a, b, c, out, N):
    """The square root of the product only, c added after: sqrt(a * b) + c."""
    torch.add(torch.sqrt(a * b), c, out=out)
