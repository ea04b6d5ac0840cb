"""tpuzzle: a puzzle judge for Triton GPU kernels."""

__version__ = "0.1.0"
