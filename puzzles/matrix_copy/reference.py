"""PyTorch reference for matrix_copy: the same arguments as solve(), as tensors."""


def reference(a, b, N):
    b.copy_(a)
