# expect: error timeout
# mistake: verdict an infinite loop
# Never returns from Python.


def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    while True:
        pass
