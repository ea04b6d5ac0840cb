from dataclasses import replace

import pytest
from test_bench import sweep_timing
from test_results import sample_report

from judge.cli import plot


def test_draw_sweep_writes_a_png(vector_add, tmp_path):
    pytest.importorskip("matplotlib")
    report = replace(
        sample_report(),
        timing=tuple(
            sweep_timing(f"N={n}", n, 0.004 + n * 4e-9, 0.005 + n * 4e-9)
            for n in (1000, 100_000, 10_000_000)
        ),
    )
    target = tmp_path / "sweep.png"
    plot.draw_sweep(vector_add, report, target)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and target.stat().st_size > 10_000


def test_missing_says_how_to_install(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    assert "pip install 'tpuzzle[plot]'" in plot.missing()
