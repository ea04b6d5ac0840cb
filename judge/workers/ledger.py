"""In interpreter mode: which addresses Triton's stores wrote during a call.

On the CPU a buffer's address is an ordinary host address, so NumPy or ctypes inside `solve()` could
write the answer without any kernel. The worker therefore records every address that Triton's
interpreter stores to (plain and masked stores, atomics) while `solve()` runs, and counts the
output elements that changed without such a store. The parent rejects a call where any did.

On a GPU this ledger is not needed for NumPy (it cannot reach device memory); other libraries are
the referee's and the kernel listing's concern.
"""

from __future__ import annotations

import numpy as np
import torch

from judge.core.inputs import as_bits

_WRITERS = ("store", "atomic_cas", "atomic_rmw")


class _Recording:
    """Stands for the interpreter's native helper module: notes the addresses each writing
    function is given, then lets the function do its work."""

    def __init__(self, native, ledger: StoreLedger):
        self._native, self._ledger = native, ledger

    def __getattr__(self, name):
        return getattr(self._native, name)

    def store(self, ptrs, values, mask):
        self._ledger.note(ptrs, mask, values)
        return self._native.store(ptrs, values, mask)

    def atomic_cas(self, ptrs, cmp, values, sem):
        self._ledger.note(ptrs, None, values)
        return self._native.atomic_cas(ptrs, cmp, values, sem)

    def atomic_rmw(self, op, ptrs, values, mask, sem):
        self._ledger.note(ptrs, mask, values)
        return self._native.atomic_rmw(op, ptrs, values, mask, sem)


class StoreLedger:
    """Addresses written by Triton's interpreter while `active`."""

    def __init__(self) -> None:
        self.installed = False
        self.active = False
        self.chunks: list[tuple[np.ndarray, int]] = []  # addresses, bytes written at each

    def install(self) -> bool:
        """Route the interpreter's writes through the ledger; False where this Triton's
        interpreter is built differently (then nothing is checked)."""
        from triton.runtime import interpreter

        native = getattr(interpreter, "_interpreter", None)
        if native is None or not all(hasattr(native, name) for name in _WRITERS):
            return False
        if not isinstance(native, _Recording):
            interpreter._interpreter = _Recording(native, self)
        self.installed = True
        return True

    def begin(self) -> None:
        self.chunks, self.active = [], True

    def end(self) -> None:
        self.active = False

    def note(self, ptrs, mask, values) -> None:
        if not self.active:
            return
        addresses = np.asarray(ptrs).astype(np.uint64, copy=False).ravel()
        if mask is not None:
            kept = np.broadcast_to(np.asarray(mask, dtype=bool), np.shape(ptrs))
            addresses = addresses[kept.ravel()]
        self.chunks.append((addresses.copy(), max(1, np.asarray(values).dtype.itemsize)))

    def foreign(self, data: torch.Tensor, before: torch.Tensor) -> int:
        """Elements of `data` (a contiguous host buffer) that differ from `before` although no
        Triton store touched them."""
        changed = (as_bits(data) != as_bits(before)).numpy()
        if not changed.any():
            return 0
        written = np.zeros(data.numel(), dtype=bool)
        base, size = data.data_ptr(), data.element_size()
        end = base + data.numel() * size
        for addresses, width in self.chunks:
            for offset in range(0, width, size):  # a wide store covers several elements
                at = addresses + np.uint64(offset)
                inside = (at >= base) & (at < end)
                written[((at[inside] - base) // size).astype(np.int64)] = True
        return int((changed & ~written).sum())
