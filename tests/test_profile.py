"""`tpuzzle profile`: finding ncu, refusing without it or without a GPU in one line, and (on a
GPU with ncu) one profiled call (judge.insight.profile, judge.cli.profiling)."""

import os
import shutil
import stat

import pytest
from typer.testing import CliRunner

from judge.cli.app import app
from judge.errors import JudgeError
from judge.insight import profile

PLAIN = "puzzles/vector_add/solutions/correct/plain.py"


@pytest.fixture
def cli(monkeypatch, puzzles_root):
    monkeypatch.chdir(puzzles_root.parent)
    return lambda *args: CliRunner().invoke(app, list(args), terminal_width=160)


def fake_ncu(tmp_path):
    tool = tmp_path / "ncu"
    tool.write_text("#!/bin/sh\nexit 0\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    return tool


def test_ncu_is_found_like_compute_sanitizer(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.delenv(profile.TOOL_ENV, raising=False)
    if os.access("/usr/local/cuda/bin/ncu", os.X_OK):
        pytest.skip("this machine has ncu in /usr/local/cuda/bin")
    with pytest.raises(JudgeError, match="needs NVIDIA Nsight Compute .* set TPUZZLE_NCU"):
        profile.find_tool()
    tool = fake_ncu(tmp_path)
    monkeypatch.setenv(profile.TOOL_ENV, str(tool))
    assert profile.find_tool() == tool
    monkeypatch.delenv(profile.TOOL_ENV)
    home = tmp_path / "cuda"
    (home / "bin").mkdir(parents=True)
    shutil.copy(tool, home / "bin" / "ncu")
    monkeypatch.setenv("CUDA_HOME", str(home))
    assert profile.find_tool() == home / "bin" / "ncu"


def test_the_profiler_sees_only_the_call_in_its_range(tmp_path):
    prefix = profile.command(tmp_path / "ncu", tmp_path / "out" / "vector_add")
    assert prefix[:5] == (str(tmp_path / "ncu"), "--target-processes", "all", "--nvtx",
                          "--nvtx-include")  # fmt: skip
    assert prefix[5] == "tpuzzle-profile/"
    assert [prefix[i + 1] for i, a in enumerate(prefix) if a == "--section"] == list(
        profile.SECTIONS
    )
    assert prefix[-3:] == ("--export", str(tmp_path / "out" / "vector_add"), "--force-overwrite")


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="a GPU is present")
def test_without_ncu_or_a_gpu_one_line_and_exit_code_2(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    if not os.access("/usr/local/cuda/bin/ncu", os.X_OK):
        missing = cli("profile", "vector_add", PLAIN)
        assert missing.exit_code == 2 and missing.stderr.count("\n") == 1
        assert "needs NVIDIA Nsight Compute" in missing.stderr
    monkeypatch.setenv(profile.TOOL_ENV, str(fake_ncu(tmp_path)))
    no_gpu = cli("profile", "vector_add", PLAIN)
    assert no_gpu.exit_code == 2 and no_gpu.stderr.count("\n") == 1
    assert "needs an NVIDIA GPU, and none is visible here" in no_gpu.stderr


def test_bad_input_is_one_line(cli):
    assert "no such file" in cli("profile", "vector_add", "missing.py").stderr
    assert "did you mean vector_add" in cli("profile", "vectoradd", PLAIN).stderr


@pytest.mark.gpu
def test_one_call_profiled_on_the_gpu(tmp_path, vector_add, puzzles_root):
    try:
        profile.find_tool()
    except JudgeError:
        pytest.skip("no ncu on this machine")
    found = profile.profile(vector_add, puzzles_root / "vector_add" / "solutions" / "correct" /
                            "plain.py", None, tmp_path)  # fmt: skip
    assert found.answer == "right"
    assert [k.name for k in found.kernels] == ["vector_add_kernel"]  # not the judge's kernels
    k = found.kernels[0]
    assert k.duration_us > 10 and k.dram_pct > 50 and k.reading.startswith("memory-bound")
    assert found.report.is_file() and found.csv.read_text().startswith('"ID"')
