# expect: error exit
# mistake: verdict sys.exit
# Calls sys.exit() from solve(), as if the judge would take that for success.
import sys


def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    sys.exit(0)
