"""Shared fixtures. Kernels run in Triton's interpreter unless a test is marked gpu."""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before anything imports triton
os.environ["COLUMNS"] = "120"  # rich renders at a fixed width in every test

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PUZZLES = ROOT / "puzzles"


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def isolated_state(tmp_path, monkeypatch):
    """Every test gets its own results database and calibration cache, and no secret seed."""
    monkeypatch.setenv("TPUZZLE_DB", str(tmp_path / "results.db"))
    monkeypatch.setenv("TPUZZLE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TPUZZLE_SECRET_SEED", raising=False)
    monkeypatch.delenv("TPUZZLE_SECRET_SEED_FILE", raising=False)
    monkeypatch.delenv("TPUZZLE_PUZZLES", raising=False)
    monkeypatch.setenv("TPUZZLE_IMPORTED", str(tmp_path / "imported"))  # none, unless a test writes
    monkeypatch.setenv("TPUZZLE_SERVER", "0")  # judged in-process (tests/test_server.py aside)


@pytest.fixture(scope="session")
def puzzles_root() -> Path:
    return PUZZLES


@pytest.fixture(scope="session")
def vector_add(puzzles_root):
    from judge.core import registry

    return registry.get("vector_add", puzzles_root)


@pytest.fixture
def write_submission(tmp_path):
    """Write a submission file from source text and return its path."""

    def write(source: str, name: str = "submission.py") -> Path:
        path = tmp_path / name
        path.write_text(source)
        return path

    return write
