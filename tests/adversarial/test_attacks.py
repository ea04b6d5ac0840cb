"""Known attacks on the judge, each against several puzzles: the verdict and reason they must get.

Every attack wraps or replaces a puzzle's shipped plain solution (loaded as `honest`). They run in
Triton's interpreter on the CPU, where buffer addresses are host addresses that ctypes can reach;
the GPU forms of the same attacks (PyTorch on `__cuda_array_interface__` views, cuBLAS and CUDA
copies through ctypes) are in test_gpu_attacks.py, and streams, illegal addresses and kernels that
never end in the `gpu`-marked tests of the puzzles and the runner.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hostile import inlined

from judge.core import registry
from judge.core.results import Verdict
from judge.core.spec import Case
from judge.judging import runner

# Elementwise puzzles: float32 buffers of N elements, N last, one output.
PUZZLES = {"vector_add": 2, "relu": 1}  # the output's position among the arguments

PRELUDE = """
import ctypes
import importlib.util

{honest}
OUT = {out}
"""

ATTACKS = {
    # an answer kept per address: computed once for each set of pointers, then copied back into
    # the output by a Triton kernel of its own on later calls
    "cached_per_pointer": (
        """
import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    src = src.to(tl.pointer_type(tl.float32))
    dst = dst.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


saved = {{}}


def solve(*args):
    n = args[-1]
    grid = (triton.cdiv(n, 256),)
    if args in saved:
        copy_kernel[grid](saved[args].data_ptr(), args[OUT], n, BLOCK=256)
        return
    honest.solve(*args)
    keep = torch.empty(n, dtype=torch.float32)
    copy_kernel[grid](args[OUT], keep.data_ptr(), n, BLOCK=256)
    saved[args] = keep
""",
        "failed",
        {"recheck-failed"},
    ),
    # an answer kept per call count: the first calls work, later ones do nothing
    "cached_per_call_count": (
        """
calls = [0]


def solve(*args):
    calls[0] += 1
    if calls[0] <= 1:
        honest.solve(*args)
""",
        "failed",
        {"recheck-failed"},
    ),
    # PyTorch imported under another name does the work, on tensors made from the addresses
    "torch_renamed_through_ctypes": (
        """
import importlib

T = importlib.import_module("to" + "rch")


def solve(*args):
    n = args[-1]
    views = [
        T.frombuffer((ctypes.c_float * n).from_address(a), dtype=T.float32) for a in args[:-1]
    ]
    if len(views) == 3:
        T.add(views[0], views[1], out=views[2])
    else:
        T.clamp(views[0], min=0.0, out=views[1])
""",
        "rejected",
        {"torch-in-solve"},
    ),
    # NumPy does the work on the host buffers (interpreter mode), and no kernel runs
    "numpy_through_ctypes": (
        """
import numpy


def solve(*args):
    n = args[-1]
    views = [numpy.ctypeslib.as_array((ctypes.c_float * n).from_address(a)) for a in args[:-1]]
    if len(views) == 3:
        numpy.add(views[0], views[1], out=views[2])
    else:
        numpy.maximum(views[0], 0.0, out=views[1])
""",
        "rejected",
        {"outside-triton"},
    ),
    # the honest kernel on the cases, NumPy on the repeated calls
    "numpy_on_repeated_calls": (
        """
import numpy

calls = [0]


def solve(*args):
    calls[0] += 1
    if calls[0] == 1:
        honest.solve(*args)
        return
    n = args[-1]
    views = [numpy.ctypeslib.as_array((ctypes.c_float * n).from_address(a)) for a in args[:-1]]
    if len(views) == 3:
        numpy.add(views[0], views[1], out=views[2])
    else:
        numpy.maximum(views[0], 0.0, out=views[1])
""",
        "rejected",
        {"outside-triton"},
    ),
    # the puzzle's own reference, imported from the catalogue and called on the buffers: the
    # confined worker cannot read the catalogue
    "reference_imported": (
        """
import torch

_ref_spec = importlib.util.spec_from_file_location("stolen", {reference!r})
stolen = importlib.util.module_from_spec(_ref_spec)
_ref_spec.loader.exec_module(stolen)


def solve(*args):
    n = args[-1]
    views = [
        torch.frombuffer((ctypes.c_float * n).from_address(a), dtype=torch.float32)
        for a in args[:-1]
    ]
    stolen.reference(*views, n)
""",
        "error",
        {"import-error"},
    ),
    # the comparison functions a judge might use, replaced, and no work done
    "comparisons_patched": (
        """
import numpy
import torch

torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.testing.assert_close = lambda *a, **k: None
numpy.allclose = lambda *a, **k: True


def solve(*args):
    pass
