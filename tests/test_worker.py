import pytest
import torch

from judge import worker


def test_referee_allows_scratch_allocation_and_rejects_work():
    with worker.referee() as mode:
        scratch = torch.empty(16)
        scratch.zero_()
        torch.zeros(4)
    assert not mode.violation
    with pytest.raises(worker.Rejected, match="aten.add"):
        with worker.referee():
            torch.ones(2) + 1
    mode = worker.referee()
    with mode:
        try:
            torch.ones(2).sum()  # a submission that swallows the exception is still caught
        except worker.Rejected:
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
    assert worker.classify(exc)[0] == kind


def test_classify_triton_compile_errors():
    import triton.language as tl  # noqa: F401 - the interpreter's error type lives in triton
    from triton.runtime.errors import InterpreterError

    assert worker.classify(InterpreterError("bad arange"))[0] == "compile-error"


def test_interpreter_autotune_picks_the_first_config():
    import triton
    import triton.language as tl

    worker.patch_autotuner_for_interpreter()

    @triton.autotune(configs=[triton.Config({"B": 32}), triton.Config({"B": 64})], key=["n"])
    @triton.jit
    def fill(x_ptr, n, B: tl.constexpr):
        x_ptr = x_ptr.to(tl.pointer_type(tl.float32))
        offs = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(x_ptr + offs, B * 1.0, mask=offs < n)

    x = torch.zeros(100)
    fill[lambda meta: (triton.cdiv(100, meta["B"]),)](x.data_ptr(), 100)
    assert bool((x == 32.0).all())
