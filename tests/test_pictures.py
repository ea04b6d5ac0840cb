"""The pictures of `tpuzzle run --visualize` as data (judge.insight.pictures): the layout of each
buffer, the colours, the regions labelled and the case drawn, on accesses made up here (no
interpreter)."""

import numpy as np
import pytest

from judge.core import registry
from judge.core.spec import Case
from judge.insight import pictures
from judge.insight.trace import Accesses


def rows(blocks: dict[int, range], launch: int = 0, atomic: int = 0) -> np.ndarray:
    """Accesses as the trace saves them: program -> the elements it touched."""
    parts = [np.array([[i, p, launch, atomic] for i in r], np.int64).reshape(-1, 4)
             for p, r in blocks.items()]  # fmt: skip
    return np.concatenate(parts) if parts else np.zeros((0, 4), np.int64)


def buffer(shape, stores=None, loads=None, role="out", grids=((1, 1, 1),)) -> Accesses:
    empty = np.zeros((0, 4), np.int64)
    n = int(np.prod(shape))
    shape = tuple(shape) if len(shape) > 1 else (n,)
    return Accesses("x_ptr", role, n, shape, empty if loads is None else loads,
                    empty if stores is None else stores, grids)  # fmt: skip


def blocked(n: int, block: int, past_end: bool = False) -> np.ndarray:
    """One program per block of a 1-D buffer, masked at the end unless past_end."""
    stop = lambda p: (p + 1) * block if past_end else min((p + 1) * block, n)  # noqa: E731
    return rows({p: range(p * block, stop(p)) for p in range(-(-n // block))})


def tiles(r: int, c: int, tile: int) -> np.ndarray:
    """Row-major r x c matrix in tile x tile programs, program_id(0) along the rows."""
    along = -(-r // tile)
    return rows({x + along * y: [i * c + j for i in range(x * tile, min(r, (x + 1) * tile))
                                 for j in range(y * tile, min(c, (y + 1) * tile))]
                 for x in range(along) for y in range(-(-c // tile))})  # fmt: skip


@pytest.mark.parametrize("shape", [(1, 1025), (1025, 1), (3, 1025)])
def test_a_thin_matrix_is_drawn_in_memory_order_never_as_a_strip(shape):
    r, c = shape
    a = buffer(shape, stores=tiles(r, c, 32), grids=((-(-r // 32), -(-c // 32), 1),))
    p = pictures.panel(a, "store")
    assert 8 <= p.width <= pictures.MAX_WIDTH and 2 <= p.rows <= 200
    assert p.rows <= 4 * p.width and p.width <= 8 * p.rows  # near square, not a strip
    assert "drawn in memory order" in p.title


def test_a_near_square_matrix_is_drawn_as_its_rows_and_columns():
    a = buffer((127, 129), stores=tiles(127, 129, 32), grids=((4, 5, 1),))
    p = pictures.panel(a, "store")
    assert (p.width, p.rows) == (129, 127) and "127 x 129" in p.title
    assert pictures.label(int(p.program[0]), 0, a.grids) == "0,0"
    assert pictures.label(int(p.program[128]), 0, a.grids) == "0,4"  # program_id(1) = 4


@pytest.mark.parametrize(("n", "block"), [(1025, 256), (3000, 1024), (4096, 128), (100, 16)])
def test_a_1d_buffer_wraps_at_a_width_that_divides_the_block(n, block):
    a = buffer((n,), stores=blocked(n, block))
    assert pictures.block_size(a.stores) == block  # the masked last block aside
    p = pictures.panel(a, "store")
    assert block % p.width == 0
    starts = np.arange(0, n, block)
    assert (starts % p.width == 0).all()  # every block starts a row of cells
    assert (p.program[starts] == np.arange(starts.size)).all()


def test_stores_past_the_end_show_the_block_and_are_drawn_beyond_the_buffer():
    a = buffer((1025,), stores=blocked(1025, 256, past_end=True))
    p = pictures.panel(a, "store")
    assert 256 % p.width == 0 and p.program.size > 1025
    assert (p.program[1025:] == 4).all()  # the last program's lanes past the end
    assert "255 stored past the end" in p.title


def test_programs_side_by_side_never_share_a_colour():
    # 8 x 2 tiles with program_id(0) along the rows: p and p + 8 sit side by side
    a = buffer((64, 16), stores=tiles(64, 16, 8), grids=((8, 2, 1),))
    panels = [pictures.panel(a, "store")]
    k = pictures.colour_count(panels)
    assert k != 8 and not pictures._clash(panels[0], k)


def test_atomics_from_several_programs_are_not_marked_as_stored_twice():
    atomic = np.concatenate([rows({0: range(4)}, atomic=1), rows({1: range(4)}, atomic=1)])
    p = pictures.panel(buffer((4,), stores=atomic), "store")
    assert p.twice.size == 0 and "4 updated atomically by several programs" in p.title
    plain = np.concatenate([rows({0: range(4)}), rows({1: range(2)})])
    q = pictures.panel(buffer((4,), stores=plain), "store")
    assert q.twice.tolist() == [0, 1] and "2 stored twice or more" in q.title


def test_each_patch_of_a_program_is_a_region_of_its_own():
    stores = rows({0: [0, 1, 6, 7], 1: [2, 3, 4, 5]})  # program 0 on both sides of program 1
    p = pictures.panel(buffer((8,), stores=stores), "store")
    found = sorted(sorted(r.tolist()) for r in pictures.regions(p))
    assert found == [[0, 1], [2, 3, 4, 5], [6, 7]]


def test_the_failing_case_drawn_is_the_largest_near_square_one(puzzles_root):
    spec = registry.get("matrix_transpose", puzzles_root)
    cases = [Case(name=f"{r}x{c}", sizes=(("rows", r), ("cols", c)), seed=1)
             for r, c in [(1, 1025), (127, 129), (31, 211), (2, 3)]]  # fmt: skip
    assert pictures.choose(spec, cases).name == "127x129"
    assert pictures.choose(spec, cases[:1] + cases[2:3]).name == "1x1025"  # none legible
