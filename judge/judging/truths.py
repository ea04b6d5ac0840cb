"""The parent's truths for one judging: each case's pristine inputs and expected outputs.

They are computed here, in the trusted parent, never in the worker: in the background, in the
order the run needs them, from the moment it starts (while the worker imports PyTorch) until the
worker's cases and benchmarks need them.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

from judge.core.spec import Case, PuzzleSpec
from judge.core.truth import CACHE as truth_cache
from judge.core.truth import Sealed, Truth

TRUTH_THREADS = 2  # truths computed side by side in the parent while the worker runs


def truth_key(case: Case) -> tuple:
    """What a truth depends on besides the puzzle (a case's name does not change it)."""
    return (case.sizes, case.seed, case.draw)


class Truths:
    """The truths of one judging, by `truth_key`: computed in the background when they were
    asked for in `computing`, else on demand."""

    def __init__(self, spec: PuzzleSpec, reference):
        self.spec, self.reference = spec, reference
        self.done: dict[tuple, Truth] = {}
        self.pending: dict[tuple, Future] = {}

    @contextlib.contextmanager
    def computing(self, wanted: list[Case]) -> Iterator[Truths]:
        """Compute the truths of `wanted` in the background, in that order, while the block
        runs; on leaving it, those still to compute are left undone (an early verdict)."""
        with ThreadPoolExecutor(TRUTH_THREADS, thread_name_prefix="truth") as pool:
            self.pending = {
                key: pool.submit(truth_cache.get, self.spec, self.reference, case)
                for key, case in {truth_key(c): c for c in wanted}.items()
            }
            try:
                yield self
            finally:
                for future in self.pending.values():
                    future.cancel()

    def get(self, case: Case) -> Truth:
        """The case's inputs and expected outputs: waited for when they were among those being
        computed in the background, else computed now."""
        key = truth_key(case)
        if key not in self.done:
            future = self.pending.get(key)
            self.done[key] = (
                future.result() if future else truth_cache.get(self.spec, self.reference, case)
            )
        return self.done[key]

    def output_files(self, case: Case) -> dict[str, dict]:
        """The case's expected outputs as sealed files the timer maps (path, dtype, elements):
        the timer checks the calls it replays against them on the device. Sealed once per
        truth (kept with it in the cache), the truth then reading its outputs from the files."""
        truth = self.get(case)
        with SEALING:
            files = truth.sealed_outputs
            if not files:
                for name, tensor in truth.outputs.items():
                    files[name] = Sealed(tensor)
                    truth.outputs[name] = files[name].tensor(tensor.dtype).view(tensor.shape)
        return {
            name: {
                "path": sealed.path,
                "dtype": str(truth.outputs[name].dtype).removeprefix("torch."),
                "n": truth.outputs[name].numel(),
            }
            for name, sealed in files.items()
        }


SEALING = threading.Lock()  # one truth's outputs are sealed once, whichever lane asks first
