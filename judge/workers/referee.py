"""The rules a call of solve() is held to, and the reasons a call that broke them or raised gets.

Inside solve(), PyTorch may allocate scratch memory and take views of it (ALLOWED_OPS), never
compute: `referee` is the dispatch mode that sees every ATen op and rejects real work. `Rejected`
carries the reason of a call that broke a rule; `classify` names the reason of any other
exception a submission raised.
"""

from __future__ import annotations

from judge.core.loader import describe, limit_reached

# PyTorch operations a solve() may use: allocating scratch memory and views of it.
ALLOWED_OPS = {
    "empty",
    "empty_strided",
    "empty_like",
    "new_empty",
    "new_empty_strided",
    "zeros",
    "zeros_like",
    "new_zeros",
    "ones",
    "ones_like",
    "new_ones",
    "zero_",
    "fill_",
    "full",
    "full_like",
    "view",
    "_unsafe_view",
    "as_strided",
    "slice",
    "select",
    "alias",
    "detach",
    "lift_fresh",
    "reshape",
    "_reshape_alias",
    "unsqueeze",
    "squeeze",
    "t",
    "transpose",
    "permute",
    "expand",
}


class Rejected(Exception):
    """solve() broke the rules: PyTorch did the work (`torch-in-solve`), or device work ran that
    no Triton kernel of its own did (`foreign-launch`)."""

    def __init__(self, message: str, kind: str = "torch-in-solve"):
        super().__init__(message)
        self.kind = kind


_MODE_CLASS = None


def referee():
    """A TorchDispatchMode that sees every ATen op run during solve() and rejects real work.

    The first forbidden op is remembered even if the submission catches the exception.
    """
    global _MODE_CLASS
    if _MODE_CLASS is None:
        from torch.utils._python_dispatch import TorchDispatchMode

        class RefereeMode(TorchDispatchMode):
            violation = ""
            recorder = None

            @classmethod
            def _should_skip_dynamo(cls) -> bool:
                # PyTorch would wrap __torch_dispatch__ to keep torch.compile out of it, which
                # imports torch._dynamo (seconds) at the first call; nothing here compiles.
                return False

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                name = func.__name__.split(".")[0]
                if name not in ALLOWED_OPS:
                    self.violation = self.violation or (
                        f"solve() used PyTorch to do the work: aten.{name} ran inside solve(); "
                        "only Triton kernels may compute the answer"
                    )
                    raise Rejected(self.violation)
                result = func(*args, **(kwargs or {}))
                if self.recorder is not None:
                    self.recorder.note_op(name, args, result)
                return result

        _MODE_CLASS = RefereeMode
    return _MODE_CLASS()


def classify(exc: BaseException, raiser: str = "solve()") -> tuple[str, str]:
    """(reason, message) for an exception raised by a submission's solve(), or (`raiser`) by
    the timer, which runs no submission code but the recorded kernels: an exception there that
    is no CUDA error is not solve()'s to own, and the message must not say it is."""
    if isinstance(exc, SystemExit):
        return "exit", f"solve() called sys.exit({exc.code})"
    module = type(exc).__module__ or ""
    text = describe(exc)
    if module.startswith("triton") and ("compil" in module or "Interpreter" in type(exc).__name__):
        return "compile-error", f"the kernel did not compile: {text}"
    if module.startswith("triton") and type(exc).__name__ in ("CompilationError", "TritonError"):
        return "compile-error", f"the kernel did not compile: {text}"
    limit = limit_reached(exc)
    if limit:
        return limit, f"solve() reached the worker's {limit.removesuffix('-limit')} limit: {text}"
    lowered = str(exc).lower()
    if "cuda error" in lowered or "illegal memory access" in lowered or "accelerator" in lowered:
        return "cuda-error", f"CUDA error: {text}"
    return "exception", f"{raiser} raised {text}"
