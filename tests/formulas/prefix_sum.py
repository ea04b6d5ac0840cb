import numpy as np


def formula(x, sizes):
    return {"output_ptr": np.cumsum(x["input_ptr"])}
