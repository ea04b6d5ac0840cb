"""Benchmarks of the judge itself on a GPU, printed (not asserted): run on a CUDA machine with

    python tests/benchmarks/vector_add_judge.py

1. wall time of `tpuzzle run vector_add <shipped solution>` from a cold start (a new process, an
   empty Triton cache; once with the device calibration to do, once with it cached);
2. the judge's median against a plain triton.testing.do_bench script of the same kernel at N = 25M;
3. the shipped solution's bandwidth against the measured copy bandwidth.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = ROOT / "puzzles" / "vector_add" / "solutions" / "correct" / "plain.py"
N = 25_000_000


def cli_run(env: dict) -> tuple[float, dict]:
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "judge", "run", "vector_add", str(SOLUTION), "--json", "--no-save"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    if out.returncode != 0:
        sys.exit(f"tpuzzle run failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
    return wall, json.loads(out.stdout)


def plain_do_bench(repeats: int = 5) -> list[float]:
    """The same kernel, timed the way a kernel author would time it by hand."""
    import importlib.util

    import torch
    from triton.testing import do_bench

    spec = importlib.util.spec_from_file_location("plain", SOLUTION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    a, b = torch.rand(N, device="cuda"), torch.rand(N, device="cuda")
    c = torch.empty_like(a)
    module.solve(a.data_ptr(), b.data_ptr(), c.data_ptr(), N)
    torch.cuda.synchronize()
    assert torch.equal(c, a + b)
    return [
        do_bench(
            lambda: module.solve(a.data_ptr(), b.data_ptr(), c.data_ptr(), N), return_mode="median"
        )
        for _ in range(repeats)
    ]


def fresh_process_seconds(code: str, env: dict) -> float:
    """Wall time of a new Python process that runs `code`: what each start-up step costs."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True)
    return time.perf_counter() - started


START_UP_STEPS = {
    "python alone": "pass",
    "import judge.cli.app": "import judge.cli.app",
    "launcher.cuda_present()": "from judge.workers import launcher; launcher.cuda_present()",
    "import torch": "import torch",
    "import torch, triton; CUDA context": "import torch, triton; torch.zeros(1, device='cuda')",
}


def main() -> None:
    cache = tempfile.mkdtemp(prefix="tpuzzle-bench-cache-")
    env = dict(os.environ, TPUZZLE_CACHE=cache, PYTHONPATH=str(ROOT))
    cold_wall, first = cli_run(env)
    warm_wall, second = cli_run(env)
    third_wall, third = cli_run(env)
    judged = [r["timing"]["median_ms"] for r in (first, second, third)]
    plain = plain_do_bench()
    t = third["timing"]
    rows = [
        ("cold start, calibration included", f"{cold_wall:.1f} s"),
        ("cold start, calibration cached", f"{warm_wall:.1f} s, {third_wall:.1f} s"),
        ("outside the judge's clock", f"{third_wall - third['wall_s']:.1f} s"),
        *(
            (f"new process: {step}", f"{fresh_process_seconds(code, env):.2f} s")
            for step, code in START_UP_STEPS.items()
        ),
        *(
            (
                f"phases of the {which} run",
                ", ".join(f"{k} {v:.1f} s" for k, v in r["phases"].items()),
            )
            for which, r in (("first", first), ("last", third))
        ),
        ("judge median (3 runs)", ", ".join(f"{m * 1e3:.1f} us" for m in judged)),
        ("plain do_bench median (5 runs)", ", ".join(f"{m * 1e3:.1f} us" for m in plain)),
        ("judge / plain", f"{statistics.median(judged) / statistics.median(plain):.3f}"),
        ("solution bandwidth", f"{t['gbps']:.0f} GB/s"),
        ("measured copy bandwidth", f"{third['env']['copy_gbps']:.0f} GB/s"),
        ("% of speed of light", f"{t['sol_pct']:.1f}%"),
        (
            "PyTorch a + b",
            f"{t['reference_median_ms'] * 1e3:.1f} us (speedup {t['speedup_vs_reference']:.2f}x)",
        ),
        (
            "device",
            f"{third['env']['device']}, driver {third['env']['driver']}, "
            f"Triton {third['env']['triton']}, PyTorch {third['env']['torch']}",
        ),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
