"""A recorded call as data: what the timer accepts to replay, and what it refuses."""

import copy

import pytest
from descriptors import recorded_descriptor

from judge.workers import replay
from judge.workers.replay import NotReplayable, Region

KEY = "ab" * 32


def kernel(name="add_kernel", signature=(("x", "i64"), ("n", "i32"), ("BLOCK", "constexpr"))):
    return {
        "key": KEY,
        "name": name,
        "signature": [list(p) for p in signature],
        "directory": "/cache/x",
    }


def launch(args=None, grid=(4, 1, 1)):
    args = args if args is not None else [{"buf": "c_ptr", "at": 16384}, {"v": 1000}, {"v": None}]
    return {"launch": KEY, "grid": list(grid), "args": args}


def call(**more):
    return {"kernels": [kernel()], "scratch": [], "steps": [launch()], **more}


def test_a_well_formed_call_is_kept_as_recorded():
    sequence = replay.validated(call())
    assert sequence.launches() == 1 and sequence.scratch == ()
    assert sequence.describe() == ("add_kernel grid 4x1x1",)
    assert replay.validated(sequence.to_dict()) == sequence


def test_fills_of_scratch_are_replayed_but_nothing_else_is_filled():
    raw = call(scratch=[64])
    raw["steps"].insert(
        0, {"fill": {"scratch": 0, "at": 0}, "nbytes": 64, "dtype": "float32", "value": 0}
    )
    assert replay.validated(raw).describe()[0] == "fill 64 bytes of scratch 0 with 0 (float32)"
    raw["steps"][0]["fill"] = {"buf": "c_ptr", "at": 0}
    with pytest.raises(NotReplayable, match="not scratch it allocated"):
        replay.validated(raw)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (
            lambda r: r["kernels"][0]["signature"].append(["y", '*fp32"); system("x']),
            "does not replay",
        ),
        (
            lambda r: r["kernels"][0]["signature"].append(
                ["d", "tensordesc<fp16[64, 64],SwizzledSharedLayout(vec=8)>"]
            ),
            "does not replay",
        ),
        (
            lambda r: r["kernels"][0]["signature"].append(
                ["d", "tensordesc_im2col<fp16[64, 64],NVMMASharedLayout(rank=2)>"]
            ),
            "does not replay",
        ),
        (
            lambda r: r["kernels"][0]["signature"].append(
                ["d", 'tensordesc<fp16[64, 64],NVMMASharedLayout(rank="); system(")>']
            ),
            "does not replay",
        ),
        (lambda r: r["kernels"][0].update(name="a b"), "invalid name"),
        (lambda r: r["kernels"][0].update(key="../../etc"), "no valid key"),
        (lambda r: r["steps"][0].update(grid=[1, 1]), "grid of 2 dimensions"),
        (lambda r: r["steps"][0].update(grid=[-1, 1, 1]), "out of range"),
        (lambda r: r["steps"][0]["args"].pop(), "2 arguments for 3 parameters"),
        (
            lambda r: r["steps"][0]["args"].__setitem__(1, {"v": 0x7F3BFFE00000}),
            "points into neither",
        ),
        (lambda r: r["steps"][0]["args"].__setitem__(1, {"scratch": 0, "at": 0}), "not allocated"),
        (lambda r: r["steps"][0]["args"].__setitem__(1, {"v": "text"}), "neither a number"),
        (lambda r: r["steps"].__setitem__(0, {"copy": 1}), "neither a launch nor a fill"),
        (lambda r: r.update(steps=[]), "launched no Triton kernel"),
        (lambda r: r.update(scratch=[replay.MAX_SCRATCH_BYTES, 1]), "bytes of scratch"),
        (lambda r: r.update(steps=[launch()] * (replay.MAX_STEPS + 1)), "launches and fills"),
        (lambda r: r.update(unsupported="solve() filled a non-contiguous view"), "non-contiguous"),
        (lambda r: r.update(kernels="x"), "garbled"),
    ],
)
def test_what_cannot_be_replayed_safely_is_refused(change, why):
    raw = copy.deepcopy(call())
    change(raw)
    with pytest.raises(NotReplayable, match=why):
        replay.validated(raw)


def test_every_set_must_launch_the_same_work():
    same = replay.agreed([call(), call()])
    assert same.launches() == 1
    other = call()
    other["steps"][0]["grid"] = [5, 1, 1]
    with pytest.raises(
        NotReplayable, match="step 0: add_kernel grid 4x1x1 against add_kernel grid 5x1x1"
    ):
        replay.agreed([call(), other])
    other = call()
    other["steps"][0]["args"][1] = {"v": 999}
    with pytest.raises(NotReplayable, match="the same kernels with other arguments"):
        replay.agreed([call(), other])
    with pytest.raises(NotReplayable, match="2 steps against 1"):
        replay.agreed([call(steps=[launch(), launch()]), call()])
    with pytest.raises(NotReplayable, match="no call"):
        replay.agreed([])


