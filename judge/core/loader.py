"""Importing Python files by path: submissions (untrusted, in the worker) and puzzle references.

Errors are turned into `LoadError(kind, message)`, where kind is the machine-readable reason the
verdict will carry.
"""

from __future__ import annotations

import errno
import hashlib
import importlib.util
import inspect
import sys
import traceback
from pathlib import Path
from types import ModuleType


class LoadError(Exception):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message


def import_file(path: str | Path, module_name: str) -> ModuleType:
    """Import a file as a module; a fresh module object every call."""
    path = Path(path)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise LoadError("import-error", f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # triton.jit and dataclasses look functions up here
    spec.loader.exec_module(module)
    return module


LIMIT_ERRNOS = {
    errno.EMFILE: "open-files-limit",
    errno.ENFILE: "open-files-limit",
    errno.EFBIG: "file-size-limit",
    errno.EAGAIN: "process-limit",  # fork() at RLIMIT_NPROC
}


HOST_OUT_OF_MEMORY = ("can't allocate memory", "not enough memory")  # PyTorch's CPU allocator


def limit_reached(exc: BaseException) -> str | None:
    """The reason for an exception that says the worker hit one of its limits (memory, open
    files, file size, processes), else None."""
    if isinstance(exc, MemoryError):
        return "memory-limit"
    if isinstance(exc, OSError) and exc.errno in LIMIT_ERRNOS:
        if exc.errno != errno.EAGAIN or isinstance(exc, BlockingIOError):
            return LIMIT_ERRNOS[exc.errno]
    text = str(exc)
    if isinstance(exc, RuntimeError) and (
        "can't allocate memory" in text or "not enough memory" in text
    ):
        return "memory-limit"  # PyTorch's allocator on the host
    return None


def load_solve(path: str | Path, n_args: int, signature: str):
    """The `solve` of a submission, checked to accept the puzzle's positional arguments."""
    try:
        module = import_file(path, "submission")
    except LoadError:
        raise
    except SyntaxError as exc:
        where = f"{Path(exc.filename or path).name}:{exc.lineno}"
        raise LoadError("syntax-error", f"syntax error at {where}: {exc.msg}") from None
    except SystemExit as exc:
        raise LoadError("exit", f"the submission called sys.exit({exc.code}) on import") from None
    except BaseException as exc:  # noqa: BLE001 - anything a submission raises is a verdict
        raise LoadError(
            limit_reached(exc) or "import-error", f"importing the submission raised {describe(exc)}"
        ) from None
    solve = getattr(module, "solve", None)
    if not callable(solve):
        raise LoadError("no-solve", f"the submission defines no function solve{signature[5:]}")
    try:
        inspect.signature(solve).bind(*range(n_args))
    except TypeError:
        got = f"solve{inspect.signature(solve)}"
        raise LoadError(
            "bad-signature",
            f"{got} cannot be called as {signature}: expected {n_args} positional parameters",
        ) from None
    except ValueError:
        pass  # a builtin or C function without a signature: let the call decide
    return solve


def describe(exc: BaseException) -> str:
    """`Type: message` plus where in the submission it was raised, on one line."""
    message = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {message[0] if message else ''}".rstrip(": ")
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if "submission" in f.filename
        or f.filename.endswith(".py")
        and "/judge/" not in f.filename
        and "site-packages" not in f.filename
    ]
    if frames:
        text += f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})"
    return text


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes in hex; "" when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""
