"""The pictures of `tpuzzle run --visualize`, as data: each buffer of one call as a grid of
cells, every element marked with the program whose load (inputs) or store (outputs) reached it
last, arranged so that a learner reads it at a glance, and the key that says which colour is
which program. Pure NumPy; judge.cli.visualize draws it.

A matrix is laid out as its rows and columns (a 3-D buffer as planes of them); a 1-D buffer, or a
matrix as thin as a strip, in memory order, wrapped at a width that divides the kernel's block
(the run of elements one program touches), so each row of cells belongs to whole blocks. Eight
colours, never the red, grey and black that mark mistakes, repeat in program order."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from math import gcd

import numpy as np

from judge.insight import trace
from judge.insight.trace import Accesses

MAX_WIDTH = 64  # cells in a row of a buffer drawn in memory order, at most
THIN = 8  # a matrix this many times longer than wide is drawn in memory order
LEGIBLE_SIDE = 160  # a matrix up to this many rows and columns still draws as cells
PAGE = (12.0, 18.0)  # inches the panels may take across and down before cells shrink
# tab10 without red and grey: those mark mistakes and unread cells
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf")
UNREAD, UNWRITTEN, OUTSIDE = "#e0e0e0", "#000000", "#d62728"


@dataclass(frozen=True)
class Panel:
    """One buffer's loads or stores, laid out as cells in memory order, `width` to a row."""

    title: str  # the buffer, its layout and what is wrong with it
    kind: str  # load | store
    n: int  # elements in the buffer; cells from n on lie past its end
    width: int  # cells a row
    band: int  # rows between lines that part a matrix's rows or planes, 0 for none
    program: np.ndarray  # per cell, the program of the last access; -1 where none
    launch: np.ndarray  # per cell, the launch of that access
    twice: np.ndarray  # cells stored to twice or more, not atomically

    @property
    def rows(self) -> int:
        return self.program.size // self.width


def kinds(role: str) -> list[str]:
    return {"in": ["load"], "out": ["store"], "inout": ["load", "store"]}[role]


def place(panels: list[Panel], cell: float):
    """Panels side by side while they fit PAGE across, then on the next line, their cells' tops
    level: each panel's box of cells (left, top, width, height in inches), its title's lines,
    and the size of it all."""
    slots = [max(p.width * cell, 3.2) for p in panels]
    titles = [textwrap.wrap(p.title, int(s / 0.062)) for p, s in zip(panels, slots, strict=True)]
    lines, x = [[]], 0.4
    for i, slot in enumerate(slots):
        if lines[-1] and x + slot > PAGE[0] - 0.4:
            lines, x = [*lines, []], 0.4
        lines[-1].append((i, x))
        x += slot + 0.35
    boxes, y = [None] * len(panels), 0.0
    for line in lines:
        above = 0.1 + 0.14 * max(len(titles[i]) for i, _ in line)
        for i, x in line:
            boxes[i] = (x, y + above, panels[i].width * cell, panels[i].rows * cell)
        y += above + max(panels[i].rows * cell for i, _ in line) + 0.25
    right = max(x + slots[i] for line in lines for i, x in line)
    return boxes, titles, (right, y - 0.25)


def fit(panels: list[Panel]):
    """The largest cell (a sixth of an inch at most) at which the panels fit PAGE, and their
    placement at it."""
    cell = min(0.16, (PAGE[0] - 0.8) / max(p.width for p in panels))
    while True:
        boxes, titles, size = place(panels, cell)
        if size[1] <= PAGE[1] or cell < 0.012:
            return cell, boxes, titles, size
        cell *= 0.92


