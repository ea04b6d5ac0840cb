"""The pure parts of `tpuzzle import gpumode`: the data's layout (judge.sources.layout) and a
tolerance that follows the sizes (judge.sources.tolerances)."""

import pytest

from judge.sources import layout, tolerances


class Tensor:
    """A stand-in for a tensor: the layout sees only what `is_tensor` says."""

    def __init__(self, name):
        self.name = name


def is_tensor(value):
    return isinstance(value, Tensor)


def test_a_tuple_is_named_as_ref_kernel_unpacks_it_and_nested_items_by_their_place():
    data = (Tensor("x"), {"norm.weight": Tensor("w"), "bias": Tensor("b")}, [3, 0.5], {"n": 8})
    tree = layout.tree(data, ["x", "weights", "pair", "config"], is_tensor)
    assert layout.names(tree) == [
        "x", "weights_norm_weight", "weights_bias", "pair_0", "pair_1", "config_n",
    ]  # fmt: skip
    assert [(n, getattr(v, "name", v)) for n, v in layout.leaves(tree, data)] == [
        ("x", "x"), ("weights_norm_weight", "w"), ("weights_bias", "b"), ("pair_0", 3),
        ("pair_1", 0.5), ("config_n", 8),
    ]  # fmt: skip


def test_unnamed_tuples_one_tensor_and_a_dict_at_the_top():
    assert layout.names(layout.tree((Tensor("a"), Tensor("b")), [], is_tensor)) == ["x0", "x1"]
    assert layout.tree(Tensor("a"), [], is_tensor) == {"leaf": "data"}
    top = layout.tree({"x": Tensor("x"), "2d": Tensor("y")}, [], is_tensor)
    assert layout.names(top) == ["x", "x2d"]  # every name an identifier


def test_what_the_layout_does_not_map_is_said():
    with pytest.raises(layout.NotMapped, match="a Tensor"):  # a stand-in not taken for a tensor
        layout.tree((Tensor("a"),), [], lambda value: False)
    with pytest.raises(layout.NotMapped, match="keys are not all strings"):
        layout.tree(({1: Tensor("a")},), [], is_tensor)


def test_data_laid_out_otherwise_is_found():
    tree = layout.tree((Tensor("a"), {"k": 1}), ["a", "c"], is_tensor)
    for other in [(Tensor("a"),), (Tensor("a"), {"j": 1}), [Tensor("a"), {"k": 1}]]:
        with pytest.raises((KeyError, TypeError)):
            list(layout.leaves(tree, other))


def test_a_resolved_layout_builds_the_data_from_arguments():
    tree = layout.tree((Tensor("x"), {"n": 4, "eps": 0.1, "on": True}), ["x", "cfg"], is_tensor)
    what = {
        "x": {"tensor": "x"},
        "cfg_n": {"size": "N"},
        "cfg_eps": {"scalar": "cfg_eps"},
        "cfg_on": {"value": True},
    }
    resolved = layout.resolved(tree, what)
    assert resolved == {
        "tuple": [
            {"tensor": "x"},
            {
                "dict": [
                    ["n", {"size": "N"}],
                    ["eps", {"scalar": "cfg_eps"}],
                    ["on", {"value": True}],
                ]
            },
        ]
    }
    given = {("tensor", "x"): "X", ("size", "N"): 7, ("scalar", "cfg_eps"): 0.25}
    built = layout.build(resolved, lambda kind, name: given[kind, name])
    assert built == ("X", {"n": 7, "eps": 0.25, "on": True})
    assert layout.build({"list": [{"value": None}]}, None) == [None]


def test_mapped_replaces_every_tensor_and_keeps_the_rest():
    data = (Tensor("a"), [Tensor("b"), 2], {"c": Tensor("c"), "s": "text"})
    out = layout.mapped(data, lambda t: t.name.upper(), is_tensor)
    assert out == ("A", ["B", 2], {"c": "C", "s": "text"})


# ------------------------------------------------------------------------------- tolerances


def test_a_tolerance_every_case_agrees_on_is_that_number():
    assert tolerances.fitted([({"n": 10}, 1e-3), ({"n": 99}, 1e-3)], ["n"]) == 1e-3


def test_a_tolerance_that_grows_is_a_number_times_an_expression():
    seen = [({"n": n, "m": 3}, 1e-5 * n**0.5) for n in (1023, 1024, 4096)]
    assert tolerances.fitted(seen, ["n", "m"]) == "1e-05 * sqrt(n)"
    product = [({"n": n, "m": m}, 2e-7 * n * m) for n, m in ((4, 5), (8, 3), (16, 16))]
    assert tolerances.fitted(product, ["n", "m"]) == "2e-07 * n * m"


def test_a_tolerance_no_expression_gives_is_none():
    seen = [({"n": 4}, 1e-3), ({"n": 9}, 5e-2), ({"n": 16}, 1e-4)]
    assert tolerances.fitted(seen, ["n"]) is None


def test_what_a_number_of_the_data_is():
    sizes = {"n": [64, 200], "dim": [8, 8], "hidden_dim": [8, 8]}
    assert layout.number("config_n", [64, 200], sizes) == {"size": "n"}
    assert layout.number("hiddendim", [8, 8], sizes) == {"size": "hidden_dim"}  # same name first
    assert layout.number("heads", [128, 128], sizes) == {"value": 128}  # a constant
    assert layout.number("on", [True, True], sizes) == {"value": True}
    assert layout.number("bins", [16, 50], sizes) == {"size": "bins"}  # a size of its own
    assert layout.number("eps", [0.5, 0.25], sizes) == {"scalar": "eps"}
    with pytest.raises(layout.NotMapped, match="'fast' in one case, 'slow' in another"):
        layout.number("mode", ["fast", "slow"], sizes)
    with pytest.raises(layout.NotMapped):
        layout.number("flag", [True, False], sizes)
