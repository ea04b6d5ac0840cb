import math
import os
import select

import numpy as np
import pytest
import torch

from judge.core import inputs
from judge.core.spec import Arg, Draw


def test_draws_are_deterministic_and_independent_per_argument(vector_add):
    first = inputs.pristine(vector_add, {"N": 1000}, seed=5)
    again = inputs.pristine(vector_add, {"N": 1000}, seed=5)
    other = inputs.pristine(vector_add, {"N": 1000}, seed=6)
    assert set(first) == {"a_ptr", "b_ptr"}  # outputs are not drawn
    assert torch.equal(first["a_ptr"], again["a_ptr"])
    assert not torch.equal(first["a_ptr"], first["b_ptr"])
    assert not torch.equal(first["a_ptr"], other["a_ptr"])
    assert first["a_ptr"].dtype == torch.float32
    assert -1000 <= float(first["a_ptr"].min()) and float(first["a_ptr"].max()) < 1000


def test_mixed_draw_has_zeros_negatives_and_magnitudes():
    arg = Arg(
        name="x",
        role="in",
        dtype="float32",
        shape=("N",),
        draw=Draw(dist="uniform", low=-1e6, high=1e6),
    )
    x = inputs.draw_input(arg, 10_000, seed=1, override="mixed")
    assert (x == 0).any() and (x < 0).any() and (x > 0).any()
    magnitudes = x[x != 0].abs()
    assert float(magnitudes.min()) < 1e-2 and float(magnitudes.max()) > 1e2


def test_randint_draw():
    arg = Arg(name="h", role="in", dtype="int32", shape=("N",), draw=Draw("randint", 0, 7))
    x = inputs.draw_input(arg, 1000, seed=3)
    assert x.dtype == torch.int32 and int(x.min()) == 0 and int(x.max()) == 6


@pytest.mark.parametrize(
    "draw, override",
    [(Draw("uniform", -2, 3), ""), (Draw("normal", std=2.0), ""), (Draw("randint", 0, 9), ""),
     (Draw("uniform", -2, 3), "mixed")],
)  # fmt: skip
def test_a_large_draw_fills_its_chunks_side_by_side_each_from_a_generator_of_its_own(
    draw, override, monkeypatch
):
    dtype = "int32" if draw.dist == "randint" else "float32"
    arg = Arg(name="x", role="in", dtype=dtype, shape=("N",), draw=draw)
    monkeypatch.setattr(inputs, "DRAW_CHUNK", 1000)
    monkeypatch.setattr(inputs, "_drawing", None)
    monkeypatch.setattr(inputs, "DRAW_THREADS", 1)
    alone = inputs.draw_input(arg, 3500, seed=8, override=override)
    monkeypatch.setattr(inputs, "_drawing", None)
    monkeypatch.setattr(inputs, "DRAW_THREADS", 4)
    side_by_side = inputs.draw_input(arg, 3500, seed=8, override=override)
    assert torch.equal(alone, side_by_side)  # the threads change nothing
    # the first chunk is what one generator seeded by the argument alone draws
    assert torch.equal(inputs.draw_input(arg, 1000, seed=8, override=override), alone[:1000])
    chunks = [alone[i : i + 1000] for i in range(0, 3500, 1000)]
    assert len({tuple(c[:8].tolist()) for c in chunks}) == 4  # no chunk repeats another


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_process_forked_after_a_large_draw_draws_with_threads_of_its_own(monkeypatch):
    arg = Arg(name="x", role="in", dtype="float32", shape=("N",))
    monkeypatch.setattr(inputs, "DRAW_CHUNK", 1000)
    want = inputs.draw_input(arg, 5000, seed=2)  # this process's threads exist now
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the parent's threads are not here: a pool that waited for them would hang
        try:
            same = torch.equal(inputs.draw_input(arg, 5000, seed=2), want)
            os.write(write, b"1" if same else b"0")
        finally:
            os._exit(0)
    os.close(write)
    try:
        ready, _, _ = select.select([read], [], [], 30)
        assert ready and os.read(read, 1) == b"1"
    finally:
        os.waitpid(child, 0) if ready else os.kill(child, 9)
        os.close(read)


def test_sentinels_are_nan_for_floats_and_fixed_for_ints():
    assert math.isnan(float(inputs.sentinel("float32")))
    assert math.isnan(float(inputs.sentinel("float16")))
    assert math.isnan(float(inputs.sentinel("bfloat16")))
    assert int(inputs.sentinel("int32")) == 0x5A5A5A5A


