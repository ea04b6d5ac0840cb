"""A grading policy: the points of each puzzle, how they split between correctness and speed,
the weight of each case, the due date and the late penalty. Read from YAML and validated once;
every error names the file and the key.

    assignment: Triton lab 1          # names the Canvas column and the platforms' reports
    canvas_id: 48213                  # Canvas's assignment id: the column "Triton lab 1 (48213)"
    points: 10                        # each puzzle's points, unless the puzzle says otherwise
    correctness: 0.8                  # share of a puzzle's points for its cases; the rest: speed
                                      # (none for a rejected file, or one wrong on a re-check)
    speed: library                    # the time that earns the full speed share: library,
                                      # "80% sol" (of speed of light) or "120 us"
    due: 2026-12-01T23:59:00-05:00    # ISO 8601 with its UTC offset
    late: {grace_minutes: 15, per_day: 0.1, max_days: 5}
    puzzles:                          # the puzzles of the assignment (default: those submitted)
      vector_add: {}
      softmax: {points: 20, speed: "60% sol", cases: {"N=1M": 3}}   # a case's weight (1)

Pure: a path or text in, frozen values out.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from judge.core.yaml_reader import Reader, read_yaml

DEFAULT_POINTS = 10.0
DEFAULT_CORRECTNESS = 0.8
DEFAULT_SPEED = "library"
_NUMBER = r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_SPEED = re.compile(rf"\s*(?:(library)|{_NUMBER}\s*%\s*sol|{_NUMBER}\s*us)\s*", re.IGNORECASE)


@dataclass(frozen=True)
class SpeedTarget:
    """What earns the full speed share: the library's time, a % of speed of light, or a time.
    Slower earns in proportion (half the library's speed: half the share)."""

    kind: str  # "library", "sol" or "us"
    value: float = 1.0  # the percent of speed of light, or the microseconds; 1 for library

    def credit(self, speedup_vs_library: float | None, sol_pct: float | None, ms: float) -> float:
        """The share of the speed points a score earns, in [0, 1]; 0 when the figure it is
        measured by is missing."""
        if self.kind == "library":
            got = speedup_vs_library
        elif self.kind == "sol":
            got = sol_pct / self.value if sol_pct is not None else None
        else:
            got = self.value / (ms * 1e3) if ms > 0 else None
        return min(1.0, max(0.0, got)) if got is not None and math.isfinite(got) else 0.0

    def __str__(self) -> str:
        if self.kind == "library":
            return "the library's time"
        return f"{self.value:g}% of speed of light" if self.kind == "sol" else f"{self.value:g} us"


@dataclass(frozen=True)
class PuzzlePolicy:
    """How one puzzle is scored."""

    points: float  # the puzzle's points
    correctness: float  # share of them for the cases, in [0, 1]; the rest for speed
    speed: SpeedTarget
    case_weights: tuple[tuple[str, float], ...] = ()  # case name -> weight (others: 1)

    def weight(self, case: str) -> float:
        return dict(self.case_weights).get(case, 1.0)


@dataclass(frozen=True)
class Late:
    """The late penalty: each started day past the due date (and its grace) costs `per_day` of
    the points; past `max_days` days late, nothing is earned."""

    grace_minutes: float = 0.0
    per_day: float = 0.0  # fraction of the points, in [0, 1]
    max_days: int | None = None  # None: no limit


@dataclass(frozen=True)
class Policy:
    """A grading policy (the default when no file is given)."""

    assignment: str = "tpuzzle"
    canvas_id: str = ""
    default: PuzzlePolicy = PuzzlePolicy(
        DEFAULT_POINTS, DEFAULT_CORRECTNESS, SpeedTarget(DEFAULT_SPEED)
    )
    puzzles: tuple[tuple[str, PuzzlePolicy], ...] = ()  # the assignment's puzzles, when listed
    due: datetime | None = None  # aware
    late: Late = Late()
    source: str = "the default policy"  # the file it came from

    def of(self, puzzle: str) -> PuzzlePolicy:
        return dict(self.puzzles).get(puzzle, self.default)

    @property
    def listed(self) -> tuple[str, ...]:
        """The puzzles the policy names (empty: the assignment is what was submitted)."""
        return tuple(p for p, _ in self.puzzles)

    @property
    def canvas_column(self) -> str:
        return f"{self.assignment} ({self.canvas_id})" if self.canvas_id else self.assignment


DEFAULT = Policy()


# ------------------------------------------------------------------------------- reading


def load(path: Path | None, puzzle_ids: set[str]) -> Policy:
    """The policy in `path` (the default without one); JudgeError naming the file and key."""
    if path is None:
        return DEFAULT
    data = read_yaml(path)
    return build(Reader(path, data if data is not None else {}), puzzle_ids)


def build(r: Reader, puzzle_ids: set[str]) -> Policy:
    known = {"assignment", "canvas_id", "points", "correctness", "speed", "due", "late", "puzzles"}
    _no_unknown(r, known)
    default = _puzzle(r, None)
    listed = r.child("puzzles", r.get("puzzles", dict, {}))
    puzzles = []
    for pid, raw in listed.data.items():
        if str(pid) not in puzzle_ids:
            listed.fail("not a puzzle id of the catalogue", str(pid))
        puzzles.append((str(pid), _puzzle(listed.child(str(pid), raw or {}), default)))
    return Policy(
        assignment=_text(r, "assignment", "tpuzzle"),
        canvas_id=str(r.get("canvas_id", (int, str), "")).strip(),
        default=default,
        puzzles=tuple(puzzles),
        due=_time(r, "due"),
        late=_late(r.child("late", r.get("late", dict, {}))),
        source=str(r.path),
    )


def _puzzle(r: Reader, base: PuzzlePolicy | None) -> PuzzlePolicy:
    if base is not None:
        _no_unknown(r, {"points", "correctness", "speed", "cases"})
    fallback = base or DEFAULT.default
    points = r.get("points", float, fallback.points)
    if not (math.isfinite(points) and points >= 0):
        r.fail(f"expected a number of points >= 0, got {points}", "points")
    share = r.get("correctness", float, fallback.correctness)
    if not 0 <= share <= 1:
        r.fail(f"expected a share between 0 and 1, got {share}", "correctness")
    weights = r.child("cases", r.get("cases", dict, {})) if base is not None else None
    cases = []
    for name, value in weights.data.items() if weights else ():
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not (math.isfinite(value) and value >= 0):
            weights.fail(f"expected a finite weight >= 0, got {value!r}", str(name))
        cases.append((str(name), float(value)))
    speed = r.get("speed", str, "")
    target = parse_speed(speed, r) if speed else fallback.speed
    return PuzzlePolicy(points, share, target, tuple(cases))


def parse_speed(text: str, r: Reader) -> SpeedTarget:
    match = _SPEED.fullmatch(text)
    if not match:
        r.fail(f"{text!r}: expected library, '<P>% sol' or '<T> us'", "speed")
    if match[1]:
        return SpeedTarget("library")
    value = float(match[2] or match[3])
    if not (math.isfinite(value) and value > 0):
        r.fail(f"{text!r}: the target must be above 0", "speed")
    return SpeedTarget("sol" if match[2] else "us", value)


def _late(r: Reader) -> Late:
    _no_unknown(r, {"grace_minutes", "per_day", "max_days"})
    grace = r.get("grace_minutes", float, 0.0)
    per_day = r.get("per_day", float, 0.0)
    max_days = r.get("max_days", int, None)
    if not (math.isfinite(grace) and grace >= 0):
        r.fail("expected minutes >= 0", "grace_minutes")
    if not 0 <= per_day <= 1:
        r.fail(f"expected a fraction of the points between 0 and 1, got {per_day}", "per_day")
    if max_days is not None and max_days < 0:
        r.fail("expected a number of days >= 0", "max_days")
    return Late(grace, per_day, max_days)


def _time(r: Reader, key: str) -> datetime | None:
    value = r.data.get(key)
    if value is None:
        return None
    if isinstance(value, datetime):  # YAML reads an unquoted timestamp itself
        when = value
    else:
        when = parse_time(str(value))
        if when is None:
            r.fail(f"{value!r}: expected an ISO 8601 time such as 2026-12-01T23:59:00-05:00", key)
    if when.tzinfo is None:
        r.fail(f"{value!r}: give the UTC offset (e.g. -05:00 or Z)", key)
    return when


def parse_time(text: str) -> datetime | None:
    """An ISO 8601 time (a trailing Z allowed); None when it is not one."""
    text = text.strip()
    try:
        return datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        return None


def _text(r: Reader, key: str, default: str) -> str:
    value = str(r.get(key, (str, int), default)).strip()
    if not value:
        r.fail("must not be empty", key)
    return value


def _no_unknown(r: Reader, known: set[str]) -> None:
    extra = sorted(str(k) for k in r.data if str(k) not in known)
    if extra:
        r.fail(f"unknown key (expected one of: {', '.join(sorted(known))})", extra[0])


# ------------------------------------------------------------------------------- lateness


@dataclass(frozen=True)
class Lateness:
    """How late one submission was, and what it costs."""

    submitted: datetime | None  # None: no submission time known (never late)
    days: int  # started days past the due date and its grace (0: on time)
    factor: float  # what the points are multiplied by

    @property
    def note(self) -> str:
        if self.submitted is None or self.days == 0:
            return ""
        if self.factor == 0:
            return f"{self.days} day{'s' * (self.days != 1)} late: no points"
        return f"{self.days} day{'s' * (self.days != 1)} late: -{(1 - self.factor) * 100:.0f}%"


def lateness(policy: Policy, submitted: datetime | None) -> Lateness:
    """How late a submission made at `submitted` is under the policy's due date."""
    if submitted is None or policy.due is None:
        return Lateness(submitted, 0, 1.0)
    if submitted.tzinfo is None:
        submitted = submitted.replace(tzinfo=policy.due.tzinfo)
    over = submitted - policy.due - timedelta(minutes=policy.late.grace_minutes)
    if over <= timedelta(0):
        return Lateness(submitted, 0, 1.0)
    days = math.ceil(over / timedelta(days=1))
    cap = policy.late.max_days
    factor = 0.0 if cap is not None and days > cap else max(0.0, 1 - policy.late.per_day * days)
    return Lateness(submitted, days, round(factor, 6))


def as_dict(policy: Policy) -> dict[str, Any]:
    """The policy as JSON, for the grading document."""
    return {
        "source": policy.source,
        "assignment": policy.assignment,
        "due": policy.due.isoformat() if policy.due else None,
        "late": {
            "grace_minutes": policy.late.grace_minutes,
            "per_day": policy.late.per_day,
            "max_days": policy.late.max_days,
        },
    }
