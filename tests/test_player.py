"""The timer's check of a call after its kernels ended (judge.workers.player.checked_after),
run here on CPU tensors in Triton's interpreter: it counts what the parent's check counts."""

import pytest
import torch
from descriptors import recorded_descriptor

from judge.core import inputs, registry, truth
from judge.core.spec import Case
from judge.workers import player
from judge.workers.referee import Rejected

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


@pytest.mark.parametrize("pid", ["vector_add", "sort", "histogram", "gemm_fp16"])
def test_the_timers_warm_up_checks_buffers_it_made_consistent(pid):
    """The check the timer makes ahead runs on every kind of buffer (in, out, inout; floats,
    halves and integers) and finds its own buffers right: it may not count wrong elements."""
    spec = registry.get(pid, registry.puzzles_root())
    smallest = min(
        spec.tests, key=lambda c: sum(lay.total for lay in inputs.layouts(spec, c.size_map))
    )
    tolerance = spec.tolerance.at(smallest.size_map)
    assert player.warm_up(spec, smallest.size_map, tolerance, device="cpu") == (0, 0.0)


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


def test_a_wrong_call_described_here_reads_back_as_the_parents_own_check(call):
    """The account the timer sends of a large wrong call (player.described), through JSON as
    the channel carries it, is what the parent's check of the same buffers gives."""
    import json

    from judge.core import check
    from judge.judging import verify

    spec, fulls, _, truths, g = call
    c = fulls["c_ptr"]
    c[g + 3] += 1.0
    c[g + 250 : g + 300] = inputs.sentinel("float32")  # the last 50 never written
    fulls["a_ptr"][g + 10] += 1.0
    made = truth.reference_truth(spec, truth.load_reference(spec), CASE)
    sent = player.described(spec, CASE.size_map, fulls, made.initial, truths, spec.tolerance)
    layouts = inputs.layouts(spec, CASE.size_map)
    back = verify.buffer_checks(CASE, json.loads(json.dumps(sent)), layouts)
    tolerance = spec.tolerance.at(CASE.size_map)
    here = [
        check.check_input(lay, fulls[lay.arg.name], made.initial[lay.arg.name])
        if lay.arg.role == "in"
        else check.check_output(lay, fulls[lay.arg.name], truths[lay.arg.name], tolerance, True)
        for lay in layouts
    ]
    assert repr(back) == repr(here)
    by_name = {b.name: b for b in back}
    assert by_name["a_ptr"].input_changed == 1 and by_name["c_ptr"].unwritten == 50
    assert by_name["c_ptr"].mismatches == 51 and by_name["c_ptr"].first[0].index == 3


@pytest.mark.parametrize(
    "garbled",
    [[], [{"name": "a_ptr"}], "x", [{"name": "b_ptr", "ok": True}] * 3],
)
def test_a_garbled_account_is_a_protocol_error(vector_add, garbled):
    from judge.judging import verify
    from judge.workers.channel import WorkerReported

    layouts = inputs.layouts(vector_add, CASE.size_map)
    with pytest.raises(WorkerReported, match="a garbled account of its buffers"):
        verify.buffer_checks(CASE, garbled, layouts)


def test_a_kernel_asking_its_launcher_for_more_scratch_than_a_call_may_hold_is_refused():
    # The size is read from compiled metadata the worker wrote; the refusal comes before any
    # allocation, so it holds on a machine without a GPU too.
    with pytest.raises(ValueError, match="global scratch"):
        player.launch_scratch(player.MAX_SCRATCH_BYTES + 1, 128, None)


def library_sets(pid: str, count: int = 2):
    """A puzzle's smallest test shape as the timer's input sets on the CPU, and its reference."""
    spec = registry.get(pid, registry.puzzles_root())
    case = min(spec.tests, key=lambda c: sum(lay.total for lay in inputs.layouts(spec, c.size_map)))
    tolerance = spec.tolerance.at(case.size_map)
    sets = [
        player.CheckedSet(
            spec,
            case.size_map,
            inputs.pristine(spec, case.size_map, seed),
            None,
            tolerance,
            device="cpu",
        )
        for seed in range(11, 11 + count)
    ]
    return spec, case.size_map, sets, truth.load_reference(spec)


def wrong_after_a_call(one, call) -> int:
    """The wrong elements of one call on a set reset first, as the timer's loop makes it."""
    counter = torch.zeros(1, dtype=torch.int64)
    one.reset()
    call.play(one.bases, one.scratch)
    one.wrong(counter)
    return int(counter.item())