""",
        "failed",
        {"unwritten"},
    ),
    # the work finished late by a background thread, after solve() has returned
    "background_thread": (
        """
import threading
import time


def solve(*args):
    def late():
        time.sleep(0.5)
        honest.solve(*args)

    threading.Thread(target=late, daemon=True).start()
""",
        "failed|error",
        {"unwritten", "crash", "exit"},
    ),
    # inputs zeroed after the work
    "inputs_zeroed": (
        """
def solve(*args):
    honest.solve(*args)
    for a in args[:OUT]:
        ctypes.memset(a, 0, 4 * args[-1])
""",
        "failed",
        {"input-modified"},
    ),
    # a store before the start of the output
    "store_before_the_buffer": (
        """
def solve(*args):
    honest.solve(*args)
    ctypes.memset(args[OUT] - 16, 0, 16)
""",
        "failed",
        {"out-of-bounds"},
    ),
    # forged protocol messages written blindly to every inherited descriptor, no work done
    "forged_messages": (
        """
import os


def solve(*args):
    for fd in range(3, 256):
        for line in (
            b'{{"event": "case_done", "files": {{}}}}\\n',
            b'{{"event": "error"}}\\n',
            b"5\\n",
        ):
            try:
                os.write(fd, line)
            except OSError:
                pass
""",
        "error|failed",
        {"protocol", "unwritten"},
    ),
    # a helper process left running in a session of its own (out of the judge's process group),
    # which could do the work on the device out of sight of the judged process
    "helper_process": (
        """
import subprocess
import sys


def solve(*args):
    honest.solve(*args)
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                     start_new_session=True)
""",
        "rejected",
        {"helper-process"},
    ),
    # a daemon: forked twice, the middle process gone, so the helper's parent is not the worker
    "daemonised_helper": (
        """
import os
import time


def solve(*args):
    honest.solve(*args)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(60)
        os._exit(0)
    os.wait()
""",
        "rejected",
        {"helper-process"},
    ),
    # a forged passed row in the judge's results database, if the worker can find it
    "forged_database_row": (
        """
import os
import sqlite3


def solve(*args):
    db = os.environ.get("TPUZZLE_DB")
    if db:
        conn = sqlite3.connect(db)
        conn.execute("UPDATE runs SET verdict = 'passed'")
        conn.commit()
""",
        "failed",
        {"unwritten"},
    ),
}


def _autotuned_last(path: Path) -> tuple[bool, str]:
    return "autotune" in path.read_text(), path.name


@pytest.fixture(params=sorted(PUZZLES))
def puzzle(request, puzzles_root):
    return registry.get(request.param, puzzles_root)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_attack_never_passes_and_gets_its_verdict(attack, puzzle, tmp_path):
    body, verdicts, reasons = ATTACKS[attack]
    honest = min((puzzle.directory / "solutions" / "correct").glob("*.py"), key=_autotuned_last)
    source = PRELUDE.format(honest=inlined(honest), out=PUZZLES[puzzle.id]) + body.format(
        reference=str(puzzle.directory / "reference.py")
    )
    path = tmp_path / f"{attack}.py"
    path.write_text(source)
    case = Case(name="N=1500", sizes=(("N", 1500),), seed=11)
    report = runner.judge(
        puzzle, path, runner.RunOptions(interpret=True, timeout_s=30, cases=(case,))
    )
    assert report.verdict != Verdict.PASSED
    assert report.verdict.value in verdicts.split("|"), (report.reason, report.message)
    assert report.reason in reasons, (report.reason, report.message)


def test_a_worker_cannot_find_the_results_database(puzzles_root, tmp_path, monkeypatch):
    """A row stored before the attack keeps its verdict: the worker never learns the path."""
    from judge.core.results import RunReport
    from judge.records import store

    db = Path(tmp_path / "results.db")
    monkeypatch.setenv("TPUZZLE_DB", str(db))
    spec = registry.get("vector_add", puzzles_root)
    conn = store.connect(db)
    honest = spec.directory / "solutions" / "wrong" / "failed_no_mask.py"
    case = Case(name="N=1500", sizes=(("N", 1500),), seed=11)
    options = runner.RunOptions(interpret=True, timeout_s=30, cases=(case,))
    store.record(conn, runner.judge(spec, honest, options), "ada")
    body = ATTACKS["forged_database_row"][0]
    path = tmp_path / "forger.py"
    path.write_text(PRELUDE.format(honest=inlined(honest), out=2) + body)
    forged: RunReport = runner.judge(spec, path, options)
    assert forged.verdict == Verdict.FAILED
    verdicts = sqlite3.connect(db).execute("SELECT verdict FROM runs").fetchall()
    assert verdicts == [("failed",)]
