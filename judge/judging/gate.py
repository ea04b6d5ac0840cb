"""One GPU shared by several judgings: they check answers side by side, and time alone.

Checking a submission's answers (its import, its cases) needs the GPU's results, not its
undivided attention, so the judgings of a batch may do it at the same time on one device. Timing
needs the device to itself: a judging that times (calibration, the reference's times, its
benchmarks and their re-checks) waits until no other judging of that device is checking or
timing, and while one waits or times, no judging starts checking. What is timed is therefore
timed exactly as when one submission is judged at a time.

One exception keeps a batch moving past a submission that hangs (an endless loop, a kernel that
never ends, until its timeout): while a checking that began before the wait has run longer than
STALLED_S, the waiting timing holds no new checking back, since it must wait for the stalled one
anyway. Checkings let in that way never open the gate themselves, so the timing still comes next
once the stalled one ends and they finish.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Iterator

STALLED_S = 2.0  # a checking this long, begun before a timing waited, lets others check meanwhile


class DeviceGate:
    """A readers-writer lock that prefers its writers: `checking()` is shared, `timing()` is
    exclusive, and a judging waiting to time lets no new checking start, unless a checking
    begun before the wait has stalled (see the module's note)."""

    def __init__(self, stalled_s: float = STALLED_S):
        self.changed = threading.Condition()
        self.checkers: dict[int, float] = {}  # when each judging inside checking() entered
        self.timing_now = False  # one judging inside timing()
        self.waiting: dict[int, float] = {}  # when each judging waiting to time began to
        self.stalled_s = stalled_s
        self.tokens = itertools.count()

    def _may_check(self) -> bool:
        if self.timing_now:
            return False
        if not self.waiting:
            return True
        now, first_wait = time.monotonic(), min(self.waiting.values())
        return any(t < first_wait and now - t > self.stalled_s for t in self.checkers.values())

    @contextlib.contextmanager
    def checking(self) -> Iterator[None]:
        token = next(self.tokens)
        with self.changed:
            while not self._may_check():
                self.changed.wait(timeout=0.1 if self.waiting and self.checkers else None)
            self.checkers[token] = time.monotonic()
        try:
            yield
        finally:
            with self.changed:
                del self.checkers[token]
                self.changed.notify_all()

    @contextlib.contextmanager
    def timing(self) -> Iterator[None]:
        token = next(self.tokens)
        with self.changed:
            self.waiting[token] = time.monotonic()
            self.changed.wait_for(lambda: not self.timing_now and not self.checkers)
            del self.waiting[token]
            self.timing_now = True
        try:
            yield
        finally:
            with self.changed:
                self.timing_now = False
                self.changed.notify_all()


class Alone:
    """The gate of a judging that has its device to itself: both sections are free."""

    @contextlib.contextmanager
    def checking(self) -> Iterator[None]:
        yield

    timing = checking