def test_a_library_call_plays_on_each_sets_own_buffers_and_is_held_to_its_first_answers():
    """The timer times the reference and the library calls in the loop that times a submission
    (player.timed): each call on the set it is handed, checked after it like a submission's."""
    spec, sizes, sets, reference = library_sets("vector_add")
    call = player.LibraryCall(reference, spec, sizes, sets)
    for one in sets:
        one.own_answers(call)
        a, b, _ = (inputs.data_view(one.fulls[lay.arg.name], lay) for lay in one.layouts)
        assert bool((one.truths["c_ptr"] == (a + b).double()).all())
    first, second = (one.truths["c_ptr"] for one in sets)
    assert not bool((first == second).all())  # two sets, two sums
    assert [wrong_after_a_call(one, call) for one in sets] == [0, 0]

    def off_by_one(a, b, c, N):
        reference(a, b, c, N)
        c[0] += 1.0

    spoiled = player.LibraryCall(off_by_one, spec, sizes, sets)
    assert [wrong_after_a_call(one, spoiled) for one in sets] == [1, 1]


def test_a_library_call_on_an_in_place_buffer_starts_from_its_state_before_a_call_every_time():
    # gemm_fp16 reads the old C and overwrites it: played twice without the set's reset, the
    # second call would scale the first one's answer.
    spec, sizes, sets, reference = library_sets("gemm_fp16", count=1)
    [one] = sets
    call = player.LibraryCall(reference, spec, sizes, sets)
    one.own_answers(call)
    assert wrong_after_a_call(one, call) == 0 and wrong_after_a_call(one, call) == 0
    counter = torch.zeros(1, dtype=torch.int64)
    call.play(one.bases, one.scratch)  # no reset: the old C is the last answer
    one.wrong(counter)
    assert int(counter.item()) > 0


def test_a_solve_call_is_handed_each_buffers_address_as_the_judge_hands_it():
    # library_race.py times solutions in process through the same loop: solve() takes addresses.
    spec, sizes, sets, _ = library_sets("vector_add")
    seen = []
    call = player.LibraryCall(lambda *args: seen.append(args), spec, sizes, sets, pointers=True)
    for one in sets:
        call.play(one.bases, one.scratch)
        views = [inputs.data_view(one.fulls[lay.arg.name], lay) for lay in one.layouts]
        assert seen.pop() == (*(v.data_ptr() for v in views), sizes["N"])


DESC_KIND = "tensordesc<fp16[64, 64]>"


# 16 rows of 64 float16, 512 bytes into k_ptr's allocation
DESCRIPTOR = recorded_descriptor({"buf": "k_ptr", "at": 512}, [16, 64], [64, 64])


@pytest.mark.parametrize(
    "kind", [DESC_KIND, "tensordesc<fp16[64, 64],NVMMASharedLayout(swizzle_byte_width=128)>"]
)
def test_a_recorded_descriptor_is_rebuilt_on_the_timers_own_buffer(kind):
    """Gluon's too, as one of a plain block: the launcher takes its layout from the kernel."""
    bases = {"k_ptr": (0x7F0000000000, 512 + 16 * 64 * 2)}
    built = player.Player.resolve(DESCRIPTOR, bases, [], kind)
    assert built.base.data_ptr() == 0x7F0000000000 + 512
    assert built.base.dtype == torch.float16
    assert list(built.shape) == [16, 64] and list(built.block_shape) == [64, 64]


def test_a_recorded_descriptor_reaching_one_element_past_its_buffer_is_refused():
    bases = {"k_ptr": (0x7F0000000000, 512 + 16 * 64 * 2 - 2)}
    with pytest.raises(Rejected, match="reaches past the end of the buffer") as refused:
        player.Player.resolve(DESCRIPTOR, bases, [], DESC_KIND)
    assert refused.value.kind == "not-replayable"


def test_the_timed_calls_are_tallied_by_set_each_run_rotating_from_the_first():
    """Three runs (the estimate, the warm-up, the timed calls) over three sets: the first wrong
    call's set is counted from its own run's start, and so is every set's count."""
    counts = player.tally([[0, 0, 0, 0], [0, 7], [0, 0, 9, 0, 0, 9]], 3)
    assert counts["calls"] == 12 and counts["first_wrong"] == 5
    assert counts["first_wrong_set"] == 1  # the warm-up's second call, on set 2
    assert counts["wrong_elements"] == 7 and counts["wrong_calls"] == 3
    assert counts["calls_by_set"] == [5, 4, 3] and counts["wrong_by_set"] == [0, 1, 2]
    assert player.UNTIMED["calls"] == 0 and player.UNTIMED["first_wrong"] is None
