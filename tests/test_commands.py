"""judge.workers.commands: what a command hands the worker."""

from judge.workers.commands import input_sets


def test_input_sets_pair_each_seed_with_its_sealed_files():
    assert input_sets({"seed": 3, "inputs": {"a": "/p"}}) == [(3, {"a": "/p"})]
    assert input_sets({"seed": 3}) == [(3, {})]
    assert input_sets({"seeds": [1, 2], "inputs": [{"a": "x"}, {"a": "y"}]}) == [
        (1, {"a": "x"}),
        (2, {"a": "y"}),
    ]
