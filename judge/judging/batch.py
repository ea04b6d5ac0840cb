"""Judging many submissions: PER_GPU lanes per GPU, each starting its next worker while it judges.

Lanes of one GPU share it through a gate.DeviceGate: they check answers side by side and time
one at a time, with the device to themselves.

A lane judges one submission at a time, each in a fresh worker exactly as `tpuzzle run` does;
while it judges one, the workers of its next LOOKAHEAD submissions (one, on a shared GPU) are
already starting (forked, creating their CUDA context), so start-ups overlap judging, even behind
submissions that fail within a second. Lanes pull from one queue, so a slow submission holds up
its own lane only. Reports come back as they finish, with their position in the batch. `setup`
turns a command line's choices into the runner's options and the device of each lane.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent import futures
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from judge.core.results import RunReport
from judge.core.spec import PuzzleSpec
from judge.errors import JudgeError
from judge.judging.gate import DeviceGate
from judge.workers import launcher
from judge.workers.channel import WorkerFailure

LOOKAHEAD = 2  # workers a lane keeps starting ahead of the one it judges
PER_GPU = 4  # judgings sharing one GPU in a batch (see gate.DeviceGate)
STOP_WAIT_S = 10.0  # how long a batch stopped early waits for its lanes (daemon threads) to end
AHEAD_TIMEOUT_S = 20.0  # a compile ahead running this long is stopped (its worker compiles)
AHEAD_WAIT_S = 3.0  # how long a lane waits for its job's compile ahead before it stops it


@dataclass(frozen=True)
class Job:
    """One submission to judge on one puzzle."""

    spec: PuzzleSpec
    path: Path


def parse_gpus(text: str) -> list[int]:
    """`all` (every visible CUDA device) or a comma-separated list of device indices."""
    if text.strip() == "all":
        count = launcher.cuda_device_count()
        if count == 0:
            raise JudgeError("--gpus all: no CUDA device is visible")
        return list(range(count))
    try:
        gpus = [int(part) for part in text.split(",")]
    except ValueError:
        raise JudgeError(f"--gpus {text!r}: expected 'all' or indices such as 0,1") from None
    if any(g < 0 for g in gpus) or len(set(gpus)) != len(gpus):
        raise JudgeError(f"--gpus {text!r}: indices must be distinct and non-negative")
    return gpus


def lanes(
    gpus: Sequence[int] | None, gpu: int | None, interpret: bool, jobs: int, per_gpu: int = 1
) -> list:
    """The device of each lane: `per_gpu` lanes per listed GPU (they share it through a
    gate.DeviceGate); in interpreter mode, `jobs` CPU lanes."""
    if interpret:
        return [None] * max(1, jobs)
    return [device for device in (list(gpus) if gpus else [gpu]) for _ in range(per_gpu)]


@dataclass(frozen=True)
class Choices:
    """How to judge a batch, as the command line gives it."""

    interpret: bool = False  # the CPU interpreter even when a GPU is present
    timing: bool = True  # time the benchmark cases (GPU mode only)
    timeout: float | None = None  # seconds per phase; None: the spec's
    gpus: str | None = None  # "all" or "0,1": per_gpu lanes on each
    jobs: int = 1  # CPU lanes in interpreter mode
    recalibrate: bool = False  # measure the device's peaks and the reference again
    per_gpu: int = PER_GPU  # judgings sharing each GPU: side by side to check, alone to time


@dataclass(frozen=True)
class Setup:
    """The runner's options for every job, and the device of each lane."""

    options: Any  # an options.RunOptions
    devices: tuple[int | None, ...]  # one per lane; None: the default device, or a CPU lane

    @property
    def mode(self) -> str:
        """The mode: interpreter or gpu; auto where the choice is left to whoever judges."""
        if self.options.interpret is None:
            return "auto"
        return "interpreter" if self.options.interpret else "gpu"


