"""Judging many submissions: one lane per GPU, each starting its next worker while it judges.

A lane judges one submission at a time, each in a fresh worker exactly as `tpuzzle run` does; while
it judges one, the workers of its next LOOKAHEAD submissions are already importing PyTorch, so
start-ups overlap judging, even behind submissions that fail within a second. Lanes pull from one
queue, so a slow submission holds up its own lane only. Reports come back as they finish, with
their position in the batch.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from judge.core.results import RunReport
from judge.core.spec import PuzzleSpec
from judge.errors import JudgeError
from judge.isolation import channel

LOOKAHEAD = 2  # workers a lane keeps starting ahead of the one it judges


@dataclass(frozen=True)
class Job:
    """One submission to judge on one puzzle."""

    spec: PuzzleSpec
    path: Path


def parse_gpus(text: str) -> list[int]:
    """`all` (every visible CUDA device) or a comma-separated list of device indices."""
    if text.strip() == "all":
        count = channel.cuda_device_count()
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


def lanes(gpus: Sequence[int] | None, gpu: int | None, interpret: bool, jobs: int) -> list:
    """The device of each lane: one lane per listed GPU; in interpreter mode, `jobs` CPU lanes."""
    if interpret:
        return [None] * max(1, jobs)
    return list(gpus) if gpus else [gpu]


def judge_each(
    jobs: Sequence[Job],
    options,
    devices: Sequence[int | None],
    launch: Callable = channel.launch,
    judge: Callable | None = None,
) -> Iterator[tuple[int, RunReport]]:
    """(position, report) for every job, in the order they finish.

    `options` is a runner.RunOptions; each lane judges with its own device. Closing the iterator
    early (an exception in the consumer, Ctrl-C) kills every worker still running.
    """
    if judge is None:
        from judge.isolation import runner

        judge = runner.judge
    batch = _Batch(jobs, options, launch, judge)
    threads = [
        threading.Thread(target=batch.lane, args=(device,), daemon=True)
        for device in devices[: max(1, len(jobs))]
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
        for thread in threads:
            thread.join()


class _Batch:
    """The queue of jobs shared by the lanes, and what they hand back."""

    def __init__(self, jobs: Sequence[Job], options, launch: Callable, judge: Callable):
        self.pending = deque(enumerate(jobs))
        self.options, self.launch, self.judge = options, launch, judge
        self.finished: queue.Queue = queue.Queue()
        self.lock = threading.Lock()
        self.interpret = (
            options.interpret if options.interpret is not None else not channel.cuda_present()
        )
        self.stopped = False
        self.live: set = set()  # workers started and not yet discarded

    def lane(self, device: int | None) -> None:
        options = replace(self.options, gpu=device)
        try:
            ahead: deque = deque()
            while True:
                while len(ahead) <= LOOKAHEAD:  # their workers start while this one is judged
                    upcoming = self.take(device)
                    if upcoming is None:
                        break
                    ahead.append(upcoming)
                if not ahead:
                    return
                index, job, worker = ahead.popleft()
                report = self.judge(job.spec, job.path, options, worker)
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
        for worker in workers:
            channel.discard(worker)
