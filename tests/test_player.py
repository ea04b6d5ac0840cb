"""The timer's check of a call after its kernels ended (judge.workers.player.checked_after),
run here on CPU tensors in Triton's interpreter: it counts what the parent's check counts."""

import pytest

from judge.core import inputs, truth
from judge.core.spec import Case
from judge.workers import player

CASE = Case(name="N=300", sizes=(("N", 300),), seed=5)


@pytest.fixture
def call(vector_add):
    """A right call's buffers (as the timer's would be after it), their copies made before it,
    and the truths; each test spoils one thing."""
    made = truth.reference_truth(vector_add, truth.load_reference(vector_add), CASE)
    fulls = {
        lay.arg.name: inputs.guarded(lay, made.initial.get(lay.arg.name), "cpu")
        for lay in inputs.layouts(vector_add, CASE.size_map)
    }
    before = {name: fulls[name].clone() for name in ("a_ptr", "b_ptr")}
    c = fulls["c_ptr"]
    g = inputs.guard_elems("float32")
    c[g : g + 300] = made.outputs["c_ptr"].float()
    return vector_add, fulls, before, made.outputs, g


def checked(call):
    spec, fulls, before, truths, _ = call
    return player.checked_after(spec, CASE.size_map, fulls, before, truths, spec.tolerance)


def test_a_right_call_counts_nothing_and_its_largest_error_is_the_rounding(call):
    wrong, worst = checked(call)
    assert wrong == 0 and 0 <= worst < 1e-3


def test_a_wrong_element_an_unwritten_one_and_a_nan_are_each_counted(call):
    _, fulls, _, _, g = call
    c = fulls["c_ptr"]
    c[g + 3] += 1.0
    c[g + 299] = inputs.sentinel("float32")
    c[g + 7] = float("nan")
    wrong, worst = checked(call)
    assert wrong == 3 and worst == float("inf")


def test_a_store_past_the_end_and_a_changed_input_are_counted(call):
    _, fulls, _, _, g = call
    fulls["c_ptr"][g + 300] = 0.0  # the first guard element after the output
    fulls["a_ptr"][g + 10] += 1.0  # an input written
    assert checked(call)[0] == 2
