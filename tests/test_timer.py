"""The parent hands the timer a recorded call's kernels: only their two files, only from the
worker's own cache, only plain files describing the kernel recorded."""

import json
import os

import pytest
from descriptors import recorded_descriptor

from judge.judging import timer
from judge.workers import replay

KEY = "ef" * 32


def sequence(directory, name="k", grid=(1, 1, 1)):
    return replay.validated(
        {
            "kernels": [
                {"key": KEY, "name": name, "signature": [["x", "i64"]], "directory": str(directory)}
            ],
            "scratch": [],
            "steps": [{"launch": KEY, "grid": list(grid), "args": [{"v": 1}]}],
        }
    )


def compiled(folder, name="k", **metadata):
    folder.mkdir(parents=True, exist_ok=True)
    data = {"name": name, "target": {"backend": "cuda", "arch": 90, "warp_size": 32}, **metadata}
    (folder / f"{name}.json").write_text(json.dumps(data))
    (folder / f"{name}.cubin").write_bytes(b"\x7fELF")
    return folder


def test_the_two_files_are_copied_into_the_timer_s_folder(tmp_path):
    cache = tmp_path / "cache"
    compiled(cache / "abc")
    (cache / "abc" / "k.ttir").write_text("ir")
    timer.copy_kernels(sequence(cache / "abc"), cache, tmp_path / "timer")
    assert sorted(os.listdir(tmp_path / "timer" / KEY)) == ["k.cubin", "k.json"]


def test_files_outside_the_worker_s_cache_are_refused(tmp_path):
    cache, elsewhere = tmp_path / "cache", compiled(tmp_path / "elsewhere")
    cache.mkdir()
    with pytest.raises(replay.NotReplayable, match="not in the worker's cache"):
        timer.copy_kernels(sequence(cache / ".." / "elsewhere"), cache, tmp_path / "timer")
    (cache / "link").symlink_to(elsewhere)
    with pytest.raises(replay.NotReplayable, match="not in the worker's cache"):
        timer.copy_kernels(sequence(cache / "link"), cache, tmp_path / "timer")


def test_a_linked_or_missing_file_is_refused(tmp_path):
    cache = tmp_path / "cache"
    folder = compiled(cache / "abc")
    (folder / "k.cubin").unlink()
    with pytest.raises(replay.NotReplayable, match="no compiled cubin"):
        timer.copy_kernels(sequence(folder), cache, tmp_path / "timer")
    (folder / "k.cubin").symlink_to(tmp_path / "secret")
    (tmp_path / "secret").write_bytes(b"x")
    with pytest.raises(replay.NotReplayable, match="no compiled cubin"):
        timer.copy_kernels(sequence(folder), cache, tmp_path / "timer")


@pytest.mark.parametrize(
    ("metadata", "why"),
    [
        ({"name": "other"}, "does not describe it"),
        ({"target": {"backend": "hip"}}, "another backend"),
        ({"tensordesc_meta": [{"swizzle": 1}]}, "tensor descriptors"),
    ],
)
def test_metadata_that_does_not_describe_a_plain_cuda_kernel_is_refused(tmp_path, metadata, why):
    cache = tmp_path / "cache"
    folder = compiled(cache / "abc")
    data = json.loads((folder / "k.json").read_text())
    (folder / "k.json").write_text(json.dumps({**data, **metadata}))
    with pytest.raises(replay.NotReplayable, match=why):
        timer.copy_kernels(sequence(folder), cache, tmp_path / "timer")


def test_global_scratch_past_the_replay_s_limit_is_refused_before_the_timer_allocates_it(tmp_path):
    # Kernels that make tensor descriptors ask Triton's launcher for global scratch, per program;
    # the timer allocates it at each launch, so a worker that rewrote the size is stopped here.
    cache = tmp_path / "cache"
    folder = compiled(cache / "abc", global_scratch_size=128)
    timer.copy_kernels(sequence(folder, grid=(132, 1, 1)), cache, tmp_path / "timer")
    for size, grid in ((1 << 40, (1, 1, 1)), (1 << 20, (1 << 15, 1, 1)), ("many", (1, 1, 1))):
        compiled(folder, global_scratch_size=size)
        with pytest.raises(replay.NotReplayable, match="scratch"):
            timer.copy_kernels(sequence(folder, grid=grid), cache, tmp_path / f"timer{size}")
    # the copy made for an earlier call is checked against each new call's grids too
    with pytest.raises(replay.NotReplayable, match="scratch"):
        timer.copy_kernels(sequence(folder, grid=(1 << 30, 1, 1)), cache, tmp_path / "timer")


class PreparingTimer:
    """The timer's side of op_prepare and replay_sets, with the device's sets made up."""

    timer, solve = True, None

    def __init__(self):
        self.prepared: dict = {}


