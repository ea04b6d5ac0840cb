import numpy as np


def formula(x, sizes):
    k = sizes["kernel_size"]
    signal, taps = x["input_ptr"], x["kernel_ptr"]
    windows = np.lib.stride_tricks.sliding_window_view(signal, k)  # (input_size - k + 1, k)
    return {"output_ptr": windows @ taps}
