import numpy as np


def formula(x, sizes):
    return {"output_ptr": np.sort(x["input_ptr"])[::-1][: sizes["k"]]}
