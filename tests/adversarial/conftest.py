"""Fixtures of the adversarial corpus."""

import shutil
from pathlib import Path

import pytest


@pytest.fixture
def small_catalogue(tmp_path, puzzles_root):
    """vector_add with one small test case, so that a class grades in seconds on the CPU."""

    def make(puzzle: str = "vector_add", test: str = "{sizes: {N: 1500}, seed: 5}") -> Path:
        catalogue = tmp_path / "catalogue"
        shutil.copytree(puzzles_root / puzzle, catalogue / puzzle)
        spec = catalogue / puzzle / "puzzle.yaml"
        head, rest = spec.read_text().split("tests:\n", 1)
        spec.write_text(head + f"tests:\n  - {test}\n" + rest[rest.index("benchmarks:") :])
        return catalogue

    return make
