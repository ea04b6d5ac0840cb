"""PyTorch reference for rgb_to_grayscale: the same arguments as solve(), as tensors."""

import torch


def reference(input, output, width, height):
    r, g, b = input.view(3, height, width)
    output.view(height, width).copy_(0.299 * r + 0.587 * g + 0.114 * b)


def in_output(input, output, width, height):
    """The same sum in three PyTorch operations, each written into the output: no temporaries
    and no copy (the reference makes five passes over the planes, then a copy)."""
    r, g, b = input.view(3, height, width)
    out = output.view(height, width)
    torch.mul(r, 0.299, out=out)
    out.add_(g, alpha=0.587)
    out.add_(b, alpha=0.114)


_WEIGHTS = {}  # (device, dtype) -> the 1 x 3 row of weights, made once


def weighted_planes(input, output, width, height):
    """One cuBLAS product: the 1 x 3 row of weights times the 3 x (height * width) planes, in
    full float32 (TF32 would round the inputs far past the tolerance)."""
    key = (input.device, input.dtype)
    if key not in _WEIGHTS:
        _WEIGHTS[key] = torch.tensor([[0.299, 0.587, 0.114]], dtype=input.dtype).to(input.device)
    planes = input.view(3, height * width)
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        torch.matmul(_WEIGHTS[key], planes, out=output.view(1, height * width))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


# Other library means to the same output, timed beside the reference; the fastest is reported.
LIBRARY = {
    "mul + 2 add_ into the output (3 torch ops)": in_output,
    "cuBLAS (torch.matmul, weights x planes)": weighted_planes,
}


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_bgr_order(input, output, width, height):
    """The planes taken as B, G, R: red weighted 0.114 and blue 0.299."""
    b, g, r = input.view(3, height * width)
    output.copy_(0.299 * r + 0.587 * g + 0.114 * b)


def mistake_interleaved(input, output, width, height):
    """The planar input read as interleaved RGBRGB...: pixel p at 3p, 3p + 1, 3p + 2."""
    n = width * height
    r, g, b = input[0 : 3 * n : 3], input[1 : 3 * n : 3], input[2 : 3 * n : 3]
    output.copy_(0.299 * r + 0.587 * g + 0.114 * b)
