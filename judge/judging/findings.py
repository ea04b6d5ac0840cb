"""What one judging has found so far, and the report made of it: the environment it ran in, the
wall time of each phase, the notes for the reader, whether its times could be verified. A
progress callback is told here as each stage starts and as its steps finish."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

import torch

from judge.core import bench
from judge.core.results import CaseResult, EnvInfo, Progress, RunReport, Timing, Verdict
from judge.core.spec import Case
from judge.judging.plan import Plan

STAGES = ("startup", "calibration", "import", "cases", "benchmarks")  # announced to `progress`


def fallback_env(interpret: bool) -> EnvInfo:
    """What the parent knows of the environment before a worker has reported."""
    import platform

    import triton

    return EnvInfo(
        mode="interpreter" if interpret else "gpu",
        device="cpu (Triton interpreter)" if interpret else "cuda",
        driver="",
        cuda=torch.version.cuda or "",
        triton=triton.__version__,
        torch=torch.__version__,
        python=platform.python_version(),
    )


class Findings:
    """The record of one judging, from which its report is made."""

    def __init__(
        self, plan: Plan, cases: list[Case], progress: Callable[[Progress], None] | None = None
    ):
        self.plan, self.cases, self.progress = plan, cases, progress
        self.env = fallback_env(plan.interpret)
        self.notes: list[str] = []
        self.phases: dict[str, float] = {}

    def note(self, text: str) -> None:
        """A note for the reader, once however often it is told."""
        if text not in self.notes:
            self.notes.append(text)

    @contextlib.contextmanager
    def phase(self, name: str, total: int = 0) -> Iterator[None]:
        """Accumulate the wall time spent in one phase of the run, for the report; tell the
        progress callback that a stage of `total` steps starts."""
        if name in STAGES:
            self.notify(name, 0, total)
        started = time.monotonic()
        try:
            yield
        finally:
            spent = time.monotonic() - started
            self.phases[name] = round(self.phases.get(name, 0.0) + spent, 3)

    def add(self, prefix: str, seconds: object) -> None:
        """Add the worker's own account of where a command's time went (`seconds`, a dict of
        name -> seconds) to the phases, each name under `prefix`; a garbled account is left out."""
        if not isinstance(seconds, dict):
            return
        for name, spent in seconds.items():
            if isinstance(name, str) and isinstance(spent, (int, float)) and 0 <= spent < 1e6:
                key = f"{prefix}_{name.removesuffix('_s')}"
                self.phases[key] = round(self.phases.get(key, 0.0) + spent, 3)

    def notify(self, stage: str, done: int, total: int, detail: str = "") -> None:
        """Tell the progress callback, if any; whatever it raises changes nothing here."""
        if self.progress is not None:
            with contextlib.suppress(Exception):
                self.progress(Progress(stage, done, total, detail))

    def report(
        self,
        verdict: Verdict,
        reason: str,
        message: str,
        results: list[CaseResult],
        timings: list[Timing],
        output: str,
    ) -> RunReport:
        """The report: the cases not reached are skipped; only a passed, timed run outside the
        interpreter is ranked."""
        ran = {r.name for r in results}
        skipped = [self.plan.case_result(c, "skipped") for c in self.cases if c.name not in ran]
        timed = verdict is Verdict.PASSED and bool(timings)
        return RunReport(
            puzzle=self.plan.spec.id,
            submission=str(self.plan.submission),
            verdict=verdict,
            reason=reason,
            message=message,
            cases=tuple(results + skipped),
            timing=tuple(timings),
            env=self.env,
            ranked=timed and not self.plan.interpret,
            notes=tuple(self.notes),
            output=output,
            phases=dict(self.phases),
            score=bench.score(timings) if timed else None,
            method=bench.METHOD if timings else "",
        )
