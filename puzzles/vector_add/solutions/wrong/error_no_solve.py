# expect: error no-solve
# mistake: verdict defines no function solve
# The entry point is misspelled.


def solution(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    pass