def setup(how: Choices, secret: str = "", decide: bool = True) -> Setup:
    """The options and lanes of a batch; `secret` (else TPUZZLE_SECRET_SEED) seeds every case.

    Without `decide` (a batch of one that the judge server takes, as `tpuzzle run` hands it a
    file), and without --interpret or --gpus, the mode stays undecided: the server chooses
    between the GPU and the interpreter with its driver already initialised, instead of this
    process calling cuInit (about 0.2 s on an H100 machine)."""
    from judge.judging import options as run_options

    if how.jobs < 1:
        raise JudgeError(f"--jobs {how.jobs}: expected at least 1")
    if how.per_gpu < 1:
        raise JudgeError(f"--per-gpu {how.per_gpu}: expected at least 1")
    if how.interpret or decide or how.gpus is not None:
        interpret: bool | None = how.interpret or not launcher.cuda_present()
    else:
        interpret = None
    if how.gpus is not None and interpret:
        raise JudgeError("--gpus needs CUDA devices; without them, use --jobs for CPU lanes")
    gpus = parse_gpus(how.gpus) if how.gpus else None
    options = run_options.RunOptions(
        interpret=interpret,
        timing=how.timing,
        timeout_s=how.timeout,
        secret=secret or run_options.secret_from_env(),
        recalibrate=how.recalibrate,
    )
    return Setup(options, tuple(lanes(gpus, None, bool(interpret), how.jobs, how.per_gpu)))


def judge_each(
    jobs: Sequence[Job],
    options,
    devices: Sequence[int | None],
    launch: Callable = launcher.launch,
    judge: Callable | None = None,
    launch_ahead: Callable | None = None,
) -> Iterator[tuple[int, RunReport]]:
    """(position, report) for every job, in the order they finish.

    `options` is a runner.RunOptions; each lane judges with its own device. On the GPU, each
    job's kernels are compiled ahead on spare cores (`AheadCompiles`, through `launch_ahead`:
    launcher.launch_ahead when the workers are launcher.launch's). Closing the iterator early
    (an exception in the consumer, Ctrl-C) kills every worker still running and waits up to
    STOP_WAIT_S for the lanes to end.
    """
    if judge is None:
        if launch is launcher.launch and jobs and options.interpret is not None:
            launcher.zygote(options.interpret)  # imports while this process imports PyTorch
        from judge.judging import runner

        judge = runner.judge
    batch = _Batch(jobs, options, launch, judge)
    chosen = devices[: max(1, len(jobs))]
    if launch_ahead is None and launch is launcher.launch:
        launch_ahead = launcher.launch_ahead
    target = None
    if launch_ahead is not None and not batch.interpret and len(jobs) > 1:
        target = launcher.device_target(chosen[0] or 0)
    if target is not None:
        batch.ahead = AheadCompiles(jobs, target, ahead_slots(len(chosen)), launch_ahead)
    shared = [] if batch.interpret else [d for d, n in Counter(chosen).items() if n > 1]
    gates = {device: DeviceGate() for device in shared}
    threads = [
        threading.Thread(target=batch.lane, args=(device, gates.get(device)), daemon=True)
        for device in chosen
    ]
    for thread in threads:
        thread.start()
    try:
        for _ in jobs:
            item = batch.finished.get()
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        batch.stop()
        deadline = time.monotonic() + STOP_WAIT_S  # a lane stuck on a killed worker is left behind
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))


def ahead_calls(spec: PuzzleSpec) -> list[dict]:
    """The calls a compile ahead makes (sizes and scalars): the puzzle's visible tests and its
    benchmark shapes, each once. Hidden cases are never sent to a process of the submission's
    before it is judged."""
    calls: list[dict] = []
    for case in [*spec.tests, *spec.benchmarks]:
        call = {"sizes": case.size_map, "scalars": dict(case.scalars)}
        if case.visibility == "visible" and call not in calls:
            calls.append(call)
    return calls


