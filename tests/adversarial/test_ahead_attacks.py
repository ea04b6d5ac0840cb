"""Attacks from the process that compiles a submission's kernels ahead (judge.workers.ahead).

That process runs the submission's code outside the device's gate, while other lanes time, so it
must not reach the GPU at all; and it writes into the file's kept Triton cache, so it must not
reach any other file's. The attacker here records each attempt into its own cache folder (the one
place it may write that the test can read back), then compiles its honest kernel. Verdict: every
attempt failed, and the honest kernel still compiled.

On a machine without a GPU the device files do not exist and the attempts fail for that reason
too; `test_the_device_stays_out_of_reach_on_a_gpu` runs where they do exist.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hostile import ROOT
from test_ahead import H100 as TARGET  # an H100's target: the kernels compile for it

from judge.judging import batch
from judge.workers import confine, launcher

pytestmark = pytest.mark.skipif(
    bool(confine.available()), reason=f"cannot confine here: {confine.available()}"
)

PLAIN = ROOT / "puzzles" / "vector_add" / "solutions" / "correct" / "plain.py"

ATTACKER = """
import ctypes
import glob
import json
import os
from pathlib import Path

tried = {{}}


def attempt(name, action):
    try:
        result = action()
        tried[name] = f"succeeded: {{result}}"
    except BaseException as exc:
        tried[name] = f"failed: {{type(exc).__name__}}: {{exc}}"


def cuda_devices():
    os.environ.pop("CUDA_VISIBLE_DEVICES", None)  # undo the parent's hiding, then ask
    cuda = ctypes.CDLL("libcuda.so.1")
    status = cuda.cuInit(0)
    count = ctypes.c_int(0)
    if status != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        raise RuntimeError(f"cuInit {{status}}, {{count.value}} devices")
    return count.value


def open_device():
    names = sorted(glob.glob("/dev/nvidia*")) or ["/dev/nvidiactl"]
    opened = []
    for name in names:
        try:
            os.close(os.open(name, os.O_RDWR))
            opened.append(name)
        except OSError:
            pass
    if not opened:
        raise PermissionError(f"none of {{names}} opened")
    return opened


def torch_on_the_device():
    import torch

    return torch.ones(1, device="cuda").sum().item()


def other_files_cache():
    sibling = Path(os.environ["TRITON_CACHE_DIR"]).parent / {other!r}
    (sibling / "poisoned.json").write_text("{{}}")
    return sibling


def list_every_files_cache():
    return os.listdir(Path(os.environ["TRITON_CACHE_DIR"]).parent)


def read_the_class():
    return Path({classmate!r}).read_text()


attempt("cuda devices", cuda_devices)
attempt("open /dev/nvidia*", open_device)
attempt("torch on the device", torch_on_the_device)
attempt("write another file's cache", other_files_cache)
attempt("list every file's cache", list_every_files_cache)
attempt("read a classmate", read_the_class)
Path(os.environ["TRITON_CACHE_DIR"], "tried.json").write_text(json.dumps(tried))

{honest}
"""


def attack(tmp_path: Path, vector_add) -> dict:
    classmate = tmp_path / "class" / "bob" / "vector_add.py"
    classmate.parent.mkdir(parents=True)
    classmate.write_text("# bob's answer\n")
    other = launcher.compiled_dir(classmate, dict(os.environ))
    attacker = tmp_path / "class" / "mallory" / "vector_add.py"
    attacker.parent.mkdir(parents=True)
    attacker.write_text(
        ATTACKER.format(other=other.name, classmate=str(classmate), honest=PLAIN.read_text())
    )
    calls = batch.ahead_calls(vector_add)
    worker = launcher.launch_ahead(vector_add.directory / "puzzle.yaml", attacker, TARGET, calls)
    assert worker is not None
    try:
        compiled = worker.expect("compiled", 300, "compiling ahead")
    finally:
        launcher.discard(worker)
    assert compiled["calls"] == len(calls) and compiled["stopped"] == {}  # the honest kernel
    kept = launcher.compiled_dir(attacker, dict(os.environ))
    assert not (other / "poisoned.json").exists()
    assert list(kept.rglob("*.cubin"))
    return json.loads((kept / "tried.json").read_text())


def test_the_compile_ahead_reaches_no_device_no_other_cache_and_no_classmate(tmp_path, vector_add):
    tried = attack(tmp_path, vector_add)
    assert tried and all(result.startswith("failed") for result in tried.values()), tried


@pytest.mark.gpu
def test_the_device_stays_out_of_reach_on_a_gpu(tmp_path, vector_add):
    """Where the device files exist (and this process opens them), the compile ahead cannot."""
    assert Path("/dev/nvidiactl").exists()
    os.close(os.open("/dev/nvidiactl", os.O_RDWR))  # the judge's own process can
    tried = attack(tmp_path, vector_add)
    assert all(result.startswith("failed") for result in tried.values()), tried
    assert "PermissionError" in tried["open /dev/nvidia*"]
