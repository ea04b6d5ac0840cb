import numpy as np


def formula(x, sizes):
    rows, cols = sizes["input_rows"], sizes["input_cols"]
    k_rows, k_cols = sizes["kernel_rows"], sizes["kernel_cols"]
    image = x["input_ptr"].reshape(rows, cols)
    kernel = x["kernel_ptr"].reshape(k_rows, k_cols)
    out = np.zeros((rows - k_rows + 1, cols - k_cols + 1))
    for m in range(k_rows):
        for n in range(k_cols):
            out += kernel[m, n] * image[m : m + out.shape[0], n : n + out.shape[1]]
    return {"output_ptr": out.reshape(-1)}
