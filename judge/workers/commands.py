"""What a command hands the worker, and the seconds its answer reports: each input set's seed and
sealed input files (`input_sets`), and the time spent in each stretch of a command
(`Stopwatch`). Both the submission's worker and the timer read their commands with these."""

from __future__ import annotations

import time


def input_sets(cmd: dict) -> list[tuple[int, dict]]:
    """(seed, the parent's sealed input files) of each input set of a command."""
    if "seeds" in cmd:
        return list(zip(cmd["seeds"], cmd.get("inputs") or [{}] * len(cmd["seeds"]), strict=True))
    return [(cmd["seed"], cmd.get("inputs") or {})]


class Stopwatch:
    """Seconds spent in each named stretch of a command, reported with its answer (where a
    judging's time goes; nothing is decided on them)."""

    def __init__(self):
        self.last = time.monotonic()
        self.laps: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.monotonic()
        self.laps[name] = round(now - self.last, 4)
        self.last = now
