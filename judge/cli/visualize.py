"""`tpuzzle run --visualize FILE.png`: the pictures judge.insight.pictures lays out, drawn with
matplotlib (the `plot` extra): each buffer of one call as a grid of cells coloured by program and
labelled with its program ids, and the key under them. Outputs never written are black, inputs
never loaded grey, elements stored twice or more (not atomically) crossed in red, accesses past
the end red cells after a thick line."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from judge.insight import pictures
from judge.insight.pictures import (
    OUTSIDE,
    PALETTE,
    UNREAD,
    UNWRITTEN,
    Panel,
)
from judge.insight.trace import Accesses


def draw(accesses: list[Accesses], title: str, path: Path) -> None:
    """Every buffer's panels, then the key, into one PNG at path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grids = accesses[0].grids
    panels = [pictures.panel(a, kind) for a in accesses for kind in pictures.kinds(a.role)]
    colours = pictures.colour_count(panels)
    cell, boxes, titles, (across, down) = pictures.fit(panels)
    width = max(7.5, across + 0.4)
    key = Key.of(panels, colours, grids, width - 0.8)
    height = 0.55 + down + 0.3 + 0.22 * key.lines + 0.15
    fig = plt.figure(figsize=(width, height))
    fig.suptitle(title, fontsize=11, y=1 - 0.12 / height, va="top")
    for p, (x, y, w, h), lines in zip(panels, boxes, titles, strict=True):
        ax = fig.add_axes([x / width, 1 - (0.55 + y + h) / height, w / width, h / height])
        _panel(ax, p, colours, cell, grids)
        ax.set_title("\n".join(lines), fontsize=8, loc="left")
    key.draw(fig.add_axes([0.4 / width, 0, 1 - 0.8 / width, (height - 0.85 - down) / height]))
    fig.savefig(path, dpi=110)
    plt.close(fig)


@dataclass(frozen=True)
class Key:
    """The key under the pictures: a heading, then its entries in columns."""

    heading: tuple[str, ...]  # its lines
    entries: tuple[tuple[str, str], ...]  # (colour, words); colour "x" for the red cross
    columns: int

    @classmethod
    def of(cls, panels: list[Panel], colours: int, grids, inches: float) -> Key:
        found = pictures.entries(panels, colours, grids)
        count = len(np.unique(np.concatenate([pictures.program_pairs(q) for q in panels]), axis=0))
        heading = textwrap.wrap(pictures.heading_text(count, colours, grids), int(inches / 0.075))
        longest = max((len(w) for _, w in found), default=1)
        columns = max(1, min(4, int(inches / (0.3 + 0.066 * longest))))
        return cls(tuple(heading), tuple(found), columns)

    @property
    def lines(self) -> int:
        return len(self.heading) + -(-len(self.entries) // self.columns)

    def draw(self, ax) -> None:
        ax.axis("off")
        ax.set_xlim(0, 1)
        ax.set_ylim(self.lines + 0.2, -0.1)
        for i, words in enumerate(self.heading):
            ax.text(0, i + 0.5, words, va="center", fontsize=8.5, fontweight="bold")
        for i, (colour, words) in enumerate(self.entries):
            x, y = (i % self.columns) / self.columns, len(self.heading) + i // self.columns + 0.5
            if colour == "x":
                ax.scatter([x + 0.01], [y], marker="x", color=OUTSIDE, s=40, linewidths=1.2)
            else:
                ax.scatter([x + 0.01], [y], marker="s", s=90, color=colour, edgecolors="#555")
            ax.text(x + 0.028, y, words, va="center", fontsize=8.5)


def _panel(ax, p: Panel, colours: int, cell: float, grids) -> None:
    from matplotlib.colors import to_rgb

    image = np.ones((p.program.size, 3))
    drawn = p.program >= 0
    palette = np.array([to_rgb(c) for c in PALETTE[:colours]])
    image[drawn] = palette[p.program[drawn] % colours]
    image[: p.n][~drawn[: p.n]] = to_rgb(UNWRITTEN if p.kind == "store" else UNREAD)
    image[p.n :][drawn[p.n :]] = to_rgb(OUTSIDE)
    ax.imshow(image.reshape(p.rows, p.width, 3), interpolation="nearest", aspect="auto")
    ax.set_xlim(-0.5, p.width - 0.5)
    ax.set_ylim(p.rows - 0.5, -0.5)
    _lines(ax, p, cell)
    if p.twice.size:
        size = min(40.0, (cell * 72 * 0.7) ** 2)
        ax.scatter(p.twice % p.width, p.twice // p.width, marker="x", color=OUTSIDE, s=size,
                   linewidths=0.9)  # fmt: skip
    _labels(ax, p, cell, grids)
    ax.set_xticks([])
    ax.set_yticks([])


def _lines(ax, p: Panel, cell: float) -> None:
    """Cell borders where cells are large enough, lines between a matrix's rows or planes, and
    a thick line where the buffer ends and cells past its end begin."""
    if cell * 110 >= 6:
        ax.set_xticks(np.arange(-0.5, p.width, 1), minor=True)
        ax.set_yticks(np.arange(-0.5, p.rows, 1), minor=True)
        ax.grid(which="minor", color="white", linewidth=0.5)
        ax.tick_params(which="minor", length=0)
    for r in range(p.band, p.rows, p.band or p.rows):
        ax.axhline(r - 0.5, color="#333333", linewidth=1.2)
    if p.program.size > p.n:
        row, col = divmod(p.n, p.width)
        xs = [-0.5, col - 0.5, col - 0.5, p.width - 0.5]
        ax.plot(xs, [row + 0.5, row + 0.5, row - 0.5, row - 0.5], color="black", lw=2.2)


def _labels(ax, p: Panel, cell: float, grids) -> None:
    """Each patch of one program's cells labelled with the program, as large as fits."""
    import matplotlib.patheffects as effects

    halo = [effects.withStroke(linewidth=1.6, foreground="white")]
    grid = p.program.reshape(-1, p.width)
    points = cell * 72
    least = (4.5 / (0.7 * points)) * (4.5 / points)  # cells of the smallest patch a label fits
    for cells in (r for r in pictures.regions(p) if r.size >= least):
        (r, c), at = pictures.centre(cells, p.width)
        across, down = pictures.run_length(grid[r], c), pictures.run_length(grid[:, c], r)
        text = pictures.label(int(p.program[cells[0]]), int(p.launch[cells[0]]), grids)
        size = min(12.0, 0.7 * down * cell * 72, across * cell * 72 / (0.62 * len(text) + 0.4))
        if size >= 4.5:
            ax.text(*at, text, ha="center", va="center", fontsize=size, path_effects=halo)
