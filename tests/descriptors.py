"""A host tensor descriptor as a recorded call keeps it (judge.workers.replay), for the tests of
the recorder, the replay's checks, the parent's copy of the kernels and the timer's player."""


def recorded_descriptor(where: dict, size: list[int], box: list[int], **change) -> dict:
    """A row-major descriptor of `size` elements a side, in blocks of `box`, whose base is `where`
    (a buffer or scratch offset); `change` replaces any of its fields."""
    strides = [1] * len(size)
    for i in range(len(size) - 2, -1, -1):
        strides[i] = strides[i + 1] * size[i + 1]
    desc = {
        "desc": where,
        "shape": size,
        "strides": strides,
        "block": box,
        "padding": "zero",
        "tf32": False,
    }
    return {**desc, **change}
