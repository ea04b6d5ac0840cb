"""judge/sources/shapes.py: a buffer's shape as expressions in the sizes, inferred from the shapes
an imported problem's generators gave it in every case."""

import itertools

import pytest

from judge.core.spec import evaluate
from judge.sources.shapes import candidates, fitting, infer


def observed(names, cases, shape_of):
    """(sizes, shape) for each case, given as a tuple of size values in the order of names."""
    return [(dict(zip(names, values, strict=True)), shape_of(*values)) for values in cases]


# ------------------------------------------------------------------------------- infer


def test_a_size_name():
    assert infer([({"N": 4}, (4,)), ({"N": 9}, (9,))], ["N"]) == ["N"]


def test_the_size_that_fits_among_several():
    obs = [({"M": 3, "N": 5}, (5,)), ({"M": 4, "N": 7}, (7,))]
    assert infer(obs, ["M", "N"]) == ["N"]


def test_a_constant_when_every_case_agrees():
    assert infer([({"N": 4}, (3,)), ({"N": 6}, (3,))], ["N"]) == ["3"]
    assert infer([({"N": 4}, (4, 3)), ({"N": 6}, (6, 3))], ["N"]) == ["N", "3"]


def test_a_name_is_preferred_to_a_constant_that_fits_as_well():
    assert infer([({"N": 8}, (8,)), ({"N": 8}, (8,))], ["N"]) == ["N"]
    assert fitting([({"N": 8}, 8)], ["N"]) == "N"
    assert fitting([({"M": 2, "N": 8}, 8)], ["M", "N"]) == "N"


def test_products():
    names = ["M", "K"]
    assert infer(observed(names, [(2, 3), (4, 5)], lambda m, k: (m * k,)), names) == ["M * K"]
    assert infer(observed(names, [(2, 3), (4, 5)], lambda m, k: (k * k,)), names) == ["K * K"]
    names = ["B", "H", "D"]
    cases = [(2, 3, 4), (3, 5, 2), (4, 2, 7)]
    assert infer(observed(names, cases, lambda b, h, d: (b * h * d,)), names) == ["B * H * D"]
    assert infer(observed(names, cases, lambda b, h, d: (b, h * d)), names) == ["B", "H * D"]
    assert infer(observed(names, cases, lambda b, h, d: (2 * b * d,)), names) == ["2 * B * D"]


def test_a_valid_convolutions_length():
    names = ["N", "K"]
    cases = [(10, 3), (20, 5), (7, 7)]
    assert infer(observed(names, cases, lambda n, k: (n - k + 1,)), names) == ["N - K + 1"]


