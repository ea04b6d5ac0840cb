"""Two repairs to Triton's interpreter, made by the worker in interpreter mode.

- Addresses below 2**32. The interpreter gives an integer argument the narrowest NumPy type that
  holds it, so an address below 2**32 (the heap of a Python built without position-independent
  code starts near 0x1000000) arrives as a 32-bit integer, and `ptr.to(tl.pointer_type(...))`
  then fails: it reinterprets the integer's bytes as a 64-bit pointer. `widen_int_to_ptr` widens
  such integers before the cast, so a raw-pointer kernel runs wherever its buffers lie.
- Scalars as indices with NumPy 2.4 and later. Triton 3.6's interpreter turns a scalar into a
  Python int with `int()` of a one-element array, which those NumPy versions refuse, so every
  `range(0, n, BLOCK)` over a runtime bound fails there. `scalar_index` converts the element
  instead, as later Triton versions do.
"""

from __future__ import annotations

import numpy as np


def widen_int_to_ptr() -> bool:
    """Patch the interpreter's integer-to-pointer cast to widen 32-bit integers first; False
    where this Triton's interpreter is built differently (then nothing is changed)."""
    import triton.language as tl
    from triton.runtime import interpreter

    builder = getattr(interpreter, "InterpreterBuilder", None)
    handle = getattr(interpreter, "TensorHandle", None)
    cast = getattr(builder, "create_int_to_ptr", None)
    if builder is None or handle is None or cast is None:
        return False
    if getattr(cast, "widens", False):
        return True

    def create_int_to_ptr(self, src, dst_type):
        data = np.asarray(src.data)
        if data.dtype.itemsize < 8:
            src = handle(data.astype(np.int64), tl.int64)
        return cast(self, src, dst_type)

    create_int_to_ptr.widens = True
    builder.create_int_to_ptr = create_int_to_ptr
    return True


def scalar_index() -> bool:
    """Patch the interpreter's `tensor.__index__` (set afresh at every launch) to convert a
    one-element array's element; False where this Triton's interpreter is built differently."""
    from triton.runtime import interpreter

    patch = getattr(interpreter, "_patch_lang_tensor", None)
    if patch is None:
        return False
    if getattr(patch, "indexes_scalars", False):
        return True

    def _patch_lang_tensor(tensor, scope):
        patch(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(np.asarray(self.handle.data).item()))

    _patch_lang_tensor.indexes_scalars = True
    interpreter._patch_lang_tensor = _patch_lang_tensor
    return True


def install() -> None:
    """Both repairs, where this Triton's interpreter has what they patch."""
    widen_int_to_ptr()
    scalar_index()
