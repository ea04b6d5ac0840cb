# expect: error syntax-error
# mistake: verdict syntax error
# A missing colon after the def.
import triton


def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int)
    pass
