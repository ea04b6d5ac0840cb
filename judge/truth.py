"""The trusted side of a case: its pristine inputs and its reference outputs.

Computed in the parent from the seed alone, before any submission code runs, in float64 where the
dtype is a float; the worker's buffers are read back from its files and compared against these.
"""

from __future__ import annotations

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


def read_buffer(path: str, dtype: str, total: int) -> torch.Tensor:
    raw = np.fromfile(path, dtype=np.uint8)
    tensor = torch.from_numpy(raw).view(inputs.torch_dtype(dtype))
    if tensor.numel() != total:
        raise ValueError(f"{path}: expected {total} elements, found {tensor.numel()}")
    return tensor
