"""Triton's interpreter, made to take every host address as a pointer.

The interpreter gives an integer argument the narrowest NumPy type that holds it, so an address
below 2**32 (the heap of a Python built without position-independent code starts near 0x1000000)
arrives as a 32-bit integer, and `ptr.to(tl.pointer_type(...))` then fails: it reinterprets the
integer's bytes as a 64-bit pointer. The worker widens such integers before the cast, so a
submission's raw-pointer kernel runs wherever its buffers happen to lie.
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
