"""The parent's checks of what a worker left after a call: a case's buffers against its truth, a
benchmark's timed buffers checked again on fresh inputs, the plausibility of its times, and the
figures made from them. Only files the parent named are read; nothing the worker says about its
own results is believed."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from judge.core import bench, check, inputs
from judge.core.results import BufferCheck, CaseResult, Mismatch, Timing, Verdict
from judge.core.spec import Case, PuzzleSpec, Tolerance
from judge.core.truth import Truth, checked, computed, load_check, load_mistakes
from judge.judging.measure import libraries
from judge.judging.plan import Plan
from judge.workers.channel import WorkerFailure, WorkerProcess, WorkerReported

Problem = tuple[Verdict, str, str]  # (verdict, reason, message) that ends a run
SIDE_BY_SIDE_ELEMENTS = 1 << 22  # a call's buffers are checked side by side from this size
# Threads that check the buffers of a large call side by side (PyTorch's operations release the
# GIL, and mapping a file's pages in scales with threads); none start until first used.
CHECKING = ThreadPoolExecutor(4, thread_name_prefix="check")


@dataclass(frozen=True)
class Checker:
    """Checks one judging's calls against the parent's truths."""

    plan: Plan  # the cases, their seeds, and where each call's buffers are left
    worker: WorkerProcess  # whose job directory holds those buffers

    def files(self, tag: str, directory: Path | None = None) -> dict[str, str]:
        """Where a call's buffers were left: the worker's job folder, or another's (the timer's)."""
        return self.plan.buffer_files(directory or self.worker.dir, tag)

    def case(self, case: Case, truth: Truth, files: dict[str, str]) -> CaseResult:
        """Every buffer of one call: inputs unchanged, outputs right, guard bands untouched."""
        spec = self.plan.spec
        tolerance = spec.tolerance.at(case.size_map)
        layouts = inputs.layouts(spec, case.size_map)

        def one(lay: inputs.Layout) -> BufferCheck:
            return buffer_check(case, lay, truth, files[lay.arg.name], tolerance, spec.check)

        large = sum(lay.total for lay in layouts) >= SIDE_BY_SIDE_ELEMENTS
        checks = list(CHECKING.map(one, layouts) if large else map(one, layouts))
        if spec.check == "reference":
            return self.judged_by_check(case, truth, files, checks)
        ok = all(c.ok for c in checks)
        worst = max((c.max_error for c in checks if c.name in truth.outputs), default=0.0)
        hints = () if ok else self.hints(case, truth, files, checks)
        return self.plan.case_result(
            case,
            "passed" if ok else "failed",
            max_error=worst,
            buffers=tuple(checks),
            hints=hints,
        )

    def described(self, case: Case, answer: dict) -> CaseResult:
        """A wrong call that the timer described on the device (its answer's `buffers`,
        player.described): the report made from that account. No named mistake is looked for:
        that needs the outputs, and calls this large are past MISTAKE_ELEMENTS anyway."""
        layouts = inputs.layouts(self.plan.spec, case.size_map)
        checks = buffer_checks(case, answer["buffers"], layouts)
        outputs = {lay.arg.name for lay in layouts if lay.arg.role != "in"}
        worst = max((c.max_error for c in checks if c.name in outputs), default=0.0)
        return self.plan.case_result(
            case, "failed", max_error=worst, buffers=tuple(checks), hints=tuple(check.hints(checks))
        )

    def judged_by_check(
        self, case: Case, truth: Truth, files: dict[str, str], checks: list[BufferCheck]
    ) -> CaseResult:
        """A puzzle whose reference.py's `check` judges the outputs (`check: reference`): the
        inputs unchanged and the guard bands intact as always, no output element left
        unwritten (`checks`), then the check, on the outputs as written."""
        spec = self.plan.spec
        said = None
        written = all(c.ok for c in checks)
        if written:
            outputs = {
                lay.arg.name: inputs.data_view(
                    inputs.mapped(files[lay.arg.name], lay.arg.dtype, lay.total), lay
                )
                for lay in inputs.layouts(spec, case.size_map)
                if lay.arg.role != "in"
            }
            said = checked(spec, puzzle_check(spec), case, truth.initial, outputs)
        passed = written and said is None
        return self.plan.case_result(
            case,
            "passed" if passed else "failed",
            max_error=0.0,
            buffers=tuple(checks),
            hints=() if passed else tuple(check.hints(checks)),
            message=said or "",
        )

    def hints(self, case, truth, files, checks: list[BufferCheck]) -> tuple[str, ...]:
        """A failing call's hints: the puzzle's mistakes it matches, then the patterns any
        puzzle's mistakes leave (but the guess of lost precision, where a mistake matched)."""
        named = self.mistaken(case, truth, files)
        generic = check.hints(checks)
        if named:
            generic = [h for h in generic if "lost precision" not in h]
        return (*named, *generic)

    def mistaken(self, case: Case, truth: Truth, files: dict[str, str]) -> list[str]:
        """The hints of the puzzle's known mistakes whose outputs the call's outputs match."""
        spec = self.plan.spec
        layouts = [lay for lay in inputs.layouts(spec, case.size_map) if lay.arg.role != "in"]
        if not spec.mistakes or sum(lay.n for lay in layouts) > MISTAKE_ELEMENTS:
            return []
        got = {}
        for lay in layouts:
            full = inputs.mapped(files[lay.arg.name], lay.arg.dtype, lay.total)
            got[lay.arg.name] = inputs.data_view(full, lay)
        tolerance = spec.tolerance.at(case.size_map)
        functions = mistake_functions(spec)
        found = []
        for mistake in spec.mistakes:
            fn = functions.get(mistake.name)
            try:
                outputs = computed(spec, fn, case, truth.initial) if fn else None
            except Exception:  # the puzzle's own code, on inputs it may not expect: no hint
                continue
            if not outputs or all(
                check.matches(truth.outputs[n], outputs[n], tolerance) for n in got
            ):
                continue  # on this case the mistake gives the right answer: it does not show
            if all(check.matches(got[n], outputs[n], tolerance) for n in got):
                found.append(mistake.hint)
        return found

    def bench(self, case: Case, tag: str, event: dict, fresh: bool) -> Problem | None:
        """A benchmark's calls in the worker, one per input set, each made again from the
        sentinel after the first calls compiled and tuned: with `fresh` (untimed runs) on fresh
        inputs at the same addresses, so that neither skipped work nor answers kept per address
        or per call survive; else only recorded, for the timer, which checks every call it
        replays on fresh inputs (the worker's own buffers are not believed)."""
        outside = outside_triton(f"benchmark {case.name}", event)
        if outside:
            return Verdict.REJECTED, "outside-triton", outside
        if fresh:
            seeds = list(enumerate(self.plan.recheck_seeds(case)))
            return self.sets(case, tag, seeds, self.worker.dir, FRESH)
        return None

    def replayed(
        self, case: Case, tag: str, event: dict, directory: Path, timed: bool = True
    ) -> Problem | None:
        """The timer's replay: every replayed call right on its fresh inputs (counted there on
        the device), and one call per set checked after it ended (the buffers of a wrong one
        read here for the report). Untimed (`timed` false): one call per set, no times."""
        if not plausible_replay(event, timed):
            return Verdict.ERROR, "protocol", f"benchmark {case.name}: a garbled replay"
        if event["first_wrong"] is not None:
            sets = len(self.plan.recheck_seeds(case))
            return Verdict.FAILED, "timed-call-wrong", timed_call_wrong(case, event, sets)
        seeds = self.plan.recheck_seeds(case)
        wrong = [(j, seeds[j]) for j in event["wrong_sets"] if j < len(seeds)]
        if not wrong and self.plan.spec.check == "reference":  # every set left for the check
            return self.sets(case, tag, list(enumerate(seeds)), directory, REPLAYED)
        if not wrong:
            return None
        # the sets whose call was wrong when checked after it ended, their buffers read here
        return self.sets(case, tag, wrong, directory, REPLAYED) or (
            Verdict.FAILED,
            "recheck-failed",
            f"benchmark {case.name}: called again {REPLAYED}, solve() got input sets "
            f"{', '.join(str(j + 1) for j, _ in wrong)} wrong",
        )

    def sets(
        self, case: Case, tag: str, seeds: list[tuple[int, int]], directory: Path, how: str
    ) -> Problem | None:
        """The buffers left as TAG_setJ for each input set (j, seed), against their truths."""
        for j, seed in seeds:
            one = replace(case, seed=seed)
            files = self.files(f"{tag}_set{j}", directory)
            try:
                result = self.case(one, self.plan.truths.get(one), files)
            except WorkerFailure as exc:
                return Verdict.ERROR, exc.kind, exc.message
            problem = recheck_problem(case, result, how)
            if problem is not None:
                return problem
        return None


