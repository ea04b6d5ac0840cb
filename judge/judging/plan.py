"""What the worker is asked to run for one judging, decided in the parent: the cases and their
seeds, the input sets of each timed call, the commands, the files the worker leaves its buffers
in, and the command line that reproduces a case."""

from __future__ import annotations

import hashlib
import shlex
from dataclasses import dataclass, replace
from pathlib import Path

from judge.core import bench, inputs
from judge.core.results import CaseResult
from judge.core.spec import Case, PuzzleSpec
from judge.judging.truths import Truths

BIG_SET_BYTES = 256 << 20  # input sets at least this large rotate two at a time, else three


def mix_seed(seed: int, secret: str) -> int:
    """The seed a case is drawn with: the spec's own, or one derived from it and the secret."""
    if not secret:
        return seed
    digest = hashlib.sha256(f"{secret}:{seed}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


@dataclass(frozen=True)
class Plan:
    """The cases of one judging and the commands that run them."""

    spec: PuzzleSpec  # the puzzle
    submission: Path  # the submission's file, as given (for the reproducing command)
    secret: str  # an instructor's secret seed, mixed into the spec's seeds ("" for none)
    interpret: bool  # Triton's interpreter: the small cases only, and said so when reproducing
    truths: Truths  # the parent's truths, whose sealed input files the commands name

    # ------------------------------------------------------------------------ the cases

    def tests(self, given: tuple[Case, ...] | None, small: bool) -> list[Case]:
        """The cases to judge: those given, as given (an empty tuple: the spec's tests, as they
        are); else the spec's tests (with `small`, only those marked for the interpreter), their
        seeds mixed with the secret."""
        if given is not None:
            return list(given or self.spec.tests)
        chosen = [c for c in self.spec.tests if c.interpret or not small]
        return [replace(c, seed=mix_seed(c.seed, self.secret)) for c in chosen]

    def benchmarks(self, sweep: bool) -> list[Case]:
        """The spec's benchmarks; with `sweep`, then every distinct size of the tests, smallest
        work first (the size sweep of `tpuzzle bench --plot`)."""
        chosen = list(self.spec.benchmarks)
        if sweep:
            seen = {c.sizes for c in chosen}
            for case in sorted(self.spec.tests, key=lambda c: bench.work(self.spec, c.size_map)):
                if case.sizes not in seen:
                    seen.add(case.sizes)
                    chosen.append(replace(case, draw=""))
        return chosen

    def wanted(self, cases: list[Case], timed: list[Case]) -> list[Case]:
        """Every case whose truth the run needs, in the order it needs them: the cases, then
        each timed benchmark's input sets with the fresh sets of their re-check."""
        wanted = list(cases)
        for case in timed:
            wanted += [replace(case, seed=seed) for seed in self.bench_seeds(case)]
            wanted += self.fresh_sets([case])
        return wanted

    def fresh_sets(self, timed: list[Case]) -> list[Case]:
        """The input sets only the timer reads: the fresh sets of each timed shape's re-check
        (the worker never sees them)."""
        return [replace(case, seed=seed) for case in timed for seed in self.recheck_seeds(case)]

    def largest(self, cases: list[Case]) -> Case:
        """The case with the most elements in its buffers."""
        return max(cases, key=lambda c: sum(lay.n for lay in inputs.layouts(self.spec, c.size_map)))

    # ------------------------------------------------------------------------ seeds

    def bench_seeds(self, case: Case) -> list[int]:
        """The input sets rotated through a benchmark's timed calls: three, or two when large."""
        set_bytes = sum(
            lay.n * inputs.torch_dtype(lay.arg.dtype).itemsize
            for lay in inputs.layouts(self.spec, case.size_map)
        )
        count = 2 if set_bytes >= BIG_SET_BYTES else 3
        return [mix_seed(case.seed + j, self.secret) for j in range(count)]

    def recheck_seeds(self, case: Case) -> list[int]:
        """The fresh input sets the timed buffers are refilled with and checked on again."""
        return [mix_seed(seed, "recheck") for seed in self.bench_seeds(case)]

    # ------------------------------------------------------------------------ commands

    def case_command(self, case: Case, seed: int | list[int], timer: bool = False) -> dict:
        """A command's sizes and input sets: seeds, and the files of the drawn inputs (those
        the timer reads, with `timer`; else the worker's sealed copies)."""
        own = self.spec.variant(case.draw)
        scalars = dict(own.scalars) if own is not None else {}
        shared = {"sizes": case.size_map, "draw": case.draw, "scalars": scalars}
        if isinstance(seed, list):
            return {**shared, "seeds": seed, "inputs": self.input_paths(case, seed, timer)}
        return {**shared, "seed": seed, "inputs": self.input_paths(case, [seed], timer)[0]}

    def bench_command(self, case: Case, recheck: bool) -> dict:
        """A benchmark's input sets; with `recheck` (untimed runs, where no timer checks fresh
        inputs), the fresh sets its buffers are called again with. A timed run never shows the
        worker the fresh sets: they are the timer's."""
        command = self.case_command(case, self.bench_seeds(case))
        if not recheck:
            return command
        fresh = self.recheck_seeds(case)
        return {**command, "recheck": fresh, "recheck_inputs": self.input_paths(case, fresh)}

    def prepare_command(self, case: Case, tag: str) -> dict:
        """The timer's command: put the fresh input sets of a shape's replay and their truths
        on the device, while the worker records the calls to replay."""
        seeds = self.recheck_seeds(case)
        return {
            "op": "prepare",
            "tag": tag,
            "sizes": case.size_map,
            "draw": case.draw,
            "seeds": seeds,
            "inputs": self.input_paths(case, seeds, timer=True),
            "truths": [self.truths.output_files(replace(case, seed=s)) for s in seeds],
        }

    def replay_command(
        self, case: Case, tag: str, sequence: dict, kernels: Path, timed: bool = True
    ) -> dict:
        """The timer's command: replay the recorded sequence on the fresh input sets (those of
        `prepare_command`), checking every call against their truths (untimed: one call per
        set)."""
        return {
            **self.prepare_command(case, tag),
            "op": "replay",
            "timed": timed,
            "sequence": sequence,
            "kernels": str(kernels),
        }

    def check_command(self, case: Case, tag: str, sequence: dict, kernels: Path) -> dict:
        """The timer's command: replay one case's recorded call once and check it."""
        return {
            "op": "check_case",
            "tag": tag,
            **self.case_command(case, case.seed, timer=True),
            "truths": self.truths.output_files(case),
            "sequence": sequence,
            "kernels": str(kernels),
        }

    def reference_command(self, case: Case) -> dict:
        """Time the reference on a benchmark's input sets (before any submission is loaded)."""
        return {
            "op": "time_reference",
            **self.case_command(case, self.bench_seeds(case), timer=True),
        }

    def input_paths(self, case: Case, seeds: list[int], timer: bool = False) -> list[dict]:
        """The files of each seed's drawn inputs (empty for small sets): the worker's sealed
        copies, or with `timer` those the timer reads (judge.core.truth.Truth)."""
        found = [self.truths.get(replace(case, seed=s)) for s in seeds]
        return [t.timer_input_paths() if timer else t.input_paths() for t in found]

    def buffer_files(self, directory: Path, tag: str) -> dict[str, str]:
        """Where the worker leaves each buffer of a call: named by the parent, never taken from
        what the worker says."""
        return {a.name: str(directory / f"{tag}_{a.name}.bin") for a in self.spec.buffers}

    # ------------------------------------------------------------------------ results

    def reproduce(self, case: Case) -> str:
        """One command line that runs the case alone."""
        sizes = " ".join(f"--size {k}={v}" for k, v in case.sizes)
        extra = (f" --draw {shlex.quote(case.draw)}" if case.draw else "") + (
            " --interpret" if self.interpret else ""
        )
        return f"tpuzzle run {self.spec.id} {self.submission} {sizes} --seed {case.seed}{extra}"

    def case_result(self, case: Case, status: str, **fields) -> CaseResult:
        """A case's result, with the command that reproduces it unless it passed."""
        return CaseResult(
            name=case.name,
            sizes=case.size_map,
            seed=case.seed,
            status=status,
            reproduce=self.reproduce(case) if status != "passed" else "",
            **fields,
        )
