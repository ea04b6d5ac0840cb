"""Every shipped correct solution compiles for an sm_90 GPU, checked without one (gpu_compile.py).

The interpreter runs kernels that the compiler would reject; this catches them in CI. A solution
with such a kernel, written here, must be reported.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORRECT = sorted(ROOT.glob("puzzles/*/solutions/correct/*.py"))

# Runs in the interpreter, but `out` is an int in one branch and a pointer in the other: the
# compiler refuses a variable that changes type across an `if`.
BROKEN = """
import triton
import triton.language as tl


@triton.jit
def vector_add_kernel(a_ptr, b_ptr, c_ptr, N, BLOCK_SIZE: tl.constexpr):
    a_ptr = a_ptr.to(tl.pointer_type(tl.float32))
    b_ptr = b_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    total = tl.load(a_ptr + offsets, mask=mask) + tl.load(b_ptr + offsets, mask=mask)
    if N > 0:
        c_ptr = c_ptr.to(tl.pointer_type(tl.float32))
        tl.store(c_ptr + offsets, total, mask=mask)


def solve(a_ptr: int, b_ptr: int, c_ptr: int, N: int):
    vector_add_kernel[(triton.cdiv(N, 256),)](a_ptr, b_ptr, c_ptr, N, BLOCK_SIZE=256)
"""


def ptxas_available() -> bool:
    try:
        import triton.backends.nvidia as nvidia
    except ImportError:
        return False
    bundled = Path(nvidia.__file__).parent / "bin" / "ptxas"
    return bundled.is_file() or bool(os.environ.get("TRITON_PTXAS_PATH"))


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict:
    if not ptxas_available():
        pytest.skip("this Triton has no NVIDIA backend with ptxas")
    work = tmp_path_factory.mktemp("compile")
    broken = work / "broken.py"
    broken.write_text(BROKEN)
    chosen = [(p.parents[2].name, str(p)) for p in CORRECT] + [("vector_add", str(broken))]
    (work / "solutions.json").write_text(json.dumps(chosen))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT)
    steps = [
        ("record", "solutions.json", "launches.json", {"TRITON_INTERPRET": "1"}),
        ("compile", "launches.json", "results.json", {}),
    ]
    for step, source, target, extra in steps:
        done = subprocess.run(
            [sys.executable, str(HERE / "gpu_compile.py"), step, source, target],
            cwd=work,
            env=env | extra,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((work / "results.json").read_text())
    return {"broken": results.pop(str(broken), None), "results": results}


@pytest.mark.parametrize("path", CORRECT, ids=[f"{p.parents[2].name}/{p.stem}" for p in CORRECT])
def test_shipped_solution_compiles_for_sm90(compiled, path):
    assert compiled["results"].get(str(path)) == "ok", compiled["results"].get(str(path))


def test_a_kernel_the_compiler_refuses_is_reported(compiled):
    assert compiled["broken"] not in (None, "ok")
    assert "vector_add_kernel" in compiled["broken"]
