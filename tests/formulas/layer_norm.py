import numpy as np


def formula(x, sizes):
    rows = x["input_ptr"].reshape(sizes["N"], sizes["C"])
    centred = rows - rows.mean(axis=1, keepdims=True)
    variance = (centred**2).mean(axis=1, keepdims=True)
    y = centred / np.sqrt(variance + 1e-5) * x["weight_ptr"] + x["bias_ptr"]
    return {"output_ptr": y.ravel()}
