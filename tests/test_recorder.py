"""The worker's recording of one call: launches noted with addresses made relative, scratch kept
only where a launch or fill uses it, and what cannot be recorded said so."""

from types import SimpleNamespace

import pytest
from descriptors import recorded_descriptor

from judge.workers import recorder, replay
from judge.workers.recorder import LaunchRecorder
from judge.workers.replay import Region

A, C, HELD, TEMP = 0x7F0000000000, 0x7F0000400000, 0x7F0000800000, 0x7F0000900000
KERNEL = {
    "key": "cd" * 32,
    "name": "k",
    "signature": [["x", "i64"], ["n", "i32"]],
    "directory": "/cache/k",
}
BUFFERS = [Region("buf", "a_ptr", A, 8192), Region("buf", "c_ptr", C, 8192)]


@pytest.fixture
def held(monkeypatch):
    """The allocator's blocks after the call: the judge's buffers and one kept scratch."""
    blocks = [(A, 8192), (C, 8192), (HELD, 4096)]
    monkeypatch.setattr(recorder, "_held_blocks", lambda: blocks)
    return blocks


def test_a_call_s_launches_are_recorded_relative_to_what_they_point_into(held):
    rec = LaunchRecorder()
    rec.note_launch(KERNEL, (1, 1, 1), (A, 5))  # not recording: ignored
    with rec.recording(BUFFERS) as sequence:
        rec.note_launch(KERNEL, (4, 1, 1), (A + 16384 // 4, 1000))
        rec.note_launch(KERNEL, (2, 1, 1), (HELD + 64, SimpleNamespace(data_ptr=lambda: C)))
    assert sequence["scratch"] == [4096]  # the kept block; not the judge's own buffers
    assert [s["args"] for s in sequence["steps"]] == [
        [{"buf": "a_ptr", "at": 4096}, {"v": 1000}],
        [{"scratch": 0, "at": 64}, {"buf": "c_ptr", "at": 0}],
    ]
    parsed = replay.validated(sequence)
    assert parsed.describe() == ("k grid 4x1x1", "k grid 2x1x1")


def test_a_host_tensor_descriptor_is_recorded_as_it_was_at_the_launch(held):
    """Its base made relative like any address (here into kept scratch, renumbered with the
    rest), its shape, strides and block as plain numbers, taken at the launch: a descriptor
    changed afterwards (an autotuner's pre-hook sets the block) does not change the record."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    kernel = {**KERNEL, "signature": [["d", "tensordesc<fp16[64, 64]>"], ["n", "i32"]]}
    base = SimpleNamespace(data_ptr=lambda: HELD + 512, dtype=SimpleNamespace(itemsize=2))
    desc = TensorDescriptor(base, [16, 64], [64, 1], [64, 64])
    rec = LaunchRecorder()
    with rec.recording(BUFFERS) as sequence:
        rec.note_launch(kernel, (1, 1, 1), (desc, 16))
        desc.block_shape = [32, 64]
    assert sequence["scratch"] == [4096]
    assert sequence["steps"][0]["args"][0] == recorded_descriptor(
        {"scratch": 0, "at": 512}, [16, 64], [64, 64]
    )
    assert replay.validated(sequence).launches() == 1


def test_scratch_allocated_and_freed_inside_the_call_is_kept_by_its_size(held):
    rec = LaunchRecorder()
    with rec.recording(BUFFERS) as sequence:
        rec._allocs.append((TEMP, 512))
        rec._steps.append(("fill", TEMP, 512, "float32", 0))
        rec.note_launch(KERNEL, (1, 1, 1), (TEMP, 128))
    assert sequence["scratch"] == [512]
    assert sequence["steps"][0] == {
        "fill": {"scratch": 0, "at": 0},
        "nbytes": 512,
        "dtype": "float32",
        "value": 0,
    }
    assert replay.validated(sequence).launches() == 1


def test_what_cannot_be_recorded_is_said(held):
    rec = LaunchRecorder()
    with rec.recording(BUFFERS) as sequence:
        rec.note_launch(
            "a kernel whose compilation the judge cannot read (KeyError)", (1, 1, 1), ()
        )
    with pytest.raises(replay.NotReplayable, match="cannot read"):
        replay.validated(sequence)


def test_an_address_outside_everything_known_cannot_be_replayed(held):
    rec = LaunchRecorder()
    with rec.recording(BUFFERS) as sequence:
        rec.note_launch(KERNEL, (1, 1, 1), (0x7F00DEAD0000, 1))
    with pytest.raises(replay.NotReplayable, match="points into neither"):
        replay.validated(sequence)


def test_a_recording_launcher_passes_every_launch_on():
    seen = []
    rec = LaunchRecorder()
    launcher = recorder._Recording(lambda *a: seen.append(a), rec, KERNEL)
    launcher(3, 1, 1, "stream", "fn", "meta", None, None, None, A, 7)
    assert seen == [(3, 1, 1, "stream", "fn", "meta", None, None, None, A, 7)]