def plausible_replay(event: dict, timed: bool = True) -> bool:
    """The timer's answer has the shape it sends (it is trusted; this guards the protocol)."""
    times, first, sets = event.get("times"), event.get("first_wrong"), event.get("wrong_sets")
    by_set = [event.get("calls_by_set"), event.get("wrong_by_set")]
    return (
        isinstance(times, list)
        and (bool(times) or not timed)
        and all(isinstance(t, float) and math.isfinite(t) and t > 0 for t in times)
        and (first is None or isinstance(first, int))
        and isinstance(event.get("first_wrong_set"), int if first is not None else type(None))
        and isinstance(event.get("calls"), int)
        and isinstance(event.get("launches"), list)
        and isinstance(sets, list)
        and all(isinstance(j, int) and j >= 0 for j in sets)
        and all(isinstance(c, list) and all(isinstance(n, int) for n in c) for c in by_set)
    )


def timed_call_wrong(case: Case, event: dict, sets: int) -> str:
    """What the timer's wrong calls say: the first of them, and whether the same inputs came
    out both right and wrong (a race) or the calls on fresh inputs were wrong (work skipped, or
    answers kept from the recording)."""
    said = (
        f"benchmark {case.name}: timed call {event['first_wrong'] + 1} of {event['calls']} "
        f"(input set {event['first_wrong_set'] + 1} of {sets}, drawn fresh) got "
        f"{event['wrong_elements']} elements wrong, and {event['wrong_calls']} of the calls were "
        "wrong"
    )
    calls, wrong = event["calls_by_set"], event["wrong_by_set"]
    mixed = [j for j, (c, w) in enumerate(zip(calls, wrong, strict=False)) if 0 < w < c]
    if mixed:
        j = mixed[0]
        return (
            f"{said}: input set {j + 1} came out right in {calls[j] - wrong[j]} of its "
            f"{calls[j]} calls and wrong in {wrong[j]}, on the same inputs each time. The answer "
            "changes from call to call: a race (a value read before another program wrote it, "
            "or one word read by several threads at different moments, without the order the "
            "algorithm needs)"
        )
    return (
        f"{said}: what solve() launched while recorded does not compute the answer on other "
        "inputs (does it skip work on repeated calls, or keep answers between calls?)"
    )


