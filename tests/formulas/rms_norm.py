import numpy as np


def formula(x, sizes):
    rows = x["input_ptr"].reshape(sizes["N"], sizes["C"])
    mean_square = np.mean(rows * rows, axis=1, keepdims=True)
    return {"output_ptr": (rows / np.sqrt(mean_square + 1e-5) * x["weight_ptr"]).ravel()}
