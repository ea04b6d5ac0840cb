"""Rich rendering of the catalogue: the puzzle list, a puzzle's page, its hints. No decisions are
made here."""

from __future__ import annotations

from functools import partial

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from judge.cli.render import (
    COLOURS,
    DIFFICULTY_COLOURS,
    Fitted,
    add_columns,
    left_out,
    narrowing,
)
from judge.core.spec import PuzzleSpec
from judge.records.store import Best

# what a narrow terminal does without: the source (the id's prefix names it), then a best result
# on one line (its verdict goes above its time)
LIST_NARROWER = (("source",), ("one line",))


def puzzle_list(specs: list[PuzzleSpec], best: dict[str, Best]) -> Fitted:
    return narrowing(partial(_puzzle_rows, specs, best), LIST_NARROWER)


def _puzzle_rows(specs: list[PuzzleSpec], best: dict[str, Best], omit: frozenset[str]) -> list:
    table = Table(title="tpuzzle puzzles", title_justify="left")
    imported = any(s.source for s in specs) and "source" not in omit
    columns = ["id", "difficulty", "title", *(["source"] * imported), "your best"]
    add_columns(table, columns, set(columns), {"title"})
    for s in specs:
        b = best.get(s.id)
        mine = Text("-", style="dim")
        if b is not None:
            timed = f" {b.median_ms * 1e3:.1f} us" if b.median_ms is not None else ""
            if "one line" in omit:
                timed = timed.replace(" ", "\n", 1)
            mine = Text(f"{b.verdict}{timed}", style=COLOURS.get(b.verdict, ""))
        source = [Text(s.source.kind if s.source else "tpuzzle", style="dim")] * imported
        table.add_row(
            s.id, Text(s.difficulty, style=DIFFICULTY_COLOURS[s.difficulty]), s.title, *source, mine
        )
    return [table, *left_out(omit, ["source"] * any(s.source for s in specs))]


def puzzle_page(spec: PuzzleSpec) -> Group:
    from rich.markdown import Markdown  # with Pygments: only for the pages that show code
    from rich.syntax import Syntax

    args = Table(title="solve() arguments, in order", title_justify="left")
    for name in ("name", "role", "dtype", "shape"):
        args.add_column(name)
    for a in spec.args:
        kind = a.dtype or ("int" if a.role == "size" else "float")
        args.add_row(a.name, a.role, kind, " x ".join(a.shape) if a.shape else "")
    limits = ", ".join(f"{lo:,} <= {n} <= {hi:,}" for n, lo, hi in spec.limits)
    tol = spec.tolerance
    parts = [
        Panel(
            Markdown(spec.statement),
            title=f"{spec.id} · {spec.title}",
            subtitle=spec.difficulty,
            border_style=DIFFICULTY_COLOURS[spec.difficulty],
        ),
        Syntax(f"def {spec.signature}: ...", "python", theme="ansi_dark"),
        args,
        Text(f"limits: {limits}"),
        Text(f"tolerance: atol {_num(tol.atol)}, rtol {_num(tol.rtol)}. {tol.note}".strip()),
        Text(
            f"benchmark: {', '.join(c.name for c in spec.benchmarks) or '-'}; speed of light: "
            f"{spec.speed_of_light.formula} {spec.speed_of_light.measure}"
        ),
    ]
    if spec.check == "reference":
        parts.insert(4, Text("answers judged by the puzzle's own check, not element by element"))
    if spec.example:
        parts.append(Panel(Text(spec.example), title="example", border_style="dim"))
    if spec.requires.any:
        parts.append(Text(f"requires: {_requires(spec)}"))
    if spec.hints:
        parts.append(Text(f"stuck? {len(spec.hints)} hints, one at a time: tpuzzle hint {spec.id}"))
    if spec.source is not None:
        parts.append(_source_panel(spec))
    return Group(*parts)


def _requires(spec: PuzzleSpec) -> str:
    needs = spec.requires
    said = [f"compute capability {needs.capability[0]}.{needs.capability[1]}"]
    said += ["bfloat16"] * needs.bf16 + ["float16 tensor cores"] * needs.fp16_tensor_cores
    said += [f"{needs.shared_memory_kb} KiB of shared memory per block"] * bool(
        needs.shared_memory_kb
    )
    return ", ".join(said)


def hint_panels(spec: PuzzleSpec, shown: int) -> Group:
    """The first `shown` hints of the puzzle's ladder, the newest last and brightest."""
    total = len(spec.hints)
    panels = [
        Panel(
            Text(h),
            title=f"{spec.id} · hint {i + 1} of {total}",
            border_style="cyan" if i == shown - 1 else "dim",
        )
        for i, h in enumerate(spec.hints[:shown])
    ]
    if not panels:
        panels.append(Text(f"no hint seen yet: `tpuzzle hint {spec.id}` shows the first"))
    elif shown < total:
        panels.append(Text(f"{total - shown} more: `tpuzzle hint {spec.id}` again", style="dim"))
    return Group(*panels)


def _source_panel(spec: PuzzleSpec) -> Panel:
    src = spec.source
    lines = [
        f"imported from {src.kind}: {src.path}",
        f"repository {src.repository}, commit {src.commit}",
        f"licence: {src.licence}",
        "A private adaptation made on this machine by `tpuzzle import`: the source's licence "
        "governs it; do not share it where that licence does not allow.",
    ]
    return Panel(Text("\n".join(lines)), title="source", border_style="yellow")


def _num(value: float | str) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