def buffer_checks(case: Case, found, layouts: list) -> list[BufferCheck]:
    """The timer's account of each buffer of a call (player.described), read back in the order
    of the layouts; a garbled one is a protocol error."""
    try:
        if len(found) != len(layouts):
            raise ValueError("one account per buffer")
        checks = []
        for lay, raw in zip(layouts, found, strict=True):
            fields = {k: v for k, v in raw.items() if k != "first"}
            first = tuple(Mismatch(**m) for m in raw["first"])
            made = BufferCheck(**fields, first=first)
            if made.name != lay.arg.name or not isinstance(made.mismatches, int):
                raise ValueError("not this buffer")
            checks.append(made)
    except (TypeError, ValueError, KeyError, AttributeError):
        raise WorkerReported(
            "error", "protocol", f"case {case.name}: a garbled account of its buffers"
        ) from None
    return checks


def plausible_check(answer: dict) -> bool:
    """The timer's answer to a case's check has the shape it sends."""
    wrong, worst = answer.get("wrong"), answer.get("max_error")
    return isinstance(wrong, int) and wrong >= 0 and isinstance(worst, float)


def launched_nothing(recorded) -> bool:
    """Whether a recorded call (as the worker sent it) launched no kernel at all, though the
    call before it, on the same buffers, was judged to: work skipped on a repeated call."""
    if not isinstance(recorded, dict) or not isinstance(recorded.get("steps"), list):
        return False
    return "unsupported" not in recorded and not any(
        isinstance(step, dict) and "launch" in step for step in recorded["steps"]
    )


def skipped_message(case: Case) -> str:
    return (
        f"case {case.name}: called again from the sentinel, solve() launched no kernel, so its "
        "answer was never computed again; does it skip work on repeated calls, or keep answers "
        "per address?"
    )


def passed_case(plan: Plan, case: Case, max_error: float) -> CaseResult:
    """A case the timer found right: every buffer as it must be, the largest error it saw."""
    layouts = inputs.layouts(plan.spec, case.size_map)
    buffers = tuple(BufferCheck(name=lay.arg.name, ok=True, total=lay.n) for lay in layouts)
    return plan.case_result(case, "passed", max_error=max_error, buffers=buffers)


