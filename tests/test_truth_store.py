import gc
import json
import os
import shutil

import pytest
import torch

from judge.core import registry, truth, truth_store
from judge.core.spec import Case

CASE = Case(name="N=3000", sizes=(("N", 3000),), seed=7)


@pytest.fixture(autouse=True)
def store_on(monkeypatch):
    """The store at its default budget (tests/conftest.py turns it off elsewhere)."""
    monkeypatch.delenv("TPUZZLE_TRUTH_DISK_MB")


@pytest.fixture
def keep_every_truth(monkeypatch):
    """Every truth counts as slow to compute, so each is kept."""
    monkeypatch.setattr(truth_store, "KEEP_MIN_S", 0.0)
    monkeypatch.setattr(truth_store, "READ_BYTES_PER_S", float("inf"))


@pytest.fixture
def own_vector_add(tmp_path, puzzles_root):
    """A copy of vector_add the test may edit."""
    shutil.copytree(puzzles_root / "vector_add", tmp_path / "vector_add")
    return lambda: registry.get("vector_add", tmp_path)


class Counted:
    """The puzzle's reference, counting its calls."""

    def __init__(self, spec):
        self.reference, self.calls = truth.load_reference(spec), 0

    def __call__(self, *args):
        self.calls += 1
        return self.reference(*args)


def test_a_kept_truth_is_read_back_equal_without_calling_the_reference(
    vector_add, keep_every_truth
):
    reference = Counted(vector_add)
    first = truth.reference_truth(vector_add, reference, CASE)
    again = truth.reference_truth(vector_add, reference, CASE)
    assert reference.calls == 1
    for name in first.initial:
        assert torch.equal(first.initial[name], again.initial[name])
    assert torch.equal(first.outputs["c_ptr"], again.outputs["c_ptr"])
    assert again.outputs["c_ptr"].dtype == torch.float64


def test_a_fast_truth_is_not_worth_a_file(vector_add):
    truth.reference_truth(vector_add, truth.load_reference(vector_add), CASE)
    assert not truth_store.root().exists() or not any(truth_store.root().iterdir())
    assert truth_store.worth_keeping(12.0, 10**9) and not truth_store.worth_keeping(0.5, 10**9)
    # a gigabyte reads back in a third of a second: 0.6 s of drawing and computing is worth it
    assert truth_store.worth_keeping(0.6, 10**9)


def test_editing_the_spec_or_the_reference_or_a_file_beside_them_changes_the_key(own_vector_add):
    spec = own_vector_add()
    before = truth_store.key(spec, CASE)
    assert truth_store.key(spec, Case("N=3000", (("N", 3000),), 8)) != before  # another seed
    assert truth_store.key(spec, Case("other name", (("N", 3000),), 7)) == before
    reference = spec.directory / "reference.py"
    reference.write_text(reference.read_text() + "\n# edited\n")
    after_reference = truth_store.key(own_vector_add(), CASE)
    assert after_reference != before
    (spec.directory / "cases").mkdir()
    (spec.directory / "cases" / "0.npz").write_bytes(b"stored inputs")
    after_inputs = truth_store.key(own_vector_add(), CASE)
    assert after_inputs != after_reference
    (spec.directory / "solutions" / "correct" / "mine.py").write_text("# a solution")
    assert truth_store.key(own_vector_add(), CASE) == after_inputs  # no truth follows from it


def test_a_damaged_file_is_not_believed_and_the_truth_is_computed_again(
    vector_add, keep_every_truth
):
    reference = Counted(vector_add)
    truth.reference_truth(vector_add, reference, CASE)
    (output,) = truth_store.root().glob("*/outputs.c_ptr.bin")
    output.write_bytes(output.read_bytes()[:-8])  # a file cut short
    again = truth.reference_truth(vector_add, reference, CASE)
    assert reference.calls == 2 and again.outputs["c_ptr"].numel() == 3000


def test_the_budget_lets_the_truths_saving_least_per_byte_go_first(monkeypatch):
    one = {"x": torch.ones(1000, dtype=torch.float64)}  # 8000 bytes each
    monkeypatch.setenv("TPUZZLE_TRUTH_DISK_MB", str(2.5 * 8000 / 2**20))
    assert truth_store.keep("slow", one, {}, seconds=30.0)
    assert truth_store.keep("cheap", one, {}, seconds=2.0)
    assert not truth_store.keep("cheapest", one, {}, seconds=1.0)  # worth less than all kept
    assert truth_store.keep("slower", one, {}, seconds=40.0)  # the cheap one makes room
    assert {p.name for p in truth_store.root().iterdir() if p.is_dir()} == {"slow", "slower"}
    os.utime(truth_store.root() / "slow" / "meta.json", (0, 0))  # read long ago
    assert truth_store.keep("as_slow", one, {}, seconds=30.0)  # equals: the least recent goes
    assert {p.name for p in truth_store.root().iterdir() if p.is_dir()} == {"slower", "as_slow"}
    assert truth_store.load("slow") is None and truth_store.load("as_slow") is not None


def test_a_budget_of_zero_keeps_nothing(vector_add, keep_every_truth, monkeypatch):
    monkeypatch.setenv("TPUZZLE_TRUTH_DISK_MB", "0")
    reference = Counted(vector_add)
    truth.reference_truth(vector_add, reference, CASE)
    truth.reference_truth(vector_add, reference, CASE)
    assert reference.calls == 2 and not truth_store.root().exists()


