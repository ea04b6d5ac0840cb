"""The timer's one-pass checks count what the parent's check counts (run here in Triton's
interpreter, on CPU tensors)."""

import pytest
import torch

from judge.core import check, inputs
from judge.core.spec import Arg, Tolerance
from judge.workers import device_checks

TOL = Tolerance(atol=1e-5, rtol=1e-6)


def counted(fn, *tensors) -> int:
    counter = torch.zeros(1, dtype=torch.int64)
    fn(*tensors, counter)
    return int(counter)


def tolerance_count(got, truth, tol=TOL) -> int:
    tensor = device_checks.tolerances(tol.atol, tol.rtol, "cpu")
    return counted(device_checks.outside_tolerance, got, truth, tensor)


def parent_count(got, truth, tol=TOL) -> int:
    lay = inputs.Layout(Arg(name="out", role="out", dtype="float32", shape=("N",)), got.numel(), 0)
    return check.check_output(lay, got, truth, tol, was_output=True).mismatches


def test_a_right_answer_counts_nothing():
    truth = torch.randn(10_000, dtype=torch.float64) * 100
    assert tolerance_count(truth.float(), truth) == 0


# The interpreter runs the kernel in NumPy, which warns when it subtracts two infinities: here on
# purpose, since the case holds infinities in both the answer and the truth.
@pytest.mark.filterwarnings("ignore:invalid value encountered in subtract:RuntimeWarning")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_wrong_elements_are_counted_as_the_parent_counts_them(dtype):
    truth = torch.randn(9_001, dtype=torch.float64)
    truth[10], truth[11], truth[12] = float("nan"), float("inf"), -float("inf")
    got = truth.to(dtype, copy=True)
    got[0] = float("nan")  # NaN where a number belongs
    got[10] = 1.0  # a number where NaN belongs
    got[11] = float("inf")  # an infinity met by itself: right
    got[12] = 0.0  # an infinity missed
    got[9_000] = got[9_000] + 1  # the last element
    tol = Tolerance(atol=1e-2, rtol=1e-2)  # room for the narrow types' rounding
    expected = parent_count(got.float(), truth, tol) if dtype != torch.float64 else 4
    assert tolerance_count(got, truth, tol) == expected == 4


def test_the_tolerance_is_applied_in_float64():
    truth = torch.full((100,), 1000.0, dtype=torch.float64)
    got = truth.clone()
    got[:50] += 1e-5 + 1e-3 * 0.999  # within atol + rtol * |expected|
    got[50:] += 1e-5 + 1e-3 * 1.001  # just outside
    assert tolerance_count(got, truth) == 50


def test_integer_outputs_are_compared_exactly():
    truth = torch.arange(5000, dtype=torch.int32)
    got = truth.clone()
    got[[3, 4999]] += 1
    assert tolerance_count(got, truth, Tolerance(atol=0, rtol=0)) == 2


def test_types_the_kernel_does_not_take_fall_back_to_pytorch():
    got = (torch.arange(300, dtype=torch.float64) / 8).to(torch.float8_e5m2)
    truth = got.double()
    got[7] = 100.0
    assert tolerance_count(got, truth, Tolerance(atol=1.0, rtol=0.0)) == 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8])
def test_differing_bits_are_counted_element_by_element(dtype):
    a = (torch.arange(10_000) % 97).to(dtype)
    b = a.clone()
    b[[0, 4096, 9_999]] += 1
    assert counted(device_checks.differing, a, b) == 3
    assert counted(device_checks.differing, a, a.clone()) == 0


def test_negative_zero_differs_from_zero_bit_for_bit():
    a, b = torch.zeros(8), torch.zeros(8)
    b[2] = -0.0
    assert counted(device_checks.differing, a, b) == 1


def test_empty_buffers_count_nothing():
    empty = torch.empty(0)
    assert counted(device_checks.differing, empty, empty) == 0
    assert tolerance_count(empty, empty.double()) == 0


def largest(got, truth) -> float:
    worst = torch.zeros(1, dtype=torch.int64)
    device_checks.largest_error(got, truth, worst)
    return float(worst.view(torch.float64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64, torch.int32])
def test_the_largest_error_is_the_one_pytorch_finds(dtype):
    """The kernel's largest error equals the PyTorch path's on every kind of element: equal,
    rounded, NaN for NaN (0), NaN where a number belongs (infinite), an infinity missed (the
    largest double); and across buffers the running value keeps the largest."""
    generator = torch.Generator().manual_seed(7)
    truth = torch.randn(9_001, dtype=torch.float64, generator=generator) * 50
    if dtype.is_floating_point:
        truth[4] = float("nan")  # met by a NaN in every call below
    else:
        truth = truth.round()
    clean = truth.to(dtype)
    spoiled = []
    if dtype.is_floating_point:
        spoiled += [clean.clone(), clean.clone()]
        spoiled[0][3] = float("nan")
        spoiled[1][5] = float("inf")
    else:
        spoiled += [clean.clone()]
        spoiled[0][8_999] += 7
    found = []
    for one in (clean, *spoiled):
        found.append(largest(one, truth))
        assert found[-1] == float(device_checks._largest_error_torch(one, truth))
    assert 0.0 <= found[0] < 0.5 < min(found[1:])  # the rounding, then each spoiled one
    worst = torch.zeros(1, dtype=torch.int64)
    for one in (*spoiled, clean):
        device_checks.largest_error(one, truth, worst)
    assert float(worst.view(torch.float64)) == max(found)
