"""PyTorch reference for conv2d: the same arguments as solve(), as tensors."""

import torch
import torch.nn.functional as F


def reference(input, kernel, output, input_rows, input_cols, kernel_rows, kernel_cols):
    out_rows = input_rows - kernel_rows + 1
    out_cols = input_cols - kernel_cols + 1
    x = input.view(1, 1, input_rows, input_cols)
    w = kernel.view(1, 1, kernel_rows, kernel_cols)
    out = output.view(1, 1, out_rows, out_cols)
    if input.is_cuda:
        out.copy_(F.conv2d(x, w))  # "valid" cross-correlation, as the puzzle defines it
        return
    # On the CPU, conv2d first unfolds every window (kernel_rows * kernel_cols values per output):
    # 72 GB at 3072 x 3072 with a 31 x 31 kernel in float64. Bands of output rows bound that to
    # about 256 MB.
    band = max(1, 2**25 // (kernel_rows * kernel_cols * out_cols))
    for top in range(0, out_rows, band):
        rows = min(band, out_rows - top)
        out[:, :, top : top + rows].copy_(F.conv2d(x[:, :, top : top + rows + kernel_rows - 1], w))


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_flipped_kernel(input, kernel, output, input_rows, input_cols, kernel_rows, kernel_cols):
    """A true convolution: the kernel turned by 180 degrees."""
    flipped = kernel.view(kernel_rows, kernel_cols).flip(0, 1).reshape(-1)
    reference(input, flipped, output, input_rows, input_cols, kernel_rows, kernel_cols)


def mistake_output_one_short(
    input, kernel, output, input_rows, input_cols, kernel_rows, kernel_cols
):
    """(out_rows - 1) x (out_cols - 1) right outputs, stored with a row stride of out_cols - 1
    from the start of the output; the rest is never written (NaN, as the judge's sentinel).
    Where that leaves nothing to compute the grid is empty, which is any kernel that writes
    nothing (the judge's own hint says so): the output is left at zero, matching no call."""
    out_rows = input_rows - kernel_rows + 1
    out_cols = input_cols - kernel_cols + 1
    rows, cols = out_rows - 1, out_cols - 1
    if rows == 0 or cols == 0:
        return
    right = torch.empty(out_rows * out_cols, dtype=output.dtype)
    reference(input, kernel, right, input_rows, input_cols, kernel_rows, kernel_cols)
    output.fill_(float("nan"))
    output[: rows * cols] = right.view(out_rows, out_cols)[:rows, :cols].reshape(-1)


def mistake_output_transposed(
    input, kernel, output, input_rows, input_cols, kernel_rows, kernel_cols
):
    """The right outputs stored column-major: output[j * out_rows + i] = result[i][j]."""
    out_rows = input_rows - kernel_rows + 1
    out_cols = input_cols - kernel_cols + 1
    right = torch.empty(out_rows * out_cols, dtype=output.dtype)
    reference(input, kernel, right, input_rows, input_cols, kernel_rows, kernel_cols)
    output.copy_(right.view(out_rows, out_cols).t().reshape(-1))
