"""Whether a GPU has what a puzzle needs (its spec's `requires`): compute capability, bfloat16,
float16 tensor cores, shared memory per block. A puzzle the GPU cannot run is refused before the
submission is loaded, with what is missing.

Pure: a spec and the worker's account of its device in, a reason or None out.
"""

from __future__ import annotations

from judge.core.results import EnvInfo
from judge.core.spec import PuzzleSpec

BF16_FROM = (8, 0)  # Ampere: bfloat16 arithmetic
TENSOR_CORES_FROM = (7, 0)  # Volta: float16 tensor cores


def missing(spec: PuzzleSpec, env: EnvInfo) -> str | None:
    """What the device lacks for the puzzle, in words; None when it has all (or when the run is
    in the interpreter, which emulates every type, or the device did not say)."""
    needs = spec.requires
    if not needs.any or env.mode != "gpu" or not env.capability:
        return None
    have = tuple(int(p) for p in env.capability.split("."))
    lacks = []
    if have < needs.capability:
        lacks.append(f"compute capability {needs.capability[0]}.{needs.capability[1]}")
    if needs.bf16 and have < BF16_FROM:
        lacks.append("bfloat16 arithmetic (compute capability 8.0)")
    if needs.fp16_tensor_cores and have < TENSOR_CORES_FROM:
        lacks.append("float16 tensor cores (compute capability 7.0)")
    room = env.shared_memory_kb
    if needs.shared_memory_kb and room and room < needs.shared_memory_kb:
        lacks.append(f"{needs.shared_memory_kb} KiB of shared memory per block")
    if not lacks:
        return None
    return (
        f"{spec.id} needs {' and '.join(lacks)}; {env.device} has compute capability "
        f"{env.capability} and {env.shared_memory_kb} KiB of shared memory per block"
    )
