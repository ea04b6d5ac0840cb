import math

import pytest
import torch

from judge.core import check, inputs
from judge.core.spec import Arg, Tolerance

TOL = Tolerance(atol=1e-5, rtol=1e-6)
OUT = Arg(name="c_ptr", role="out", dtype="float32", shape=("N",))
IN = Arg(name="a_ptr", role="in", dtype="float32", shape=("N",), draw=None)


def buffer(n, values=None, arg=OUT):
    lay = inputs.Layout(arg, n, inputs.guard_elems(arg.dtype))
    full = inputs.guarded(lay, None if values is None else torch.tensor(values), "cpu")
    return lay, full


def test_tolerance_rejects_nan_and_accepts_equal_infinities():
    lay, full = buffer(4)
    inputs.data_view(full, lay).copy_(torch.tensor([1.0, float("nan"), float("inf"), 1.1]))
    exp = torch.tensor([1.0, 1.0, float("inf"), 1.0], dtype=torch.float64)
    result = check.check_output(lay, full, exp, TOL, was_output=True)
    assert [m.index for m in result.first] == [1, 3]
    assert (result.nan_count, result.unwritten) == (1, 0)
    lay, full = buffer(1)
    inputs.data_view(full, lay).fill_(math.nan)  # a NaN the kernel wrote, not the sentinel
    nan_both = check.check_output(lay, full, torch.tensor([math.nan]), TOL, was_output=True)
    assert nan_both.ok


def test_check_output_reports_mismatches_and_unwritten():
    lay, full = buffer(6)
    data = inputs.data_view(full, lay)
    data[:4] = torch.tensor([1.0, 2.0, 3.0, 5.0])
    expected = torch.arange(1, 7, dtype=torch.float64)
    result = check.check_output(lay, full, expected, TOL, was_output=True)
    assert not result.ok
    assert result.mismatches == 3 and result.unwritten == 2 and result.nan_count == 0
    assert [m.index for m in result.first] == [3, 4, 5]
    assert result.first[0].got == 5.0 and result.first[0].expected == 4.0
    assert result.max_error == math.inf


def test_guard_band_writes_are_counted_on_each_side():
    lay, full = buffer(8)
    inputs.data_view(full, lay).copy_(torch.arange(8.0))
    full[lay.guard + 8 : lay.guard + 8 + 54] = 0.0  # 54 elements past the end
    full[lay.guard - 2 : lay.guard] = 0.0  # 2 before the start
    result = check.check_output(lay, full, torch.arange(8.0, dtype=torch.float64), TOL, True)
    assert (result.guard_before, result.guard_after, result.mismatches) == (2, 54, 0)
    assert not result.ok
    assert "wrote 54 elements past the end of c_ptr" in check.hints([result])[0]


def test_changed_input_is_detected_byte_for_byte():
    initial = torch.tensor([1.0, -0.0, 3.0])
    lay, full = buffer(3, [1.0, -0.0, 3.0], arg=IN)
    assert check.check_input(lay, full, initial).ok
    inputs.data_view(full, lay)[1] = 0.0  # -0.0 == 0.0 numerically, but not in bytes
    result = check.check_input(lay, full, initial)
    assert not result.ok and result.input_changed == 1
    assert "changed the input a_ptr" in check.hints([result])[0]


def test_written_prefix_and_its_hints():
    lay, full = buffer(3000)
    inputs.data_view(full, lay)[:1024] = 1.0
    result = check.check_output(lay, full, torch.ones(3000, dtype=torch.float64), TOL, True)
    assert (result.written_prefix, result.unwritten, result.mismatches) == (1024, 1976, 1976)
    assert "tl.program_id(0)" in check.hints([result])[0]
    assert "round down" in check.hints([_dummy(1025, 1024)])[0]
    assert "round down" in check.hints([_dummy(1100, 1000)])[0]
    assert "nothing was written" in check.hints([_dummy(10, 0)])[0]
    inputs.data_view(full, lay)[2000] = 1.0  # not a prefix any more
    result = check.check_output(lay, full, torch.ones(3000, dtype=torch.float64), TOL, True)
    assert result.written_prefix is None


def test_max_error_is_reported_for_passing_buffers_too():
    lay, full = buffer(2)
    inputs.data_view(full, lay).copy_(torch.tensor([1.0, 2.0]))
    expected = torch.tensor([1.0, 2.0 + 1e-6], dtype=torch.float64)
    result = check.check_output(lay, full, expected, TOL, True)
    assert result.ok and result.max_error_index == 1
    assert result.max_error == pytest.approx(1e-6)


def test_precision_hint():
    lay, full = buffer(4)
    expected = torch.tensor([1000.1, 2000.2, 3000.3, 4000.4], dtype=torch.float64)
    inputs.data_view(full, lay).copy_(expected.half().float())
    result = check.check_output(lay, full, expected, TOL, True)
    assert "float16" in check.hints([result])[0]


