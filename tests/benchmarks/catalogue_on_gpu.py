"""Every puzzle's best shipped solution at its benchmark sizes, on a GPU, printed as a table.

    python tests/benchmarks/catalogue_on_gpu.py [--full] [--ladder] [--deadline SECONDS]
        [--out FILE]

Each puzzle is one `tpuzzle run ... --json` in a new process. By default a run checks one small
case (the spec's first test) before timing, which keeps the whole catalogue within minutes;
`--full` runs every test case first, as `tpuzzle bench` does. Results are appended to a JSON-lines
file as they arrive, so a run cut short keeps what it finished. `--deadline` stops starting new
puzzles after that many seconds. `--ladder` runs every shipped correct solution of each puzzle,
the best first (the one its puzzle.yaml names), then the simpler ones it was climbed from.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from judge.core import registry  # noqa: E402
from judge.core.results import RunReport  # noqa: E402
from judge.records import catalogue  # noqa: E402


def command(target: catalogue.Job, full: bool) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "judge",
        "run",
        target.spec.id,
        str(target.path),
        "--json",
        "--no-save",
    ]
    if not full:
        first = target.spec.tests[0]
        cmd += [arg for name, value in first.sizes for arg in ("--size", f"{name}={value}")]
        cmd += ["--seed", str(first.seed)]
    return cmd


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--ladder", action="store_true", help="every correct solution, best first")
    parser.add_argument("--deadline", type=float, default=float("inf"))
    parser.add_argument("--out", type=Path, default=Path("catalogue_runs.jsonl"))
    parser.add_argument("puzzles", nargs="*")
    args = parser.parse_args()
    targets = catalogue.select(registry.puzzles_root(), None, args.puzzles)
    if args.ladder:
        targets = [catalogue.Job(t.spec, p) for t in targets for p in catalogue.ladder(t.spec)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    started, rows = time.monotonic(), []
    for target in targets:
        if time.monotonic() - started > args.deadline:
            print(f"deadline reached: {target.spec.id} and later not run", flush=True)
            break
        t0 = time.monotonic()
        out = subprocess.run(
            command(target, args.full), cwd=ROOT, env=env, capture_output=True, text=True
        )
        wall = time.monotonic() - t0
        try:
            data = json.loads(out.stdout)
        except ValueError:
            print(
                f"{target.spec.id}: no report (exit {out.returncode}): {out.stderr[-500:]}",
                flush=True,
            )
            continue
        data["bench_wall_s"] = round(wall, 1)
        with args.out.open("a") as f:
            f.write(json.dumps(data) + "\n")
        report = RunReport.from_dict(data)
        print(
            f"{target.spec.id:20s} {report.verdict.value:8s} {report.reason:18s} {wall:5.1f}s "
            f"{report.message[:100] if not report.passed else ''}",
            flush=True,
        )
        named = f"{target.spec.id} ({target.path.name})" if args.ladder else target.spec.id
        rows += [shape_row(target.spec, report, t, named) for t in report.timing]
        if report.score and len(report.timing) > 1:
            rows.append(score_row(target.spec, report.score))
    print(
        "| puzzle | shape | median | host / launches | throughput | % same-size copy "
        "| % of peak | vs best library |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))


def shape_row(spec, report: RunReport, t, name: str = "") -> str:
    """One benchmark shape as a Markdown row of the README's table (`name`: the first cell)."""

    def pct(x):
        return f"{x:.1f}%" if x is not None else "-"

    host = f"{t.host_ms * 1e3:.0f} us / {t.launches:g}" if t.host_ms and t.launches else "-"
    library = (
        f"{t.speedup_vs_library:.2f}x {t.library}" if t.speedup_vs_library is not None else "-"
    )
    median = f"{t.median_ms * 1e3:.1f} us" + ("" if report.passed else f" ({report.reason})")
    return (
        f"| {name or spec.id} | {t.case} | {median} | {host} | {t.throughput} | {pct(t.copy_pct)} "
        f"| {pct(t.sol_pct)} | {library} |"
    )


def score_row(spec, score) -> str:
    def pct(x):
        return f"{x:.1f}%" if x is not None else "-"

    library = f"{score.speedup_vs_library:.2f}x" if score.speedup_vs_library is not None else "-"
    return (
        f"| {spec.id} | score: geometric mean of {score.shapes} | {score.ms * 1e3:.1f} us | | "
        f"| {pct(score.copy_pct)} | {pct(score.sol_pct)} | {library} |"
    )


if __name__ == "__main__":
    main()
