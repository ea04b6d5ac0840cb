"""The trusted parent: computes references, drives a worker, compares bytes, decides the verdict.

The submission never runs in this process. The worker is a fresh process (forked from a
pre-imported zygote, or `python -m judge.isolation.worker`) in its own session (process group)
with its own temporary directory and Triton cache; every phase has a deadline, and on a deadline
the whole group is killed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import statistics
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from judge.core import bench, check, inputs
from judge.core.loader import file_sha256
from judge.core.results import CaseResult, EnvInfo, RunReport, Timing, Verdict
from judge.core.spec import Case, PuzzleSpec
from judge.core.truth import CACHE as truth_cache
from judge.core.truth import Truth, load_reference
from judge.isolation import channel, sanitize
from judge.isolation.channel import (
    SECRET_ENV,
    SECRET_FILE_ENV,
    WorkerFailure,
    WorkerProcess,
    WorkerReported,
    launch,
)

STARTUP_TIMEOUT_S = 180.0  # importing torch and triton, creating the CUDA context
CALIBRATION_TIMEOUT_S = 120.0
TRUTH_THREADS = 2  # truths computed side by side in the parent while the worker runs
BIG_SET_BYTES = 256 << 20  # input sets at least this large rotate two at a time, else three
MEASURES = "v2"  # the shape of cached measurements (copy curve; reference with library calls)
_MEASURED_HERE: set[tuple[str, str]] = set()  # (kind, key) measured by this process: --recalibrate
# measures each once per batch, not once per submission


@dataclass(frozen=True)
class RunOptions:
    """How to judge: mode, which cases, deadlines."""

    interpret: bool | None = None  # None: the interpreter exactly when no CUDA device is present
    timing: bool = True  # time the benchmark cases (GPU mode only)
    cases: tuple[Case, ...] | None = None  # judge these instead of the spec's tests
    timeout_s: float | None = None  # override the spec's per-phase deadline
    secret: str = ""  # an instructor's secret seed, mixed into every case's seed
    gpu: int | None = None  # which CUDA device (CUDA_VISIBLE_DEVICES for the worker)
    submitter: str = ""  # who submitted, for the stored result
    recalibrate: bool = False  # measure the device and the reference again, ignoring the cache
    sweep: bool = False  # also time every distinct test size (for a plot against size)
    sanitize: Path | None = None  # compute-sanitizer: the small cases once, untimed, under memcheck


def secret_from_env() -> str:
    """The instructor's secret seed: TPUZZLE_SECRET_SEED, or the file TPUZZLE_SECRET_SEED_FILE."""
    if os.environ.get(SECRET_ENV):
        return os.environ[SECRET_ENV]
    path = os.environ.get(SECRET_FILE_ENV)
    return Path(path).read_text().strip() if path else ""


def truth_key(case: Case) -> tuple:
    return (case.sizes, case.seed, case.draw)


def mix_seed(seed: int, secret: str) -> int:
    """The seed a case is drawn with: the spec's own, or one derived from it and the secret."""
    if not secret:
        return seed
    digest = hashlib.sha256(f"{secret}:{seed}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def judge(
    spec: PuzzleSpec,
    submission: Path,
    options: RunOptions = RunOptions(),
    worker: WorkerProcess | None = None,
) -> RunReport:
    """Judge one submission; never raises for anything the submission does.

    `worker` may be one already started by `channel.launch` for this spec and submission (the CLI
    starts it before importing PyTorch here, so that both imports overlap).
    """
    started = time.monotonic()
    if options.sanitize:
        options = replace(options, timing=False)
    if worker is None:
        interpret = (
            options.interpret if options.interpret is not None else not channel.cuda_present()
        )
        worker = launch(
            spec.directory / "puzzle.yaml", submission, interpret, options.gpu, options.sanitize
        )
    try:
        session = Session(spec, submission, options, worker)
    except BaseException:
        channel.discard(worker)
        raise
    findings = None
    try:
        report = session.run()
        if options.sanitize:
            worker.stop()  # memcheck writes its summary as the worker exits
            findings = sanitize.read(worker.dir)
    finally:
        channel.discard(worker)
    if findings is not None:
        report = sanitize.with_findings(report, findings)
    return replace(report, wall_s=round(time.monotonic() - started, 3))