def panel(a: Accesses, kind: str) -> Panel:
    """The cells of one buffer's loads or stores: the last access of each element, and up to two
    rows of cells past the end where the kernel reached there."""
    seen = a.loads if kind == "load" else a.stores
    width, band, layout = arrangement(a)
    beyond = np.unique(seen[seen[:, 0] >= a.n][:, 0])
    extra = min(int(beyond.max()) - a.n + 1, 2 * width) if beyond.size else 0
    total = -(-(a.n + extra) // width) * width
    shown = seen[(seen[:, 0] >= 0) & (seen[:, 0] < total)]
    last = shown.shape[0] - 1 - np.unique(shown[::-1, 0], return_index=True)[1]
    program, launch = np.full(total, -1, np.int64), np.full(total, -1, np.int64)
    program[shown[last, 0]], launch[shown[last, 0]] = shown[last, 1], shown[last, 2]
    plain = shown[(shown[:, 3] == 0) & (shown[:, 0] < a.n)] if kind == "store" else shown[:0]
    twice = np.flatnonzero(np.bincount(plain[:, 0], minlength=a.n) >= 2)
    title = " · ".join([f"{a.name} ({a.role}, {layout}) · {kind}s", *_notes(a, kind, seen)])
    return Panel(title, kind, a.n, width, band, program, launch, twice)


def _notes(a: Accesses, kind: str, seen: np.ndarray) -> list[str]:
    inside = seen[(seen[:, 0] >= 0) & (seen[:, 0] < a.n)]
    reached = np.unique(inside[:, 0]).size
    done = "stored" if kind == "store" else "loaded"
    notes = [f"{a.n - reached} never {'written (black)' if kind == 'store' else 'loaded (grey)'}"]
    notes = notes if reached < a.n else []
    plain = inside[inside[:, 3] == 0] if kind == "store" else inside[:0]
    if (twice := int((np.bincount(plain[:, 0]) >= 2).sum()) if plain.size else 0) > 0:
        notes.append(f"{twice} stored twice or more (red x)")
    shared = inside[inside[:, 3] == 1] if kind == "store" else inside
    by = np.bincount(np.unique(shared[:, :3], axis=0)[:, 0]) if shared.size else np.zeros(1, int)
    if by.max() > 1:
        how = "updated atomically" if kind == "store" else "loaded"
        notes.append(f"{int((by > 1).sum())} {how} by several programs (up to {by.max()})")
    if beyond := int(np.unique(seen[seen[:, 0] >= a.n][:, 0]).size):
        notes.append(f"{beyond} {done} past the end (red, after the thick line)")
    if before := int(np.unique(seen[seen[:, 0] < 0][:, 0]).size):
        notes.append(f"{before} {done} before the start")
    return notes


def block_size(seen: np.ndarray) -> int:
    """The kernel's block as the accesses show it: the most common length of the runs of
    consecutive elements one program of one launch touched (the longer on a tie); 0 for none."""
    if not seen.size:
        return 0
    rows = np.unique(seen[:, [2, 1, 0]], axis=0)  # by launch, program, element
    breaks = (np.diff(rows[:, 2]) != 1) | (np.diff(rows[:, :2], axis=0) != 0).any(axis=1)
    starts = np.concatenate([[0], np.flatnonzero(breaks) + 1, [rows.shape[0]]])
    lengths, counts = np.unique(np.diff(starts), return_counts=True)
    return int(lengths[counts == counts.max()].max())


def wrap_width(n: int, align: int) -> int:
    """Cells a row for n elements in memory order, at most MAX_WIDTH, nearest a picture about
    twice as wide as tall: a divisor of align (8 or more) where it has one, a multiple of an
    align under 8, else a power of two."""
    target = min(max(np.sqrt(2.0 * n), 8.0), float(MAX_WIDTH), float(max(n, 1)))
    options = [w for w in range(8, MAX_WIDTH + 1) if align >= 8 and align % w == 0]
    if not options and 0 < align < 8:
        options = list(range(align, MAX_WIDTH + 1, align))
    options = options or [1, 2, 4, 8, 16, 32, 64]
    return min(options, key=lambda w: (abs(np.log(w / target)), -w))


def arrangement(a: Accesses) -> tuple[int, int, str]:
    """Cells a row, rows between parting lines, and the layout in words, for one buffer: a
    matrix as its rows (a 3-D one as planes of rows), a 1-D buffer or a thin matrix in memory
    order, rows lined up with the kernel's blocks (and the matrix's rows or planes)."""
    shape, sides = a.shape, " x ".join(str(s) for s in a.shape)
    if len(shape) >= 2 and max(shape[-2:]) <= THIN * min(shape[-2:]):
        planes = f": {int(np.prod(shape[:-2]))} planes of {shape[-2]} rows" * (len(shape) > 2)
        return shape[-1], shape[-2] * (len(shape) > 2), sides + planes
    block = block_size(np.concatenate([a.loads, a.stores]))
    align = block if 0 < block < a.n else 0
    unit = int(np.prod(shape[-2:])) if len(shape) > 2 else shape[-1] if len(shape) == 2 else 0
    if 8 <= unit < a.n:  # a matrix's row, or a plane, starts a row of cells too
        align = gcd(align, unit)
    width = wrap_width(a.n, align)
    wrapped = f", {width} a row" * (a.n > width)
    if len(shape) == 1:
        return width, 0, f"{a.n} element{'s' * (a.n != 1)}{wrapped}"
    band = unit // width if unit % width == 0 and unit > width else 0
    parted = f", a line between {'planes' if len(shape) > 2 else 'rows'}" * (band > 0)
    return width, band, f"{sides}, drawn in memory order{wrapped}{parted}"


def colour_count(panels: list[Panel]) -> int:
    """How many of the eight colours programs cycle through: the most for which no two
    different programs side by side in a picture share a colour (8 where none is)."""
    for k in range(len(PALETTE), 4, -1):
        if not any(_clash(p, k) for p in panels):
            return k
    return len(PALETTE)


def _clash(p: Panel, k: int) -> bool:
    grid = p.program.reshape(-1, p.width)
    pairs = [(grid[:, :-1], grid[:, 1:]), (grid[:-1], grid[1:])]
    return any(((a >= 0) & (b >= 0) & (a != b) & (a % k == b % k)).any() for a, b in pairs)


def label(program: int, launch: int, grids: tuple[tuple[int, int, int], ...]) -> str:
    """A program as the kernel knows it: its program_id along each axis of its launch's grid,
    after the launch's number where the call made several."""
    if not 0 <= launch < len(grids):
        return str(program)
    x, y, z = grids[launch]
    axes = [program % x, program // x % y, program // (x * y)]
    used = 3 if z > 1 else 2 if y > 1 else 1
    text = ",".join(str(i) for i in axes[:used])
    return f"{launch + 1}:{text}" if len(grids) > 1 else text


def heading_text(count: int, colours: int, grids) -> str:
    """The key's first line: what the colours and the labels mean."""
    if not count:
        return "No program loaded or stored any element of these buffers."
    axes = max((3 if z > 1 else 2 if y > 1 else 1 for _, y, z in grids), default=1)
    ids = ",".join(f"program_id({i})" for i in range(axes))
    named = f"launch:{ids}" if len(grids) > 1 else ids
    made = f" drawn, from the call's {len(grids)} launches" if len(grids) > 1 else ""
    repeat = f"; colours repeat every {colours} programs" if count > colours else ""
    return (f"Each cell: the program whose access came last, labelled {named}. "
            f"{count} program{'s' * (count != 1)}{made}{repeat}.")  # fmt: skip


def program_pairs(p: Panel) -> np.ndarray:
    """The (launch, program) of every cell some program reached."""
    return np.unique(np.stack([p.launch, p.program], 1)[p.program >= 0], axis=0)


def entries(panels: list[Panel], colours: int, grids) -> list[tuple[str, str]]:
    """The key's (colour, words) entries: the programs drawn in each colour, then the marks
    that appear."""
    pairs = np.unique(np.concatenate([program_pairs(q) for q in panels]), axis=0)
    seen = sorted(map(tuple, pairs.tolist()), key=lambda t: (t[1], t[0]))
    found = []
    for c in range(colours):
        mine = [label(p, lau, grids) for lau, p in seen if p % colours == c]
        mine = [f"({m})" if "," in m else m for m in mine]  # "(0,1), (2,1)", not "0,1, 2,1"
        if mine:
            shown = ", ".join(mine[:8]) + (f", … ({len(mine)} in all)" if len(mine) > 8 else "")
            found.append((PALETTE[c], f"program{'s' * (len(mine) > 1)} {shown}"))
    missed = {p.kind for p in panels if (p.program[: p.n] < 0).any()}
    found += [(UNREAD, "never loaded")] * ("load" in missed)
    found += [(UNWRITTEN, "never written")] * ("store" in missed)
    if any((p.program[p.n :] >= 0).any() for p in panels):
        found.append((OUTSIDE, "past the end of the buffer (after the thick line)"))
    found += [("x", "stored twice or more")] * any(p.twice.size for p in panels)
    return found


def choose(spec, cases: list):
    """The case of these (the failing ones) to draw: the largest whose every buffer draws as
    legible cells (a 1-D one of at most trace.DRAWN_WELL elements; a matrix, or each plane of a
    3-D buffer, no thinner than THIN allows and at most LEGIBLE_SIDE a side), else the
    smallest."""
    drawable = [c for c in cases if all(legible(s) for _, _, _, s in trace.shapes(spec, c))]
    if drawable:
        return max(drawable, key=lambda c: trace.elements(spec, c))
    return min(cases, key=lambda c: trace.elements(spec, c))


def legible(shape: tuple[int, ...]) -> bool:
    """Whether a buffer of this shape draws as cells a student can tell apart."""
    if len(shape) == 1:
        return shape[0] <= trace.DRAWN_WELL
    return max(shape[-2:]) <= min(THIN * min(shape[-2:]), LEGIBLE_SIDE)


def centre(cells: np.ndarray, width: int) -> tuple[tuple[int, int], tuple[float, float]]:
    """The cell of a patch nearest its centre of mass, and where its label goes: the centre
    itself where that cell is next to it (a block), else that cell."""
    r, c = cells // width, cells % width
    distance = (r - r.mean()) ** 2 + (c - c.mean()) ** 2
    nearest = int(np.argmin(distance))
    cell = int(r[nearest]), int(c[nearest])
    at = (c.mean(), r.mean()) if distance[nearest] <= 0.5 else (cell[1], cell[0])
    return cell, at


def run_length(line: np.ndarray, at: int) -> int:
    """How many cells in a row (or column) around `at` hold the same program."""
    other = line != line[at]
    left = at - (np.flatnonzero(other[:at])[-1] + 1 if other[:at].any() else 0)
    right = np.flatnonzero(other[at:])[0] if other[at:].any() else line.size - at
    return int(left + right)


def regions(p: Panel) -> list[np.ndarray]:
    """The cells of every patch of side-by-side cells whose last access came from one program
    of one launch, each as flat cell indices."""
    key = np.where(p.program >= 0, p.launch * (int(p.program.max()) + 1) + p.program, -1)
    grid = key.reshape(-1, p.width)
    ids = np.where(grid >= 0, np.arange(grid.size).reshape(grid.shape), -1)
    steps = [(np.s_[1:], np.s_[:-1]), (np.s_[:-1], np.s_[1:])]
    while True:  # each cell takes the least id among its neighbours of the same key
        new = ids.copy()
        for to, src in steps:
            for view in (lambda x, s: x[s], lambda x, s: x[:, s]):
                same = view(grid, to) == view(grid, src)
                view(new, to)[same] = np.minimum(view(new, to), view(ids, src))[same]
        new = np.where(new >= 0, new.ravel()[np.maximum(new, 0)], -1)  # jump to the id's id
        if (new == ids).all():
            break
        ids = new
    flat = ids.ravel()
    order = np.argsort(flat, kind="stable")
    order = order[flat[order] >= 0]
    return np.split(order, np.flatnonzero(np.diff(flat[order])) + 1) if order.size else []