def test_guarded_layout_keeps_data_aligned_and_guards_patterned(vector_add):
    lay = inputs.layouts(vector_add, {"N": 37})[2]  # c_ptr, an output
    full = inputs.guarded(lay, None, "cpu")
    data = inputs.data_view(full, lay)
    assert data.data_ptr() % 16 == 0
    assert lay.total == 37 + 2 * (inputs.GUARD_BYTES // 4)
    assert bool(data.isnan().all())
    assert bool((full[: lay.guard].view(torch.uint8) == inputs.GUARD_BYTE).all())
    a_lay = inputs.layouts(vector_add, {"N": 37})[0]  # a_ptr, an input: NaN guards
    a_full = inputs.guarded(a_lay, torch.zeros(37), "cpu")
    assert bool(a_full[: a_lay.guard].isnan().all()) and bool(a_full[-a_lay.guard :].isnan().all())
    data.fill_(1.0)
    inputs.refill(full, lay, None)
    assert bool(data.isnan().all())


def test_call_args_follow_the_signature(vector_add):
    args = inputs.call_args(vector_add, {"N": 4}, {"a_ptr": 1, "b_ptr": 2, "c_ptr": 3})
    assert args == [1, 2, 3, 4]


def test_mapped_reads_a_file_and_checks_its_length(tmp_path):
    path = tmp_path / "buf.bin"
    np.arange(6, dtype=np.float32).tofile(path)
    assert inputs.mapped(str(path), "float32", 6).tolist() == [0, 1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="expected 7 elements, found 6"):
        inputs.mapped(str(path), "float32", 7)
    zeros = tmp_path / "a.bin"
    zeros.write_bytes(bytes(12))
    assert inputs.mapped(str(zeros), "float32", 3).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="expected 4 elements, found 3"):
        inputs.mapped(str(zeros), "float32", 4)


def test_sentinels_of_uint32_and_float8():
    assert int(inputs.sentinel("uint32")) == 0x5A5A5A5A
    for dtype in ("float8_e4m3fn", "float8_e5m2"):
        sentinel = inputs.sentinel(dtype)
        assert math.isnan(float(sentinel))
        # not the NaN a positive NaN converts to (a GPU's arithmetic makes positive NaNs), so
        # that a NaN a kernel wrote is not taken for an element it never wrote
        made = torch.tensor([math.nan]).to(inputs.torch_dtype(dtype))
        assert not (inputs.as_bits(made) == inputs.as_bits(sentinel)).any()


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2"])
def test_float8_inputs_are_drawn_and_guarded_by_nans(dtype):
    arg = Arg(name="x", role="in", dtype=dtype, shape=("N",), draw=Draw("uniform", -2.0, 2.0))
    x = inputs.draw_input(arg, 500, seed=4)
    assert x.dtype == inputs.torch_dtype(dtype)
    assert -2.0 <= float(x.double().min()) and float(x.double().max()) <= 2.0
    lay = inputs.Layout(arg, 500, inputs.guard_elems(dtype))
    assert lay.guard == inputs.GUARD_BYTES  # one byte an element
    full = inputs.guarded(lay, x, "cpu")
    assert full[: lay.guard].double().isnan().all() and full[-lay.guard :].double().isnan().all()
    assert torch.equal(inputs.as_bits(inputs.data_view(full, lay)), inputs.as_bits(x))
    out = inputs.guarded(inputs.Layout(Arg("y", "out", dtype, ("N",)), 500, lay.guard), None, "cpu")
    assert inputs.data_view(out, lay).double().isnan().all()


def test_uint32_draws_cover_the_whole_range():
    arg = Arg(name="w", role="in", dtype="uint32", shape=("N",), draw=Draw("randint", 0, 1 << 32))
    w = inputs.draw_input(arg, 4000, seed=2)
    assert w.dtype == torch.uint32
    assert int(w.double().max()) > (1 << 31)  # beyond int32: unsigned, not wrapped negative
    lay = inputs.Layout(Arg("z", "out", "uint32", ("N",)), 4, inputs.guard_elems("uint32"))
    data = inputs.data_view(inputs.guarded(lay, None, "cpu"), lay)
    assert data.double().tolist() == [float(0x5A5A5A5A)] * 4


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3fn", "float8_e5m2", "uint32"])
def test_stored_arrays_keep_every_bit(dtype):
    values = torch.tensor([0.0, -1.5, 3.0, 448.0]).to(inputs.torch_dtype(dtype))
    array = inputs.to_numpy(values, dtype)
    expected = {"bfloat16": np.int16, "uint32": np.uint32}.get(dtype, np.uint8)
    assert array.dtype == expected
    back = inputs._from_numpy(array, dtype)
    assert back.dtype == values.dtype and torch.equal(inputs.as_bits(back), inputs.as_bits(values))