def test_a_count_of_tiles():
    names = ["M", "T"]
    cases = [(10, 4), (17, 5), (9, 2)]
    assert infer(observed(names, cases, lambda m, t: (-(-m // t),)), names) == ["cdiv(M, T)"]


def test_the_positions_of_a_two_dimensional_valid_window():
    names = ["H", "W", "K", "L"]
    cases = [(8, 9, 3, 2), (12, 7, 5, 4), (6, 10, 2, 5)]
    found = infer(observed(names, cases, lambda h, w, k, l_: ((h - k + 1) * (w - l_ + 1),)), names)
    assert found == ["(H - K + 1) * (W - L + 1)"]


def test_each_dimension_of_a_matrix_on_its_own():
    names = ["M", "N"]
    cases = [(3, 5), (4, 7)]
    assert infer(observed(names, cases, lambda m, n: (m, n)), names) == ["M", "N"]
    assert infer(observed(names, cases, lambda m, n: (n, m)), names) == ["N", "M"]
    cases = [(3, 5), (4, 8)]
    assert infer(observed(names, cases, lambda m, n: (m, n + 1, 2)), names) == [
        "M", "N + 1", "2",
    ]  # fmt: skip


def test_shapes_of_differing_rank_give_the_element_count():
    assert infer([({"N": 4}, (4, 4)), ({"N": 3}, (9,))], ["N"]) == ["N * N"]
    obs = [({"M": 2, "N": 3}, (2, 3)), ({"M": 4, "N": 5}, (20,))]
    assert infer(obs, ["M", "N"]) == ["M * N"]


def test_a_dimension_that_fits_nothing_falls_back_to_the_element_count():
    # dim 0 is 2 then 5 and dim 1 8 then 5: neither follows from N, but 16 and 25 do
    assert infer([({"N": 4}, (2, 8)), ({"N": 5}, (5, 5))], ["N"]) == ["N * N"]


def test_a_scalar_is_one_element():
    assert infer([({"N": 4}, ()), ({"N": 6}, ())], ["N"]) == ["1"]


def test_none_when_nothing_fits():
    assert infer([({"N": 4}, (7,)), ({"N": 5}, (11,))], ["N"]) is None  # 2N - 1: no candidate
    assert infer([({"N": 4}, (4, 3)), ({"N": 6}, (6, 4))], ["N"]) is None
    assert infer([({}, (5,)), ({}, (6,))], []) is None  # differing, and no size to explain it
    assert infer([], ["N"]) is None


def test_without_sizes_only_a_constant():
    assert infer([({}, (5,)), ({}, (5,))], []) == ["5"]


# ------------------------------------------------------------------------------- fitting


def test_fitting_finds_the_expression_equal_to_every_target():
    targets = [({"N": 10, "K": 3}, 8), ({"N": 20, "K": 5}, 16)]
    assert fitting(targets, ["N", "K"]) == "N - K + 1"
    assert fitting([({"N": 10}, 5), ({"N": 12}, 6)], ["N"]) == "N // 2"
    assert fitting([({"N": 11}, 6), ({"N": 14}, 7)], ["N"]) == "cdiv(N, 2)"
    assert fitting([({"N": 10}, 12), ({"N": 3}, 5)], ["N"]) == "N + 2"
    assert fitting([({"N": 10}, 7)], []) == "7"
    assert fitting([({"N": 10}, 7), ({"N": 11}, 9)], ["N"]) is None


def test_fitting_never_divides_by_zero():
    # cdiv(N, K) and N // K come before N - K + 1, and K is 0 in the first case
    targets = [({"N": 6, "K": 0}, 7), ({"N": 9, "K": 2}, 8)]
    assert fitting(targets, ["N", "K"]) == "N - K + 1"
    assert fitting([({"N": 6, "K": 0}, 3)], ["N", "K"]) == "3"
    assert fitting([({"N": 6, "K": 0}, 3), ({"N": 6, "K": 0}, 4)], ["N", "K"]) is None
    assert infer([({"N": 6, "K": 0}, (6, 7)), ({"N": 8, "K": 3}, (8, 6))], ["N", "K"]) == [
        "N", "N - K + 1",
    ]  # fmt: skip


# ------------------------------------------------------------------------------- candidates


def test_candidates_start_with_the_names_then_the_constant_then_products():
    assert list(itertools.islice(candidates(["a"], {7}), 8)) == [
        "a", "7", "a * a", "a * a * a", "2 * a * a", "3 * a * a", "4 * a * a", "a * a * a * a",
    ]  # fmt: skip
    assert list(itertools.islice(candidates(["a", "b"], {7}), 6)) == [
        "a", "b", "7", "a * a", "a * b", "b * b",
    ]  # fmt: skip


def test_no_constant_when_the_cases_differ():
    assert "7" not in candidates(["a"], {7, 8})
    assert list(candidates(["a"], {7, 8}))[:2] == ["a", "a * a"]
    assert list(candidates([], {3})) == ["3"]
    assert list(candidates([], {3, 4})) == []


def test_sums_and_differences_come_after_products():
    found = list(candidates(["N", "K"], {1, 2}))
    assert found.index("K * K * K * K") < found.index("N + 1") < found.index("N - K + 1")
    assert found.index("N - K + 1") < found.index("(N - K + 1) * (N - K + 1)")


@pytest.mark.parametrize("names", [["N"], ["M", "N"], ["M", "N", "K", "T"]])
def test_every_candidate_is_an_expression_a_spec_accepts(names):
    sizes = dict.fromkeys(names, 3)
    for expr in candidates(names, {5}):
        assert isinstance(evaluate(expr, sizes), (int, float)), expr