MISTAKE_ELEMENTS = 1 << 22  # output elements above which no mistake is tried (it is slow there)
_MISTAKES: dict[tuple, dict] = {}
_CHECKS: dict[tuple, object] = {}


def _reference_stamp(spec) -> tuple[str, int]:
    """A puzzle's reference.py and the time it last changed (0: missing), so that what is
    loaded from it is loaded once per process and file."""
    path = spec.directory / "reference.py"
    return str(path), path.stat().st_mtime_ns if path.exists() else 0


def puzzle_check(spec):
    """reference.py's `check` of a puzzle, loaded once per process and reference file."""
    key = _reference_stamp(spec)
    if key not in _CHECKS:
        _CHECKS[key] = load_check(spec)
    return _CHECKS[key]


def mistake_functions(spec) -> dict:
    """reference.py's mistake functions of a puzzle, loaded once per process and spec file."""
    key = _reference_stamp(spec)
    if key not in _MISTAKES:
        try:
            _MISTAKES[key] = load_mistakes(spec)
        except Exception:  # a reference.py that does not import: the run says so elsewhere
            _MISTAKES[key] = {}
    return _MISTAKES[key]


def buffer_check(
    case: Case,
    lay: inputs.Layout,
    truth: Truth,
    path: str,
    tolerance: Tolerance,
    judged: str = "elementwise",
) -> BufferCheck:
    """One buffer of a call, mapped from the file the parent named, against the truth (an
    output of a puzzle its own check judges (`judged`): against nothing but its guard bands
    and the sentinel)."""
    try:
        full = inputs.mapped(path, lay.arg.dtype, lay.total)
    except (OSError, ValueError) as exc:
        raise WorkerReported(
            "error", "protocol", f"case {case.name}: the buffers came back wrong ({exc})"
        ) from None
    if lay.arg.role == "in":
        return check.check_input(lay, full, truth.initial[lay.arg.name])
    if judged == "reference":
        return check.check_written(lay, full, was_output=lay.arg.role == "out")
    expected, was_output = truth.outputs[lay.arg.name], lay.arg.role == "out"
    return check.check_output(lay, full, expected, tolerance, was_output=was_output)


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


FRESH = "on fresh inputs at the same addresses"
REPLAYED = "on fresh inputs, replayed in the timer"


def recheck_problem(case: Case, result: CaseResult, how: str = FRESH) -> Problem | None:
    """A benchmark's call made again (`how`) that got a wrong answer, as a failure."""
    if result.status == "passed":
        return None
    return (
        Verdict.FAILED,
        "recheck-failed",
        f"benchmark {case.name}: called again {how}, solve() got them wrong "
        f"({check.failure_message(result)}); does it skip work on repeated calls, or keep "
        "answers per address?",
    )


def timing(
    spec: PuzzleSpec, case: Case, event: dict, measured, sets: int, calibration: dict | None
) -> Timing:
    """One shape's figures from the timer's replay: each call's CUDA-event time (the whole
    sequence on one stream); rates against the measured peaks and a same-size copy."""
    median, p20, p80, samples = bench.summarize(event["times"])
    gbps, tflops = bench.throughput(spec, case.size_map, median)
    ref_median, library, lib_median = libraries(spec, measured)
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
        sol_pct=bench.sol_percent(spec, gbps, tflops, calibration),
        reference_median_ms=ref_median,
        speedup_vs_reference=(ref_median / median) if ref_median and median > 0 else None,
        copy_pct=bench.copy_percent(spec, case.size_map, gbps, calibration),
        library=library,
        library_median_ms=lib_median,
        speedup_vs_library=(lib_median / median) if lib_median and median > 0 else None,
        event_median_ms=median,
        launches=sum(1 for line in event["launches"] if not line.startswith("fill ")),
        host_ms=event.get("host_ms"),
        floor_ms=bench.floor_ms(spec, case.size_map, calibration),
        replayed=tuple(event["launches"]),
    )


def speed_of_light(
    spec: PuzzleSpec, case: Case, figures: Timing, calibration: dict | None
) -> tuple[Timing, Problem | None]:
    """A shape's figures, flagged and rejected when its median is beyond the device's
    measured peak."""
    beyond = bench.faster_than_light(spec, case.size_map, figures.median_ms, calibration)
    if beyond is None:
        return figures, None
    message = f"benchmark {case.name}: faster than light: {beyond}"
    flagged = replace(figures, above_speed_of_light=True)
    return flagged, (Verdict.REJECTED, "faster-than-light", message)
