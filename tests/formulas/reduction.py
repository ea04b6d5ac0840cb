import numpy as np


def formula(x, sizes):
    values = np.asarray(x["input_ptr"], dtype=np.float64)
    return {"output_ptr": np.array([np.sum(values)])}
