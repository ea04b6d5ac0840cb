"""`tpuzzle profile PUZZLE FILE`: one call of a submission under Nsight Compute, read."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from judge.cli import render
from judge.cli.options import PuzzlesOpt, custom_case
from judge.cli.usage import usage_errors
from judge.core import registry
from judge.errors import SubmissionNotFound


@usage_errors
def profile(
    puzzle: Annotated[str, typer.Argument(help="The puzzle.")],
    submission: Annotated[Path, typer.Argument(help="Your solution file.")],
    size: Annotated[
        list[str] | None,
        typer.Option(help="Profile a case of these sizes instead of the first benchmark shape."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the --size case.")] = 0,
    output: Annotated[
        Path, typer.Option(help="Where the .ncu-rep and the CSV of every metric go.")
    ] = Path("profiles"),
    gpu: Annotated[int | None, typer.Option(help="CUDA device index.")] = None,
    puzzles: PuzzlesOpt = None,
) -> None:
    """Profile one call of FILE with NVIDIA Nsight Compute: what bounds each kernel's speed.

    The call runs on the puzzle's first benchmark shape (or --size), alone in a worker of its
    own; per kernel, the figures that explain its speed and what they say. It needs a GPU and
    ncu (PATH, $CUDA_HOME/bin, or TPUZZLE_NCU).
    """
    from judge.insight import profile as profiling

    spec = registry.get(puzzle, registry.puzzles_root(puzzles))
    if not submission.is_file():
        raise SubmissionNotFound(f"{submission}: no such file")
    case = custom_case(spec, size, seed, "") if size else None
    profiling.ready()
    typer.echo(f"profiling {spec.id} with ncu (each kernel replayed per counter pass)", err=True)
    found = profiling.profile(spec, submission, case, output, gpu)
    render.console().print(profile_view(found))


def profile_view(found) -> object:
    from rich.console import Group

    table = Table(title=f"{found.puzzle} · {found.case} · {found.device}", title_justify="left")
    for name in ("kernel", "time", "DRAM", "compute", "occupancy", "regs", "smem/block",
                 "grid x block", "top stalls"):  # fmt: skip
        table.add_column(name, justify="left" if name in ("kernel", "top stalls") else "right")
    readings = []
    for k in found.kernels:
        table.add_row(
            _short(k.name),
            render.fmt(k.duration_us, "{:.1f} us"),
            _pct(k.dram_pct) + (f" {k.dram_gbps:.0f} GB/s" if k.dram_gbps else ""),
            _pct(k.compute_pct),
            f"{_pct(k.occupancy_pct)} of {_pct(k.theoretical_pct)}",
            render.fmt(k.registers, "{}"),
            render.fmt(k.shared_kb, "{:.1f} KiB"),
            f"{render.fmt(k.grid, '{}')} x {render.fmt(k.block, '{}')}",
            ", ".join(f"{name} {v:.1f}" for name, v in k.stalls[:2]),
        )
        readings.append(Text.assemble((f"{_short(k.name)}: ", "bold"), k.reading))
    if not found.kernels:
        readings.append(Text("no kernel ran inside the profiled call", style="yellow"))
    answer = Text(f"the profiled call's answer: {found.answer}",
                  style="green" if found.answer == "right" else "red")  # fmt: skip
    files = Text(f"report {found.report} (open with ncu-ui); every metric in {found.csv}; "
                 f"{found.wall_s:.1f} s", style="dim")  # fmt: skip
    return Group(table, *readings, answer, files)


def _pct(value: float | None) -> str:
    return f"{value:.0f}%" if value is not None else "-"


def _short(name: str) -> str:
    return name if len(name) <= 40 else name[:37] + "..."
