"""The Python files of an imported puzzle: a template in the style of tpuzzle's own (pointers
cast to their element type, a kernel to fill in, a solve() that launches it), and a reference
that calls the source's own through `judge.sources.runtime`.

Pure: the converted signature in, text out.
"""

from __future__ import annotations

import pprint

TRITON_TYPES = {
    "float16": "tl.float16", "bfloat16": "tl.bfloat16", "float32": "tl.float32",
    "float64": "tl.float64", "float8_e4m3fn": "tl.float8e4nv", "float8_e5m2": "tl.float8e5",
    "int8": "tl.int8", "uint8": "tl.uint8", "int16": "tl.int16", "int32": "tl.int32",
    "uint32": "tl.uint32", "int64": "tl.int64",
}  # fmt: skip


def template_text(puzzle_id: str, args: list[dict]) -> str:
    kernel = f"{puzzle_id.split('_', 2)[-1]}_kernel"
    params = []
    for a in args:
        if a["role"] == "size":
            what = "an int"
        elif a["role"] == "scalar":
            what = "a float"
        else:
            what = f"{a['dtype']}, shape [{', '.join(a['shape'])}], {a['role']}"
        params.append(f"    {a['ours']},  # {what}")
    casts = [
        f"    {a['ours']} = {a['ours']}.to(tl.pointer_type({TRITON_TYPES[a['dtype']]}))"
        for a in args
        if "dtype" in a
    ]
    names = ", ".join(a["ours"] for a in args)
    typed = ", ".join(f"{a['ours']}: {'float' if a['role'] == 'scalar' else 'int'}" for a in args)
    pointers = ", ".join(a["ours"] for a in args if "dtype" in a)
    return "\n".join(
        [
            "import triton",
            "import triton.language as tl",
            "",
            "",
            "@triton.jit",
            f"def {kernel}(",
            *params,
            "    BLOCK_SIZE: tl.constexpr,  # elements handled by one program",
            "):",
            *casts,
            "    # Your code: find this program's block, load, compute, store.",
            "",
            "",
            f"# {pointers} are device addresses (Python ints); the others are the sizes and",
            "# scalars of the case, in the order of the signature.",
            f"def solve({typed}):",
            "    BLOCK_SIZE = 1024",
            "    grid = (1,)",
            f"    {kernel}[grid]({names}, BLOCK_SIZE=BLOCK_SIZE)",
            "",
        ]
    )


def reference_text(origin, args: list[dict], description: dict) -> str:
    """reference(*args) for the judge: the source's own reference, called on the case's
    tensors shaped and typed as the source gives them."""
    signature = [
        {k: a[k] for k in ("theirs", "ours", "role", "dtype", "shape") if k in a} for a in args
    ]
    if origin.kind == "leetgpu":
        call = "leetgpu_reference(__file__, SIGNATURE)"
        what = "the challenge's own reference_impl"
        constants = []
    else:
        call = "gpumode_reference(__file__, SIGNATURE, data=DATA, outputs=OUTPUTS)"
        what = "the problem's own ref_kernel"
        constants = [
            "# The data ref_kernel takes, built from the arguments (judge.sources.layout), and",
            "# the buffers its outputs go to, in the order it returns them.",
            f"DATA = {_literal(description['data'])}",
            "",
            f"OUTPUTS = {_literal(description['outputs'])}",
            "",
        ]
    return "\n".join(
        [
            f'"""Reference for {origin.puzzle_id}: {what}, from the copy of its files taken at',
            f'import (source/). Written by `tpuzzle import {origin.kind}`."""',
            "",
            f"from judge.sources.runtime import {_imported(call, description)}",
            "",
            f"SIGNATURE = {_literal(signature)}",
            "",
            *constants,
            f"reference = {call}",
            "",
            *_check_lines(origin, description),
        ]
    )


def _check_lines(origin, description: dict) -> list[str]:
    """`check = ...`: the problem's own check_implementation, for a puzzle it judges."""
    if origin.kind != "gpumode" or description.get("check") != "reference":
        return []
    return [
        "# The problem's own check_implementation judges the outputs (check: reference in",
        "# puzzle.yaml): it compares none of them element by element with the reference's.",
        "check = gpumode_check(__file__, SIGNATURE, data=DATA, outputs=OUTPUTS)",
        "",
    ]


def _imported(call: str, description: dict) -> str:
    name = call.split("(")[0]
    return f"{name}, gpumode_check" if description.get("check") == "reference" else name


def _literal(value) -> str:
    return pprint.pformat(value, width=96, sort_dicts=False)
