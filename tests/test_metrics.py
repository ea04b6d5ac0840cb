"""Nsight Compute's raw metrics read per kernel, and read in words (judge.insight.metrics).
The fixtures are columns of `ncu --import REPORT --csv --page raw` of three of this project's
solutions profiled on an H100 (vector_add, reduction, matmul)."""

from pathlib import Path

import pytest

from judge.insight import metrics

NCU = Path(__file__).parent / "fixtures" / "ncu"


def profiled(name: str) -> tuple[metrics.Kernel, ...]:
    return metrics.kernels(metrics.rows((NCU / f"{name}.csv").read_text()))


def test_an_elementwise_kernel_is_memory_bound():
    [k] = profiled("vector_add")
    assert k.name == "vector_add_kernel"
    assert k.duration_us == pytest.approx(95.104)
    assert k.dram_pct == pytest.approx(88.873313)
    assert k.dram_gbps == pytest.approx(2977.914)  # a Tbyte/s cell, in GB/s
    assert (k.registers, k.block, k.grid, k.sms) == (30, 128, 24415, 132)
    assert k.stalls[0] == ("long scoreboard", pytest.approx(57.763065))
    assert k.reading == "memory-bound at 89% of DRAM bandwidth"


def test_a_one_block_kernel_is_said_to_leave_the_gpu_idle():
    zero, reduce = profiled("reduction")
    assert zero.grid == 1 and zero.duration_us == pytest.approx(2.496)
    assert "only 1 blocks for 132 SMs: most of the GPU is idle" in zero.reading
    assert zero.reading.startswith("latency-bound")
    assert "warps mostly stall on no instruction" in zero.reading
    assert reduce.reading == "memory-bound at 60% of DRAM bandwidth"


def test_a_matmul_is_compute_bound_and_its_occupancy_limit_is_named():
    transpose, matmul = profiled("matmul")
    assert matmul.duration_us == pytest.approx(1396.064)  # a "ms" or "us" cell, in us
    assert matmul.shared_kb == pytest.approx(145.0)  # "Kbyte/block"
    assert matmul.registers == 184 and matmul.theoretical_pct == pytest.approx(12.5)
    assert matmul.reading == (
        "compute-bound at 77% of the SMs' throughput; occupancy limited by registers (12% at most)"
    )
    assert "occupancy limited by shared memory (81% at most)" in transpose.reading


def test_rows_skip_what_is_not_a_kernel_row():
    assert metrics.rows("") == []
    assert metrics.rows('"ID","Kernel Name"\n"",""\n') == []
    text = '"Kernel Name","gpu__time_duration.sum"\n"","ns"\n"k","1,500"\n"short"\n'
    [row] = metrics.rows(text)
    assert metrics.kernels([row])[0].duration_us == pytest.approx(1.5)


def test_missing_figures_read_as_unknown():
    k = metrics.kernels([{"Kernel Name": "k"}])[0]
    assert (k.duration_us, k.dram_pct, k.limiter, k.stalls) == (None, None, "", ())
    assert k.reading.startswith("latency-bound")
