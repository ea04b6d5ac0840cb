"""`tpuzzle run --visualize` drawn (judge.cli.visualize): the key under the pictures and the PNG,
on accesses made up here (no interpreter)."""

import struct

import pytest
from test_pictures import blocked, buffer, tiles

from judge.cli import visualize
from judge.insight import pictures
from judge.insight.trace import Accesses


def test_the_key_names_every_program_drawn_with_its_colour():
    n, block = 20 * 64, 64
    panels = [pictures.panel(buffer((n,), stores=blocked(n, block)), "store")]
    k = pictures.colour_count(panels)
    assert 5 <= k <= len(pictures.PALETTE)
    key = visualize.Key.of(panels, k, ((20, 1, 1),), 10.0)
    assert "repeat every" in " ".join(key.heading)
    named = {}
    for colour, words in key.entries:
        if colour in pictures.PALETTE:
            for program in words.removeprefix("programs ").removeprefix("program ").split(", "):
                named[int(program)] = pictures.PALETTE.index(colour)
    assert sorted(named) == list(range(20))
    assert all(c == p % k for p, c in named.items())  # the repeat the heading states


def test_a_picture_is_written_as_a_png_of_sensible_size(tmp_path):
    pytest.importorskip("matplotlib")
    a = buffer((1, 1025), stores=tiles(1, 1025, 32)[:32], grids=((1, 1, 1),))
    b = Accesses("y_ptr", "in", 1025, (1025,), blocked(1025, 256), a.stores[:0], a.grids)
    png = tmp_path / "access.png"
    visualize.draw([b, a], "matrix_transpose · case one row", png)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert 800 <= width <= 1400 and 300 <= height <= 2400  # neither a strip nor a poster
