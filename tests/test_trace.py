"""`tpuzzle run --visualize`: which program loaded and stored which element, recorded in the
interpreter (judge.insight.trace) and drawn (judge.cli.visualize)."""

import numpy as np
import pytest
from typer.testing import CliRunner

from judge.cli.app import app
from judge.core.spec import Case
from judge.errors import JudgeError
from judge.insight import trace

WRONG = "puzzles/vector_add/solutions/wrong"


def case(n: int, seed: int = 5) -> Case:
    return Case(name=f"N={n}", sizes=(("N", n),), seed=seed)


def test_a_store_without_its_mask_is_seen_past_the_end(vector_add, puzzles_root):
    a, b, c = trace.traced(vector_add, puzzles_root.parent / WRONG / "failed_no_mask.py",
                           case(1025))  # fmt: skip
    assert (a.name, a.role, b.role, c.role) == ("a_ptr", "in", "in", "out")
    assert c.past_end == 255 and c.before_start == 0  # blocks of 256: 5 programs, 1280 lanes
    assert (c.writes == 1).all()
    assert sorted(set(c.stores[:, 1])) == [0, 1, 2, 3, 4]
    assert np.unique(a.loads[a.loads[:, 0] < 1025][:, 0]).size == 1025
    first = c.stores[c.stores[:, 0] < 256]
    assert set(first[:, 1]) == {0}  # program 0 wrote the first block


def test_a_program_id_mistake_shows_one_program_writing_everything(vector_add, puzzles_root):
    [_, _, c] = trace.traced(vector_add, puzzles_root.parent / WRONG /
                             "failed_no_program_id.py", case(3000))  # fmt: skip
    inside = c.stores[(c.stores[:, 0] >= 0) & (c.stores[:, 0] < 3000)]
    assert len(set(inside[:, 1])) == 3  # three programs store, all into the first block
    assert np.unique(inside[:, 0]).max() < 1024
    assert (c.writes[:1024] >= 2).all() and (c.writes[1024:] == 0).all()


def test_a_case_too_large_to_draw_is_refused_in_one_line(vector_add, puzzles_root):
    with pytest.raises(JudgeError, match="up to 65536 elements; a_ptr, b_ptr, c_ptr has more"):
        trace.traced(vector_add, puzzles_root / "vector_add" / "template.py", case(1 << 17))


def test_run_visualize_draws_the_largest_small_failing_case(monkeypatch, puzzles_root, tmp_path):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(puzzles_root.parent)
    png = tmp_path / "access.png"
    result = CliRunner().invoke(
        app,
        [
            "run",
            "vector_add",
            f"{WRONG}/failed_grid_rounds_down.py",
            "--interpret",
            "--no-save",
            "--visualize",
            str(png),
        ],  # fmt: skip
    )
    assert result.exit_code == 1, result.output
    assert "wrote" in result.stderr and "case N=1025," in result.stderr  # the largest that failed
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    chosen = tmp_path / "chosen.png"
    sized = CliRunner().invoke(
        app,
        [
            "run",
            "vector_add",
            f"{WRONG}/failed_no_mask.py",
            "--interpret",
            "--no-save",
            "--size",
            "N=3",
            "--visualize",
            str(chosen),
        ],  # fmt: skip
    )
    assert "case N=3" in sized.stderr and chosen.is_file()


def test_each_access_knows_its_launch_and_whether_it_was_atomic(puzzles_root):
    from judge.core import registry

    scan = registry.get("prefix_sum", puzzles_root)
    solution = puzzles_root / "prefix_sum" / "solutions" / "correct" / "three_pass.py"
    inp, out = trace.traced(scan, solution, case(5000))  # blocks of 4096: two programs a pass
    assert out.grids == ((2, 1, 1), (1, 1, 1), (2, 1, 1))
    assert set(inp.loads[:, 2]) == {0, 2}  # the first and the last pass read the input
    assert set(map(tuple, out.stores[:, 1:3].tolist())) == {(0, 2), (1, 2)}  # the last writes
    assert (out.stores[:, 3] == 0).all()  # plain stores
    dot = registry.get("dot_product", puzzles_root)
    atomic = puzzles_root / "dot_product" / "solutions" / "correct" / "atomic.py"
    *_, result = trace.traced(dot, atomic, case(20000))  # zeroed, then blocks of 8192 add
    assert result.grids == ((1, 1, 1), (3, 1, 1)) and result.shape == (1,)
    zeroed, added = result.stores[result.stores[:, 2] == 0], result.stores[result.stores[:, 2] == 1]
    assert zeroed[:, 3].tolist() == [0] and (added[:, 3] == 1).all()
    assert sorted(added[:, 1].tolist()) == [0, 1, 2]
