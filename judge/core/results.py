"""What a judged run produced, as frozen dataclasses that turn into JSON and back.

`RunReport.to_dict()` is exactly what `tpuzzle run --json` prints.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from dataclasses import dataclass, field
from typing import Any


class Verdict(str, enum.Enum):
    PASSED = "passed"  # every case right, every re-check right
    FAILED = "failed"  # ran, but an answer, a guard band, an input or a re-check was wrong
    REJECTED = "rejected"  # broke the rules (PyTorch or another library did the work, timing)
    ERROR = "error"  # did not run: syntax error, no solve, compile error, crash, timeout

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Mismatch:
    """One wrong element, for the mismatch report."""

    index: int  # flat index into the output buffer
    got: float  # what the submission wrote (NaN where it wrote nothing)
    expected: float  # the reference value
    error: float  # |got - expected|


@dataclass(frozen=True)
class BufferCheck:
    """The comparison of one buffer after a call."""

    name: str  # argument name, e.g. "c_ptr"
    ok: bool  # the buffer is as it must be
    mismatches: int = 0  # elements outside the tolerance
    total: int = 0  # elements compared
    unwritten: int = 0  # output elements still holding the sentinel
    max_error: float = 0.0  # largest |got - expected| (NaN if any got is NaN)
    max_error_index: int = -1  # where max_error is
    nan_count: int = 0  # NaNs in the output where the reference has none
    inf_count: int = 0  # Infs in the output where the reference has none
    first: tuple[Mismatch, ...] = ()  # first few wrong elements
    guard_before: int = 0  # guard elements overwritten before the start of the buffer
    guard_after: int = 0  # guard elements overwritten after the end of the buffer
    input_changed: int = 0  # for inputs: elements that differ from the pristine copy
    written_prefix: int | None = None  # k when only the first k elements were written


@dataclass(frozen=True)
class CaseResult:
    """One test case (or one benchmark's re-check)."""

    name: str  # label, e.g. "N=1025"
    sizes: dict[str, int]  # every size argument
    seed: int  # the seed the inputs were drawn with (secret seed already mixed in)
    status: str  # "passed", "failed", "error" or "skipped"
    max_error: float | None = None  # largest error over the outputs
    buffers: tuple[BufferCheck, ...] = ()  # per-buffer details
    hints: tuple[str, ...] = ()  # recognisable mistakes, in plain words
    reproduce: str = ""  # one command line that runs this case alone
    message: str = ""  # what went wrong, when status is error
    hidden: bool = False  # a hidden case: only its status is shown (core.visibility)


@dataclass(frozen=True)
class Timing:
    """One benchmark shape, timed by the timer: a process that never imported the submission
    replays the launch sequence one call of solve() made (its kernels, grids and arguments) on
    the judge's own buffers, with the L2 cache flushed before every call and CUDA events around
    it, and checks every timed call's answer on freshly drawn inputs. The median and percentiles
    are over those calls.
    """

    case: str  # benchmark label
    sizes: dict[str, int]  # its sizes
    median_ms: float  # median time of the timed calls
    p20_ms: float  # 20th percentile
    p80_ms: float  # 80th percentile
    samples: int  # number of timed calls
    input_sets: int  # distinct input sets rotated through the timed calls
    gbps: float | None = None  # achieved GB/s from the spec's bytes formula
    tflops: float | None = None  # achieved TFLOP/s from the spec's FLOP formula
    sol_pct: float | None = None  # percent of the device's measured peak (largest copy, or matmul)
    reference_median_ms: float | None = None  # the PyTorch reference, same harness
    speedup_vs_reference: float | None = None  # reference median / submission median
    above_speed_of_light: bool = False  # faster than the device allows (the run is rejected)
    copy_pct: float | None = None  # percent of a device copy moving the same bytes (bytes puzzles)
    library: str = ""  # the fastest library call for the same work, e.g. "torch.cumsum"
    library_median_ms: float | None = None  # its median, same harness
    speedup_vs_library: float | None = None  # library median / submission median
    event_median_ms: float | None = None  # median of the CUDA-event times alone
    device_span_ms: float | None = None  # read from older results only (replays use one stream)
    launches: float | None = None  # kernels one call launches
    host_ms: float | None = None  # host time of one replayed call (its launches), median
    floor_ms: float | None = None  # the shape's floor in the score: its speed-of-light time
    replayed: tuple[str, ...] = ()  # what one call launched, a line per kernel or fill, in order

    @property
    def throughput(self) -> str:
        """The achieved rate as text: "3941 GB/s" or "612.3 TFLOP/s" ("" when neither)."""
        if self.gbps is not None:
            return f"{self.gbps:.0f} GB/s"
        return f"{self.tflops:.1f} TFLOP/s" if self.tflops is not None else ""


@dataclass(frozen=True)
class Score:
    """What a run ranks on: the geometric mean over every benchmark shape of the shape's median,
    each raised to the shape's floor (its speed-of-light time) so that no shape can drive the
    mean towards zero; the spread is the same mean of the shapes' p20 and p80."""

    ms: float  # geometric mean of the floored medians
    p20_ms: float  # geometric mean of the floored p20s
    p80_ms: float  # geometric mean of the floored p80s
    shapes: int  # benchmark shapes in the mean
    sol_pct: float | None = None  # geometric mean of the shapes' percent of speed of light
    copy_pct: float | None = None  # geometric mean of the shapes' percent of a same-size copy
    speedup_vs_library: float | None = None  # geometric mean of the shapes' library ratios

    @property
    def spread(self) -> tuple[float, float, float]:
        """(score, p20, p80), as bench.is_tie compares them."""
        return self.ms, self.p20_ms, self.p80_ms


@dataclass(frozen=True)
class EnvInfo:
    """Where the run happened."""

    mode: str  # "gpu" or "interpreter"
    device: str  # GPU name, or "cpu (Triton interpreter)"
    driver: str  # NVIDIA driver version, "" when unknown
    cuda: str  # CUDA version torch was built with
    triton: str  # Triton version
    torch: str  # PyTorch version
    python: str  # Python version
    copy_gbps: float | None = None  # measured device-to-device copy bandwidth (read + write)
    peaks_tflops: dict[str, float] = field(default_factory=dict)  # measured matmul throughput
    read_gbps: float | None = None  # measured read bandwidth (a sum over a large buffer)
    copy_curve: dict[str, float] = field(default_factory=dict)  # bytes moved -> copy GB/s
    capability: str = ""  # the GPU's compute capability, e.g. "9.0" ("" in the interpreter)
    shared_memory_kb: int = 0  # shared memory one block may use (opted in), KiB
    unconfined: dict[str, str] = field(default_factory=dict)  # what the worker ran without, why


@dataclass(frozen=True)
class Progress:
    """How far a judging has come, as handed to a progress callback while it runs."""

    stage: str  # "startup", "calibration", "import", "cases" or "benchmarks"
    done: int  # steps of the stage finished (0 as the stage starts)
    total: int  # steps the stage has (0 for a stage not counted in steps)
    detail: str = ""  # the step just finished: a case's or a benchmark shape's name


@dataclass(frozen=True)
class RunReport:
    """The verdict on one submission for one puzzle."""

    puzzle: str  # puzzle id
    submission: str  # path of the submission as given
    verdict: Verdict  # passed | failed | rejected | error
    reason: str  # short machine-readable reason, e.g. "wrong-answer", "timeout", "ok"
    message: str  # one human sentence about the verdict
    cases: tuple[CaseResult, ...]  # test cases, in spec order
    timing: tuple[Timing, ...]  # benchmark cases; empty in interpreter mode or when not timed.
    # In JSON: "timings" is this list and "timing" its first entry (the headline figure) or null.
    env: EnvInfo  # device and versions
    ranked: bool  # whether this result may enter a leaderboard
    notes: tuple[str, ...] = ()  # remarks for the reader (interpreter mode, flags)
    output: str = ""  # the worker's captured stdout/stderr (capped)
    wall_s: float = 0.0  # wall-clock seconds the whole judging took
    phases: dict[str, float] = field(default_factory=dict)  # wall seconds per phase of the run
    sanitizer: dict[str, Any] | None = None  # compute-sanitizer's findings, with --sanitize
    score: Score | None = None  # the ranked figure over every benchmark shape; None when untimed
    method: str = ""  # how the times were taken, in words (empty when nothing was timed)

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASSED

    @property
    def figure(self) -> Score | None:
        """What the run ranks on: its score, or for a report stored before scores existed, its
        first benchmark shape as a score of one shape; None when nothing was timed."""
        if self.score is not None:
            return self.score
        if not self.timing:
            return None
        t = self.timing[0]
        versus = t.speedup_vs_library or t.speedup_vs_reference  # the reference calls a library
        return Score(t.median_ms, t.p20_ms, t.p80_ms, 1, t.sol_pct, t.copy_pct, versus)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["verdict"] = self.verdict.value
        data["timings"] = list(data.pop("timing"))
        data["timing"] = data["timings"][0] if data["timings"] else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunReport:
        return cls(
            puzzle=data["puzzle"],
            submission=data["submission"],
            verdict=Verdict(data["verdict"]),
            reason=data["reason"],
            message=data.get("message", ""),
            cases=tuple(_case_from_dict(c) for c in data.get("cases", ())),
            timing=tuple(
                Timing(**{**t, "replayed": tuple(t.get("replayed") or ())})
                for t in data.get("timings", ())
            ),
            env=EnvInfo(**data["env"]),
            ranked=data.get("ranked", False),
            notes=tuple(data.get("notes", ())),
            output=data.get("output", ""),
            wall_s=data.get("wall_s", 0.0),
            phases=dict(data.get("phases") or {}),
            sanitizer=data.get("sanitizer"),
            score=Score(**data["score"]) if data.get("score") else None,
            method=data.get("method", ""),
        )


def _case_from_dict(data: dict[str, Any]) -> CaseResult:
    buffers = tuple(
        BufferCheck(**{**b, "first": tuple(Mismatch(**m) for m in b.get("first", ()))})
        for b in data.get("buffers", ())
    )
    return CaseResult(**{**data, "buffers": buffers, "hints": tuple(data.get("hints", ()))})


def finite(value: Any) -> Any:
    """A report's value made fit for JSON, which has no NaN or Infinity: such numbers become
    null, in dicts, lists and tuples at any depth."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value
