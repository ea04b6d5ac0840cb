"""Which program loaded and stored which element, for `tpuzzle run --visualize`: one call of the
submission in Triton's interpreter with every load, store and atomic recorded with the program
that made it, mapped to the buffers' elements (negative indices lie before a buffer, indices at
or past its length after it).

The worker records (judge.workers.access) and saves the accesses to the file the parent named;
the parent reads them here (`read`). The picture is only a diagnostic: nothing is decided on it.
"""

from __future__ import annotations

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
    from judge.judging.plan import Plan
    from judge.judging.truths import Truths
    from judge.workers import launcher

    sizes = case.size_map
    layouts = inputs.layouts(spec, sizes)
    big = [lay.arg.name for lay in layouts if lay.n > MAX_ELEMENTS]
    if big:
        raise JudgeError(
            f"--visualize draws buffers of up to {MAX_ELEMENTS} elements; {', '.join(big)} has "
            f"more at {case.name}: pick a smaller case with --size"
        )
    plan = Plan(spec, submission, "", True, Truths(spec, load_reference(spec)))
    worker = launcher.launch(spec.directory / "puzzle.yaml", submission, True, None)
    timeout = timeout_s or spec.timeout_s
    try:
        worker.expect("ready", 180.0, "starting the worker")
        worker.expect_ok({"op": "load"}, "loaded", timeout, "importing the submission")
        path = worker.dir / "trace.npz"
        command = {"op": "trace", "file": str(path), **plan.case_command(case, case.seed)}
        worker.expect_ok(command, "traced", timeout, f"case {case.name}")
        return read(path, shapes(spec, case))
    finally:
        launcher.discard(worker)
