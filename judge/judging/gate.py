"""One GPU shared by several judgings: they check answers side by side, and time alone.

Checking a submission's answers (its import, its cases) needs the GPU's results, not its
undivided attention, so the judgings of a batch may do it at the same time on one device. Timing
needs the device to itself: a judging that times (calibration, the reference's times, its
benchmarks and their re-checks) waits until no other judging of that device is checking or
timing, and while one waits or times, no judging starts checking. What is timed is therefore
timed exactly as when one submission is judged at a time.

Two exceptions keep a batch moving past a submission that hangs (an endless loop, a kernel that
never ends, until its timeout):

- While a checking that began before the wait has run longer than STALLED_S, the waiting timing
  holds no new checking back, since it may have to wait for the stalled one anyway. Checkings let
  in that way never open the gate themselves, so the timing still comes next once the stalled one
  ends and they finish.
- When every checking still inside has run longer than STALLED_S, the timing stops their
  processes (SIGSTOP: nothing new reaches the device from them, and their deadlines stand still)
  and asks its own timer whether the device is quiet (`quiet`: a spinning kernel of known
  length takes no more than 3% longer than it should; beside another process's kernel it takes
  longer, since the device shares its time between them). Quiet (an endless loop in Python, a
  compile), the timing goes ahead and the stopped processes go on (SIGCONT) when it ends; busy
  (a kernel that never ends), they go on at once and the timing asks again every QUIET_RETRY_S.

A judging that checks many cases does not make a waiting timing wait for all of them: between
two cases it asks its `Seat` whether a timing waits, and if so leaves the shared section until
that timing has ended (`Seat.step_aside`), with nothing of its own left on the device. A timing
then waits for the case under way, not for the rest of a checking.

A submission's code may also run while its judging is outside both sections (a thread it
started on import, launching kernels while its lane waits for the gate), and a judging's timer
makes its first check as the judging begins, outside both. So every judging of the device
registers its worker and timer for its whole length (`joined`), and a timing stops those of
every other judging (SIGSTOP) before it begins, and those that join while it runs as they join,
and lets them go on when it ends. Work one of them
queued before it was stopped may still be running: the timing's timer probes the device until
it is quiet (at most QUIET_WAIT_S; past that the timing goes ahead and its report says so,
and the next timings ask once without waiting until one finds the device quiet again).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol

STALLED_S = 2.0  # a checking this long, begun before a timing waited, lets others check meanwhile
QUIET_RETRY_S = 0.5  # how often a timing held up by stalled checkings asks whether it may pass
QUIET_WAIT_S = 10.0  # how long a timing waits for work the workers it stopped left running


class Pausable(Protocol):
    """A process of a judging that checks: stopped while another times past it."""

    def pause(self) -> None: ...

    def resume(self) -> None: ...


class DeviceGate:
    """A readers-writer lock that prefers its writers: `checking()` is shared, `timing()` is
    exclusive, and a judging waiting to time lets no new checking start, unless a checking
    begun before the wait has stalled (see the module's note)."""

    def __init__(
        self,
        stalled_s: float = STALLED_S,
        retry_s: float = QUIET_RETRY_S,
        quiet_wait_s: float = QUIET_WAIT_S,
    ):
        self.changed = threading.Condition()
        self.checkers: dict[int, float] = {}  # when each judging inside checking() entered
        self.processes: dict[int, tuple[Pausable, ...]] = {}  # each checker's processes
        self.timing_now = False  # one judging inside timing()
        self.waiting: dict[int, float] = {}  # when each judging waiting to time began to
        self.members: dict[int, tuple[Pausable, ...]] = {}  # each judging's workers (`joined`)
        self.stalled_s, self.retry_s, self.quiet_wait_s = stalled_s, retry_s, quiet_wait_s
        self.busy_outside = False  # a timing found the device busy past its wait: asked once since
        self.late: list[Pausable] = []  # processes that joined while a timing ran, stopped
        self.tokens = itertools.count()

    @contextlib.contextmanager
    def joined(self, *processes: Pausable) -> Iterator[None]:
        """For a judging's whole length: its `processes` (its worker and timer), stopped
        while another judging of the device times; at once if one times as it joins."""
        token = next(self.tokens)
        with self.changed:
            self.members[token] = processes
            if self.timing_now:  # the timing under way lets them go on as it ends
                for process in processes:
                    process.pause()
                self.late.extend(processes)
        try:
            yield
        finally:
            with self.changed:
                del self.members[token]

    def _stalled(self, token: int, now: float) -> bool:
        return now - self.checkers[token] > self.stalled_s

    def _may_check(self) -> bool:
        if self.timing_now:
            return False
        if not self.waiting:
            return True
        now, first_wait = time.monotonic(), min(self.waiting.values())
        return any(
            t < first_wait and self._stalled(token, now) for token, t in self.checkers.items()
        )

    @contextlib.contextmanager
    def checking(self, *processes: Pausable) -> Iterator[Seat]:
        """Inside, the judging checks; `processes` (its worker and timer) may be stopped while
        another judging times past it, should it stall. The seat lets it step aside between
        two pieces of work while a timing waits."""
        token = next(self.tokens)
        with self.changed:
            self._enter(token, processes)
        try:
            yield Seat(self, token)
        finally:
            with self.changed:
                self._leave(token)

    def _enter(self, token: int, processes: tuple[Pausable, ...]) -> None:
        while not self._may_check():
            self.changed.wait(timeout=0.1 if self.waiting and self.checkers else None)
        self.checkers[token] = time.monotonic()
        self.processes[token] = processes

    def _leave(self, token: int) -> tuple[Pausable, ...]:
        del self.checkers[token]
        processes = self.processes.pop(token)
        self.changed.notify_all()
        return processes

    def _step_aside(self, token: int) -> bool:
        """Out of the shared section while a timing waits, back in once no timing holds new
        checkings back; whether it stepped aside."""
        with self.changed:
            if not self.waiting:
                return False
            self._enter(token, self._leave(token))
            return True

    def _passed(self, quiet: Callable[[], bool] | None) -> list[Pausable] | None:
        """The processes stopped to let a timing pass every checking inside, all stalled, on
        a quiet device; None when it may not (they then go on)."""
        now = time.monotonic()
        if quiet is None or not all(self._stalled(t, now) for t in self.checkers):
            return None
        if not all(self.processes[token] for token in self.checkers):
            return None  # a checking whose processes cannot be stopped
        stopped = [p for token in self.checkers for p in self.processes[token]]
        for process in stopped:
            process.pause()
        try:
            if quiet():
                return stopped
        except Exception:  # noqa: BLE001 - no answer is not a quiet device
            pass
        for process in stopped:
            process.resume()
        return None

    @contextlib.contextmanager
    def timing(
        self,
        quiet: Callable[[], bool] | None = None,
        own: tuple[Pausable, ...] = (),
        busy: Callable[[], None] | None = None,
    ) -> Iterator[None]:
        """Inside, the judging has the device to itself: every other judging's workers are
        stopped (its `own` go on), and `quiet` (its timer's probe) has found the device quiet,
        or `busy` was told it did not within QUIET_WAIT_S. `quiet` also lets it pass checkings
        that have all stalled."""
        token = next(self.tokens)
        stopped: list[Pausable] = []
        with self.changed:
            self.waiting[token] = time.monotonic()
            while self.timing_now or self.checkers:
                if not self.timing_now and self.checkers:
                    passed = self._passed(quiet)
                    if passed is not None:
                        stopped = passed
                        break
                self.changed.wait(timeout=self.retry_s if self.checkers else None)
            del self.waiting[token]
            self.timing_now = True
            others = [
                p
                for processes in self.members.values()
                for p in processes
                if not any(p is q for q in (*own, *stopped))
            ]
        try:
            for process in others:
                process.pause()
            if others and quiet is not None and not self._quieted(quiet) and busy is not None:
                busy()
            yield
        finally:
            with self.changed:
                for process in (*stopped, *others, *self.late):
                    process.resume()
                self.late.clear()
                self.timing_now = False
                self.changed.notify_all()

    def _quieted(self, quiet: Callable[[], bool]) -> bool:
        """Whether the device fell quiet within QUIET_WAIT_S (work the stopped workers left
        running ended), asked every QUIET_RETRY_S. Once a timing found it busy past that wait
        (a process outside the judge, say a desktop's), the next timings ask once and do not
        wait, until one finds it quiet again."""
        deadline = time.monotonic() + (0.0 if self.busy_outside else self.quiet_wait_s)
        while True:
            try:
                if quiet():
                    self.busy_outside = False
                    return True
            except Exception:  # noqa: BLE001 - no answer is not a quiet device
                pass
            if time.monotonic() >= deadline:
                self.busy_outside = True
                return False
            time.sleep(self.retry_s)


class Seat:
    """A judging's place in the shared section of a gate (`DeviceGate.checking`)."""

    def __init__(self, gate: DeviceGate | None = None, token: int = -1):
        self.gate, self.token = gate, token

    def timing_waits(self) -> bool:
        """Whether another judging waits to time: this one should step aside at its next
        pause, when nothing of its own runs on the device."""
        return self.gate is not None and bool(self.gate.waiting)

    def step_aside(self) -> bool:
        """Leave the shared section to the timings waiting for it and come back after them
        (blocks meanwhile); False, at once, when none waits."""
        return self.gate is not None and self.gate._step_aside(self.token)


class Alone:
    """The gate of a judging that has its device to itself: both sections are free."""

    @contextlib.contextmanager
    def joined(self, *processes: Pausable) -> Iterator[None]:
        yield

    @contextlib.contextmanager
    def checking(self, *processes: Pausable) -> Iterator[Seat]:
        yield Seat()

    @contextlib.contextmanager
    def timing(self, *_given, **_named) -> Iterator[None]:
        """Free, whatever the judging offers to probe or keep going."""
        yield
