import subprocess
import sys

import pytest

from judge.core import registry
from judge.errors import JudgeError, UnknownPuzzle


def test_source_checkout_finds_the_catalogue(puzzles_root):
    assert "vector_add" in registry.puzzle_ids(registry.puzzles_root())
    assert registry.puzzles_root(puzzles_root) == puzzles_root


def test_environment_variable_wins_over_the_bundled_copy(tmp_path, monkeypatch):
    (tmp_path / "mine").mkdir()
    monkeypatch.setenv(registry.ENV_VAR, str(tmp_path))
    assert registry.puzzles_root() == tmp_path
    assert registry.puzzle_ids(tmp_path) == []


def test_explicit_directory_must_exist(tmp_path):
    with pytest.raises(JudgeError, match="--puzzles: .* is not a directory"):
        registry.puzzles_root(tmp_path / "missing")


def test_unknown_puzzle_suggests_the_closest(puzzles_root):
    with pytest.raises(UnknownPuzzle, match="did you mean vector_add"):
        registry.get("vectoradd", puzzles_root)
    with pytest.raises(UnknownPuzzle, match="tpuzzle list"):
        registry.get("zzzzzz", puzzles_root)


@pytest.mark.slow
def test_non_editable_install_ships_the_catalogue(tmp_path, puzzles_root):
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(puzzles_root.parent),
        ],
        check=True,
        capture_output=True,
    )
    assert (target / "judge" / "puzzles" / "vector_add" / "puzzle.yaml").is_file()
    code = (
        "from judge.core import registry; r = registry.puzzles_root(); "
        "print(r); print(registry.get('vector_add', r).title)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        check=True,
        text=True,
        capture_output=True,
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin"},
    )
    root, title = out.stdout.strip().splitlines()
    assert root.startswith(str(target))
    assert title == "Vector addition"


def write_puzzle(folder, source, puzzle_id):
    """A copy of vector_add named puzzle_id in folder."""
    import shutil

    target = folder / puzzle_id
    shutil.copytree(source / "vector_add", target)
    spec = target / "puzzle.yaml"
    spec.write_text(spec.read_text().replace("id: vector_add", f"id: {puzzle_id}"))
    return target


def test_imported_puzzles_are_found_beside_the_bundled_catalogue_only(tmp_path, puzzles_root):
    imported = registry.imported_root()
    assert imported == tmp_path / "imported"  # conftest: each test its own
    write_puzzle(imported / "leetgpu", puzzles_root, "leetgpu_1_add")
    bundled = registry.puzzles_root()
    assert "leetgpu_1_add" in registry.puzzle_ids(bundled)
    spec = registry.get("leetgpu_1_add", bundled)
    assert spec.directory == imported / "leetgpu" / "leetgpu_1_add"
    assert "leetgpu_1_add" in [s.id for s in registry.load_all(bundled)]
    own = tmp_path / "mine"
    write_puzzle(own, puzzles_root, "mine_1")
    assert registry.puzzle_ids(own) == ["mine_1"]  # an explicit catalogue: itself alone
    with pytest.raises(UnknownPuzzle):
        registry.get("leetgpu_1_add", own)


def test_the_imported_folder_follows_xdg_data_home(tmp_path, monkeypatch):
    monkeypatch.delenv(registry.IMPORTED_ENV)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert registry.imported_root() == tmp_path / "data" / "tpuzzle" / "imported"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert str(registry.imported_root()).endswith(".local/share/tpuzzle/imported")
