"""`tpuzzle hint`: a puzzle's ladder, one step per call, remembered per person."""

import pytest
from typer.testing import CliRunner

from judge.cli.app import app
from judge.core import registry
from judge.records import store


@pytest.fixture
def hint(monkeypatch, puzzles_root):
    monkeypatch.chdir(puzzles_root.parent)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, ["hint", *args], terminal_width=200)


def test_each_call_climbs_one_step_and_the_last_repeats(hint, puzzles_root):
    ladder = registry.get("vector_add", puzzles_root).hints
    assert len(ladder) == 3
    first = hint("vector_add")
    assert first.exit_code == 0
    assert "hint 1 of 3" in first.stdout and "hint 2 of 3" not in first.stdout
    assert "2 more" in first.stdout
    second = hint("vector_add")
    assert "hint 1 of 3" in second.stdout and "hint 2 of 3" in second.stdout
    hint("vector_add")
    last = hint("vector_add")
    assert "that was the last of its 3 hints" in last.stdout and "hint 3 of 3" in last.stdout
    assert store.hints_shown(store.connect(), store.default_submitter(), "vector_add") == 3


def test_again_shows_what_was_seen_and_reset_starts_over(hint):
    assert "no hint seen yet" in hint("softmax", "--again").stdout
    hint("softmax")
    again = hint("softmax", "--again")
    assert "hint 1 of 3" in again.stdout and "hint 2 of 3" not in again.stdout
    assert "start again from the first" in hint("softmax", "--reset").stdout
    assert "no hint seen yet" in hint("softmax", "--again").stdout


def test_progress_is_per_submitter_and_per_puzzle(hint):
    hint("vector_add", "--submitter", "ada")
    hint("vector_add", "--submitter", "ada")
    conn = store.connect()
    assert store.hints_shown(conn, "ada", "vector_add") == 2
    assert store.hints_shown(conn, "bob", "vector_add") == 0
    assert store.hints_shown(conn, "ada", "softmax") == 0


def test_an_unknown_puzzle_is_one_line_and_exit_code_2(hint):
    result = hint("vectoradd")
    assert result.exit_code == 2
    assert "did you mean vector_add" in result.stderr and result.stderr.count("\n") == 1
