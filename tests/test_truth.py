import numpy as np
import pytest
import torch

from judge import inputs, truth
from judge.spec import Case


def test_reference_truth_is_float64_from_pristine_inputs(vector_add):
    case = Case(name="N=5", sizes=(("N", 5),), seed=3)
    result = truth.reference_truth(vector_add, truth.load_reference(vector_add), case)
    assert set(result.initial) == {"a_ptr", "b_ptr"} and set(result.outputs) == {"c_ptr"}
    assert result.outputs["c_ptr"].dtype == torch.float64
    drawn = inputs.pristine(vector_add, {"N": 5}, 3)
    assert torch.equal(result.initial["a_ptr"], drawn["a_ptr"])
    want = drawn["a_ptr"].double() + drawn["b_ptr"].double()
    assert torch.equal(result.outputs["c_ptr"], want)


def test_read_buffer_checks_the_length(tmp_path):
    path = tmp_path / "buf.bin"
    np.arange(6, dtype=np.float32).tofile(path)
    assert truth.read_buffer(str(path), "float32", 6).tolist() == [0, 1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="expected 7 elements, found 6"):
        truth.read_buffer(str(path), "float32", 7)


def test_truth_cache_serves_a_case_once_and_keeps_within_its_budget(vector_add):
    reference = truth.load_reference(vector_add)
    small, other = (Case(name="N=1000", sizes=(("N", 1000),), seed=s) for s in (1, 2))
    cache = truth.TruthCache(budget_bytes=10**9)
    first = cache.get(vector_add, reference, small)
    assert cache.get(vector_add, reference, small) is first
    assert cache.used == truth.truth_bytes(first) == 1000 * (4 + 4 + 8)

    tight = truth.TruthCache(budget_bytes=truth.truth_bytes(first))
    a = tight.get(vector_add, reference, small)
    tight.get(vector_add, reference, other)  # pushes the first out
    assert len(tight.entries) == 1 and tight.used == truth.truth_bytes(a)
    assert tight.get(vector_add, reference, small) is not a
