"""Pure comparison: tolerances, sentinels, guard bands, the mismatch report and hints.

Everything here takes tensors (on the CPU in the parent, on the device when the timer describes
a large wrong call) and returns results dataclasses; nothing runs a submission.
"""

from __future__ import annotations

import torch

from judge.core.inputs import Layout, as_bits, guard_byte, sentinel
from judge.core.results import BufferCheck, CaseResult, Mismatch
from judge.core.spec import Tolerance

FIRST_MISMATCHES = 5  # wrong elements listed in a report


def modified_elements(region: torch.Tensor, pattern: int) -> int:
    """Elements of a guard region whose bytes are no longer the guard pattern."""
    if region.numel() == 0:
        return 0
    raw = region.contiguous().view(torch.uint8).view(region.numel(), -1)
    return int((raw != pattern).any(dim=1).sum())


def sentinel_bits(dtype: str, device: torch.device) -> torch.Tensor:
    """The sentinel of dtype as one integer of its width, on the device of the data it is
    compared with (the timer describes large wrong calls on the GPU)."""
    return as_bits(sentinel(dtype)).to(device)


def guard_bands(lay: Layout, full: torch.Tensor) -> tuple[int, int]:
    """The elements of the guard bands before and after the buffer that were changed."""
    before = modified_elements(full[: lay.guard], guard_byte(lay.arg))
    return before, modified_elements(full[lay.guard + lay.n :], guard_byte(lay.arg))


def check_output(
    lay: Layout, full: torch.Tensor, expected: torch.Tensor, tol: Tolerance, was_output: bool
) -> BufferCheck:
    """An output (or in-place) buffer against the reference, with its guard bands.

    An element is right when `err <= atol + rtol * |expected|` with a finite reference (written
    so that a NaN never passes by accident), or when it equals the reference, infinities
    included; a NaN is right only where the reference is NaN too.

    One float64 pass over the buffer, a chunk at a time, keeping counts and the first few wrong
    elements only (so a buffer of 100M elements, all of them wrong, never needs gigabytes of
    temporaries); NaN, Inf and equality rules are applied only to the elements outside the
    tolerance. When some are wrong, a second pass over the bits finds the unwritten elements.
    """
    data = full[lay.guard : lay.guard + lay.n]
    tally = _Tally(sentinel=sentinel_bits(lay.arg.dtype, full.device) if was_output else None)
    for start in range(0, data.numel(), CHUNK):
        tally.add(start, data[start : start + CHUNK], expected[start : start + CHUNK], tol)
    prefix = written_prefix_of(data, lay.arg.dtype) if was_output and tally.wrong else None
    guard_before, guard_after = guard_bands(lay, full)
    return BufferCheck(
        name=lay.arg.name,
        ok=tally.wrong == 0 and guard_before == 0 and guard_after == 0,
        mismatches=tally.wrong,
        total=lay.n,
        unwritten=tally.unwritten,
        max_error=tally.worst_error,
        max_error_index=tally.worst,
        nan_count=tally.nans,
        inf_count=tally.infs,
        first=tuple(tally.first),
        guard_before=guard_before,
        guard_after=guard_after,
        written_prefix=prefix,
    )


CHUNK = 1 << 22  # elements compared at a time


