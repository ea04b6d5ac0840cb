import numpy as np


def formula(x, sizes):
    M, N, K = sizes["M"], sizes["N"], sizes["K"]
    a = x["a_ptr"].reshape(M, K)
    b = x["b_ptr"].reshape(K, N)
    c = x["c_ptr"].reshape(M, N)
    product = np.einsum("mk,kn->mn", a, b)
    return {"c_ptr": (1.5 * product + 0.5 * c).reshape(-1)}
