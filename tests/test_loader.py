import pytest

from judge.core.loader import LoadError, load_solve

SIGNATURE = "solve(a_ptr, b_ptr, c_ptr, N)"


@pytest.mark.parametrize(
    "source, kind, words",
    [
        ("def solve(a, b, c, n)\n    pass\n", "syntax-error", "submission.py:1"),
        ("import not_a_module_anywhere\n", "import-error", "ModuleNotFoundError"),
        ("raise ValueError('boom')\n", "import-error", "ValueError: boom (at submission.py:1)"),
        ("import sys\nsys.exit(3)\n", "exit", "sys.exit(3)"),
        ("def solution(a, b, c, n):\n    pass\n", "no-solve", "no function solve"),
        ("solve = 42\n", "no-solve", "no function solve"),
        ("def solve(a, b, n):\n    pass\n", "bad-signature", "expected 4 positional"),
        ("def solve(a, b, c, n, extra):\n    pass\n", "bad-signature", "solve(a, b, c, n, extra)"),
    ],
)
def test_load_errors(write_submission, source, kind, words):
    with pytest.raises(LoadError) as info:
        load_solve(write_submission(source), 4, SIGNATURE)
    assert info.value.kind == kind
    assert words in info.value.message


def test_flexible_signatures_are_accepted(write_submission):
    for source in ("def solve(*args):\n    pass\n", "def solve(a, b, c, n, k=1):\n    pass\n"):
        assert callable(load_solve(write_submission(source), 4, SIGNATURE))
