"""Property-based tests: malformed puzzle specs and the comparison of awkward floats.

A spec file, however broken, must give one line naming the file (exit code 2 in the CLI), never a
traceback; the comparison of arrays full of NaN, infinities, signed zeros and denormals must agree
with the rule written out element by element in plain Python.
"""

from __future__ import annotations

import copy
import math
import shutil

import pytest
import torch
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge.core import check, inputs
from judge.core.spec import Arg, Tolerance
from judge.core.spec_reader import load_spec
from judge.errors import SpecError

FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# ------------------------------------------------------------------------------ spec files

yaml_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)
yaml_values = st.recursive(
    yaml_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def paths_of(data, prefix=()):
    """Every path to a value inside nested dicts and lists."""
    yield prefix
    if isinstance(data, dict):
        for key, value in data.items():
            yield from paths_of(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from paths_of(value, (*prefix, i))


@st.composite
def mutated_specs(draw, original: dict):
    """The vector_add spec with one to three values deleted, replaced or retyped."""
    data = copy.deepcopy(original)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in paths_of(data) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["delete", "replace", "stringify", "wrap"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "replace":
            parent[path[-1]] = draw(yaml_values)
        elif action == "stringify":
            parent[path[-1]] = str(parent[path[-1]])
        else:
            parent[path[-1]] = [parent[path[-1]]]
    return data


@pytest.fixture(scope="module")
def original_spec(puzzles_root) -> dict:
    return yaml.safe_load((puzzles_root / "vector_add" / "puzzle.yaml").read_text())


def assert_one_line_naming(path, load) -> None:
    try:
        load()
    except SpecError as exc:
        message = str(exc)
        assert message.startswith(str(path)) and "\n" not in message, message


@FUZZ
@given(data=st.data())
def test_a_mutated_spec_loads_or_gives_one_line_naming_the_file(original_spec, tmp_path, data):
    spec = data.draw(mutated_specs(original_spec))
    path = tmp_path / "puzzle.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True))
    assert_one_line_naming(path, lambda: load_spec(path))


@FUZZ
@given(text=st.text(max_size=400))
def test_any_text_loads_or_gives_one_line_naming_the_file(tmp_path, text):
    path = tmp_path / "puzzle.yaml"
    path.write_text(text, encoding="utf-8")
    assert_one_line_naming(path, lambda: load_spec(path))


@FUZZ
@given(raw=st.binary(max_size=200))
def test_any_bytes_load_or_give_one_line_naming_the_file(tmp_path, raw):
    path = tmp_path / "puzzle.yaml"
    path.write_bytes(raw)
    assert_one_line_naming(path, lambda: load_spec(path))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_the_cli_answers_a_mutated_spec_with_exit_code_2_and_one_line(
    original_spec, puzzles_root, tmp_path_factory, data
):
    from typer.testing import CliRunner

    from judge.cli.app import app

    spec = data.draw(mutated_specs(original_spec))
    root = tmp_path_factory.mktemp("catalogue")
    shutil.copytree(puzzles_root / "vector_add", root / "vector_add")
    (root / "vector_add" / "puzzle.yaml").write_text(yaml.safe_dump(spec, allow_unicode=True))
    result = CliRunner().invoke(app, ["show", "vector_add", "--puzzles", str(root)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    if result.exit_code != 0:
        assert result.exit_code == 2
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1 and "puzzle.yaml" in lines[0], result.output


# ------------------------------------------------------------------------------ comparison

SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-45, -1e-45, 1.17e-38, 3.4e38, -3.4e38]
float32s = st.one_of(
    st.sampled_from(SPECIAL),
    st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True),
)
OUT = Arg(name="c_ptr", role="out", dtype="float32", shape=("N",))


def element_ok(got: float, exp: float, atol: float, rtol: float) -> bool:
    """The rule, written independently: equal (infinities included), both NaN, or close."""
    if math.isnan(got) or math.isnan(exp):
        return math.isnan(got) and math.isnan(exp)
    if got == exp:
        return True
    if math.isinf(got) or math.isinf(exp):
        return False
    return abs(got - exp) <= atol + rtol * abs(exp)


@FUZZ
@given(
    pairs=st.lists(st.tuples(float32s, float32s), min_size=1, max_size=40),
    atol=st.sampled_from([0.0, 1e-6, 1e-3, 1.0]),
    rtol=st.sampled_from([0.0, 1e-6, 1e-2]),
)
def test_check_output_agrees_with_the_rule_element_by_element(pairs, atol, rtol):
    got = torch.tensor([g for g, _ in pairs], dtype=torch.float32)
    exp = torch.tensor([e for _, e in pairs], dtype=torch.float32).double()
    lay = inputs.Layout(OUT, len(pairs), inputs.guard_elems("float32"))
    full = inputs.guarded(lay, None, "cpu")
    inputs.data_view(full, lay).copy_(got)
    result = check.check_output(lay, full, exp, Tolerance(atol, rtol), was_output=False)
    wrong = [
        i
        for i, (g, e) in enumerate(zip(got.double().tolist(), exp.tolist(), strict=True))
        if not element_ok(g, e, atol, rtol)
    ]
    assert result.mismatches == len(wrong)
    assert [m.index for m in result.first] == wrong[: check.FIRST_MISMATCHES]
    assert result.ok == (not wrong)
    assert result.nan_count == sum(math.isnan(got[i].item()) for i in wrong)
    if not wrong:
        assert math.isfinite(result.max_error)


@FUZZ
@given(values=st.lists(float32s, min_size=1, max_size=40), flip=st.data())
def test_check_input_sees_any_bit_changed_even_nan_payloads_and_signed_zeros(values, flip):
    arg = Arg(name="a_ptr", role="in", dtype="float32", shape=("N",), draw=None)
    initial = torch.tensor(values, dtype=torch.float32)
    lay = inputs.Layout(arg, len(values), inputs.guard_elems("float32"))
    full = inputs.guarded(lay, initial, "cpu")
    assert check.check_input(lay, full, initial).ok
    i = flip.draw(st.integers(0, len(values) - 1))
    bit = flip.draw(st.integers(0, 31))
    bits = inputs.data_view(full, lay).view(torch.int32)
    bits[i] ^= 1 << bit if bit < 31 else -(2**31)
    result = check.check_input(lay, full, initial)
    assert not result.ok and result.input_changed == 1
