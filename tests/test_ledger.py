import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from triton.runtime import interpreter

from judge.workers.ledger import StoreLedger


@pytest.fixture
def ledger(monkeypatch):
    monkeypatch.setattr(interpreter, "_interpreter", interpreter._interpreter)
    found = StoreLedger()
    assert found.install()
    return found


@triton.jit
def fill_first(out_ptr, n, value, BLOCK: tl.constexpr):
    out_ptr = out_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, value, mask=offsets < n)


@triton.jit
def invert_words(image_ptr, n_words, BLOCK: tl.constexpr):
    image_ptr = image_ptr.to(tl.pointer_type(tl.int32))
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n_words
    tl.store(image_ptr + offsets, tl.load(image_ptr + offsets, mask=mask) ^ -1, mask=mask)


@triton.jit
def count_into(out_ptr, BLOCK: tl.constexpr):
    out_ptr = out_ptr.to(tl.pointer_type(tl.int32))
    tl.atomic_add(out_ptr + tl.arange(0, BLOCK) % 2, 1)


def test_elements_changed_outside_triton_are_counted(ledger):
    out = torch.zeros(16)
    before = out.clone()
    ledger.begin()
    fill_first[(1,)](out.data_ptr(), 10, 3.0, BLOCK=16)  # elements 0..9 by Triton
    np.ctypeslib.as_array(out.numpy())[12:15] = 7.0  # 12..14 by NumPy
    ledger.end()
    assert ledger.foreign(out, before) == 3
    ledger.begin()
    ledger.end()
    assert ledger.foreign(out, out.clone()) == 0  # nothing changed


def test_a_wide_store_covers_every_byte_it_writes(ledger):
    image = torch.arange(32, dtype=torch.uint8)
    before = image.clone()
    ledger.begin()
    invert_words[(1,)](image.data_ptr(), 8, BLOCK=8)
    ledger.end()
    assert not torch.equal(image, before) and ledger.foreign(image, before) == 0


def test_atomics_are_triton_writes_and_nothing_is_noted_while_inactive(ledger):
    counts = torch.zeros(2, dtype=torch.int32)
    before = counts.clone()
    ledger.begin()
    count_into[(1,)](counts.data_ptr(), BLOCK=8)
    ledger.end()
    assert counts.tolist() == [4, 4] and ledger.foreign(counts, before) == 0
    before = counts.clone()
    ledger.begin()
    ledger.end()
    fill_first[(1,)](counts.data_ptr(), 1, 1.0, BLOCK=2)  # after the watched call
    assert ledger.foreign(counts, before) == 1
