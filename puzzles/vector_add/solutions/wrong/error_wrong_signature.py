# expect: error bad-signature
# mistake: verdict positional parameters
# Forgets the output pointer.


def solve(a_ptr: int, b_ptr: int, N: int):
    pass