class _Tally:
    """What `check_output` keeps of the chunks it compared: counts of the wrong elements (the
    unwritten, NaN and infinite among them), the first FIRST_MISMATCHES, the largest error.

    A wrong element's error is |got - expected| (a NaN's infinite); a right one's is at most
    the tolerance (0 where it equals the reference). The largest error is -1 and 0.0 for an
    empty buffer."""

    def __init__(self, sentinel: torch.Tensor | None):
        self.sentinel = sentinel  # the unwritten bit pattern, for an output buffer
        self.wrong = self.unwritten = self.nans = self.infs = 0
        self.first: list[Mismatch] = []
        self.worst, self.worst_error = -1, 0.0

    def add(self, start: int, data: torch.Tensor, expected: torch.Tensor, tol: Tolerance) -> None:
        got, exp = data.double(), expected.double()
        err = (got - exp).abs_()
        wrong = err > exp.abs().mul_(tol.rtol).add_(tol.atol)
        wrong |= err.isnan() | ~exp.isfinite()  # an infinite reference is met only by itself
        if bool(wrong.any()):
            rescued = wrong & ((got == exp) | (got.isnan() & exp.isnan()))
            err.masked_fill_(rescued, 0.0).nan_to_num_(nan=float("inf"))
            wrong &= ~rescued
            self.count(start, wrong, data, got, exp, err)
        at = int(err.argmax()) if err.numel() else -1
        if at >= 0 and (self.worst < 0 or float(err[at]) > self.worst_error):
            self.worst, self.worst_error = start + at, float(err[at])

    def count(self, start, wrong, data, got, exp, err) -> None:
        """Add one chunk's wrong elements (`wrong`, a mask) to the counts."""
        if self.sentinel is not None:
            never = (as_bits(data) == self.sentinel) & wrong
        else:
            never = torch.zeros_like(wrong)
        self.wrong += int(wrong.sum())
        self.unwritten += int(never.sum())
        self.nans += int((got.isnan() & wrong & ~never).sum())
        self.infs += int((got.isinf() & wrong).sum())
        if len(self.first) < FIRST_MISMATCHES:
            for i in wrong.nonzero().flatten()[: FIRST_MISMATCHES - len(self.first)].tolist():
                mismatch = Mismatch(
                    index=start + i, got=float(got[i]), expected=float(exp[i]), error=float(err[i])
                )
                self.first.append(mismatch)


def check_input(lay: Layout, full: torch.Tensor, initial: torch.Tensor) -> BufferCheck:
    """A read-only input: bit for bit as drawn, guard bands intact."""
    data = full[lay.guard : lay.guard + lay.n]
    changed = int((as_bits(data) != as_bits(initial)).sum())
    guard_before, guard_after = guard_bands(lay, full)
    return BufferCheck(
        name=lay.arg.name,
        ok=changed == 0 and guard_before == 0 and guard_after == 0,
        total=lay.n,
        input_changed=changed,
        guard_before=guard_before,
        guard_after=guard_after,
    )


def written_prefix_of(data: torch.Tensor, dtype: str) -> int | None:
    """k when exactly the first k elements of the buffer were written and the rest holds the
    sentinel: the count of written elements k, and whether the first unwritten one comes at k
    or later."""
    return _written_prefix(data.numel(), *sentinels(data, dtype))


def _written_prefix(n: int, unwritten: int, first_unwritten: int | None) -> int | None:
    """The written prefix of n elements, from the count of unwritten ones and the first's index."""
    written = n - unwritten
    if first_unwritten is None or first_unwritten < written:
        return None
    return written


def sentinels(data: torch.Tensor, dtype: str) -> tuple[int, int | None]:
    """(elements still holding the sentinel, the index of the first), a chunk at a time."""
    bits = sentinel_bits(dtype, data.device)
    count, first = 0, None
    for start in range(0, data.numel(), CHUNK):
        never = as_bits(data[start : start + CHUNK]) == bits
        count += int(never.sum())
        if first is None and bool(never.any()):
            first = start + int(never.int().argmax())
    return count, first


def check_written(lay: Layout, full: torch.Tensor, was_output: bool) -> BufferCheck:
    """An output buffer of a puzzle whose own check judges its values: its guard bands intact
    and (an output, not an in-place buffer) no element left holding the sentinel."""
    data = full[lay.guard : lay.guard + lay.n]
    unwritten, first = sentinels(data, lay.arg.dtype) if was_output else (0, None)
    guard_before, guard_after = guard_bands(lay, full)
    return BufferCheck(
        name=lay.arg.name,
        ok=unwritten == 0 and guard_before == 0 and guard_after == 0,
        mismatches=unwritten,
        total=lay.n,
        unwritten=unwritten,
        guard_before=guard_before,
        guard_after=guard_after,
        written_prefix=_written_prefix(lay.n, unwritten, first) if unwritten else None,
    )


