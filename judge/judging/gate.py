"""One GPU shared by several judgings: they check answers side by side, and time alone.

Checking a submission's answers (its import, its cases) needs the GPU's results, not its
undivided attention, so the judgings of a batch may do it at the same time on one device. Timing
needs the device to itself: a judging that times (calibration, the reference's times, its
benchmarks and their re-checks) waits until no other judging of that device is checking or
timing, and while one waits or times, no judging starts checking. What is timed is therefore
timed exactly as when one submission is judged at a time.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator


class DeviceGate:
    """A readers-writer lock that prefers its writers: `checking()` is shared, `timing()` is
    exclusive, and a judging waiting to time lets no new checking start."""

    def __init__(self):
        self.changed = threading.Condition()
        self.checking_now = 0  # judgings inside checking()
        self.timing_now = False  # one judging inside timing()
        self.waiting_to_time = 0

    @contextlib.contextmanager
    def checking(self) -> Iterator[None]:
        with self.changed:
            self.changed.wait_for(lambda: not self.timing_now and not self.waiting_to_time)
            self.checking_now += 1
        try:
            yield
        finally:
            with self.changed:
                self.checking_now -= 1
                self.changed.notify_all()

    @contextlib.contextmanager
    def timing(self) -> Iterator[None]:
        with self.changed:
            self.waiting_to_time += 1
            self.changed.wait_for(lambda: not self.timing_now and not self.checking_now)
            self.waiting_to_time -= 1
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
