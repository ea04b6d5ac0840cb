"""PyTorch reference for conv1d: the same arguments as solve(), as tensors."""

import torch
import torch.nn.functional as F


def reference(input, kernel, output, input_size, kernel_size):
    output_size = input_size - kernel_size + 1
    if input.dtype == torch.float64:
        # The judge's float64 truth, on the CPU. conv1d there first unfolds the input into an
        # output_size x kernel_size matrix (24 GB at the limits) and is slow in float64, so the
        # same correlation goes through the FFT: multiplying the input's spectrum by the
        # conjugate of the kernel's gives sum_j input[i + j] * kernel[j] at every i, and with a
        # transform at least input_size long nothing wraps around into the outputs kept.
        # Its rounding error is near 1e-13 here, far below any tolerance.
        n = 1 << max(input_size - 1, 0).bit_length()
        spectrum = torch.fft.rfft(input, n) * torch.fft.rfft(kernel, n).conj()
        output.copy_(torch.fft.irfft(spectrum, n)[:output_size])
    else:
        # On the GPU, in the native dtype: what a PyTorch user would write (cross-correlation,
        # as every deep-learning "convolution" is).
        result = F.conv1d(input.view(1, 1, input_size), kernel.view(1, 1, kernel_size))
        output.copy_(result.view(output_size))


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint.


def mistake_drops_kernel_tail(input, kernel, output, input_size, kernel_size, k_block=32):
    """Only the whole chunks of 32 taps summed: the last kernel_size % 32 taps count as zero."""
    kept = kernel.clone()
    kept[kernel_size // k_block * k_block :] = 0
    reference(input, kept, output, input_size, kernel_size)


def mistake_flipped_kernel(input, kernel, output, input_size, kernel_size):
    """A true convolution: the kernel read back to front."""
    reference(input, kernel.flip(0), output, input_size, kernel_size)
