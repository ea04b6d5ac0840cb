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
def _outside_tolerance_kernel(
    got_ptr,  # the call's output elements
    exp_ptr,  # the truth, float64 (or the output's integer type)
    tol_ptr,  # [atol, rtol] as float64
    count_ptr,  # int64 counter the wrong elements are added to
    n,  # elements
    HALF: tl.constexpr,  # the output is a float narrower than float32: widen through float32
    BLOCK: tl.constexpr,
):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    got = tl.load(got_ptr + offsets, mask=mask, other=0)
    if HALF:
        got = got.to(tl.float32)
    got = got.to(tl.float64)
    exp = tl.load(exp_ptr + offsets, mask=mask, other=0).to(tl.float64)
    atol = tl.load(tol_ptr)
    rtol = tl.load(tol_ptr + 1)
    finite = (exp == exp) & (tl.abs(exp) != float("inf"))
    ok = (tl.abs(got - exp) <= tl.abs(exp) * rtol + atol) & finite
    ok = ok | (got == exp) | ((got != got) & (exp != exp))
    wrong = tl.sum((mask & ~ok).to(tl.int64), axis=0)
    if wrong > 0:
        tl.atomic_add(count_ptr, wrong)


@triton.jit
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
