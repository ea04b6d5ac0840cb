# expect: error exit
# mistake: verdict os._exit or sys.exit
# Ends the process without unwinding: no exception for the judge to catch.
import os


def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    os._exit(0)
