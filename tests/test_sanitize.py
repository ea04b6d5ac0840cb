import stat
import sys

import pytest

from judge.core.results import Verdict
from judge.core.spec import Case
from judge.errors import JudgeError
from judge.judging import runner
from judge.workers import sanitize

LOG = """\
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at 0x1a0 in vector_add_kernel
=========     by thread (31,0,0) in block (3,0,0)
=========     Address 0x7f3a2c000f00 is out of bounds
=========     and is 256 bytes after the nearest allocation at 0x7f3a2c000000 of size 3840 bytes
=========
========= Invalid __global__ write of size 4 bytes
=========     at 0x1a0 in vector_add_kernel
=========     by thread (30,0,0) in block (3,0,0)
=========
========= Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" \
on CUDA API call to cudaStreamSynchronize.
=========
========= ERROR SUMMARY: 3 errors
"""


def test_parse_counts_errors_and_keeps_distinct_findings_with_their_kernel():
    found = sanitize.parse(LOG)
    assert found.errors == 3 and found.complete
    assert found.findings == (
        "Invalid __global__ write of size 4 bytes in vector_add_kernel",
        'Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on '
        "CUDA API call to cudaStreamSynchronize",
    )
    clean = sanitize.parse("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n")
    assert (clean.errors, clean.findings, clean.complete) == (0, (), True)
    cut = sanitize.parse("\n".join(LOG.splitlines()[:4]))
    assert cut.errors == 1 and not cut.complete


def test_a_missing_tool_is_a_one_line_usage_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.delenv(sanitize.TOOL_ENV, raising=False)
    if (sanitize.Path("/usr/local/cuda/bin/compute-sanitizer")).exists():
        pytest.skip("a CUDA toolkit is installed here")
    with pytest.raises(JudgeError, match="compute-sanitizer") as caught:
        sanitize.find_tool()
    assert "\n" not in str(caught.value)


def fake_tool(tmp_path, log: str):
    """Stands for compute-sanitizer: runs the command after its options, then writes `log`."""
    tool = tmp_path / "compute-sanitizer"
    tool.write_text(
        f"#!{sys.executable}\n"
        "import subprocess, sys\n"
        "args = sys.argv[1:]\n"
        "log = args[args.index('--log-file') + 1]\n"
        "command = args[args.index('--print-limit') + 2:]\n"
        "code = subprocess.call(command, close_fds=False)\n"
        f"open(log, 'w').write({log!r})\n"
        "sys.exit(code)\n"
    )
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    return tool


@pytest.mark.parametrize(
    "log, verdict, reason",
    [
        (LOG, Verdict.FAILED, "memcheck"),
        ("========= ERROR SUMMARY: 0 errors\n", Verdict.PASSED, "ok"),
    ],
)
def test_the_worker_runs_under_the_tool_and_its_findings_decide(
    vector_add, puzzles_root, tmp_path, log, verdict, reason
):
    tool = fake_tool(tmp_path, log)
    solution = puzzles_root / "vector_add" / "solutions" / "correct" / "plain.py"
    case = Case(name="N=300", sizes=(("N", 300),), seed=4)
    options = runner.RunOptions(interpret=True, timeout_s=30, cases=(case,), sanitize=tool)
    report = runner.judge(vector_add, solution, options)
    assert (report.verdict, report.reason) == (verdict, reason), report.message
    assert report.sanitizer["errors"] == sanitize.parse(log).errors
    assert report.to_dict()["sanitizer"] == report.sanitizer
    assert any(n.startswith("compute-sanitizer memcheck") for n in report.notes)
