"""The trusted parent: computes references, drives a worker, compares bytes, decides the verdict.

The submission never runs in this process. The worker is a fresh process (forked from a
pre-imported zygote, or `python -m judge.workers.worker`) in its own session (process group)
with its own temporary directory and Triton cache; every phase has a deadline, and on a deadline
the whole group is killed.

`Session` is the flow of one judging; what it asks the worker is decided in `plan`, the truths it
checks against are computed in `truths`, the device and the reference are measured in `measure`,
each call's buffers and times are checked in `verify`, and what it found is kept in `findings`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from judge.core import capability, check, visibility
from judge.core.results import CaseResult, EnvInfo, Progress, RunReport, Timing, Verdict
from judge.core.spec import Case, PuzzleSpec
from judge.core.truth import CACHE as truth_cache
from judge.core.truth import Truth, load_reference
from judge.judging import measure, timer, verify
from judge.judging.findings import Findings, fallback_env
from judge.judging.gate import QUIET_WAIT_S, Alone, DeviceGate, Seat
from judge.judging.measure import calibration_key
from judge.judging.options import RunOptions, secret_from_env
from judge.judging.plan import Plan, mix_seed
from judge.judging.truths import Truths, truth_key
from judge.judging.verify import Problem, outside_triton
from judge.workers import channel, launcher, replay, sanitize
from judge.workers.channel import WorkerFailure, WorkerProcess, WorkerReported
from judge.workers.launcher import SECRET_ENV, SECRET_FILE_ENV, launch

__all__ = [  # what others import from here (from SECRET_ENV on, defined elsewhere)
    "RunOptions",
    "Session",
    "judge",
    "secret_from_env",
    "SECRET_ENV",
    "SECRET_FILE_ENV",
    "calibration_key",
    "fallback_env",
    "mix_seed",
    "outside_triton",
    "truth_cache",
    "truth_key",
]

STARTUP_TIMEOUT_S = 180.0  # importing torch and triton, creating the CUDA context
ALONE = "device_alone"  # the phase of a judging's time inside the gate's exclusive section
BUSY_NOTE = (
    "the device was still busy with work of another process when this submission was timed "
    f"(not quiet {QUIET_WAIT_S:g} s after the other judgings' workers were stopped): "
    "its times may be too long"
)


DEFAULT_OPTIONS = RunOptions()


def has_timer(options: RunOptions, interpret: bool) -> bool:
    """Whether a judging has a timer process: not in Triton's interpreter, not under the
    sanitizer (which times nothing)."""
    return not interpret and not options.sanitize


def judge(
    spec: PuzzleSpec,
    submission: Path,
    options: RunOptions = DEFAULT_OPTIONS,
    worker: WorkerProcess | None = None,
    progress: Callable[[Progress], None] | None = None,
    gate: DeviceGate | None = None,
    timer: WorkerProcess | None = None,
) -> RunReport:
    """Judge one submission; never raises for anything the submission does.

    `worker` may be one already started by `launcher.launch` for this spec and submission (a
    batch starts its next workers while it judges; the judge server starts one with its client's
    environment). `gate` is the device's, when other judgings share it (batch): this one then
    checks beside them and times alone. `progress`, if given, is called from this thread as each
    stage starts and after each case and benchmark shape; what it raises is ignored. `timer`
    may be one already started by `launcher.launch_timer` for this spec and device, never used
    by another judging (the judge server's spare); this judging then discards it.

    A worker that ended with its zygote (not the submission's doing, as far as is known) is
    replaced by one launched alike, and the submission judged again, once.
    """
    started = time.monotonic()
    if options.sanitize:
        options = replace(options, timing=False)
    worker = worker if worker is not None else start_worker(spec, submission, options)
    if timer is not None and not has_timer(options, worker.interpret):
        launcher.discard(timer)
        timer = None
    report = judged_once(spec, submission, options, worker, progress, gate, timer)
    relaunch = getattr(worker, "relaunch", None)
    if report.reason == channel.ZYGOTE_LOST and relaunch is not None:
        again = judged_once(spec, submission, options, relaunch(), progress, gate)
        note = f"Judged again: the first worker ended with its zygote ({report.message})."
        report = replace(again, notes=(*again.notes, note))
    if not options.reveal_hidden and options.cases is None:
        report = visibility.conceal(report, spec)
    return replace(report, wall_s=round(time.monotonic() - started, 3))


def judged_once(
    spec: PuzzleSpec,
    submission: Path,
    options: RunOptions,
    worker: WorkerProcess,
    progress: Callable[[Progress], None] | None,
    gate: DeviceGate | None,
    timer: WorkerProcess | None = None,
) -> RunReport:
    """One judging in one worker (and `timer`, if given), both then discarded."""
    try:
        session = Session(spec, submission, options, worker, progress, gate, timer)
    except BaseException:
        launcher.discard(worker)
        if timer is not None:
            launcher.discard(timer)
        raise
    findings = None
    try:
        report = session.run()
        if options.sanitize:
            worker.stop()  # memcheck writes its summary as the worker exits
            findings = sanitize.read(worker.dir)
    finally:
        launcher.discard(worker)
        session.close()
    if findings is not None:
        report = sanitize.with_findings(report, findings)
    return report


def start_worker(spec: PuzzleSpec, submission: Path, options: RunOptions) -> WorkerProcess:
    interpret = launcher.interpreting(options.interpret)
    return launch(
        spec.directory / "puzzle.yaml", submission, interpret, options.gpu, options.sanitize
    )


class Session:
    """One judging of one submission: its worker, its cases, its findings."""

    def __init__(
        self,
        spec: PuzzleSpec,
        submission: Path,
        options: RunOptions,
        worker: WorkerProcess,
        progress: Callable[[Progress], None] | None = None,
        gate: DeviceGate | None = None,
        timer: WorkerProcess | None = None,
    ):
        """`timer`: the judging's timer when one is already started (else one is launched
        where the run is timed)."""
        self.spec, self.submission, self.options = spec, submission, options
        self.gate = gate if gate is not None else Alone()
        self.worker = worker
        self.interpret = worker.interpret
        self.timeout = (options.timeout_s or spec.timeout_s) * (
            sanitize.SLOWDOWN if options.sanitize else 1
        )
        self.truths = Truths(spec, load_reference(spec))
        self.plan = Plan(spec, submission, options.secret, self.interpret, self.truths)
        self.checker = verify.Checker(self.plan, worker)
        self.cases = self.plan.tests(options.cases, bool(self.interpret or options.sanitize))
        self.bench_cases = self.plan.benchmarks(options.sweep)
        self.found = Findings(self.plan, self.cases, progress)
        self.calibration: dict | None = None
        self.sent_bench: dict | None = None  # the first shape's benchmark command, under way
        self.early: dict | None = None  # the worker's answer to an early one, read ahead
        self.sets_asked: set[str] = set()  # tags whose replay sets the timer was asked to prepare
        # the timer: measures the device and the reference, replays and checks the timed calls
        if timer is None and has_timer(options, self.interpret):
            timer = launcher.launch_timer(spec.directory / "puzzle.yaml", options.gpu)
        self.timer = timer

    def close(self) -> None:
        if self.timer is not None:
            launcher.discard(self.timer)

    @property
    def timed(self) -> bool:
        return not self.interpret and self.options.timing

    # ---------------------------------------------------------------------------- the run

    def run(self) -> RunReport:
        # The truths are computed in the background, in the order they are needed, from now on
        # (while the worker imports torch) until the worker's cases and benchmarks need them.
        timed = self.bench_cases if self.timed else []
        wanted = self.plan.wanted(self.cases, timed)
        fresh = self.plan.fresh_sets(timed)
        # the worker and the timer are stopped whenever another judging of the device times
        # (gate.DeviceGate), so the timer makes its first check at once, beside the references
        with self.gate.joined(*self.processes), self.truths.computing(wanted, fresh):
            if self.timer is not None:
                launcher.warm(self.timer)
            return self.judged()

    @property
    def processes(self) -> tuple[WorkerProcess, ...]:
        """The judging's worker, and its timer if it has one."""
        return tuple(p for p in (self.worker, self.timer) if p is not None)

    def judged(self) -> RunReport:
        if self.cases:
            with self.found.phase("references"):
                # a device shared with other judgings is never held while references compute
                # (a slow one, as conv2d's on the CPU, would stall every other lane's timing):
                # all of them first; a device of its own: the first, the rest while the cases run
                shared = not isinstance(self.gate, Alone)
                timed = self.bench_cases if self.timed else []
                for case in self.plan.wanted(self.cases, timed) if shared else self.cases[:1]:
                    self.truths.get(case)
        try:
            reference_times = self.prepared()
        except WorkerFailure as exc:
            return self.report(Verdict(exc.verdict), exc.kind, exc.message, [], [])
        with self.found.phase("cases", len(self.cases)), self.gated(self.checking()) as seat:
            results, stop = self.run_cases(seat)
            failed = next((r for r in results if r.status != "passed"), None)
            if not (stop or failed) and self.sent_bench is not None and self.sent_bench["early"]:
                stop = self.early_answer(self.bench_cases[0])
        if (stop or failed) and self.sent_bench is not None:
            self.worker.kill()  # timing a submission already failed: not waited for
        if stop is not None:
            return self.report(Verdict(stop.verdict), stop.kind, stop.message, results, [])
        if failed is not None:
            reason, message = check.failure_reason(failed), check.failure_message(failed)
            return self.report(Verdict.FAILED, reason, message, results, [])
        shapes = len(self.bench_cases) if self.timed else 1
        alone = self.gated(self.timing(), ALONE) if self.timed else self.gated(self.checking())
        with self.found.phase("benchmarks", shapes), alone:
            report = self.run_benchmarks(results, reference_times)
        return replace(report, phases=dict(self.found.phases))

    def checking(self) -> contextlib.AbstractContextManager:
        """The gate's shared section, which its processes (stopped while another judging times
        past this one, should it stall) enter with it."""
        return self.gate.checking(*self.processes)

    def timing(self) -> contextlib.AbstractContextManager:
        """The gate's exclusive section, which may pass stalled checkings once this judging's
        timer finds the device quiet."""
        timer_ = self.timer
        return self.gate.timing(
            None if timer_ is None else lambda: timer.quiet(timer_),
            own=self.processes,
            busy=lambda: self.found.note(BUSY_NOTE),
        )

    @contextlib.contextmanager
    def gated(self, section: contextlib.AbstractContextManager, held: str = "") -> Iterator[None]:
        """Inside a section of the device's gate; the wait to enter it (other judgings of the
        device checking or timing) is the phase device_wait, the time inside it the phase
        `held` if named (device_alone: the device held by this judging alone)."""
        with contextlib.ExitStack() as stack:
            with self.found.phase("device_wait"):
                entered = stack.enter_context(section)
            with self.found.phase(held) if held else contextlib.nullcontext():
                yield entered

    def prepared(self) -> list:
        """The worker started, the device and the reference measured, the submission imported:
        the reference's times per benchmark shape."""
        with self.found.phase("startup"):
            startup = STARTUP_TIMEOUT_S * (2 if self.options.sanitize else 1)
            ready = self.worker.expect("ready", startup, "starting the worker")
        self.found.env = EnvInfo(**ready["env"], unconfined=ready.get("unconfined") or {})
        self.found.phases.update(ready.get("startup", {}))
        lacking = capability.missing(self.spec, self.found.env)
        if lacking is not None:  # refused before the submission is loaded
            raise WorkerReported("error", "unsupported-device", lacking)
        with self.found.phase("calibration"):
            if self.timer is not None:
                self.timer.expect("ready", STARTUP_TIMEOUT_S, "starting the timer")
                # asked as the judging began (run), so mostly done beside the references
                warmed = self.timer.expect("warmed", self.timeout, "warming up the timer's checks")
                self.found.add("timer", warmed.get("seconds"))
            reference_times = self.before_submission()
        # the import runs submission code, which may launch work on the device
        with self.found.phase("import"), self.gated(self.checking()):
            self.worker.expect_ok(
                {"op": "load"}, "loaded", self.timeout, "importing the submission"
            )
        return reference_times

    def report(
        self,
        verdict: Verdict,
        reason: str,
        message: str,
        results: list[CaseResult],
        timings: list[Timing],
    ) -> RunReport:
        output = self.worker.output()
        return self.found.report(verdict, reason, message, results, timings, output)

    # ---------------------------------------------------------------------------- measuring

    def before_submission(self) -> list[list[float] | None]:
        """Calibration and the reference's timing, done before the submission is imported."""
        if not self.timed:
            note = measure.untimed_note(self.interpret, bool(self.options.sanitize))
            self.found.notes.append(note)
            return []
        self.calibration, self.found.env = measure.calibrate(self.measured, self.found.env)
        return measure.reference_times(
            self.measured,
            self.spec,
            self.found.env,
            self.bench_cases,
            self.plan.reference_command,
            self.bench_timeout(),
        )

    def measured(
        self, kind: str, key: str, command: Callable[[], dict], answer: str, timeout: float
    ):
        """A device measurement from the cache, else from the timer (measure.measured)."""
        recalibrate = self.options.recalibrate
        return measure.measured(
            self.timer,
            recalibrate,
            kind,
            key,
            command,
            answer,
            timeout,
            lambda: self.gated(self.timing(), ALONE),
        )

    # ---------------------------------------------------------------------------- cases

    def run_cases(self, seat: Seat) -> tuple[list[CaseResult], WorkerFailure | None]:
        """Every case in order; the worker runs case i + 1 while case i is checked (by the
        timer, whose answers are read once the worker is done, or here). While another
        judging waits to time, this one steps aside from the device (`seat`) after a case:
        once the case's checks are read, before the next case is sent."""
        results: list[CaseResult | None] = []
        asked: list[tuple[int, Case]] = []  # cases sent to the timer, answers still to read
        if self.cases:
            self.send_case(0)
        for i, case in enumerate(self.cases):
            try:
                result, aside = self.next_case(i, case, seat)
                results.append(result)
            except WorkerFailure as exc:
                stop = self.collected(results, asked)
                if stop is not None:
                    return results, stop
                results.append(self.plan.case_result(case, "error", message=exc.message))
                return results, exc
            if results[-1] is None:
                asked.append((i, case))
            if aside:
                stop = self.collected(results, asked)  # nothing of this judging left running
                if stop is not None:
                    return results, stop
            detail = visibility.progress_detail(case, self.spec, self.options.reveal_hidden)
            self.found.notify("cases", i + 1, len(self.cases), detail)
            if aside:
                with self.found.phase("device_wait"):
                    seat.step_aside()
                self.send_next(i)
        return results, self.collected(results, asked)

    def next_case(self, i: int, case: Case, seat: Seat) -> tuple[CaseResult | None, bool]:
        """Case i's answer, checked once case i + 1 is on its way to the worker, unless a
        timing waits (this judging then steps aside before it sends case i + 1: the second
        value); None when it was sent to the timer to check (read by `collected`)."""
        event = self.worker.expect("case_done", self.timeout, f"case {case.name}")
        self.found.add("case", event.get("seconds"))
        outside = outside_triton(f"case {case.name}", event)
        if outside:
            raise WorkerReported("rejected", "outside-triton", outside)
        aside = False
        if i + 1 < len(self.cases):
            aside = seat.timing_waits()
            if not aside:
                self.send_next(i)
        elif self.timed and self.bench_cases:
            # the first shape's calls are recorded while the last case is checked: timing
            # starts there with a device of its own; on a shared one only the replay is timed
            # alone, and an autotuner tunes again once the device is this judging's alone
            shared = not isinstance(self.gate, Alone)
            self.sent_bench = self.send_bench(self.bench_cases[0], 0, early=shared)
        if self.timer is not None:
            self.ask_timer(i, case, event.get("sequence"))
            return None, aside
        with self.found.phase("case_truths"):  # waiting for the reference, if still computing
            truth = self.truths.get(case)
        with self.found.phase("case_checks"):  # no timer (the interpreter): the worker's buffers
            return self.check_case(case, truth, self.checker.files(f"case{i}")), aside

    def send_next(self, i: int) -> None:
        """Case i + 1 sent to the worker, after case i."""
        self.send_case(i + 1)
        if i + 2 == len(self.cases) and self.timed and self.bench_cases:
            # the timer puts the first shape's replay sets on the device while the last
            # cases run, before the last check: within the gate's shared section
            self.prepare_replay(self.bench_cases[0], "bench0")

    def send_case(self, i: int) -> None:
        case = self.cases[i]
        cmd = {"op": "case", "tag": f"case{i}", **self.plan.case_command(case, case.seed)}
        if self.timer is not None:
            cmd["replay"] = True
        self.worker.send(cmd, f"case {case.name}")

    def check_case(self, case: Case, truth: Truth, files: dict[str, str]) -> CaseResult:
        return self.checker.case(case, truth, files)

    def ask_timer(self, i: int, case: Case, recorded) -> None:
        """The case's call as the worker recorded it, sent to the timer to replay once on its
        own buffers and check there, after it ended, against the truth."""
        if verify.launched_nothing(recorded):
            raise WorkerReported("failed", "recheck-failed", verify.skipped_message(case))
        with self.found.phase("case_truths"):  # the command names the truth's sealed files
            self.truths.get(case)
        try:
            sequence = replay.agreed([recorded] if recorded else [])
            timer.ask_case(self.timer, self.worker, self.plan, case, f"case{i}", sequence)
        except replay.NotReplayable as exc:
            raise WorkerReported("rejected", replay.REASON, f"case {case.name}: {exc}") from None

    def collected(
        self, results: list[CaseResult | None], asked: list[tuple[int, Case]]
    ) -> WorkerFailure | None:
        """The timer's answers to the cases asked of it, in order, into `results`; on a failure
        that case is an error and the results end there (the failure is returned)."""
        for i, case in asked:
            try:
                with self.found.phase("case_replays"):
                    results[i] = self.answered_case(i, case)
            except WorkerFailure as exc:
                results[i] = self.plan.case_result(case, "error", message=exc.message)
                del results[i + 1 :]
                return exc
        asked.clear()
        return None

    def answered_case(self, i: int, case: Case) -> CaseResult:
        """The timer's answer for case i; its buffers are read here only when something was
        wrong, for the report (a large call's account of them comes with the answer instead)."""
        answer = timer.case_answer(self.timer, case, self.timeout)
        self.found.add("timer_case", answer.get("seconds"))
        if not verify.plausible_check(answer):
            raise WorkerReported("error", "protocol", f"case {case.name}: a garbled check")
        if answer["wrong"] and "buffers" in answer and self.spec.check == "elementwise":
            return self.checker.described(case, answer)  # a large call, described there
        if answer["wrong"] or self.spec.check == "reference":  # the check runs here
            files = self.checker.files(f"case{i}", self.timer.dir)
            return self.check_case(case, self.truths.get(case), files)
        return verify.passed_case(self.plan, case, answer["max_error"])

    # ---------------------------------------------------------------------------- benchmarks

    def run_benchmarks(self, results: list[CaseResult], reference_times) -> RunReport:
        if not self.timed:
            return self.report(*self.repeat_check(), results, [])
        timings: list[Timing] = []
        for case, ref_times in zip(self.bench_cases, reference_times, strict=True):
            problem = self.benchmark(case, ref_times, timings)
            if problem is not None:
                return self.report(*problem, results, timings)
            self.found.notify("benchmarks", len(timings), len(self.bench_cases), case.name)
        return self.report(Verdict.PASSED, "ok", "every case passed", results, timings)

    def send_bench(self, case: Case, index: int, early: bool = False) -> dict:
        """The command that records one shape's calls, sent (the timer checks the calls it
        replays: the worker's buffers are not left for the parent); the timer meanwhile puts
        the input sets of their replay on the device, unless it already has. `early`: sent
        before the judging has a shared device to itself (`Worker.op_bench`)."""
        cmd = {"op": "bench", "tag": f"bench{index}", **self.plan.bench_command(case, False)}
        cmd["dump"], cmd["early"] = False, early
        self.worker.send(cmd, f"benchmark {case.name}")
        self.prepare_replay(case, cmd["tag"])
        return cmd

    def prepare_replay(self, case: Case, tag: str) -> None:
        """The timer asked, once per tag, to put a shape's input sets on the device before
        its replay (`timer_commands.op_prepare`)."""
        if self.timer is not None and tag not in self.sets_asked:
            self.sets_asked.add(tag)
            self.timer.send(self.plan.prepare_command(case, tag), f"benchmark {case.name}")

    def benchmark(self, case: Case, ref_times, timings: list[Timing]) -> Problem | None:
        """Record one shape's calls in the worker, replay them in the timer (timed and checked
        there on fresh inputs), and add its figures to `timings`."""
        sent, self.sent_bench = self.sent_bench, None
        cmd = sent if timings == [] and sent else self.send_bench(case, len(timings))
        replayed, problem = self.replayed_shape(case, cmd, self.bench_timeout(), timed=True)
        if problem is not None:
            return problem
        sets = len(self.plan.recheck_seeds(case))
        figures = verify.timing(self.spec, case, replayed, ref_times, sets, self.calibration)
        figures, problem = verify.speed_of_light(self.spec, case, figures, self.calibration)
        timings.append(figures)
        return problem

    def replayed_shape(
        self, case: Case, cmd: dict, timeout: float, timed: bool
    ) -> tuple[dict, Problem | None]:
        """The worker's recorded calls of one shape (`cmd`, sent), replayed by the timer on
        fresh inputs, every call checked there (`timed`: timed too); its answer and what ends
        the run, if anything."""
        try:
            event = self.recorded(case, cmd, timeout)
            with self.found.phase("bench_checks"):
                problem = self.checker.bench(case, cmd["tag"], event, fresh=False)
            if problem is not None:
                return {}, problem
            sequence = replay.agreed(event.get("sequences") or [])
            with self.found.phase("replay"):
                replayed = timer.replay(
                    self.timer, self.worker, self.plan, case, cmd["tag"], sequence, timeout, timed
                )
        except WorkerFailure as exc:
            return {}, (Verdict(exc.verdict), exc.kind, exc.message)
        except replay.NotReplayable as exc:
            return {}, (Verdict.REJECTED, replay.REASON, f"benchmark {case.name}: {exc}")
        self.found.add("timer_replay", replayed.get("seconds"))
        with self.found.phase("replay_checks"):
            problem = self.checker.replayed(case, cmd["tag"], replayed, self.timer.dir, timed)
        return replayed, problem

    def early_answer(self, case: Case) -> WorkerFailure | None:
        """The worker's answer to the first shape's early command, read in the shared section
        into `early`: its calls recorded, or `bench_tuning` (an autotuner to tune again,
        alone); the failure that ends the run, if it failed."""
        try:
            self.early = self.worker.expect(
                ("bench_done", "bench_tuning"), self.bench_timeout(), f"benchmark {case.name}"
            )
        except WorkerFailure as exc:
            return exc
        return None

    def recorded(self, case: Case, cmd: dict, timeout: float) -> dict:
        """The worker's `bench_done` for `cmd`: read now, or earlier (`early_answer`), after
        the autotuning it put off, which runs now that the device is this judging's alone."""
        early, self.early = self.early, None
        event = early or self.worker.expect("bench_done", timeout, f"benchmark {case.name}")
        self.found.add("bench", event.get("seconds"))
        if event["event"] == "bench_tuning":
            event = self.worker.expect_ok(
                {"op": "bench_tune"}, "bench_done", timeout, f"tuning for {case.name}"
            )
            self.found.add("bench", event.get("seconds"))
        return event

    def repeat_check(self) -> Problem:
        """Untimed runs still call the largest case repeatedly and check the last outputs: on
        the GPU, the worker's recorded call replayed by the timer on fresh input sets."""
        case = self.plan.largest(self.cases)
        if self.timer is not None:
            return self.replayed_repeat(case)
        cmd = {"op": "bench", "tag": "repeat", **self.plan.bench_command(case, True)}
        try:
            event = self.worker.expect_ok(
                cmd, "bench_done", self.timeout, f"repeated calls on {case.name}"
            )
        except WorkerFailure as exc:
            return Verdict(exc.verdict), exc.kind, exc.message
        problem = self.checker.bench(case, "repeat", event, fresh=True)
        if problem is not None:
            return problem
        self.found.notify("benchmarks", 1, 1, case.name)
        return Verdict.PASSED, "ok", "every case passed"

    def replayed_repeat(self, case: Case) -> Problem:
        _, problem = self.replayed_shape(case, self.send_bench(case, 0), self.timeout, False)
        if problem is not None:
            return problem
        self.found.notify("benchmarks", 1, 1, case.name)
        return Verdict.PASSED, "ok", "every case passed"

    def bench_timeout(self) -> float:
        return max(self.timeout, 120.0)