def test_discriminates():
    assert check.discriminates(torch.full((4,), 5.0), TOL)
    assert not check.discriminates(torch.zeros(4), TOL)
    assert not check.discriminates(torch.zeros(0), TOL)


def _dummy(n, prefix):
    from judge.core.results import BufferCheck

    return BufferCheck(name="c_ptr", ok=False, total=n, written_prefix=prefix)


def test_an_infinite_reference_is_met_only_by_the_same_infinity():
    lay, full = buffer(3)
    inputs.data_view(full, lay).copy_(torch.tensor([0.0, float("inf"), 3.4e38]))
    exp = torch.tensor([float("inf")] * 3, dtype=torch.float64)
    result = check.check_output(lay, full, exp, Tolerance(atol=0.0, rtol=1e-6), was_output=True)
    assert [m.index for m in result.first] == [0, 2]


def test_a_float8_output_is_compared_and_its_unwritten_elements_found():
    out = Arg(name="y_ptr", role="out", dtype="float8_e4m3fn", shape=("N",))
    lay = inputs.Layout(out, 4, inputs.guard_elems("float8_e4m3fn"))
    full = inputs.guarded(lay, None, "cpu")
    inputs.data_view(full, lay)[:2] = torch.tensor([1.0, -0.5]).to(torch.float8_e4m3fn)
    expected = torch.tensor([1.0, -0.5, 2.0, 3.0], dtype=torch.float64)
    result = check.check_output(lay, full, expected, Tolerance(0.0, 0.0), was_output=True)
    assert (result.mismatches, result.unwritten, result.written_prefix) == (2, 2, 2)
    inputs.data_view(full, lay)[2:] = torch.tensor([2.0, 3.0]).to(torch.float8_e4m3fn)
    assert check.check_output(lay, full, expected, Tolerance(0.0, 0.0), was_output=True).ok


def test_uint32_outputs_are_compared_above_the_int32_range():
    out = Arg(name="z_ptr", role="out", dtype="uint32", shape=("N",))
    lay = inputs.Layout(out, 3, inputs.guard_elems("uint32"))
    full = inputs.guarded(lay, None, "cpu")
    expected = torch.tensor([0, 1 << 31, 0xFFFFFFFF], dtype=torch.int64).to(torch.uint32)
    inputs.data_view(full, lay).copy_(expected)
    assert check.check_output(lay, full, expected, Tolerance(0.0, 0.0), was_output=True).ok
    inputs.data_view(full, lay)[2] = torch.tensor(0xFFFFFFFE, dtype=torch.int64).to(torch.uint32)
    wrong = check.check_output(lay, full, expected, Tolerance(0.0, 0.0), was_output=True)
    assert wrong.mismatches == 1 and wrong.first[0].expected == float(0xFFFFFFFF)


@pytest.mark.parametrize("seed", range(6))
def test_a_buffer_checked_in_small_chunks_gets_the_same_report(monkeypatch, seed):
    """The counts, the first mismatches, the largest error and the written prefix do not
    depend on where the chunks end."""
    g = torch.Generator().manual_seed(seed)
    n = 97
    expected = torch.rand(n, generator=g, dtype=torch.float64)
    lay, full = buffer(n)
    data = inputs.data_view(full, lay)
    data.copy_(expected)
    kind = seed % 3
    if kind == 0:  # scattered wrong values, NaNs and infinities
        picks = torch.randperm(n, generator=g)[:20]
        data[picks[:10]] += 1.0
        data[picks[10:15]] = math.nan
        data[picks[15:]] = math.inf
    elif kind == 1:  # only a prefix written
        data[40:] = inputs.sentinel("float32")
    else:  # a hole, then written again
        data[30:50] = inputs.sentinel("float32")
    whole = check.check_output(lay, full, expected, TOL, was_output=True)
    monkeypatch.setattr(check, "CHUNK", 7)
    chunked = check.check_output(lay, full, expected, TOL, was_output=True)
    assert repr(chunked) == repr(whole)  # NaN, which a Mismatch may hold, equals nothing
    assert whole.written_prefix == (40 if kind == 1 else None)
    assert whole.unwritten == {0: 0, 1: 57, 2: 20}[kind]


def test_an_output_its_own_check_judges_is_held_to_its_guards_and_the_sentinel_only():
    lay, full = buffer(6)
    data = inputs.data_view(full, lay)
    data[:4] = torch.tensor([9.0, -9.0, 0.5, 7.0])  # any values: the puzzle's check judges them
    written = check.check_written(lay, full, was_output=True)
    assert not written.ok and (written.unwritten, written.written_prefix) == (2, 4)
    data[4:] = 1.0
    assert check.check_written(lay, full, was_output=True).ok
    full[lay.guard + 6] = 0.0  # past the end
    assert check.check_written(lay, full, was_output=True).guard_after == 1
