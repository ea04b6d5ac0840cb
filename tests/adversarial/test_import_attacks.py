"""Importing runs a checkout's code: it must run in processes of their own with no GPU, never in
the importing process, and a problem that crashes, hangs or lies about its reference must cost
only itself. Each hostile problem here is written for this test, in LeetGPU's format."""

import json
import os
import textwrap

import pytest

from judge.sources import importer

BASE = """
class OutTensor:
    def __init__(self, shape, dtype="float32"):
        self.shape, self.dtype = tuple(shape), dtype


class ChallengeBase:
    def __init__(self, device="cuda"):
        self.device = device
"""

CHALLENGE = """
import ctypes
import json
import os

import torch
from core.challenge_base import ChallengeBase, OutTensor

with open({marker!r}, "a") as seen:  # who runs this code, and with which GPUs visible
    seen.write(json.dumps({{"pid": os.getpid(), "gpus": os.environ.get("CUDA_VISIBLE_DEVICES")}}))
    seen.write("\\n")


class Challenge(ChallengeBase):
    name = "{name}"
    atol = 1e-5
    rtol = 1e-5
    num_gpus = 1
    access_tier = "free"

    def reference_impl(self, x, y, N):
{reference}

    def get_solve_signature(self):
        return {{
            "x": (ctypes.POINTER(ctypes.c_float), "in"),
            "y": (ctypes.POINTER(ctypes.c_float), "out"),
            "N": (ctypes.c_int, "in"),
        }}

    def generate_example_test(self):
        return {{"x": torch.ones(3, device=self.device), "y": OutTensor((3,)), "N": 3}}

    def generate_functional_test(self):
{functional}
        return [{{"x": torch.rand(8, device=self.device), "y": OutTensor((8,)), "N": 8}}]

    def generate_performance_test(self):
        return {{"x": torch.rand(64, device=self.device), "y": OutTensor((64,)), "N": 64}}
"""

HONEST_REFERENCE = "        y.copy_(x * 2)"
HOSTILE = {
    "1_exits": ("os._exit(7)", HONEST_REFERENCE),
    "2_hangs": ("while True:\n    pass", HONEST_REFERENCE),
    "3_wants_a_gpu": ("torch.cuda.current_device()", HONEST_REFERENCE),
    "4_lying_reference": ("pass", "        raise RuntimeError('the reference refuses')"),
    "5_honest": ("pass", HONEST_REFERENCE),
}


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "checkout"
    (root / "challenges" / "core").mkdir(parents=True)
    (root / "challenges" / "core" / "challenge_base.py").write_text(BASE)
    (root / "LICENSE").write_text("Hostile Fixture Licence\n")
    marker = tmp_path / "who_ran.jsonl"
    for name, (functional, reference) in HOSTILE.items():
        folder = root / "challenges" / "easy" / name
        folder.mkdir(parents=True)
        body = CHALLENGE.format(
            marker=str(marker),
            name=name,
            reference=reference,
            functional=textwrap.indent(functional, " " * 8),
        )
        (folder / "challenge.py").write_text(body)
    return root, marker


def test_hostile_problems_cost_only_themselves(checkout, tmp_path, monkeypatch):
    root, marker = checkout
    monkeypatch.setenv("TPUZZLE_IMPORT_TIMEOUT", "3")
    done = importer.run("leetgpu", root, into=tmp_path / "out", jobs=1)
    reasons = {o.problem.rsplit("/", 1)[-1]: o.reason for o in done.outcomes}
    assert reasons["1_exits"] == "the probe process ended with code 7"
    assert reasons["2_hangs"] == "its generators ran past 3 s on the CPU"
    assert reasons["3_wants_a_gpu"].startswith("its code raised ")
    assert reasons["4_lying_reference"] == (
        "its reference fails on the converted case: RuntimeError: the reference refuses"
    )
    assert reasons["5_honest"] == ""
    assert [o.puzzle for o in done.converted] == ["leetgpu_5_honest"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["leetgpu_5_honest"]


def test_a_checkouts_code_never_runs_in_the_importing_process_nor_sees_a_gpu(
    checkout, tmp_path, monkeypatch
):
    root, marker = checkout
    monkeypatch.setenv("TPUZZLE_IMPORT_TIMEOUT", "3")
    importer.run("leetgpu", root, into=tmp_path / "out", jobs=2, only=["5_honest", "1_exits"])
    runs = [json.loads(line) for line in marker.read_text().splitlines()]
    assert runs, "the challenges' code never ran"
    assert all(r["pid"] != os.getpid() for r in runs)
    assert {r["gpus"] for r in runs} == {""}
