import textwrap

import pytest
import yaml

from judge.core.spec import evaluate, numel
from judge.core.spec_reader import load_spec
from judge.errors import SpecError

BASE = {
    "id": "toy",
    "title": "Toy",
    "difficulty": "easy",
    "statement": "Copy x to y.",
    "args": [
        {
            "name": "x_ptr",
            "role": "in",
            "dtype": "float32",
            "shape": ["N"],
            "draw": {"dist": "uniform", "low": -1, "high": 1},
        },
        {"name": "y_ptr", "role": "out", "dtype": "float32", "shape": ["N"]},
        {"name": "N", "role": "size"},
    ],
    "limits": {"N": [1, 1000]},
    "tolerance": {"atol": 1e-6, "rtol": 1e-6},
    "tests": [{"sizes": {"N": 3}, "seed": 1}],
    "benchmarks": [{"sizes": {"N": 1000}, "seed": 2}],
    "speed_of_light": {"bytes": "8 * N"},
}


def write(tmp_path, data, text=None):
    folder = tmp_path / "toy"
    folder.mkdir(exist_ok=True)
    path = folder / "puzzle.yaml"
    path.write_text(text if text is not None else yaml.safe_dump(data))
    return path


def edited(**changes):
    data = yaml.safe_load(yaml.safe_dump(BASE))
    for key, value in changes.items():
        data[key] = value
    return data


def test_vector_add_spec_loads(vector_add):
    assert vector_add.signature == "solve(a_ptr, b_ptr, c_ptr, N)"
    assert [a.role for a in vector_add.args] == ["in", "in", "out", "size"]
    assert vector_add.speed_of_light.formula == "12 * N"
    assert vector_add.benchmarks[0].size_map == {"N": 25_000_000}
    sizes = {c.size_map["N"] for c in vector_add.tests}
    assert {1, 2, 3, 127, 128, 129, 1023, 1024, 1025, 100_000_000} <= sizes


def test_minimal_spec_loads_with_defaults(tmp_path):
    spec = load_spec(write(tmp_path, BASE))
    assert spec.timeout_s == 60.0
    assert spec.speed_of_light.peak == "copy_bandwidth"
    assert spec.tests[0].name == "N=3"
    assert spec.tests[0].interpret is True


@pytest.mark.parametrize(
    "data, key, words",
    [
        (edited(title=None) | {"title": 3}, "title", "expected str"),
        ({k: v for k, v in BASE.items() if k != "tolerance"}, "tolerance", "missing key"),
        (edited(difficulty="impossible"), "difficulty", "unknown value"),
        (
            edited(args=[dict(BASE["args"][0], dtype="flaot32")] + BASE["args"][1:]),
            "args[0].dtype",
            "unknown value 'flaot32'",
        ),
        (
            edited(args=[dict(BASE["args"][0], shape=["M"])] + BASE["args"][1:]),
            "args[0].shape",
            "unknown name 'M'",
        ),
        (
            edited(tests=[{"sizes": {"N": 5000}, "seed": 1}]),
            "tests[0].sizes.N",
            "outside the limits",
        ),
        (edited(tests=[{"sizes": {"N": 5}}]), "tests[0].seed", "missing key"),
        (edited(tests=[{"sizes": {"N": "five"}, "seed": 1}]), "tests[0].sizes.N", "expected int"),
        (edited(speed_of_light={"bytes": "8 * Q"}), "speed_of_light.bytes", "unknown name"),
        (edited(limits={"N": [1]}), "limits.N", "[min, max]"),
        (edited(tolerance={"atol": -1, "rtol": 0}), "tolerance.atol", "non-negative"),
        (edited(id="other"), "id", "does not match"),
    ],
)
def test_malformed_spec_names_file_and_key(tmp_path, data, key, words):
    path = write(tmp_path, data)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {key}: "), message
    assert words in message
    assert "\n" not in message


def test_yaml_syntax_error_names_the_line(tmp_path):
    text = textwrap.dedent("""\
        id: toy
        title: [unclosed
        difficulty: easy
        """)
    path = write(tmp_path, None, text=text)
    with pytest.raises(SpecError, match=r"puzzle.yaml: line \d+: YAML syntax error"):
        load_spec(path)


def test_top_level_must_be_a_mapping(tmp_path):
    with pytest.raises(SpecError, match=r"\(top level\): expected a mapping"):
        load_spec(write(tmp_path, None, text="- just\n- a list\n"))


def test_missing_file(tmp_path):
    with pytest.raises(SpecError, match="cannot read"):
        load_spec(tmp_path / "nope" / "puzzle.yaml")


def test_evaluate_is_arithmetic_only():
    assert evaluate("2 * M * N * K", {"M": 2, "N": 3, "K": 4}) == 48
    assert evaluate("cdiv(N, 4)", {"N": 9}) == 3
    assert evaluate(7, {}) == 7
    for bad in ("__import__('os')", "N.real", "[N]", "N if N else 1"):
        with pytest.raises(ValueError):
            evaluate(bad, {"N": 1})


def test_numel(vector_add):
    assert numel(vector_add.arg("c_ptr"), {"N": 17}) == 17


def test_constraints_between_sizes(tmp_path):
    data = edited(
        args=BASE["args"] + [{"name": "K", "role": "size"}],
        limits={"N": [1, 1000], "K": [1, 1000]},
        tests=[{"sizes": {"N": 10, "K": 3}, "seed": 1}],
        benchmarks=[],
        constraints=["K <= N"],
    )
    spec = load_spec(write(tmp_path, data))
    assert spec.constraints == ("K <= N",)
    data["tests"].append({"sizes": {"N": 2, "K": 3}, "seed": 2})
    with pytest.raises(SpecError, match=r"tests\[1\].sizes: breaks the constraint 'K <= N'"):
        load_spec(write(tmp_path, data))
    data["constraints"] = ["K <= Q"]
    with pytest.raises(SpecError, match=r"constraints\[0\]: 'K <= Q': unknown name 'Q'"):
        load_spec(write(tmp_path, data))


@pytest.mark.parametrize("dtype", ["uint32", "float8_e4m3fn", "float8_e5m2"])
def test_uint32_and_float8_buffers_load(tmp_path, dtype):
    args = [dict(BASE["args"][0], dtype=dtype), dict(BASE["args"][1], dtype=dtype)]
    spec = load_spec(write(tmp_path, edited(args=args + BASE["args"][2:])))
    assert [a.dtype for a in spec.buffers] == [dtype, dtype]


def test_a_float8_without_triton_support_is_refused_by_name(tmp_path):
    args = [dict(BASE["args"][0], dtype="float8_e4m3fnuz")] + BASE["args"][1:]
    with pytest.raises(SpecError) as raised:
        load_spec(write(tmp_path, edited(args=args)))
    message = str(raised.value)
    assert "args[0].dtype: unknown value 'float8_e4m3fnuz'" in message
    assert "float8_e4m3fn, float8_e5m2" in message and "uint32" in message
