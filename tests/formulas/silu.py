import numpy as np


def formula(x, sizes):
    v = x["input_ptr"]
    # x / (1 + e^-x), written in the form that cannot overflow: for x < 0 use x e^x / (1 + e^x).
    e = np.exp(-np.abs(v))
    sig = np.where(v >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))
    return {"output_ptr": v * sig}
