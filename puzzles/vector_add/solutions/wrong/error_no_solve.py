# expect: error no-solve
# The entry point is misspelled.


def solution(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    pass
