"""PyTorch reference for color_inversion: the same arguments as solve(), as tensors."""

import torch


def reference(image, width, height):
    # For a byte, 255 - v is its bitwise complement; channels R, G, B are the first three.
    image.view(height, width, 4)[..., :3].bitwise_not_()


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_inverts_alpha(image, width, height):
    """Every byte inverted, alpha included."""
    image.bitwise_not_()


def mistake_alpha_first(image, width, height):
    """The pixels read as ARGB: byte 0 (red) kept, bytes 1, 2, 3 (alpha included) inverted."""
    image.view(height, width, 4)[..., 1:].bitwise_not_()


def mistake_counts_pixels(image, width, height):
    """The colour bytes among the first width * height bytes (a quarter of the image) inverted."""
    n = width * height
    head = image[:n]
    colour = torch.arange(n) % 4 != 3
    head[colour] = head[colour].bitwise_not()
