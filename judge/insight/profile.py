"""`tpuzzle profile PUZZLE FILE`: one call of the submission, on its benchmark case, under
NVIDIA Nsight Compute (`ncu`), in a worker of its own like any judging, profiled alone: only the
kernels launched inside the call (an NVTX range around it) are measured, not the judge's.

Nsight Compute replays each kernel to read its counters, so the call's own time is not the
benchmark's; what the profile gives is why a kernel is as fast as it is: its duration, the DRAM
and compute throughput against their peaks, achieved and theoretical occupancy and what limits
it, registers and shared memory per block, and where its warps stall. The report (`.ncu-rep`,
for Nsight Compute's GUI) and a CSV of every metric are written beside.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from judge.core.spec import Case, PuzzleSpec
from judge.core.truth import load_reference
from judge.errors import JudgeError
from judge.insight.metrics import Kernel, kernels, rows
from judge.judging.plan import Plan
from judge.judging.truths import Truths
from judge.judging.verify import Checker
from judge.workers import launcher, tools
from judge.workers.worker import PROFILE_RANGE

TOOL_ENV = "TPUZZLE_NCU"
SECTIONS = ("SpeedOfLight", "LaunchStats", "Occupancy", "WarpStateStats", "MemoryWorkloadAnalysis")
STARTUP_S = 300.0  # the worker under ncu: importing torch and creating the context is slower
REPLAY_S = 600.0  # one call whose kernels are replayed once per counter pass


@dataclass(frozen=True)
class Profile:
    """What `tpuzzle profile` found."""

    puzzle: str
    submission: str
    case: str  # the case profiled
    kernels: tuple[Kernel, ...]  # the submission's kernels in the call, in launch order
    answer: str  # "right", or what was wrong with the profiled call's outputs
    report: Path  # the .ncu-rep
    csv: Path  # every metric of every kernel, for tools
    device: str
    wall_s: float  # what profiling took, start to end


def find_tool() -> Path:
    """ncu: TPUZZLE_NCU, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin."""
    needed = (
        "tpuzzle profile needs NVIDIA Nsight Compute (ncu, in the CUDA toolkit or the "
        "nsight-compute package)"
    )
    return tools.find("ncu", TOOL_ENV, needed)


def ready() -> Path:
    """ncu's path, when there is a GPU to profile on; else JudgeError saying what is missing."""
    tool = find_tool()
    if not launcher.cuda_present():
        raise JudgeError(
            "tpuzzle profile needs an NVIDIA GPU, and none is visible here (a CPU-only machine "
            "judges in the interpreter, but cannot profile)"
        )
    return tool


def command(tool: Path, report: Path) -> tuple[str, ...]:
    """The prefix that runs the worker under ncu: the worker's children too, only the kernels
    inside the profiled range, the few sections that explain speed."""
    sections = [arg for name in SECTIONS for arg in ("--section", name)]
    return (
        str(tool), "--target-processes", "all", "--nvtx", "--nvtx-include", f"{PROFILE_RANGE}/",
        *sections, "--export", str(report), "--force-overwrite",
    )  # fmt: skip


def profile(
    spec: PuzzleSpec, submission: Path, case: Case | None, out: Path, gpu: int | None = None
) -> Profile:
    """Profile one call of the submission on `case` (default: the first benchmark shape),
    writing out/<puzzle>.ncu-rep and out/<puzzle>.csv."""
    started = time.monotonic()
    tool = ready()
    chosen = case or (spec.benchmarks[0] if spec.benchmarks else spec.tests[-1])
    out.mkdir(parents=True, exist_ok=True)
    report = out / f"{spec.id}.ncu-rep"
    report.unlink(missing_ok=True)
    plan = Plan(spec, submission, "", False, Truths(spec, load_reference(spec)))
    worker = launcher.launch(
        spec.directory / "puzzle.yaml",
        submission,
        False,
        gpu,
        prefix=command(tool, report.with_suffix("")),
    )
    try:
        answer = _one_call(plan, worker, chosen)
        worker.stop()
    finally:
        launcher.discard(worker)
    csv = out / f"{spec.id}.csv"
    metric_rows = _export(tool, report, csv)
    first = metric_rows[0] if metric_rows else {}
    device = first.get("device__attribute_display_name", "")
    return Profile(
        spec.id,
        str(submission),
        chosen.name,
        kernels(metric_rows),
        answer,
        report,
        csv,
        device,
        round(time.monotonic() - started, 1),
    )


def _one_call(plan: Plan, worker, case: Case) -> str:
    """Start, load, call once for the profiler; "right" or what the call's outputs got wrong."""
    worker.expect("ready", STARTUP_S, "starting the worker under ncu")
    worker.expect_ok({"op": "load"}, "loaded", STARTUP_S, "importing the submission")
    command = {"op": "profile", "tag": "profile", **plan.case_command(case, case.seed)}
    worker.expect_ok(command, "profiled", REPLAY_S, "the profiled call")
    checker = Checker(plan, worker)
    result = checker.case(case, plan.truths.get(case), checker.files("profile"))
    if result.status == "passed":
        return "right"
    return "wrong: " + "; ".join(
        f"{b.name} {b.mismatches} of {b.total} elements wrong" for b in result.buffers if not b.ok
    )


def _export(tool: Path, report: Path, csv: Path) -> list[dict[str, str]]:
    """Every metric of every profiled kernel, from the report, as rows; also written to csv."""
    if not report.is_file():
        raise JudgeError(
            f"ncu wrote no report ({report}): no kernel ran in the profiled call, or ncu could "
            "not read the GPU's counters (they may need root or "
            "NVreg_RestrictProfilingToAdminUsers=0)"
        )
    done = subprocess.run(
        [str(tool), "--import", str(report), "--csv", "--page", "raw"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if done.returncode != 0:
        raise JudgeError(f"ncu --import {report}: {done.stderr.strip().splitlines()[-1:]}")
    csv.write_text(done.stdout)
    return rows(done.stdout)
