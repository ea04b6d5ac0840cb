"""Which program loaded and stored which element, for `tpuzzle run --visualize`: one call of the
submission in Triton's interpreter with every load, store and atomic recorded with the program
that made it, mapped to the buffers' elements (negative indices lie before a buffer, indices at
or past its length after it).

The worker records (`AccessRecorder`, installed over the interpreter's native helpers and its
grid setter, so each access knows its launch) and saves the accesses to the file the parent
named; the parent reads them (`read`). The picture is only a diagnostic: nothing is decided on it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAX_ELEMENTS = 1 << 16  # per buffer: a case larger than this is not drawn (pick one with --size)
DRAWN_WELL = 4096  # elements of the largest buffer that still draw as legible cells


def elements(spec, case) -> int:
    """The elements of a case's largest buffer."""
    from judge.core import inputs

    return max(lay.n for lay in inputs.layouts(spec, case.size_map))


def shapes(spec, case) -> list[tuple[str, str, int, tuple[int, ...]]]:
    """A case's buffers as (name, role, elements, shape), the shape as the spec lays it out:
    (n,) for one axis, (rows, columns) or more axes for more."""
    from judge.core import inputs
    from judge.core.spec import evaluate

    sizes = case.size_map
    described = []
    for lay in inputs.layouts(spec, sizes):
        dims = tuple(int(evaluate(d, sizes)) for d in lay.arg.shape)
        described.append((lay.arg.name, lay.arg.role, lay.n, dims if len(dims) >= 2 else (lay.n,)))
    return described


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


@dataclass(frozen=True)
class Accesses:
    """One buffer's accesses in the traced call."""

    name: str
    role: str  # in | out | inout
    n: int  # elements
    shape: tuple[int, ...]  # as the spec lays it out: (n,), (rows, columns) or more axes
    loads: np.ndarray  # rows of (element index, program, launch, 1 where atomic)
    stores: np.ndarray
    grids: tuple[tuple[int, int, int], ...] = ()  # each launch's grid (x, y, z), where known

    @property
    def writes(self) -> np.ndarray:
        """How many times each element was stored to."""
        inside = self.stores[(self.stores[:, 0] >= 0) & (self.stores[:, 0] < self.n)]
        return np.bincount(inside[:, 0], minlength=self.n)[: self.n]

    @property
    def past_end(self) -> int:
        return int(np.unique(self.stores[self.stores[:, 0] >= self.n][:, 0]).size)

    @property
    def before_start(self) -> int:
        return int(np.unique(self.stores[self.stores[:, 0] < 0][:, 0]).size)


def read(path: Path, layouts: list[tuple[str, str, int, tuple[int, ...]]]) -> list[Accesses]:
    """The accesses saved at path, for buffers given as (name, role, n, shape)."""
    empty = np.zeros((0, 4), np.int64)
    with np.load(path, allow_pickle=False) as saved:
        arrays = {k: saved[k] for k in saved.files}
    grids = tuple(tuple(int(d) for d in g) for g in arrays.get("grids", ()))
    return [
        Accesses(
            name,
            role,
            n,
            shape,
            arrays.get(f"{name}_load", empty),
            arrays.get(f"{name}_store", empty),
            grids,
        )  # fmt: skip
        for name, role, n, shape in layouts
    ]


def traced(spec, submission: Path, case, timeout_s: float | None = None) -> list[Accesses]:
    """Run the case once in the interpreter, in a worker of its own, its accesses recorded."""
    from judge.core import inputs
    from judge.core.truth import load_reference
    from judge.errors import JudgeError
    from judge.isolation import channel
    from judge.isolation.plan import Plan
    from judge.isolation.truths import Truths

    sizes = case.size_map
    layouts = inputs.layouts(spec, sizes)
    big = [lay.arg.name for lay in layouts if lay.n > MAX_ELEMENTS]
    if big:
        raise JudgeError(
            f"--visualize draws buffers of up to {MAX_ELEMENTS} elements; {', '.join(big)} has "
            f"more at {case.name}: pick a smaller case with --size"
        )
    plan = Plan(spec, submission, "", True, Truths(spec, load_reference(spec)))
    worker = channel.launch(spec.directory / "puzzle.yaml", submission, True, None)
    timeout = timeout_s or spec.timeout_s
    try:
        worker.expect("ready", 180.0, "starting the worker")
        worker.expect_ok({"op": "load"}, "loaded", timeout, "importing the submission")
        path = worker.dir / "trace.npz"
        command = {"op": "trace", "file": str(path), **plan.case_command(case, case.seed)}
        worker.expect_ok(command, "traced", timeout, f"case {case.name}")
        return read(path, shapes(spec, case))
    finally:
        channel.discard(worker)
