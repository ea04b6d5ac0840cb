import numpy as np


def formula(x, sizes):
    return {"data_ptr": np.sort(x["data_ptr"])}
