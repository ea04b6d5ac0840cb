"""The parent's truths for one judging: each case's pristine inputs and expected outputs.

They are computed here, in the trusted parent, never in the worker: in the background, in the
order the run needs them, from the moment it starts (while the worker imports PyTorch) until the
worker's cases and benchmarks need them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

from judge.core.spec import Case, PuzzleSpec
from judge.core.truth import CACHE as truth_cache
from judge.core.truth import Truth

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
    def computing(self, wanted: list[Case], timers: list[Case] = ()) -> Iterator[Truths]:
        """Compute the truths of `wanted` in the background, in that order, while the block
        runs, with the worker's sealed copies of their inputs, except for the sets in `timers`
        (read by the timer alone); on leaving it, those still to compute are left undone (an
        early verdict)."""
        theirs = {truth_key(c) for c in timers}
        with ThreadPoolExecutor(TRUTH_THREADS, thread_name_prefix="truth") as pool:
            self.pending = {
                key: pool.submit(self.made, case, key not in theirs)
                for key, case in {truth_key(c): c for c in wanted}.items()
            }
            try:
                yield self
            finally:
                for future in self.pending.values():
                    future.cancel()

    def made(self, case: Case, for_worker: bool) -> Truth:
        """The case's truth, with the worker's sealed copies of its inputs if `for_worker`."""
        truth = truth_cache.get(self.spec, self.reference, case)
        if for_worker:
            truth.input_paths()
        return truth

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
        """The case's expected outputs as files the timer maps (path, dtype, elements): the
        timer checks the calls it replays against them on the device."""
        truth = self.get(case)
        return {
            name: {
                "path": held.path,
                "dtype": str(truth.outputs[name].dtype).removeprefix("torch."),
                "n": truth.outputs[name].numel(),
            }
            for name, held in truth.output_files().items()
        }
