import numpy as np


def formula(x, sizes):
    n = sizes["N"]
    a = x["a_ptr"].reshape(n, n)
    return {"b_ptr": np.array(a, copy=True).reshape(-1)}