def test_where_the_kernels_files_lie_does_not_make_sets_differ():
    moved = call()
    moved["kernels"][0]["directory"] = "/cache/y"
    assert replay.agreed([call(), moved]).launches() == 1


def test_addresses_become_offsets_into_what_holds_them():
    regions = [
        Region("buf", "a_ptr", 0x7F0000000000, 4096),
        Region("scratch", 0, 0x7F0000100000, 64),
        Region("scratch", 1, 0x7F0000100000, 128),
    ]  # freed and allocated again
    assert replay.relative(0x7F0000000010, regions) == {"buf": "a_ptr", "at": 16}
    assert replay.relative(0x7F0000001000, regions) == {"buf": "a_ptr", "at": 4096}  # one past
    assert replay.relative(0x7F0000100008, regions) == {"scratch": 1, "at": 8}
    assert replay.relative(25_000_000, regions) == {"v": 25_000_000}
    assert replay.relative(True, regions) == {"v": True}
    assert replay.relative(0.5, regions) == {"v": 0.5}


# What Triton 3.9 names a Gluon descriptor of a cluster of two: its block, then its layout.
GLUON_KIND = (
    "tensordesc<fp16[64, 128],NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, "
    "rank=2, transposed=False, fp4_padded=False, cga_layout=[[1, 0]])>"
)


def described(kind="tensordesc<fp16[64, 128]>", **change):
    """A call whose kernel takes a host tensor descriptor of c_ptr (fp16, 64 x 128 blocks)."""
    desc = recorded_descriptor({"buf": "c_ptr", "at": 256}, [1000, 128], [64, 128], **change)
    signature = (("c_desc", kind), ("n", "i32"))
    return {
        "kernels": [kernel(signature=signature)],
        "scratch": [],
        "steps": [launch(args=[desc, {"v": 1000}])],
    }


def test_a_host_tensor_descriptor_is_kept_with_its_base_relative_to_its_buffer():
    sequence = replay.validated(described())
    arg = sequence.steps[0]["args"][0]
    assert arg["desc"] == {"buf": "c_ptr", "at": 256} and arg["block"] == [64, 128]
    assert replay.validated(sequence.to_dict()) == sequence
    # from its base to one past its last element: 999 rows of 128 and a row, two bytes each
    assert replay.extent(arg, "tensordesc<fp16[64, 128]>") == 1000 * 128 * 2
    assert replay.descriptor_type("tensordesc<fp8e4nv[128, 64]>") == ("fp8e4nv", [128, 64])
    assert replay.descriptor_type("*fp16") is None


def test_a_gluon_descriptor_is_kept_as_one_of_a_plain_block():
    """Triton's launcher builds the tensor map from the compiled kernel's account of the
    descriptor, so the layout in its type is checked for form and otherwise not used."""
    sequence = replay.validated(described(GLUON_KIND))
    arg = sequence.steps[0]["args"][0]
    assert arg["desc"] == {"buf": "c_ptr", "at": 256} and arg["block"] == [64, 128]
    assert replay.descriptor_type(GLUON_KIND) == ("fp16", [64, 128])
    assert replay.extent(arg, GLUON_KIND) == 1000 * 128 * 2
    with pytest.raises(NotReplayable, match="not its type's"):
        replay.validated(described(GLUON_KIND, block=[128, 128]))


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"desc": {"v": 0x7F3BFFE00000}}, "points into neither"),
        ({"desc": {"v": 4096}}, "base points into neither"),
        ({"block": [128, 128]}, "not its type's"),
        ({"shape": [1000]}, "wrong rank"),
        ({"shape": [1000, 0]}, "TMA cannot use"),
        ({"strides": [128, 2]}, "TMA cannot use"),
        ({"strides": [4, 1]}, "TMA cannot use"),  # 8 bytes: off a 16-byte boundary
        ({"desc": {"buf": "c_ptr", "at": 8}}, "TMA cannot use"),
        ({"shape": [1 << 33, 128]}, "out of range"),
        ({"padding": "ones"}, "options are garbled"),
        ({"extra": 1}, "garbled"),
    ],
)
def test_a_descriptor_that_could_reach_past_its_buffer_or_that_tma_refuses_is_refused(change, why):
    with pytest.raises(NotReplayable, match=why):
        replay.validated(described(**change))


def test_a_descriptor_and_a_pointer_cannot_stand_in_for_each_other():
    raw = described()
    raw["steps"][0]["args"][0] = {"buf": "c_ptr", "at": 0}  # an address for a descriptor
    with pytest.raises(NotReplayable, match="descriptor argument is garbled"):
        replay.validated(raw)
    raw = call()
    raw["steps"][0]["args"][0] = described()["steps"][0]["args"][0]  # and the other way
    with pytest.raises(NotReplayable, match="garbled"):
        replay.validated(raw)
