"""Cases with inputs of their own: their own draw of an input, stored inputs, their own scalar
values, the constant draw, and where an imported puzzle came from (judge.core.spec_reader
and judge.core.inputs)."""

import shutil

import numpy as np
import pytest
import torch

from judge.core import inputs
from judge.core.spec_reader import load_spec
from judge.errors import SpecError

TESTS = """tests:
  - {sizes: {N: 6}, seed: 1}
  - name: own draws
    sizes: {N: 5}
    seed: 2
    draws:
      a_ptr: {dist: full, value: 2.5}
      b_ptr: {dist: randint, low: 3, high: 4}
  - {name: stored, sizes: {N: 3}, seed: 3, inputs: cases/stored.npz}
"""


@pytest.fixture
def spec(tmp_path, puzzles_root):
    """vector_add with a case of its own draws and one of stored inputs."""
    folder = tmp_path / "vector_add"
    shutil.copytree(puzzles_root / "vector_add", folder)
    (folder / "cases").mkdir()
    np.savez(folder / "cases" / "stored.npz", a_ptr=np.array([1, 2, 3], np.float32),
             b_ptr=np.array([[10], [20], [30]], np.float64))  # fmt: skip
    path = folder / "puzzle.yaml"
    head, rest = path.read_text().split("tests:\n", 1)
    path.write_text(head + TESTS + rest[rest.index("benchmarks:") :])
    return load_spec(path)


def test_a_case_with_inputs_of_its_own_is_named_by_its_draw(spec):
    plain, drawn, stored = spec.tests
    assert (plain.draw, plain.own) == ("", False)
    assert (drawn.draw, stored.draw) == ("test:own draws", "test:stored")
    assert spec.variant("test:own draws") is drawn
    assert spec.variant("test:stored") is stored
    assert spec.variant("test:N=6") is None  # a case without inputs of its own
    assert spec.variant("benchmark:stored") is None and spec.variant("mixed") is None


def test_its_own_draws_replace_the_arguments(spec):
    drawn = inputs.pristine(spec, {"N": 5}, 2, "test:own draws")
    assert drawn["a_ptr"].tolist() == [2.5] * 5
    assert drawn["b_ptr"].tolist() == [3.0] * 5
    assert drawn["a_ptr"].dtype == torch.float32
    plain = inputs.pristine(spec, {"N": 5}, 2)
    assert not torch.equal(plain["a_ptr"], drawn["a_ptr"])


def test_stored_inputs_are_read_in_the_arguments_type(spec):
    stored = inputs.pristine(spec, {"N": 3}, 3, "test:stored")
    assert stored["a_ptr"].tolist() == [1.0, 2.0, 3.0]
    assert stored["b_ptr"].tolist() == [10.0, 20.0, 30.0]  # flattened, float32 as the spec says
    assert stored["b_ptr"].dtype == torch.float32
    with pytest.raises(ValueError, match="a_ptr holds 3 elements, the case needs 4"):
        inputs.pristine(spec, {"N": 4}, 3, "test:stored")


def test_a_case_may_give_its_own_scalar(tmp_path, puzzles_root):
    folder = tmp_path / "rms_norm"
    shutil.copytree(puzzles_root / "rms_norm", folder)
    path = folder / "puzzle.yaml"
    scalar = next(a for a in load_spec(path).args if a.role == "scalar")
    head, rest = path.read_text().split("tests:\n", 1)
    sizes = {n: 4 for n in load_spec(path).size_names}
    shown = ", ".join(f"{n}: 4" for n in sizes)
    case = f"  - {{name: own, sizes: {{{shown}}}, seed: 1, scalars: {{{scalar.name}: 0.25}}}}\n"
    path.write_text(head + "tests:\n" + case + rest[rest.index("benchmarks:") :])
    spec = load_spec(path)
    pointers = {a.name: a.name for a in spec.buffers}
    args = inputs.call_args(spec, sizes, pointers, "test:own")
    assert 0.25 in args and scalar.value not in args
    assert scalar.value in inputs.call_args(spec, sizes, pointers)


@pytest.mark.parametrize(
    "case, words",
    [
        ("{sizes: {N: 3}, seed: 1, draws: {c_ptr: {dist: full}}}", "c_ptr: not an input buffer"),
        ("{sizes: {N: 3}, seed: 1, draws: {a_ptr: {dist: sideways}}}", "unknown value 'sideways'"),
        ("{sizes: {N: 3}, seed: 1, inputs: ../x.npz}", "expected a .npz file inside"),
        ("{sizes: {N: 3}, seed: 1, inputs: cases/none.npz}", "no such file beside puzzle.yaml"),
        ("{sizes: {N: 3}, seed: 1, scalars: {alpha: 1.0}}", "alpha: not a scalar"),
        ("{sizes: {N: 3}, seed: 1, draw: mixed, inputs: cases/stored.npz}", "takes no draw"),
    ],
)
def test_malformed_cases_of_their_own_name_the_key(spec, case, words):
    path = spec.directory / "puzzle.yaml"
    head, rest = path.read_text().split("tests:\n", 1)
    path.write_text(head + f"tests:\n  - {case}\n" + rest[rest.index("benchmarks:") :])
    with pytest.raises(SpecError, match=words) as error:
        load_spec(path)
    assert str(error.value).startswith(f"{path}: tests[0]")


def test_a_source_is_read_and_optional(spec, tmp_path):
    assert spec.source is None
    path = spec.directory / "puzzle.yaml"
    path.write_text(
        path.read_text()
        + "source: {kind: leetgpu, repository: r, commit: abc, path: challenges/x, licence: L}\n"
    )
    source = load_spec(path).source
    assert (source.kind, source.repository, source.commit, source.path, source.licence) == (
        "leetgpu", "r", "abc", "challenges/x", "L",
    )  # fmt: skip


def test_a_failing_case_of_its_own_is_reproduced_with_its_draw(spec, tmp_path):
    from judge.cli.options import custom_case
    from judge.errors import JudgeError
    from judge.judging.plan import Plan

    plan = Plan(spec, tmp_path / "s.py", "", True, truths=None)
    line = plan.reproduce(spec.tests[2])
    assert line.endswith("--size N=3 --seed 3 --draw test:stored --interpret")
    assert "--draw 'test:own draws'" in plan.reproduce(spec.tests[1])
    again = custom_case(spec, ["N=3"], 3, "test:stored")
    assert again.draw == "test:stored" and again.size_map == {"N": 3}
    with pytest.raises(JudgeError, match="its stored inputs are for --size N=3"):
        custom_case(spec, ["N=4"], 3, "test:stored")
    with pytest.raises(JudgeError, match="expected 'mixed', 'test:own draws', 'test:stored'"):
        custom_case(spec, ["N=4"], 3, "test:nothing")
