"""What is measured before the submission is imported: the device's peaks (calibration) and the
reference's times per benchmark shape, each from the disk cache, else from the worker while no
submission code is loaded there; and how those measurements are read."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from judge.core import bench
from judge.core.loader import file_sha256
from judge.core.results import EnvInfo
from judge.core.spec import Case, PuzzleSpec
from judge.workers.channel import WorkerProcess

CALIBRATION_TIMEOUT_S = 120.0
MEASURES = "v2"  # the shape of cached measurements (copy curve; reference with library calls)
# How the reference and the library calls were timed: "played", in the loop that times a
# submission's replay (older entries were timed by do_bench and are measured again).
REFERENCE_TIMING = "played"
# How the device's peaks were timed: in the same loop, the fastest of the matmul sizes named
# (older entries, timed by do_bench or at other sizes, are measured again).
CALIBRATION_TIMING = "played-best-" + "-".join(str(n) for n in bench.MATMUL_SIZES)
# (kind, key) -> the value this process measured: --recalibrate measures each key once per
# batch, not once per submission, and a value whose entry a concurrent writer dropped from the
# disk cache is not measured again
_MEASURED_HERE: dict[tuple[str, str], Any] = {}
_TAKING: dict[tuple[str, str], threading.Lock] = {}  # one lock per key being measured
_TAKING_GUARD = threading.Lock()

# measured(kind, key, command, answer, timeout): a value from the cache or the worker
Measure = Callable[[str, str, Callable[[], dict], str, float], Any]


def measured(
    worker: WorkerProcess,
    recalibrate: bool,
    kind: str,
    key: str,
    command: Callable[[], dict],
    answer: str,
    timeout: float,
    alone: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext,
):
    """A device measurement (calibration, reference times) from the cache, else from the
    worker, before any submission code is loaded there. The command is built only when the
    measurement is taken (a reference's inputs may still be being drawn). With `recalibrate`,
    each key is measured again once in this process. A measurement is taken inside `alone()`
    (the device to itself, gate.DeviceGate.timing).

    The lanes of a batch that find the same key missing (a cold cache: every lane's first
    submission wants the device's calibration) measure it once: the first takes it, the others
    wait for it outside the device's gate and use its value. Should the first fail, the next
    takes the measurement itself."""
    value = _known(kind, key, recalibrate)
    if value is None:
        with _taking(kind, key):
            value = _known(kind, key, recalibrate)  # taken by another lane meanwhile
            if value is None:
                with alone():
                    event = worker.expect_ok(command(), answer, timeout, f"measuring the {kind}")
                value = event["value"]
                bench.save_cached(kind, key, value)
                _MEASURED_HERE[(kind, key)] = value
    return value


def _known(kind: str, key: str, recalibrate: bool):
    """The value already measured for key, from the disk cache or this process; None when it
    must be measured (with `recalibrate`, until this process has measured it)."""
    if recalibrate and (kind, key) not in _MEASURED_HERE:
        return None
    value = bench.load_cached(kind, key)
    return _MEASURED_HERE.get((kind, key)) if value is None else value


def _taking(kind: str, key: str) -> threading.Lock:
    with _TAKING_GUARD:
        return _TAKING.setdefault((kind, key), threading.Lock())


def calibration_key(env: EnvInfo) -> str:
    return f"{env.device}|{env.driver}|torch {env.torch}|triton {env.triton}"


def device_key(env: EnvInfo) -> str:
    """The cache key of the device's measurements: the device, its driver and the versions."""
    return f"{MEASURES}|{calibration_key(env)}"


def calibrate(measure: Measure, env: EnvInfo) -> tuple[dict, EnvInfo]:
    """The device's measured peaks, and the environment that shows them."""
    calibration = measure(
        "calibration",
        f"{CALIBRATION_TIMING}|{device_key(env)}",
        lambda: {"op": "calibrate"},
        "calibrated",
        CALIBRATION_TIMEOUT_S,
    )
    return calibration, with_calibration(env, calibration)


def with_calibration(env: EnvInfo, calibration: dict) -> EnvInfo:
    return replace(
        env,
        copy_gbps=calibration["copy_gbps"],
        peaks_tflops=calibration["peaks_tflops"],
        read_gbps=calibration.get("read_gbps"),
        copy_curve=calibration.get("copy_curve") or {},
    )


def reference_times(
    measure: Measure,
    spec: PuzzleSpec,
    env: EnvInfo,
    cases: list[Case],
    command: Callable[[Case], dict],
    timeout: float,
) -> list:
    """The reference's measured times for each benchmark shape, in order; cached per device,
    puzzle, reference.py's contents, sizes and draw."""
    digest = file_sha256(spec.directory / "reference.py")[:16]
    reference = f"{MEASURES}|{REFERENCE_TIMING}|{device_key(env)}|{spec.id}|{digest}"
    return [
        measure(
            "reference",
            f"{reference}|{case.sizes}|{case.draw}",
            lambda case=case: command(case),
            "reference_timed",
            timeout,
        )
        for case in cases
    ]


def untimed_note(interpret: bool, sanitize: bool) -> str:
    """The report's note on why nothing was timed."""
    if interpret:
        return (
            "Interpreter mode: Triton's interpreter on the CPU; timings mean "
            "nothing there, so none are taken and nothing is ranked."
        )
    if sanitize:
        return "Untimed: --sanitize runs the small cases once under memcheck."
    return "Timing skipped (--no-timing)."


def libraries(spec: PuzzleSpec, measured) -> tuple[float | None, str, float | None]:
    """(reference median, the fastest library call's label, its median) from the reference
    timing: the reference itself is the library call the spec names, beside any others
    reference.py lists."""
    if not isinstance(measured, dict):
        return None, "", None
    medians = {
        label: bench.summarize(times)[0]
        for label, times in (measured.get("library") or {}).items()
        if times
    }
    reference = measured.get("reference")
    ref_median = bench.summarize(reference)[0] if reference else None
    if ref_median is not None:
        medians.setdefault(spec.library or "PyTorch reference", ref_median)
    if not medians:
        return ref_median, "", None
    label = min(medians, key=medians.get)
    return ref_median, label, medians[label]
