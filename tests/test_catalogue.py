import shutil

import pytest
from test_results import sample_report

from judge.errors import JudgeError
from judge.records import catalogue


@pytest.fixture
def one_puzzle(tmp_path, puzzles_root):
    root = tmp_path / "catalogue"
    shutil.copytree(puzzles_root / "vector_add", root / "vector_add")
    return root


def test_shipped_takes_the_first_correct_solution(one_puzzle):
    targets = catalogue.select(one_puzzle, None, [])
    assert [(t.spec.id, t.path.name) for t in targets] == [("vector_add", "autotuned.py")]


def test_directory_of_submissions(one_puzzle, tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    with pytest.raises(JudgeError, match="no file named after a puzzle"):
        catalogue.select(one_puzzle, subs, [])
    (subs / "vector_add.py").write_text("")
    (subs / "notes.py").write_text("")
    assert [t.path.name for t in catalogue.select(one_puzzle, subs, [])] == ["vector_add.py"]
    with pytest.raises(JudgeError, match="missing: no such directory"):
        catalogue.select(one_puzzle, tmp_path / "missing", [])
    with pytest.raises(JudgeError, match="not a directory"):
        catalogue.select(one_puzzle, subs / "notes.py", [])
    with pytest.raises(JudgeError, match="did you mean vector_add"):
        catalogue.select(one_puzzle, "vector_ad", [])


def test_one_puzzle_by_id(one_puzzle):
    assert [t.spec.id for t in catalogue.select(one_puzzle, "vector_add", [])] == ["vector_add"]


def test_rows_and_markdown(vector_add):
    row = catalogue.row(vector_add, sample_report())
    assert (row.puzzle, row.verdict, row.throughput, row.sol_pct) == (
        "vector_add",
        "failed",
        "3000 GB/s",
        95.0,
    )
    text = catalogue.markdown([row])
    assert text.splitlines()[0].startswith("| puzzle | difficulty | verdict | GPU |")
    assert (
        "| vector_add | easy | failed | NVIDIA H100 | 100.0 us | 1 | 3000 GB/s | 97.0% | 95.0% "
        "| 1.20x |" in text
    )


def test_the_best_solution_is_the_one_the_puzzle_names(one_puzzle):
    spec_file = one_puzzle / "vector_add" / "puzzle.yaml"
    correct = one_puzzle / "vector_add" / "solutions" / "correct"
    names = sorted(p.name for p in correct.glob("*.py"))
    last = names[-1]
    spec_file.write_text(spec_file.read_text() + f"best: {last}\n")
    [target] = catalogue.select(one_puzzle, None, [])
    assert target.path.name == last
    ladder = [p.name for p in catalogue.ladder(target.spec)]
    assert ladder[0] == last and sorted(ladder[1:]) == ladder[1:] == names[:-1]


def test_a_best_solution_that_is_not_there_falls_back_to_the_first(one_puzzle):
    spec_file = one_puzzle / "vector_add" / "puzzle.yaml"
    spec_file.write_text(spec_file.read_text() + "best: gone.py\n")
    [target] = catalogue.select(one_puzzle, None, [])
    assert target.path.name == "autotuned.py"