def test_kept_truths_lie_where_no_worker_may_look(vector_add, tmp_path):
    from judge.workers import launcher

    forbidden = launcher.forbidden_dirs(
        vector_add.directory / "puzzle.yaml", tmp_path / "mine.py", dict(os.environ)
    )
    assert any(d == truth_store.root() or d in truth_store.root().parents for d in forbidden)


def test_every_dtype_round_trips(keep_every_truth):
    tensors = {
        "h": torch.arange(5, dtype=torch.float16),
        "u": torch.tensor([0, 1, 2**32 - 1], dtype=torch.int64).to(torch.uint32),
        "b": torch.tensor([True, False]),
        "e": torch.empty(0, dtype=torch.float32),
    }
    if hasattr(torch, "float8_e4m3fn"):
        tensors["f8"] = torch.arange(4, dtype=torch.float32).to(torch.float8_e4m3fn)
    assert truth_store.keep("round", tensors, {"m": torch.ones(2, 3)}, seconds=1.0)
    initial, outputs, _ = truth_store.load("round")
    assert outputs["m"].shape == (2, 3)
    for name, tensor in tensors.items():
        assert initial[name].dtype == tensor.dtype
        assert torch.equal(initial[name].view(torch.uint8), tensor.view(torch.uint8))


def test_an_inout_buffer_is_counted_once_as_drawn_and_once_as_expected():
    drawn, expected = torch.ones(100, dtype=torch.float32), torch.ones(100, dtype=torch.float64)
    assert truth_store.keep("inout", {"x": drawn}, {"x": expected}, seconds=1.0)
    meta = json.loads((truth_store.root() / "inout" / "meta.json").read_text())
    assert meta["nbytes"] == 100 * 4 + 100 * 8
    initial, outputs, _ = truth_store.load("inout")
    assert initial["x"].dtype == torch.float32 and outputs["x"].dtype == torch.float64


@pytest.mark.skipif(not truth.CAN_SEAL, reason="needs Linux memfd sealing")
def test_the_timer_reads_a_kept_truth_from_the_store_s_files_and_the_worker_a_sealed_copy(
    vector_add, keep_every_truth, monkeypatch
):
    monkeypatch.setattr(truth, "SEAL_MIN_BYTES", 0)
    counted = Counted(vector_add)
    made = truth.reference_truth(vector_add, counted, CASE)
    kept = truth.reference_truth(vector_add, counted, CASE)
    assert counted.calls == 1 and kept.kept and not made.kept
    timer_inputs, outputs = kept.timer_input_paths(), kept.output_files()
    shutil.rmtree(truth_store.root())  # the store makes room: what is held stays readable
    for name, path in timer_inputs.items():
        assert os.readlink(path).startswith(str(truth_store.root()))
        assert os.readlink(path).endswith("(deleted)")
        mapped = torch.from_file(path, shared=False, size=3000 * 4, dtype=torch.uint8)
        assert torch.equal(mapped.view(torch.float32), made.initial[name])
    assert torch.equal(outputs["c_ptr"].tensor(torch.float64), made.outputs["c_ptr"])
    assert not kept.sealed_outputs  # nothing copied for the timer
    # the worker never gets the store's files: a sealed copy, which nobody can write
    worker = kept.input_paths()
    assert set(worker) == {"a_ptr", "b_ptr"}
    for path in worker.values():
        assert os.readlink(path).startswith("/memfd:tpuzzle-input")
        with pytest.raises(OSError):
            with open(path, "r+b") as f:
                f.write(b"\0" * 4)
    # a truth computed here has no store's files: the timer reads the worker's sealed copies
    assert made.timer_input_paths() == made.input_paths()
    assert set(made.output_files()) == {"c_ptr"} and made.sealed_outputs


def test_a_small_kept_truth_holds_no_file_of_its_inputs_open(vector_add, keep_every_truth):
    truth.reference_truth(vector_add, truth.load_reference(vector_add), CASE)
    kept = truth.reference_truth(vector_add, truth.load_reference(vector_add), CASE)
    assert kept.kept["initial"] == {} and set(kept.kept["outputs"]) == {"c_ptr"}
    assert kept.timer_input_paths() == {}  # the timer draws a small set again, as the worker
    first = kept.initial["a_ptr"].clone()
    gc.collect()  # the inputs' files closed: their mapping stays
    assert torch.equal(kept.initial["a_ptr"], first)


def test_usage_counts_the_kept_truths_and_the_disk_they_lie_on(monkeypatch):
    assert truth_store.usage()[:2] == (0, 0)  # nothing kept yet: the folder does not exist
    one = {"x": torch.ones(1000, dtype=torch.float64)}  # 8000 bytes
    assert truth_store.keep("a", one, {}, seconds=30.0)
    assert truth_store.keep("b", one, one, seconds=30.0)
    (truth_store.root() / ".new-half-written").mkdir()  # no meta.json: not a kept truth
    used = truth_store.usage()
    disk = shutil.disk_usage(truth_store.root())
    assert (used.kept, used.nbytes, used.budget) == (2, 24000, truth_store.budget_bytes())
    assert used.floor == int(truth_store.MIN_FREE * disk.total) and 0 < used.free <= disk.total
    assert used.line().startswith("truths kept on disk: 2, 0.0 of 17.2 GB; disk free ")
