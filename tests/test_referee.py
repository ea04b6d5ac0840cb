"""judge.workers.referee: what solve() may ask of PyTorch, and the reason of a call that broke
the rules or raised."""

import pytest
import torch

from judge.workers import referee


def test_referee_allows_scratch_allocation_and_rejects_work():
    with referee.referee() as mode:
        scratch = torch.empty(16)
        scratch.zero_()
        torch.zeros(4)
    assert not mode.violation
    with pytest.raises(referee.Rejected, match="aten.add"):
        with referee.referee():
            torch.ones(2) + 1
    mode = referee.referee()
    with mode:
        try:
            torch.ones(2).sum()  # a submission that swallows the exception is still caught
        except referee.Rejected:
            pass
    assert "aten.sum" in mode.violation


@pytest.mark.parametrize(
    "exc, kind",
    [
        (SystemExit(4), "exit"),
        (RuntimeError("CUDA error: an illegal memory access was encountered"), "cuda-error"),
        (ZeroDivisionError("division by zero"), "exception"),
    ],
)
def test_classify(exc, kind):
    assert referee.classify(exc)[0] == kind


def test_classify_triton_compile_errors():
    import triton.language as tl  # noqa: F401 - the interpreter's error type lives in triton
    from triton.runtime.errors import InterpreterError

    assert referee.classify(InterpreterError("bad arange"))[0] == "compile-error"


def test_a_rejection_carries_its_reason():
    assert referee.Rejected("aten.add ran").kind == "torch-in-solve"
    assert referee.Rejected("a memcpy ran", kind="foreign-launch").kind == "foreign-launch"


def test_an_exception_in_the_timer_is_not_said_to_be_solves():
    """The timer never calls solve(): a Python exception there (the judge's own check, say) is
    reported as the timer's, and a CUDA error in a replayed kernel still as a CUDA error."""
    assert referee.classify(ValueError("bad"), "the timer") == (
        "exception",
        "the timer raised ValueError: bad",
    )
    assert referee.classify(ValueError("bad"))[1] == "solve() raised ValueError: bad"
    crash = RuntimeError("CUDA error: an illegal memory access")
    assert referee.classify(crash, "the timer")[0] == "cuda-error"
