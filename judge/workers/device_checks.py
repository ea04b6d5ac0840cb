"""The timer's checks of a replayed call, on the device: each a single pass over a buffer that
adds the count of wrong elements to a counter, without a host synchronisation.

Two kernels, both the judge's own (the timer runs no submission code but the recorded kernels):

- `outside_tolerance`: elements of an output outside `atol + rtol * |expected|` of a finite
  reference, and not equal to it (infinities, NaN for NaN): the rule of `check.check_output`,
  in float64 against a float64 truth;
- `differing`: elements whose bits differ from a copy (inputs and guard bands, bit for bit).

A counter is an int64 element of a tensor on the device, read once after every call was made.
Types the kernels do not take (float8, uint32, bool) are checked with PyTorch's operations,
which give the same counts in several passes.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK = 4096  # elements per program
FALLBACK_CHUNK = 1 << 24  # elements compared at a time by the PyTorch path
# dtypes whose elements Triton loads and widens to float64 exactly
WIDENED = {
    torch.float16: True,
    torch.bfloat16: True,
    torch.float32: True,
    torch.float64: True,
    torch.int8: False,
    torch.uint8: False,
    torch.int16: False,
    torch.int32: False,
    torch.int64: False,
}
BITS = (torch.int8, torch.int16, torch.int32, torch.int64)


@triton.jit
def _widened(got_ptr, exp_ptr, n, HALF: tl.constexpr, BLOCK: tl.constexpr):
    """This program's block of an output and of its truth, both as float64, and which of its
    elements exist."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    got = tl.load(got_ptr + offsets, mask=mask, other=0)
    if HALF:
        got = got.to(tl.float32)
    exp = tl.load(exp_ptr + offsets, mask=mask, other=0).to(tl.float64)
    return got.to(tl.float64), exp, mask


# The element count and the buffers' offsets change from case to case: left unspecialised, each
# kernel compiles and loads once per dtype instead of once per size class and alignment (a
# timer is a new process each judging, and loading one more binary costs it milliseconds).
@triton.jit(do_not_specialize=["n"])
def _outside_tolerance_kernel(
    got_ptr,  # the call's output elements
    exp_ptr,  # the truth, float64 (or the output's integer type)
    tol_ptr,  # [atol, rtol] as float64
    count_ptr,  # int64 counter the wrong elements are added to
    n,  # elements
    HALF: tl.constexpr,  # the output is a float narrower than float32: widen through float32
    BLOCK: tl.constexpr,
):
    got, exp, mask = _widened(got_ptr, exp_ptr, n, HALF, BLOCK)
    atol = tl.load(tol_ptr)
    rtol = tl.load(tol_ptr + 1)
    finite = (exp == exp) & (tl.abs(exp) != float("inf"))
    ok = (tl.abs(got - exp) <= tl.abs(exp) * rtol + atol) & finite
    ok = ok | (got == exp) | ((got != got) & (exp != exp))
    wrong = tl.sum((mask & ~ok).to(tl.int64), axis=0)
    if wrong > 0:
        tl.atomic_add(count_ptr, wrong)


@triton.jit(do_not_specialize=["a_ptr", "b_ptr", "n"])
def _differing_kernel(
    a_ptr,  # bits of one buffer
    b_ptr,  # bits it must equal
    count_ptr,  # int64 counter the differing elements are added to
    n,  # elements
    BLOCK: tl.constexpr,
):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask, other=0)
    b = tl.load(b_ptr + offsets, mask=mask, other=0)
    wrong = tl.sum((a != b).to(tl.int64), axis=0)
    if wrong > 0:
        tl.atomic_add(count_ptr, wrong)


@triton.jit(do_not_specialize=["n"])
def _largest_error_kernel(
    got_ptr,  # the call's output elements
    exp_ptr,  # the truth, float64 (or the output's integer type)
    worst_ptr,  # int64: the bits of the largest error so far, a float64 >= 0
    n,  # elements
    HALF: tl.constexpr,  # the output is a float narrower than float32: widen through float32
    BLOCK: tl.constexpr,
):
    got, exp, mask = _widened(got_ptr, exp_ptr, n, HALF, BLOCK)
    err = tl.abs(got - exp)
    # as PyTorch's nan_to_num(nan=inf) leaves it: an infinite error the largest finite double,
    # a NaN (a NaN where a number belongs) infinite
    finite_max = tl.full([BLOCK], 0x7FEFFFFFFFFFFFFF, tl.int64).to(tl.float64, bitcast=True)
    err = tl.where(err == float("inf"), finite_max, err)
    err = tl.where(err != err, float("inf"), err)
    same = (got == exp) | ((got != got) & (exp != exp))
    err = tl.where(same | ~mask, 0.0, err)
    # errors are never negative, and non-negative doubles order as their bits do
    tl.atomic_max(worst_ptr, tl.max(err, axis=0).to(tl.int64, bitcast=True))


