import numpy as np


def formula(x, sizes):
    N, d = sizes["N"], sizes["d"]
    q = x["q_ptr"].reshape(N, d)
    k = x["k_ptr"].reshape(N, d)
    v = x["v_ptr"].reshape(N, d)
    scores = q @ k.T / np.sqrt(d)
    later = np.arange(N)[None, :] > np.arange(N)[:, None]  # key j after query i
    scores[later] = -np.inf
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return {"output_ptr": (weights @ v).reshape(-1)}
