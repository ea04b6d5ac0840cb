"""The size sweep of `tpuzzle bench PUZZLE --plot FILE.png`, drawn with matplotlib.

matplotlib is an optional extra (`pip install 'tpuzzle[plot]'`); `missing()` says how to get it.
"""

from __future__ import annotations

from pathlib import Path

from judge.core import bench
from judge.core.results import RunReport
from judge.core.spec import PuzzleSpec

INSTALL = "pip install 'tpuzzle[plot]' (or: pip install matplotlib)"


def missing() -> str | None:
    """None when matplotlib can be imported, else what to run to install it."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return INSTALL
    return None


def draw_sweep(spec: PuzzleSpec, report: RunReport, path: Path) -> None:
    """Achieved rate against work per call, with the PyTorch reference and the speed of light."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = bench.sweep_points(spec, report.timing)
    unit = "GB/s" if spec.speed_of_light.measure == "bytes" else "TFLOP/s"
    work = [p.work for p in points]
    fig, ax = plt.subplots(figsize=(8, 5), layout="constrained")
    ax.plot(work, [p.rate for p in points], "o-", label=Path(report.submission).name)
    reference = [(p.work, p.reference_rate) for p in points if p.reference_rate]
    if reference:
        ax.plot(*zip(*reference, strict=True), "s--", label="PyTorch reference")
    env = report.env
    top = bench.peak(spec, {"copy_gbps": env.copy_gbps, "peaks_tflops": env.peaks_tflops})
    if top:
        ax.axhline(top, color="black", linestyle=":", label=f"speed of light ({top:.0f} {unit})")
    ax.set_xscale("log")
    ax.set_xlabel(f"work per call ({spec.speed_of_light.measure}: {spec.speed_of_light.formula})")
    ax.set_ylabel(unit)
    ax.set_title(f"{spec.id} on {env.device} (median of the timed calls, L2 flushed)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.savefig(path, dpi=120)
    plt.close(fig)
