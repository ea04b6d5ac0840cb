"""The tolerance a problem's own check compares its outputs with, recorded while it runs on the
reference's output (judge.sources.probe_check), with checks written here in the styles GPU MODE's
problems use."""

import sys
import types

import pytest
import torch

from judge.sources.probe_check import passed, recording, tolerance
from judge.sources.probing import Skip

UTILS = """
import torch


def verbose_allclose(received, expected, rtol=1e-05, atol=1e-08):
    diff = (received - expected).abs() > atol + rtol * expected.abs()
    return [f"{int(diff.sum())} mismatched"] if bool(diff.any()) else []
"""


def module(check: str):
    """A problem's reference module: `check` (its check_implementation's source) with
    verbose_allclose in its namespace, as `from utils import verbose_allclose` leaves it."""
    made = types.ModuleType("reference")
    exec(UTILS + check, made.__dict__)
    return made


@pytest.fixture(autouse=True)
def no_utils(monkeypatch):
    monkeypatch.delitem(sys.modules, "utils", raising=False)


def test_the_loosest_tolerance_over_the_outputs_is_taken():
    check = module(
        """
def check_implementation(data, output):
    got_a, got_b = output
    reasons = verbose_allclose(got_a, data[0] * 1, rtol=1e-3, atol=1e-4)
    reasons += verbose_allclose(got_b, torch.ones(3), rtol=1e-2)
    return (not reasons, " ".join(reasons))
"""
    )
    out = (torch.arange(4.0), torch.ones(3))
    assert tolerance(check, (torch.arange(4.0),), out, list(out)) == {"atol": 1e-4, "rtol": 1e-2}


@pytest.mark.parametrize(
    "body, half, expected",
    [
        ("return bool(torch.isclose(output, data).all())", False, (1e-08, 1e-05)),
        ("return torch.equal(output, data)", False, (0.0, 0.0)),
        ("torch.testing.assert_close(output, data, rtol=0, atol=0)", False, (0.0, 0.0)),
        ("torch.testing.assert_close(output, data)", True, (1e-5, 1e-3)),  # float16's defaults
    ],
)
def test_torch_comparisons_are_recorded_with_their_defaults(body, half, expected):
    out = torch.linspace(0, 1, 5).to(torch.float16 if half else torch.float32)
    check = module(f"def check_implementation(data, output):\n    {body}\n")
    found = tolerance(check, out.clone(), out, [out])
    assert (found["atol"], found["rtol"]) == expected


def test_a_check_that_compares_no_output_judges_by_itself_if_it_rejects_zeros():
    out = torch.ones(3)
    residual = module(
        """
def check_implementation(data, output):
    return float((output - data).abs().max()) < 1e-3, ""
"""
    )
    assert tolerance(residual, torch.ones(3), out, [out]) == {"custom": True}
    inputs_only = module(  # compares the input with itself, never the output
        """
def check_implementation(data, output):
    return torch.allclose(data, data) and output.shape == data.shape
"""
    )
    with pytest.raises(Skip, match="compares no output and accepts zeros"):
        tolerance(inputs_only, torch.zeros(3), out, [out])
    pairs = module(  # several outputs, as a tuple: zeros replace each
        """
def check_implementation(data, output):
    q, r = output
    return bool(((q @ r) - data).abs().max() < 1e-4), "q r is not the input"
"""
    )
    q, r = torch.eye(2), torch.tensor([[2.0, 1.0], [0.0, 3.0]])
    assert tolerance(pairs, q @ r, (q, r), [q, r]) == {"custom": True}
    named = torch.linalg.qr(q @ r)  # a named tuple, as torch's factorisations return
    assert tolerance(pairs, q @ r, named, list(named)) == {"custom": True}


def test_a_check_that_rejects_the_reference_is_said():
    out = torch.ones(2)
    check = module("def check_implementation(data, output):\n    return False, 'off by one'\n")
    with pytest.raises(Skip, match="rejects the reference's own output: off by one"):
        tolerance(check, out, out, [out])


def test_the_comparisons_are_put_back_after_recording():
    originals = (torch.allclose, torch.isclose, torch.equal, torch.testing.assert_close)
    with pytest.raises(RuntimeError):
        with recording(module("")):
            assert torch.allclose is not originals[0]
            raise RuntimeError("a check that raises")
    assert (torch.allclose, torch.isclose, torch.equal, torch.testing.assert_close) == originals


def test_what_counts_as_passed():
    assert passed((True, "")) and passed("") and passed(True) and passed(None)
    assert not passed((False, "no")) and not passed("mismatch found") and not passed(False)
