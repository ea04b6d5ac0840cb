"""`tpuzzle run --visualize FILE.png`: each buffer of one call drawn as a grid, every element
coloured by the program that loaded it (inputs) or stored it (outputs); outputs never written in
black, written twice or more crossed in red, stores before the start or past the end drawn as red
cells beyond the grid. Needs matplotlib (the `plot` extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from judge.isolation.trace import Accesses

WRAP = 64  # a 1-D buffer is drawn in rows of this many elements
COLOURS = 20  # programs cycle through the tab20 colours


def draw(accesses: list[Accesses], title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(a, kind) for a in accesses for kind in _kinds(a.role)]
    heights = [_grid(a)[0] + 3 for a, _ in panels]
    width = max(_grid(a)[1] for a, _ in panels)
    inches = min(12.0, max(6.0, 0.16 * width))
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(inches, min(40.0, 0.16 * inches / 6 * sum(heights) * 6 / width
                                             + 0.9 * len(panels))),
        gridspec_kw={"height_ratios": heights}, squeeze=False,
    )  # fmt: skip
    for ax, (a, kind) in zip(axes[:, 0], panels, strict=True):
        _panel(ax, a, kind)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _kinds(role: str) -> list[str]:
    return {"in": ["load"], "out": ["store"], "inout": ["load", "store"]}[role]


def _grid(a: Accesses) -> tuple[int, int]:
    if len(a.shape) == 2:
        return a.shape
    width = min(WRAP, max(1, a.n))
    return -(-a.n // width), width


def _panel(ax, a: Accesses, kind: str) -> None:
    from matplotlib import colormaps

    rows, cols = _grid(a)
    seen_rows = a.loads if kind == "load" else a.stores
    inside = seen_rows[(seen_rows[:, 0] >= 0) & (seen_rows[:, 0] < a.n)]
    beyond = np.unique(seen_rows[seen_rows[:, 0] >= a.n][:, 0]) if kind == "store" else []
    extra = min(len(beyond) and int(beyond.max()) - a.n + 1, 2 * cols)  # drawn past the end
    total = -(-(a.n + extra) // cols) * cols
    program = np.full(total, -1, np.int64)
    program[inside[:, 0]] = inside[:, 1]  # the last access of each element
    cmap = colormaps["tab20"]
    image = np.ones((total, 4))
    seen = program >= 0
    image[seen] = cmap((program[seen] % COLOURS) / COLOURS)
    image[: a.n][~seen[: a.n]] = (0.0, 0.0, 0.0, 1.0) if kind == "store" else (0.88, 0.88, 0.88, 1)
    image[a.n :] = (1.0, 1.0, 1.0, 1.0)
    shown_beyond = [int(b) for b in beyond if b - a.n < extra]
    image[shown_beyond] = (0.85, 0.0, 0.0, 1.0)
    grid_rows = total // cols
    ax.imshow(image.reshape(grid_rows, cols, 4), interpolation="nearest", aspect="equal")
    _cells(ax, program, grid_rows, cols, a.n)
    notes = [f"{a.name} ({a.role}, {a.n} elements) · {kind}s, coloured by program"]
    if kind == "store":
        twice = np.flatnonzero(a.writes >= 2)
        if twice.size:
            ax.scatter(twice % cols, twice // cols, marker="x", color="red", s=14, linewidths=0.9)
            notes.append(f"{twice.size} written twice or more (red x)")
        never = int((a.writes == 0).sum())
        if never:
            notes.append(f"{never} never written (black)")
        if len(beyond):
            notes.append(f"{len(beyond)} stored past the end (red, after the white line)")
        if a.before_start:
            notes.append(f"{a.before_start} stored before the start")
    else:
        unread = a.n - np.unique(inside[:, 0]).size
        if unread:
            notes.append(f"{unread} never loaded (grey)")
    ax.set_title(" · ".join(notes), fontsize=8, loc="left")
    ax.set_xticks([])
    ax.set_yticks([])


def _cells(ax, program: np.ndarray, rows: int, cols: int, n: int) -> None:
    """Cell borders on a small grid, the end of the buffer marked, and each cell's program
    number on a very small one."""
    if rows <= 80 and cols <= 80:
        ax.set_xticks(np.arange(-0.5, cols, 1), minor=True)
        ax.set_yticks(np.arange(-0.5, rows, 1), minor=True)
        ax.grid(which="minor", color="white", linewidth=0.5)
        ax.tick_params(which="minor", length=0)
    end_row, end_col = divmod(n, cols)
    if end_col:  # a buffer that ends inside a row: a white bar after its last element
        ax.plot([end_col - 0.5] * 2, [end_row - 0.5, end_row + 0.5], color="white", lw=2)
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    if rows * cols <= 256:
        for index in np.flatnonzero(program >= 0):
            ax.text(index % cols, index // cols, str(program[index]), ha="center", va="center",
                    fontsize=6, color="black")  # fmt: skip