def ahead_slots(lanes: int, cores: int | None = None) -> int:
    """Compiles ahead at a time: the cores the lanes leave (each lane's worker and timer busy
    one each), two cores a compile, at least one and at most four."""
    cores = (os.cpu_count() or 1) if cores is None else cores
    return max(1, min(4, (cores - 2 * lanes) // 2))


class AheadCompiles:
    """Each job's kernels compiled ahead of its judging (judge.workers.ahead): in queue order,
    `slots` at a time, each in a worker with no GPU that runs outside the devices' gates. A lane
    waits for its job's compile before it judges it, so that the compile does not happen in the
    gate's shared section, where a lane that wants to time waits for it; a compile not yet begun
    when its job comes up is dropped."""

    def __init__(self, jobs: Sequence[Job], target: dict, slots: int, launch: Callable):
        self.target, self.launch = target, launch
        self.lock = threading.Lock()
        self.stopped = False
        self.pool = futures.ThreadPoolExecutor(slots, thread_name_prefix="tpuzzle-ahead")
        self.live: dict[int, Any] = {}  # each compile's worker while it runs, by job
        self.compiles = {i: self.pool.submit(self.compile, i, job) for i, job in enumerate(jobs)}

    def compile(self, index: int, job: Job) -> dict | None:
        with self.lock:
            if self.stopped:
                return None
            try:
                spec_file, calls = job.spec.directory / "puzzle.yaml", ahead_calls(job.spec)
                worker = self.launch(spec_file, job.path, self.target, calls)
            except Exception:  # noqa: BLE001 - a missing file, say: its judging says so
                return None
            if worker is None:
                return None
            self.live[index] = worker
        try:
            answer = worker.expect("compiled", AHEAD_TIMEOUT_S, "compiling ahead")
            launcher.compiled_all(worker, answer)
            return answer
        except WorkerFailure:
            return None  # the judging worker meets whatever stopped it, and reports it
        finally:
            with self.lock:
                self.live.pop(index, None)
            launcher.discard(worker)

    def wait(self, index: int, limit: float = AHEAD_WAIT_S) -> dict | None:
        """Job `index`'s compile, once it has ended (None: dropped, refused or failed). One
        still running after `limit` seconds (a submission that loops on import, say) is
        stopped: the judging worker compiles what is left."""
        future = self.compiles.pop(index, None)
        if future is None or future.cancel():
            return None
        try:
            return future.result(timeout=limit)
        except futures.TimeoutError:
            with self.lock:
                worker = self.live.get(index)
            if worker is not None:
                launcher.discard(worker)
            return None
        except (futures.CancelledError, OSError):
            return None

    def close(self) -> None:
        with self.lock:
            self.stopped = True
            workers = list(self.live.values())
        for future in list(self.compiles.values()):  # lanes may be popping theirs
            future.cancel()
        for worker in workers:
            launcher.discard(worker)
        self.pool.shutdown(wait=False, cancel_futures=True)


class _Batch:
    """The queue of jobs shared by the lanes, and what they hand back."""

    def __init__(self, jobs: Sequence[Job], options, launch: Callable, judge: Callable):
        self.pending = deque(enumerate(jobs))
        self.options, self.launch, self.judge = options, launch, judge
        self.finished: queue.Queue = queue.Queue()
        self.lock = threading.Lock()
        self.interpret = launcher.interpreting(options.interpret)
        self.stopped = False
        self.live: set = set()  # workers started and not yet discarded
        self.ahead: AheadCompiles | None = None  # kernels compiled ahead on spare cores

    def lane(self, device: int | None, gate: DeviceGate | None = None) -> None:
        """Judge jobs from the queue until it is empty; `gate` is the device's when other
        lanes share it."""
        options = replace(self.options, gpu=device)
        shared = {} if gate is None else {"gate": gate}
        try:
            ahead: deque = deque()
            lookahead = LOOKAHEAD if gate is None else 1  # a shared device: fewer idle workers
            while True:
                while len(ahead) <= lookahead:  # their workers start while this one is judged
                    upcoming = self.take(device)
                    if upcoming is None:
                        break
                    ahead.append(upcoming)
                if not ahead:
                    return
                index, job, worker = ahead.popleft()
                if self.ahead is not None:
                    self.ahead.wait(index)
                report = self.judge(job.spec, job.path, options, worker, **shared)
                self.forget(worker)
                self.finished.put((index, report))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, which re-raises
            self.finished.put(exc)

    def take(self, device: int | None):
        """The next job with its worker already starting, or None when the queue is empty."""
        with self.lock:
            if self.stopped or not self.pending:
                return None
            index, job = self.pending.popleft()
            worker = self.launch(
                job.spec.directory / "puzzle.yaml", job.path, self.interpret, device
            )
            self.live.add(worker)
        return index, job, worker

    def forget(self, worker) -> None:
        with self.lock:
            self.live.discard(worker)

    def stop(self) -> None:
        """No new jobs; every worker still alive is killed (its lane then finishes quickly)."""
        with self.lock:
            self.stopped = True
            self.pending.clear()
            workers = list(self.live)
        if self.ahead is not None:
            self.ahead.close()
        for worker in workers:
            launcher.discard(worker)