class Session:
    """One judging of one submission: its worker, its cases, its findings."""

    def __init__(
        self, spec: PuzzleSpec, submission: Path, options: RunOptions, worker: WorkerProcess
    ):
        self.spec, self.submission, self.options = spec, submission, options
        self.worker = worker
        self.interpret = worker.interpret
        self.timeout = (options.timeout_s or spec.timeout_s) * (
            sanitize.SLOWDOWN if options.sanitize else 1
        )
        self.reference = load_reference(spec)
        self.cases = self.select_cases()
        self.bench_cases = self.select_bench_cases()
        self.env = fallback_env(self.interpret)
        self.calibration: dict | None = None
        self.notes: list[str] = []
        self.phases: dict[str, float] = {}
        self.truths: dict[tuple, Truth] = {}
        self.pending: dict[tuple, Future] = {}
        self.unverified = False  # a benchmark's times had no device record to check them

    def select_cases(self) -> list[Case]:
        chosen = self.options.cases or self.spec.tests
        if self.options.cases is None:
            small = self.interpret or self.options.sanitize
            chosen = [c for c in chosen if c.interpret or not small]
            chosen = [replace(c, seed=mix_seed(c.seed, self.options.secret)) for c in chosen]
        return list(chosen)

    def select_bench_cases(self) -> list[Case]:
        """The spec's benchmarks; with `sweep`, then every distinct size of the tests, smallest
        work first (the size sweep of `tpuzzle bench --plot`)."""
        chosen = list(self.spec.benchmarks)
        if self.options.sweep:
            seen = {c.sizes for c in chosen}
            for case in sorted(self.spec.tests, key=lambda c: bench.work(self.spec, c.size_map)):
                if case.sizes not in seen:
                    seen.add(case.sizes)
                    chosen.append(replace(case, draw=""))
        return chosen

    # ---------------------------------------------------------------------------- the run

    def run(self) -> RunReport:
        # The truths are computed in the background, in the order they are needed, from now on
        # (while the worker imports torch) until the worker's cases and benchmarks need them.
        wanted = list(self.cases)
        if not self.interpret and self.options.timing:
            for case in self.bench_cases:  # with the fresh sets of the timed calls' re-check
                seeds = self.bench_seeds(case) + self.recheck_seeds(case)
                wanted += [replace(case, seed=seed) for seed in seeds]
        with ThreadPoolExecutor(TRUTH_THREADS, thread_name_prefix="truth") as pool:
            self.pending = {
                key: pool.submit(truth_cache.get, self.spec, self.reference, case)
                for key, case in {truth_key(c): c for c in wanted}.items()
            }
            try:
                return self.judged()
            finally:  # an early verdict leaves the truths still to compute undone
                for future in self.pending.values():
                    future.cancel()

    def judged(self) -> RunReport:
        if self.cases:
            with self.phase("references"):
                self.truth(self.cases[0])
        try:
            with self.phase("startup"):
                startup = STARTUP_TIMEOUT_S * (2 if self.options.sanitize else 1)
                ready = self.worker.expect("ready", startup, "starting the worker")
            self.env = EnvInfo(**ready["env"])
            self.phases.update(ready.get("startup", {}))
            with self.phase("calibration"):
                reference_times = self.before_submission()
            with self.phase("import"):
                self.worker.expect_ok(
                    {"op": "load"}, "loaded", self.timeout, "importing the submission"
                )
        except WorkerFailure as exc:
            return self.report(Verdict(exc.verdict), exc.kind, exc.message, [], [])
        with self.phase("cases"):
            results, stop = self.run_cases()
        if stop is not None:
            return self.report(Verdict(stop.verdict), stop.kind, stop.message, results, [])
        failed = next((r for r in results if r.status != "passed"), None)
        if failed is not None:
            return self.report(
                Verdict.FAILED,
                check.failure_reason(failed),
                check.failure_message(failed),
                results,
                [],
            )
        with self.phase("benchmarks"):
            report = self.run_benchmarks(results, reference_times)
        return replace(report, phases=dict(self.phases))

    @contextlib.contextmanager
    def phase(self, name: str):
        """Accumulate the wall time spent in one phase of the run, for the report."""
        started = time.monotonic()
        try:
            yield
        finally:
            spent = time.monotonic() - started
            self.phases[name] = round(self.phases.get(name, 0.0) + spent, 3)

    def before_submission(self) -> list[list[float] | None]:
        """Calibration and the reference's timing, done before the submission is imported."""
        if self.interpret or not self.options.timing:
            self.notes.append(
                "Interpreter mode: Triton's interpreter on the CPU; timings mean "
                "nothing there, so none are taken and nothing is ranked."
                if self.interpret
                else "Untimed: --sanitize runs the small cases once under memcheck."
                if self.options.sanitize
                else "Timing skipped (--no-timing)."
            )
            return []
        device = f"{MEASURES}|{calibration_key(self.env)}"
        self.calibration = self.measured(
            "calibration", device, lambda: {"op": "calibrate"}, "calibrated", CALIBRATION_TIMEOUT_S
        )
        self.env = replace(
            self.env,
            copy_gbps=self.calibration["copy_gbps"],
            peaks_tflops=self.calibration["peaks_tflops"],
            read_gbps=self.calibration.get("read_gbps"),
            copy_curve=self.calibration.get("copy_curve") or {},
        )
        digest = file_sha256(self.spec.directory / "reference.py")[:16]
        reference = f"{MEASURES}|{device}|{self.spec.id}|{digest}"
        return [
            self.measured(
                "reference",
                f"{reference}|{case.sizes}|{case.draw}",
                lambda case=case: {
                    "op": "time_reference",
                    **self.case_command(case, self.bench_seeds(case)),
                },
                "reference_timed",
                self.bench_timeout(),
            )
            for case in self.bench_cases
        ]

    def measured(
        self, kind: str, key: str, command: Callable[[], dict], answer: str, timeout: float
    ):
        """A device measurement (calibration, reference times) from the cache, else from the
        worker, before any submission code is loaded there. The command is built only when the
        measurement is taken (a reference's inputs may still be being drawn)."""
        stale = self.options.recalibrate and (kind, key) not in _MEASURED_HERE
        value = None if stale else bench.load_cached(kind, key)
        if value is None:
            event = self.worker.expect_ok(command(), answer, timeout, f"measuring the {kind}")
            value = event["value"]
            bench.save_cached(kind, key, value)
            _MEASURED_HERE.add((kind, key))
        return value

    def run_cases(self) -> tuple[list[CaseResult], WorkerFailure | None]:
        """Every case in order; the worker runs case i + 1 while the parent checks case i."""
        results: list[CaseResult] = []
        if self.cases:
            self.send_case(0)
        for i, case in enumerate(self.cases):
            try:
                event = self.worker.expect("case_done", self.timeout, f"case {case.name}")
                outside = outside_triton(f"case {case.name}", event)
                if outside:
                    raise WorkerReported("rejected", "outside-triton", outside)
                if i + 1 < len(self.cases):
                    self.send_case(i + 1)
                truth = self.truth(case)
                results.append(self.check_case(case, truth, self.buffer_files(f"case{i}")))
            except WorkerFailure as exc:
                results.append(self.case_result(case, "error", message=exc.message))
                return results, exc
        return results, None

    def send_case(self, i: int) -> None:
        case = self.cases[i]
        cmd = {"op": "case", "tag": f"case{i}", **self.case_command(case, case.seed)}
        self.worker.send(cmd, f"case {case.name}")

    def run_benchmarks(self, results: list[CaseResult], reference_times) -> RunReport:
        timings: list[Timing] = []
        if self.interpret or not self.options.timing:
            problem = self.repeat_check()
            if problem is not None:
                return self.report(*problem, results, [])
            return self.report(Verdict.PASSED, "ok", "every case passed", results, [])
        for case, ref_times in zip(self.bench_cases, reference_times, strict=True):
            cmd = {"op": "bench", "tag": f"bench{len(timings)}", **self.bench_command(case)}
            started = time.monotonic()
            try:
                event = self.worker.expect_ok(
                    cmd, "bench_done", self.bench_timeout(), f"benchmark {case.name}"
                )
            except WorkerFailure as exc:
                return self.report(Verdict(exc.verdict), exc.kind, exc.message, results, timings)
            wall_ms = (time.monotonic() - started) * 1e3
            problem = self.check_bench(case, cmd["tag"], event, wall_ms)
            if problem is not None:
                return self.report(problem[0], problem[1], problem[2], results, timings)
            timings.append(self.timing(case, event, ref_times, len(cmd["seeds"])))
            beyond = bench.faster_than_light(
                self.spec, case.size_map, timings[-1].median_ms, self.calibration
            )
            if beyond is not None:
                message = f"benchmark {case.name}: faster than light: {beyond}"
                timings[-1] = replace(timings[-1], above_speed_of_light=True)
                return self.report(Verdict.REJECTED, "faster-than-light", message, results, timings)
            if not event.get("spans"):
                self.unverified = True
        return self.report(Verdict.PASSED, "ok", "every case passed", results, timings)

    def repeat_check(self) -> tuple[Verdict, str, str] | None:
        """Untimed runs still call the largest case repeatedly and check the last outputs."""
        case = max(
            self.cases, key=lambda c: sum(lay.n for lay in inputs.layouts(self.spec, c.size_map))
        )
        cmd = {"op": "bench", "tag": "repeat", "timed": False, **self.bench_command(case)}
        try:
            event = self.worker.expect_ok(
                cmd, "bench_done", self.timeout, f"repeated calls on {case.name}"
            )
        except WorkerFailure as exc:
            return Verdict(exc.verdict), exc.kind, exc.message
        return self.check_bench(case, "repeat", event, 0.0)

    # ---------------------------------------------------------------------------- checking

    def truth(self, case: Case) -> Truth:
        """The case's inputs and expected outputs: computed in the background when it was among
        those the run needs (waited for here), else now."""
        key = truth_key(case)
        if key not in self.truths:
            future = self.pending.get(key)
            self.truths[key] = (
                future.result() if future else truth_cache.get(self.spec, self.reference, case)
            )
        return self.truths[key]

    def check_case(self, case: Case, truth: Truth, files: dict[str, str]) -> CaseResult:
        tolerance = self.spec.tolerance.at(case.size_map)
        checks = []
        for lay in inputs.layouts(self.spec, case.size_map):
            try:
                full = inputs.mapped(files[lay.arg.name], lay.arg.dtype, lay.total)
            except (OSError, ValueError) as exc:
                raise WorkerReported(
                    "error", "protocol", f"case {case.name}: the buffers came back wrong ({exc})"
                ) from None
            if lay.arg.role == "in":
                checks.append(check.check_input(lay, full, truth.initial[lay.arg.name]))
            else:
                expected = truth.outputs[lay.arg.name]
                checks.append(
                    check.check_output(
                        lay, full, expected, tolerance, was_output=lay.arg.role == "out"
                    )
                )
        ok = all(c.ok for c in checks)
        worst = max((c.max_error for c in checks if c.name in truth.outputs), default=0.0)
        return self.case_result(
            case,
            "passed" if ok else "failed",
            max_error=worst,
            buffers=tuple(checks),
            hints=tuple(check.hints(checks)) if not ok else (),
        )

    def check_bench(
        self, case: Case, tag: str, event: dict, wall_ms: float
    ) -> tuple[Verdict, str, str] | None:
        """Re-check the timed calls: the same buffers, refilled with fresh inputs, called once
        more must give the fresh answers (so neither skipped work nor answers kept per address
        or per call survive); then the plausibility of the times."""
        outside = outside_triton(f"benchmark {case.name}", event)
        if outside:
            return Verdict.REJECTED, "outside-triton", outside
        for j, seed in enumerate(self.recheck_seeds(case)):
            one = replace(case, seed=seed)
            try:
                result = self.check_case(one, self.truth(one), self.buffer_files(f"{tag}_set{j}"))
            except WorkerFailure as exc:
                return Verdict.ERROR, exc.kind, exc.message
            if result.status != "passed":
                return (
                    Verdict.FAILED,
                    "recheck-failed",
                    f"benchmark {case.name}: called again on the timed buffers refilled with "
                    f"fresh inputs, solve() got them wrong ({check.failure_message(result)}); "
                    "does it skip work on repeated calls, or keep answers per address?",
                )
        if "times" not in event:
            return None
        if not bench.plausible_event(event):
            return Verdict.ERROR, "protocol", f"benchmark {case.name}: garbled timings"
        xc = event["cross_check"]
        if sum(event["times"]) > wall_ms or not bench.consistent(xc):
            return (
                Verdict.REJECTED,
                "timing-mismatch",
                f"benchmark {case.name}: CUDA events saw {xc['event_ms']:.3f} ms "
                f"per call but the device was busy {xc['wall_ms']:.3f} ms "
                "(synchronised wall clock): is work left running on another "
                "stream after solve() returns?",
            )
        mismatch = bench.span_mismatch(event["times"], event.get("spans"))
        if mismatch is not None:
            return (
                Verdict.REJECTED,
                "timing-mismatch",
                f"benchmark {case.name}: CUDA events saw {mismatch[0] * 1e3:.1f} us per call "
                f"(median), but the device's record shows {mismatch[1] * 1e3:.1f} us of work "
                "per call (mean span, every stream): work on another stream or from a thread "
                "must start after the call begins and end before it returns (fork with "
                "side.wait_stream(torch.cuda.current_stream()), join with "
                "torch.cuda.current_stream().wait_stream(side))",
            )
        return None

    def timing(self, case: Case, event: dict, measured, sets: int) -> Timing:
        """One shape's figures: each call's time is the longer of its events and its device
        span (bench.call_times); rates against the measured peaks and a same-size copy."""
        spans = event.get("spans") or None
        median, p20, p80, samples = bench.summarize(bench.call_times(event["times"], spans))
        gbps, tflops = bench.throughput(self.spec, case.size_map, median)
        ref_median, library, lib_median = self.libraries(measured)
        return Timing(
            case=case.name,
            sizes=case.size_map,
            median_ms=median,
            p20_ms=p20,
            p80_ms=p80,
            samples=samples,
            input_sets=sets,
            gbps=gbps,
            tflops=tflops,
            sol_pct=bench.sol_percent(self.spec, gbps, tflops, self.calibration),
            reference_median_ms=ref_median,
            speedup_vs_reference=(ref_median / median) if ref_median and median > 0 else None,
            copy_pct=bench.copy_percent(self.spec, case.size_map, gbps, self.calibration),
            library=library,
            library_median_ms=lib_median,
            speedup_vs_library=(lib_median / median) if lib_median and median > 0 else None,
            event_median_ms=bench.summarize(event["times"])[0],
            device_span_ms=statistics.fmean(spans) if spans else None,
            launches=event.get("launches") if spans else None,
            host_ms=event["cross_check"].get("host_ms"),
            floor_ms=bench.floor_ms(self.spec, case.size_map, self.calibration),
        )

    def libraries(self, measured) -> tuple[float | None, str, float | None]:
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
            medians.setdefault(self.spec.library or "PyTorch reference", ref_median)
        if not medians:
            return ref_median, "", None
        label = min(medians, key=medians.get)
        return ref_median, label, medians[label]

    # ---------------------------------------------------------------------------- helpers

    def case_command(self, case: Case, seed) -> dict:
        """A command's sizes and input sets: seeds, and the sealed files of the drawn inputs."""
        if isinstance(seed, list):
            paths = self.input_paths(case, seed)
            return {"sizes": case.size_map, "seeds": seed, "draw": case.draw, "inputs": paths}
        paths = self.input_paths(case, [seed])[0]
        return {"sizes": case.size_map, "seed": seed, "draw": case.draw, "inputs": paths}

    def bench_command(self, case: Case) -> dict:
        """A benchmark's input sets, and the fresh sets its timed buffers are re-checked with."""
        fresh = self.recheck_seeds(case)
        command = self.case_command(case, self.bench_seeds(case))
        return {**command, "recheck": fresh, "recheck_inputs": self.input_paths(case, fresh)}

    def input_paths(self, case: Case, seeds: list[int]) -> list[dict[str, str]]:
        """The sealed files of each seed's drawn inputs (empty for small sets)."""
        return [self.truth(replace(case, seed=s)).input_paths() for s in seeds]

    def recheck_seeds(self, case: Case) -> list[int]:
        return [mix_seed(seed, "recheck") for seed in self.bench_seeds(case)]

    def buffer_files(self, tag: str) -> dict[str, str]:
        """Where the worker leaves each buffer of a call: named by the parent, never taken from
        what the worker says."""
        return {a.name: str(self.worker.dir / f"{tag}_{a.name}.bin") for a in self.spec.buffers}

    def bench_seeds(self, case: Case) -> list[int]:
        set_bytes = sum(
            lay.n * inputs.torch_dtype(lay.arg.dtype).itemsize
            for lay in inputs.layouts(self.spec, case.size_map)
        )
        count = 2 if set_bytes >= BIG_SET_BYTES else 3
        return [mix_seed(case.seed + j, self.options.secret) for j in range(count)]

    def bench_timeout(self) -> float:
        return max(self.timeout, 120.0)

    def case_result(self, case: Case, status: str, **fields) -> CaseResult:
        return CaseResult(
            name=case.name,
            sizes=case.size_map,
            seed=case.seed,
            status=status,
            reproduce=self.reproduce(case) if status != "passed" else "",
            **fields,
        )

    def reproduce(self, case: Case) -> str:
        sizes = " ".join(f"--size {k}={v}" for k, v in case.sizes)
        extra = (" --draw mixed" if case.draw else "") + (" --interpret" if self.interpret else "")
        return f"tpuzzle run {self.spec.id} {self.submission} {sizes} --seed {case.seed}{extra}"

    def report(
        self,
        verdict: Verdict,
        reason: str,
        message: str,
        results: list[CaseResult],
        timings: list[Timing],
    ) -> RunReport:
        ran = {r.name for r in results}
        results = results + [
            self.case_result(c, "skipped") for c in self.cases if c.name not in ran
        ]
        if self.unverified and verdict is Verdict.PASSED:
            self.notes.append(
                "The times could not be checked against the device's activity record (the "
                "profiler cannot record device work here): shown, not ranked."
            )
        timed = verdict is Verdict.PASSED and bool(timings)
        return RunReport(
            puzzle=self.spec.id,
            submission=str(self.submission),
            verdict=verdict,
            reason=reason,
            message=message,
            cases=tuple(results),
            timing=tuple(timings),
            env=self.env,
            ranked=timed and not self.interpret and not self.unverified,
            notes=tuple(self.notes),
            output=self.worker.output(),
            phases=dict(self.phases),
            score=bench.score(timings) if timed else None,
            method=bench.METHOD if timings else "",
        )


def outside_triton(where: str, event: dict) -> str | None:
    """The worker's count (interpreter mode) of output elements changed without a Triton store,
    as a message; None when there were none."""
    found = event.get("foreign") or {}
    if not isinstance(found, dict):
        return f"{where}: a garbled count of writes outside Triton"
    counts = [f"{n} elements of {name}" for name, n in found.items() if n]
    if not counts:
        return None
    return (
        f"{where}: {', '.join(counts)} changed without a Triton store: the work must be done "
        "by a Triton kernel, not by NumPy, ctypes or another library"
    )


def calibration_key(env: EnvInfo) -> str:
    return f"{env.device}|{env.driver}|torch {env.torch}|triton {env.triton}"


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
