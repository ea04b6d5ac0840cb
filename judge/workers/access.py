"""Every load, store and atomic a submission's kernels make in Triton's interpreter, with the
program that made it, for `tpuzzle run --visualize` (judge.insight.trace reads what this saves).

`AccessRecorder` is installed over the interpreter's native helpers and its grid setter, so each
access knows its program and launch; `save` maps the addresses to the buffers' elements.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np


class _Recording:
    """Stands for the interpreter's native helper module: notes each access with the program
    running it, then lets the helper do its work."""

    def __init__(self, native, recorder: AccessRecorder):
        self._native, self._recorder = native, recorder

    def __getattr__(self, name):
        return getattr(self._native, name)

    def load(self, ptrs, mask, *rest):
        self._recorder.note("load", ptrs, mask)
        return self._native.load(ptrs, mask, *rest)

    def store(self, ptrs, values, mask, *rest):
        self._recorder.note("store", ptrs, mask)
        return self._native.store(ptrs, values, mask, *rest)

    def atomic_rmw(self, op, ptrs, values, mask, *rest):
        self._recorder.note("store", ptrs, mask, atomic=True)
        return self._native.atomic_rmw(op, ptrs, values, mask, *rest)

    def atomic_cas(self, ptrs, cmp, values, *rest):
        self._recorder.note("store", ptrs, None, atomic=True)
        return self._native.atomic_cas(ptrs, cmp, values, *rest)


class AccessRecorder:
    """Every address the interpreter's kernels read or write while `recording`, with the linear
    index of the program (grid position) that did, the launch it belongs to, and whether it
    was atomic."""

    def __init__(self) -> None:
        self.active = False
        self.accesses: list[tuple[str, int, int, bool, np.ndarray]] = []  # kind, program, launch
        self.grids: list[tuple[int, int, int]] = []  # each launch's grid, in launch order

    def install(self) -> bool:
        """Route the interpreter's loads and stores through the recorder; False where this
        Triton's interpreter is built differently."""
        from triton.runtime import interpreter

        native = getattr(interpreter, "_interpreter", None)
        builder = getattr(interpreter, "interpreter_builder", None)
        if native is None or not all(hasattr(native, n) for n in ("load", "store")):
            return False
        interpreter._interpreter = _Recording(native, self)
        set_grid_dim = getattr(builder, "set_grid_dim", None)
        if set_grid_dim is not None:  # called once as each launch starts

            def launched(*dims):
                if self.active:
                    self.grids.append(tuple(int(d) for d in dims))
                return set_grid_dim(*dims)

            builder.set_grid_dim = launched
        return True

    @contextlib.contextmanager
    def recording(self):
        self.accesses, self.grids, self.active = [], [], True
        try:
            yield self
        finally:
            self.active = False

    def note(self, kind: str, ptrs, mask, atomic: bool = False) -> None:
        if not self.active:
            return
        from triton.runtime import interpreter

        grid = getattr(interpreter.interpreter_builder, "grid_idx", None) or (0, 0, 0)
        dims = getattr(interpreter.interpreter_builder, "grid_dim", None) or (1, 1, 1)
        program = int(grid[0] + dims[0] * (grid[1] + dims[1] * grid[2]))
        addresses = np.asarray(ptrs).astype(np.uint64, copy=False).ravel()
        if mask is not None:
            kept = np.broadcast_to(np.asarray(mask, dtype=bool), np.shape(ptrs))
            addresses = addresses[kept.ravel()]
        launch = max(len(self.grids) - 1, 0)
        self.accesses.append((kind, program, launch, atomic, addresses.copy()))

    def save(self, path: Path, buffers: dict[str, tuple[int, int, int, int]]) -> None:
        """The accesses as element indices per buffer, into path (.npz): for each buffer name
        `<name>_load` and `<name>_store`, rows of (element index, program, launch, 1 if atomic
        else 0), and `grids`, each launch's grid. `buffers` gives each buffer's data address,
        element size, length and guard (elements each side)."""
        found: dict[str, list[np.ndarray]] = {}
        for kind, program, launch, atomic, addresses in self.accesses:
            for name, (base, size, n, guard) in buffers.items():
                low, high = base - guard * size, base + (n + guard) * size
                inside = addresses[(addresses >= low) & (addresses < high)]
                if inside.size:
                    index = (inside.astype(np.int64) - base) // size
                    tag = np.array([program, launch, int(atomic)], np.int64)
                    tags = np.broadcast_to(tag, (index.size, 3))
                    rows = np.concatenate([index[:, None], tags], axis=1)
                    found.setdefault(f"{name}_{kind}", []).append(rows)
        arrays = {k: np.concatenate(v) for k, v in found.items()}
        grids = np.array(self.grids, np.int64).reshape(-1, 3)
        np.savez_compressed(path, grids=grids, **arrays)
