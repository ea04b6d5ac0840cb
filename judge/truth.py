"""The trusted side of a case: its pristine inputs and its reference outputs.

Computed in the parent from the seed alone, before any submission code runs, in float64 where the
dtype is a float; the worker's buffers are read back from its files and compared against these.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import NamedTuple

import numpy as np
import torch

from judge import inputs
from judge.loader import import_file
from judge.spec import FLOAT_DTYPES, Case, PuzzleSpec


def load_reference(spec: PuzzleSpec):
    """The puzzle's trusted reference function, reference(*args) like solve() but on tensors."""
    return import_file(spec.directory / "reference.py", f"tpuzzle_reference_{spec.id}").reference


class Truth(NamedTuple):
    """What a case's buffers must hold: inputs as drawn, outputs as the reference computed."""

    initial: dict[str, torch.Tensor]  # every drawn buffer (in and inout), native dtype
    outputs: dict[str, torch.Tensor]  # every out and inout buffer, float64 where a float


def reference_truth(spec: PuzzleSpec, reference, case: Case) -> Truth:
    """Reference outputs from pristine inputs, in float64 where the dtype is a float."""
    sizes = case.size_map
    initial = inputs.pristine(spec, sizes, case.seed, case.draw)
    tensors = {}
    for lay in inputs.layouts(spec, sizes):
        wide = torch.float64 if lay.arg.dtype in FLOAT_DTYPES else inputs.torch_dtype(lay.arg.dtype)
        start = initial.get(lay.arg.name)
        tensors[lay.arg.name] = torch.zeros(lay.n, dtype=wide) if start is None else start.to(wide)
    reference(*inputs.call_args(spec, sizes, tensors))
    return Truth(initial, {a.name: tensors[a.name] for a in spec.buffers if a.role != "in"})


class TruthCache:
    """Truths kept across the runs of one process (a `bench` or `grade` batch judges many
    submissions of the same puzzle), least recently used first out, within a byte budget.

    The key holds the puzzle's files' modification times, so an edited spec or reference is never
    served from the cache. Truths are only read after they are made.
    """

    def __init__(self, budget_bytes: int):
        self.budget = budget_bytes
        self.entries: OrderedDict[tuple, tuple[Truth, int]] = OrderedDict()
        self.used = 0

    def get(self, spec: PuzzleSpec, reference, case: Case) -> Truth:
        key = (str(spec.directory), puzzle_stamp(spec), case.sizes, case.seed, case.draw)
        if key in self.entries:
            self.entries.move_to_end(key)
            return self.entries[key][0]
        truth = reference_truth(spec, reference, case)
        size = truth_bytes(truth)
        if size <= self.budget:
            self.entries[key] = (truth, size)
            self.used += size
            while self.used > self.budget:
                _, (_, dropped) = self.entries.popitem(last=False)
                self.used -= dropped
        return truth


def puzzle_stamp(spec: PuzzleSpec) -> tuple[int, ...]:
    stamps = []
    for name in ("puzzle.yaml", "reference.py"):
        try:
            stamps.append((spec.directory / name).stat().st_mtime_ns)
        except OSError:
            stamps.append(0)
    return tuple(stamps)


def truth_bytes(truth: Truth) -> int:
    tensors = [*truth.initial.values(), *truth.outputs.values()]
    return sum(t.numel() * t.element_size() for t in tensors)


CACHE = TruthCache(int(float(os.environ.get("TPUZZLE_TRUTH_CACHE_MB", "4096")) * 2**20))


def read_buffer(path: str, dtype: str, total: int) -> torch.Tensor:
    raw = np.fromfile(path, dtype=np.uint8)
    tensor = torch.from_numpy(raw).view(inputs.torch_dtype(dtype))
    if tensor.numel() != total:
        raise ValueError(f"{path}: expected {total} elements, found {tensor.numel()}")
    return tensor
