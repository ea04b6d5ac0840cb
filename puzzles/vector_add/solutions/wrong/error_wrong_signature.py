# expect: error bad-signature
# Forgets the output pointer.


def solve(a_ptr: int, b_ptr: int, N: int):
    pass
