"""A puzzle the GPU cannot run is refused before the submission is loaded (judge.core.capability
and the runner's gate)."""

from dataclasses import replace

import pytest

from judge.core import capability
from judge.core.results import EnvInfo
from judge.core.spec import Requires

GPU = EnvInfo(mode="gpu", device="Tesla T4", driver="535", cuda="12.1", triton="3.6.0",
              torch="2.11.0", python="3.12.3", capability="7.5", shared_memory_kb=64)  # fmt: skip


def needing(spec, **needs):
    return replace(spec, requires=Requires(**needs))


def test_what_the_device_lacks_is_said(vector_add):
    assert capability.missing(vector_add, GPU) is None
    bf16 = capability.missing(needing(vector_add, bf16=True), GPU)
    assert bf16 == (
        "vector_add needs bfloat16 arithmetic (compute capability 8.0); Tesla T4 has compute "
        "capability 7.5 and 64 KiB of shared memory per block"
    )
    both = capability.missing(needing(vector_add, capability=(9, 0), shared_memory_kb=200), GPU)
    assert "needs compute capability 9.0 and 200 KiB of shared memory per block;" in both
    assert capability.missing(needing(vector_add, fp16_tensor_cores=True), GPU) is None
    pascal = replace(GPU, capability="6.1", device="Tesla P100")
    assert "float16 tensor cores" in capability.missing(
        needing(vector_add, fp16_tensor_cores=True), pascal
    )


@pytest.mark.parametrize(
    "env",
    [
        replace(GPU, mode="interpreter", capability=""),  # the interpreter emulates every type
        replace(GPU, capability=""),  # a device that did not say
    ],
)
def test_no_refusal_without_a_gpu_that_says_what_it_has(vector_add, env):
    assert capability.missing(needing(vector_add, bf16=True), env) is None


def test_requires_is_read_from_the_spec(tmp_path, vector_add):
    from judge.core.spec_reader import load_spec
    from judge.errors import SpecError

    path = vector_add.directory / "puzzle.yaml"
    text = path.read_text()
    mine = tmp_path / "vector_add"
    import shutil

    shutil.copytree(vector_add.directory, mine)
    (mine / "puzzle.yaml").write_text(
        text + "requires: {capability: '8.0', bf16: true, shared_memory_kb: 96}\n"
    )
    assert load_spec(mine / "puzzle.yaml").requires == Requires((8, 0), True, False, 96)
    (mine / "puzzle.yaml").write_text(text + "requires: {capability: 'eight'}\n")
    with pytest.raises(SpecError, match="requires.capability: 'eight': expected MAJOR.MINOR"):
        load_spec(mine / "puzzle.yaml")


def test_the_runner_refuses_before_the_submission_is_loaded(vector_add, monkeypatch, tmp_path):
    """The worker reports a device that lacks bf16: the run ends in error unsupported-device
    and the submission (which would print if imported) is never loaded."""
    from judge.judging import runner

    submission = tmp_path / "s.py"
    submission.write_text("print('LOADED')\ndef solve(a_ptr, b_ptr, c_ptr, N):\n    pass\n")
    spec = needing(vector_add, bf16=True)
    monkeypatch.setattr(
        capability, "missing", lambda s, env: "vector_add needs bfloat16 arithmetic"
    )
    report = runner.judge(spec, submission, runner.RunOptions(interpret=True, timing=False))
    assert (report.verdict.value, report.reason) == ("error", "unsupported-device")
    assert report.message == "vector_add needs bfloat16 arithmetic"
    assert "LOADED" not in report.output and not report.cases[0].status == "passed"
