"""Input files named in a command: both sides of the channel walk the same lists."""

from judge.workers.handing import HANDED, with_paths


def test_only_the_input_lists_change_however_nested():
    command = {
        "op": "bench",
        "inputs": [{"a_ptr": "x", "b_ptr": "y"}, {}],
        "recheck_inputs": [{"a_ptr": "x"}],
        "file": "x",
        "seeds": [1, 2],
    }
    changed = with_paths(command, lambda path: HANDED + path)
    assert changed["inputs"] == [{"a_ptr": "fd:x", "b_ptr": "fd:y"}, {}]
    assert changed["recheck_inputs"] == [{"a_ptr": "fd:x"}]
    assert changed["file"] == "x" and changed["seeds"] == [1, 2]
    assert command["inputs"][0]["a_ptr"] == "x"  # the command itself is left as it was
