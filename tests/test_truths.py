import threading
import time
from dataclasses import replace

from judge.core.spec import Case
from judge.judging import truths


def cases(*seeds):
    return [Case(f"N={s}", (("N", s),), s) for s in seeds]


class Made(tuple):
    """A truth's stand-in, (seed, thread name), that counts the worker's copies made of it."""

    def input_paths(self):
        self.copied.append(self[0])
        return {}


def counting(monkeypatch, delay=0.0):
    """Truths stand-ins from the shared cache: (seed, thread name), after `delay` seconds."""
    computed = []
    Made.copied = []

    def get(spec, reference, case):
        time.sleep(delay)
        computed.append(case.seed)
        return Made((case.seed, threading.current_thread().name))

    monkeypatch.setattr(truths.truth_cache, "get", get)
    return computed


def test_a_truth_is_computed_once_per_key_in_the_background(vector_add, monkeypatch):
    computed = counting(monkeypatch)
    found = truths.Truths(vector_add, reference=None)
    one, two = cases(1, 2)
    renamed = replace(one, name="the same inputs")
    assert truths.truth_key(renamed) == truths.truth_key(one)
    with found.computing([one, renamed, two]) as same:
        assert same is found
        seed, thread = found.get(renamed)
        assert seed == 1 and thread.startswith("truth")
        assert found.get(two)[0] == 2
        assert found.get(cases(3)[0]) == (3, threading.current_thread().name)  # not wanted: now
    assert sorted(computed) == [1, 2, 3]
    assert found.get(one)[0] == 1 and len(computed) == 3  # kept


def test_the_worker_s_copies_are_made_in_the_background_except_of_the_timer_s_own_sets(
    vector_add, monkeypatch
):
    counting(monkeypatch)
    found = truths.Truths(vector_add, reference=None)
    wanted = cases(1, 2, 3)
    with found.computing(wanted, timers=wanted[2:]):
        assert [found.get(c)[0] for c in wanted] == [1, 2, 3]
    assert sorted(Made.copied) == [1, 2]


def test_truths_still_to_compute_are_left_undone_on_leaving(vector_add, monkeypatch):
    computed = counting(monkeypatch, delay=0.3)
    found = truths.Truths(vector_add, reference=None)
    with found.computing(cases(1, 2, 3, 4)):
        pass  # an early verdict: the two threads have started on 1 and 2 only
    assert sorted(computed) == [1, 2]
    assert all(found.pending[truths.truth_key(c)].cancelled() for c in cases(3, 4))


def test_expected_outputs_are_sealed_once_per_truth_and_read_back_from_the_file(vector_add):
    from judge.core import truth

    case = Case("N=5000", (("N", 5000),), 7)
    made = truth.reference_truth(vector_add, truth.load_reference(vector_add), case)
    expected = made.outputs["c_ptr"].clone()
    first = truths.Truths(vector_add, reference=None)
    first.done[truths.truth_key(case)] = made
    files = first.output_files(case)
    assert files["c_ptr"]["n"] == 5000 and files["c_ptr"]["dtype"] == "float64"
    assert made.outputs["c_ptr"].equal(expected)  # now mapped from the sealed file
    second = truths.Truths(vector_add, reference=None)  # another judging, the cached truth
    second.done[truths.truth_key(case)] = made
    assert second.output_files(case) == files