def tolerances(atol: float, rtol: float, device) -> torch.Tensor:
    """The tolerance as the kernel reads it: float64, on the device."""
    return torch.tensor([atol, rtol], dtype=torch.float64, device=device)


def outside_tolerance(
    data: torch.Tensor, truth: torch.Tensor, tol: torch.Tensor, counter: torch.Tensor
) -> None:
    """Add to `counter` (one int64 element) the elements of `data` outside the tolerance
    `tol` ([atol, rtol], float64, on the device) of `truth`."""
    n = data.numel()
    if n == 0:
        return
    half = WIDENED.get(data.dtype)
    if half is None or truth.dtype not in WIDENED:
        counter += _outside_tolerance_torch(data, truth, tol)
        return
    grid = (triton.cdiv(n, BLOCK),)
    narrow = data.dtype in (torch.float16, torch.bfloat16)
    _outside_tolerance_kernel[grid](data, truth, tol, counter, n, HALF=narrow, BLOCK=BLOCK)


def largest_error(data: torch.Tensor, truth: torch.Tensor, worst: torch.Tensor) -> None:
    """Raise `worst` (one int64 element holding a float64's bits) to max |got - expected| over
    the elements of `data`, 0 where they equal `truth`'s (NaN for NaN included), infinite for
    a NaN where a number belongs, the largest double for an infinite error."""
    n = data.numel()
    if n == 0:
        return
    if WIDENED.get(data.dtype) is None or truth.dtype not in WIDENED:
        found = _largest_error_torch(data, truth).view(1)
        worst.copy_(torch.maximum(worst.view(torch.float64), found).view(torch.int64))
        return
    narrow = data.dtype in (torch.float16, torch.bfloat16)
    grid = (triton.cdiv(n, BLOCK),)
    _largest_error_kernel[grid](data, truth, worst, n, HALF=narrow, BLOCK=BLOCK)


def differing(a: torch.Tensor, b: torch.Tensor, counter: torch.Tensor) -> None:
    """Add to `counter` the elements of `a` whose bits differ from `b`'s (same shape and type)."""
    n = a.numel()
    if n == 0:
        return
    a, b = _bits(a), _bits(b)
    if a.dtype not in BITS:
        counter += (a != b).sum()
        return
    _differing_kernel[(triton.cdiv(n, BLOCK),)](a, b, counter, n, BLOCK=BLOCK)


def _bits(t: torch.Tensor) -> torch.Tensor:
    """The tensor's elements as signed integers of the same width."""
    if t.dtype in BITS:
        return t
    width = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}.get(t.element_size())
    return t.view(width) if width is not None else t


def _outside_tolerance_torch(
    data: torch.Tensor, truth: torch.Tensor, tol: torch.Tensor
) -> torch.Tensor:
    """The same count with PyTorch's operations, a chunk at a time."""
    atol, rtol = tol[0], tol[1]
    count = torch.zeros((), dtype=torch.int64, device=data.device)
    for start in range(0, data.numel(), FALLBACK_CHUNK):
        got = data[start : start + FALLBACK_CHUNK].double()
        exp = truth[start : start + FALLBACK_CHUNK].double()
        ok = ((got - exp).abs() <= exp.abs() * rtol + atol) & exp.isfinite()
        ok |= (got == exp) | (got.isnan() & exp.isnan())
        count += (~ok).sum()
    return count


def _largest_error_torch(data: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
    """The same largest error with PyTorch's operations, a chunk at a time (float64, 0-d)."""
    worst = torch.zeros((), dtype=torch.float64, device=data.device)
    for start in range(0, data.numel(), FALLBACK_CHUNK):
        got = data[start : start + FALLBACK_CHUNK].double()
        exp = truth[start : start + FALLBACK_CHUNK].double()
        err = (got - exp).abs_().nan_to_num_(nan=float("inf"))
        err.masked_fill_((got == exp) | (got.isnan() & exp.isnan()), 0.0)
        worst = torch.maximum(worst, err.max())
    return worst
