import ast
import subprocess
import sys
import threading
import time

import pytest
import torch

from judge.core import inputs, truth
from judge.core.spec import Case


def test_reference_truth_is_float64_from_pristine_inputs(vector_add):
    case = Case(name="N=5", sizes=(("N", 5),), seed=3)
    result = truth.reference_truth(vector_add, truth.load_reference(vector_add), case)
    assert set(result.initial) == {"a_ptr", "b_ptr"} and set(result.outputs) == {"c_ptr"}
    assert result.outputs["c_ptr"].dtype == torch.float64
    drawn = inputs.pristine(vector_add, {"N": 5}, 3)
    assert torch.equal(result.initial["a_ptr"], drawn["a_ptr"])
    want = drawn["a_ptr"].double() + drawn["b_ptr"].double()
    assert torch.equal(result.outputs["c_ptr"], want)


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


@pytest.mark.skipif(not truth.CAN_SEAL, reason="needs Linux memfd sealing")
def test_drawn_inputs_are_sealed_for_the_worker_and_no_process_can_change_them(
    vector_add, monkeypatch
):
    monkeypatch.setattr(truth, "SEAL_MIN_BYTES", 0)
    case = Case(name="N=7", sizes=(("N", 7),), seed=5)
    result = truth.reference_truth(vector_add, truth.load_reference(vector_add), case)
    paths = result.input_paths()
    assert set(paths) == {"a_ptr", "b_ptr"}
    drawn = inputs.pristine(vector_add, {"N": 7}, 5)
    script = (
        "import sys, torch\n"
        "from judge.core import inputs\n"
        "path = sys.argv[1]\n"
        "print(inputs.mapped(path, 'float32', 7).tolist())\n"
        "try:\n"
        "    with open(path, 'r+b') as f:\n"
        "        f.write(b'\\0' * 28)\n"
        "    print('written')\n"
        "except OSError:\n"
        "    print('refused')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, paths["a_ptr"]], capture_output=True, text=True, check=True
    )
    values, verdict = done.stdout.splitlines()
    assert ast.literal_eval(values) == drawn["a_ptr"].tolist() and verdict == "refused"
    assert torch.equal(result.initial["a_ptr"], drawn["a_ptr"])
    result.initial["a_ptr"][0] = 1e9  # the parent's own mapping is private, too
    assert torch.equal(truth.Sealed(drawn["a_ptr"]).tensor(torch.float32), drawn["a_ptr"])


def test_lanes_wanting_one_truth_at_once_compute_it_once_and_count_it_once(vector_add):
    reference = truth.load_reference(vector_add)
    calls = []

    def slow_reference(*args):
        calls.append(1)
        time.sleep(0.2)  # both lanes arrive while the first computes
        return reference(*args)

    case = Case(name="N=100", sizes=(("N", 100),), seed=77)
    cache = truth.TruthCache(budget_bytes=10**9)
    results = []
    lanes = [
        threading.Thread(target=lambda: results.append(cache.get(vector_add, slow_reference, case)))
        for _ in range(4)
    ]
    for lane in lanes:
        lane.start()
    for lane in lanes:
        lane.join()
    assert len(calls) == 1 and len(results) == 4
    assert all(r is results[0] for r in results)
    assert cache.used == truth.truth_bytes(results[0]) and len(cache.entries) == 1


def test_small_input_sets_are_not_sealed(vector_add):
    case = Case(name="N=7", sizes=(("N", 7),), seed=5)
    made = truth.reference_truth(vector_add, truth.load_reference(vector_add), case)
    assert made.input_paths() == {} and made.timer_input_paths() == {}


@pytest.mark.skipif(not truth.CAN_SEAL, reason="needs Linux memfd sealing")
def test_lanes_asking_for_a_truth_s_files_at_once_get_one_copy(vector_add, monkeypatch):
    monkeypatch.setattr(truth, "SEAL_MIN_BYTES", 0)
    case = Case(name="N=20000", sizes=(("N", 20000),), seed=9)
    made = truth.reference_truth(vector_add, truth.load_reference(vector_add), case)
    got = []
    lanes = [
        threading.Thread(target=lambda: got.append((made.input_paths(), made.output_files())))
        for _ in range(4)
    ]
    for lane in lanes:
        lane.start()
    for lane in lanes:
        lane.join()
    assert len(got) == 4 and all(g[0] == got[0][0] and g[1] is got[0][1] for g in got)
    assert len(made.files) == 2 and len(made.sealed_outputs) == 1
