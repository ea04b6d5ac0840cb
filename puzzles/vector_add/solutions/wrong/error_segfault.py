# expect: error crash
# mistake: verdict segmentation fault
# Writes to a host address that is never mapped: the process dies from SIGSEGV.
import ctypes


def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    ctypes.memmove(8, b"boom", 4)