def test_a_replay_takes_the_sets_prepared_for_its_tag_and_seeds_only(monkeypatch):
    from judge.workers import timer_commands

    made: list = []

    def device_sets(worker, cmd):
        made.append((cmd["tag"], cmd["seeds"]))
        return [f"set {s}" for s in cmd["seeds"]], [None] * len(cmd["seeds"])

    monkeypatch.setattr(timer_commands, "device_sets", device_sets)
    timer = PreparingTimer()
    timer_commands.op_prepare(timer, {"tag": "bench0", "seeds": [4, 5]})
    assert made == [("bench0", [4, 5])]
    assert timer_commands.replay_sets(timer, {"tag": "bench0", "seeds": [4, 5]})[0] == [
        "set 4",
        "set 5",
    ]
    assert made == [("bench0", [4, 5])] and timer.prepared == {}  # taken, not made again
    timer_commands.op_prepare(timer, {"tag": "bench1", "seeds": [7]})
    assert timer_commands.replay_sets(timer, {"tag": "bench1", "seeds": [8]})[0] == ["set 8"]
    assert made[-1] == ("bench1", [8]) and timer.prepared == {}  # other seeds: made anew


def test_only_the_timer_prepares_input_sets():
    from judge.core.loader import LoadError
    from judge.workers import timer_commands

    worker = PreparingTimer()
    worker.timer = False
    with pytest.raises(LoadError, match="only the timer"):
        timer_commands.op_prepare(worker, {"tag": "bench0", "seeds": [1]})


GOOD_ACCOUNT = {"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [64, 64]}


def described(directory):
    """A recorded call of a kernel that takes a host tensor descriptor (fp16, 64 x 128)."""
    return replay.validated(
        {
            "kernels": [
                {
                    "key": KEY,
                    "name": "k",
                    "signature": [["d", "tensordesc<fp16[64, 128]>"]],
                    "directory": str(directory),
                }
            ],
            "steps": [
                {
                    "launch": KEY,
                    "grid": [1, 1, 1],
                    "args": [recorded_descriptor({"scratch": 0, "at": 0}, [64, 128], [64, 128])],
                }
            ],
            "scratch": [64 * 128 * 2],
        }
    )


@pytest.mark.parametrize(
    "account",
    [
        [],  # none: the launcher passes base, shape and strides
        [GOOD_ACCOUNT],
    ],
)
def test_a_kernel_s_account_of_its_descriptors_that_fits_its_signature_is_kept(tmp_path, account):
    cache = tmp_path / "cache"
    timer.copy_kernels(
        described(compiled(cache / "abc", tensordesc_meta=account)), cache, tmp_path / "timer"
    )
    assert (tmp_path / "timer" / KEY / "k.json").is_file()


@pytest.mark.parametrize(
    "account",
    [
        [{**GOOD_ACCOUNT, "elem_size": 4}],  # a tensor map of wider elements than the type's
        [{**GOOD_ACCOUNT, "fp4_padded": True}],  # twice the columns
        [{**GOOD_ACCOUNT, "is_im2col": True}],
        [{**GOOD_ACCOUNT, "block_size": [64, 512]}],
        [{**GOOD_ACCOUNT, "block_size": [64]}],
        [{**GOOD_ACCOUNT, "swizzle": "3"}],
        [GOOD_ACCOUNT, GOOD_ACCOUNT],  # two accounts for one descriptor
        ["x"],
    ],
)
def test_an_account_of_descriptors_at_odds_with_the_signature_is_refused(tmp_path, account):
    cache = tmp_path / "cache"
    folder = compiled(cache / "abc", tensordesc_meta=account)
    with pytest.raises(replay.NotReplayable, match="tensor descriptor"):
        timer.copy_kernels(described(folder), cache, tmp_path / "timer")


@pytest.mark.parametrize(
    ("reported", "verdict"),
    [
        (("rejected", "not-replayable"), "rejected"),  # a descriptor past its buffer
        (("error", "not-replayable"), "error"),
        (("error", "cuda-error"), "error"),
        (("rejected", "torch-in-solve"), "error"),  # the timer runs no solve(): not its to own
    ],
)
def test_a_call_the_timer_cannot_replay_is_refused_and_any_other_failure_is_an_error(
    reported, verdict
):
    from judge.workers.channel import WorkerReported

    def wait():
        raise WorkerReported(*reported, "what the timer said")

    with pytest.raises(WorkerReported) as caught:
        timer._answered(wait, "case N=1")
    assert (caught.value.verdict, caught.value.kind) == (verdict, reported[1])
    assert str(caught.value) == "case N=1, replaying what solve() launched: what the timer said"