def hints(checks: list[BufferCheck]) -> list[str]:
    """Plain-words diagnoses of the mistakes whose pattern is recognisable."""
    found: list[str] = []
    for c in checks:
        found += _guard_hints(c)
        if c.input_changed:
            found.append(
                f"solve() changed the input {c.name} ({c.input_changed} of {c.total} "
                "elements): inputs are read-only; write results to the output buffer."
            )
        if c.written_prefix is not None:
            found.append(_prefix_hint(c.name, c.written_prefix, c.total))
        elif c.mismatches and not c.unwritten and not c.nan_count:
            found += _precision_hint(c)
    return found


def _guard_hints(c: BufferCheck) -> list[str]:
    found = []
    if c.guard_after:
        found.append(
            f"wrote {c.guard_after} elements past the end of {c.name}: is a store missing "
            "its mask (mask=offsets < N)?"
        )
    if c.guard_before:
        found.append(
            f"wrote {c.guard_before} elements before the start of {c.name}: "
            "are some offsets negative?"
        )
    return found


def _prefix_hint(name: str, k: int, n: int) -> str:
    if k == 0:
        return (
            f"nothing was written to {name}: does the kernel launch (a non-empty grid), and "
            "does its tl.store reach the output?"
        )
    first_block = k & (k - 1) == 0  # a power of two: one block's worth
    if first_block and n > 2 * k:
        return (
            f"only the first {k} elements of {name} were written: every program may be "
            "working on the same block. Are the offsets built from tl.program_id(0)?"
        )
    both = " (or every program works on the first block: offsets need tl.program_id(0))"
    last = "the last element" if n - k == 1 else f"the last {n - k} elements"
    verb = "was" if n - k == 1 else "were"
    return (
        f"{last} of {name} {verb} never written (the first {k} were): does "
        f"the grid round down? Launch triton.cdiv(N, BLOCK_SIZE) programs"
        f"{both if first_block else ''}."
    )


def _precision_hint(c: BufferCheck) -> list[str]:
    worst = max(c.first, key=lambda m: m.error, default=None)
    if worst is None or not worst.expected:
        return []
    rel = worst.error / abs(worst.expected)
    if 1e-5 <= rel <= 2e-2:
        return [
            f"the errors in {c.name} look like lost precision (about {rel:.0e} relative): is "
            "part of the computation done in float16 or bfloat16?"
        ]
    return []


def matches(got: torch.Tensor, expected: torch.Tensor, tol: Tolerance) -> bool:
    """Whether every element of `got` is `expected` within the tolerance, NaN matching NaN and
    each infinity itself (a mistake that overflows overflows where the submission did)."""
    if got.numel() != expected.numel():
        return False
    got, expected = got.double().reshape(-1), expected.double().reshape(-1)
    nan = torch.isnan(expected)
    if not torch.equal(nan, torch.isnan(got)):
        return False
    inf = torch.isinf(expected)
    if not torch.equal(got[inf], expected[inf]):
        return False
    finite = ~(nan | inf)
    err = (got[finite] - expected[finite]).abs()
    return bool((err <= tol.atol + tol.rtol * expected[finite].abs()).all())


def discriminates(expected: torch.Tensor, tol: Tolerance) -> bool:
    """Whether an all-zero answer would fail: the reference sits well above atol."""
    if expected.numel() == 0:
        return False
    return float(expected.double().abs().mean()) > 10 * tol.atol


def failure_reason(result: CaseResult) -> str:
    if any(b.guard_before or b.guard_after for b in result.buffers):
        return "out-of-bounds"
    if any(b.input_changed for b in result.buffers):
        return "input-modified"
    if any(b.unwritten for b in result.buffers):
        return "unwritten"
    return "wrong-answer"


def failure_message(result: CaseResult) -> str:
    bad = [b for b in result.buffers if not b.ok]
    if not bad and result.message:  # the puzzle's own check said why (`check: reference`)
        return f"case {result.name} (seed {result.seed}): {result.message}"
    parts = []
    for b in bad:
        if b.guard_after or b.guard_before:
            parts.append(
                f"{b.name}: wrote outside the buffer ({b.guard_before} before, "
                f"{b.guard_after} after)"
            )
        elif b.input_changed:
            parts.append(f"{b.name}: input changed in {b.input_changed} elements")
        else:
            parts.append(f"{b.name}: {b.mismatches} of {b.total} elements wrong")
    return f"case {result.name} (seed {result.seed}): " + "; ".join(parts)
