# expect: rejected torch-in-solve
# mistake: verdict used PyTorch to do the work
# Wraps the raw addresses in tensors and lets PyTorch do the addition.
import ctypes
import os

import numpy as np
import torch


class _Device:
    def __init__(self, ptr, n):
        self.__cuda_array_interface__ = {
            "shape": (n,),
            "typestr": "<f4",
            "data": (ptr, False),
            "version": 3,
        }


def _tensor(ptr, n):
    if os.environ.get("TRITON_INTERPRET") == "1":
        return torch.from_numpy(np.ctypeslib.as_array((ctypes.c_float * n).from_address(ptr)))
    return torch.as_tensor(_Device(ptr, n), device="cuda")


def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    torch.add(_tensor(a_ptr, N), _tensor(b_ptr, N), out=_tensor(c_ptr, N))
