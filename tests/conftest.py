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
    """Every test gets its own results database and calibration cache, and no secret seed.
    No truth is kept on disk (a GPU test's would be gigabytes under its temporary folder): the
    store's own tests turn it on."""
    monkeypatch.setenv("TPUZZLE_DB", str(tmp_path / "results.db"))
    monkeypatch.setenv("TPUZZLE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TPUZZLE_TRUTH_DISK_MB", "0")
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


EITHER_SIGN_CHECK = '''

def check(a, b, c, N):
    """|c| must be |a + b|: either sign is right."""
    bad = ((c.abs() - (a + b).abs()).abs() > 1e-5 + 1e-6 * (a + b).abs()).nonzero()
    if bad.numel() == 0:
        return None
    i = int(bad[0])
    return f"|c[{i}]| = {abs(float(c[i])):g}, expected |a + b| = {abs(float(a[i] + b[i])):g}"
'''


@pytest.fixture
def vector_add_copy(tmp_path, puzzles_root):
    """vector_add copied (without its solutions) under tmp_path, with text added to the end of
    its puzzle.yaml and of its reference.py; the copy's folder."""
    import shutil

    def make(spec_text: str = "", reference_text: str = "") -> Path:
        folder = tmp_path / "vector_add"
        ignore = shutil.ignore_patterns("solutions")
        shutil.copytree(puzzles_root / "vector_add", folder, ignore=ignore, dirs_exist_ok=True)
        for name, text in (("puzzle.yaml", spec_text), ("reference.py", reference_text)):
            (folder / name).write_text((folder / name).read_text() + text)
        return folder

    return make


@pytest.fixture
def either_sign(vector_add_copy):
    """vector_add judged by a check of its own (`check: reference`) that takes c = a + b and
    c = -(a + b) alike."""
    from judge.core import registry

    folder = vector_add_copy("check: reference\n", EITHER_SIGN_CHECK)
    return registry.get("vector_add", folder.parent)
