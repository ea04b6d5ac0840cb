"""Nsight Compute's raw metrics of a profiled call (`ncu --import REPORT --csv --page raw`), per
kernel: the few figures that explain its speed, and a reading of them in plain words.

Pure: CSV text in, frozen values out.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

TIME = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6,
        "ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}  # fmt: skip
BYTES = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12, "KB": 1e3, "MB": 1e6,
         "KiB": 1024, "MiB": 1 << 20}  # fmt: skip
DRAM_PCT = (  # DRAM throughput, % of peak, as ncu versions name it
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
)
STALL = re.compile(r"smsp__average_warps?_issue_stalled_(\w+?)_per_issue_active\.ratio$")
LIMITS = {  # ncu's blocks-per-SM limit of each resource, and its name in words
    "launch__occupancy_limit_registers": "registers",
    "launch__occupancy_limit_shared_mem": "shared memory",
    "launch__occupancy_limit_warps": "warps per block",
    "launch__occupancy_limit_blocks": "blocks per SM",
}


@dataclass(frozen=True)
class Kernel:
    """One kernel of the profiled call."""

    name: str
    duration_us: float | None
    dram_pct: float | None  # DRAM throughput, % of peak
    dram_gbps: float | None
    memory_pct: float | None  # the busiest memory unit (L1, L2, DRAM), % of peak
    compute_pct: float | None  # SM throughput, % of peak
    occupancy_pct: float | None  # achieved occupancy
    theoretical_pct: float | None  # theoretical occupancy
    limiter: str  # what bounds the blocks per SM ("" when unknown)
    registers: int | None  # per thread
    shared_kb: float | None  # per block, static and dynamic
    block: int | None  # threads per block
    grid: int | None  # blocks
    sms: int | None  # the device's multiprocessors
    stalls: tuple[tuple[str, float], ...]  # the top warp stall reasons, cycles per issue

    @property
    def reading(self) -> str:
        return read(self)


def rows(text: str) -> list[dict[str, str]]:
    """The kernels' rows of ncu's raw CSV page, each cell with its unit ("12.5 usecond")."""
    table = list(csv.reader(io.StringIO(text)))
    start = next((i for i, r in enumerate(table) if "Kernel Name" in r), None)
    if start is None or len(table) < start + 2:
        return []
    head, units = table[start], table[start + 1]
    found = []
    for line in table[start + 2 :]:
        if len(line) != len(head):
            continue
        found.append(
            {h: f"{v} {u}".strip() if u else v for h, v, u in zip(head, line, units, strict=True)}
        )
    return found


def kernels(found: list[dict[str, str]]) -> tuple[Kernel, ...]:
    return tuple(_kernel(r) for r in found)


def _kernel(r: dict[str, str]) -> Kernel:
    stalls = sorted(
        ((m[1].replace("_", " "), v) for k in r if (m := STALL.match(k)) and (v := _num(r[k]))),
        key=lambda s: -s[1],
    )
    total = _bytes(r.get("launch__shared_mem_per_block", ""))
    shared = [_bytes(r.get(k, "")) for k in ("launch__shared_mem_per_block_static",
                                             "launch__shared_mem_per_block_dynamic")]  # fmt: skip
    known = [total] if total is not None else [s for s in shared if s is not None]
    return Kernel(
        name=r.get("Kernel Name", "?"),
        duration_us=_time(r.get("gpu__time_duration.sum", "")),
        dram_pct=_first(r, DRAM_PCT),
        dram_gbps=_rate(r.get("dram__bytes.sum.per_second", "")),
        memory_pct=_num(
            r.get("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "")
        ),
        compute_pct=_num(r.get("sm__throughput.avg.pct_of_peak_sustained_elapsed", "")),
        occupancy_pct=_num(r.get("sm__warps_active.avg.pct_of_peak_sustained_active", "")),
        theoretical_pct=_num(r.get("sm__maximum_warps_per_active_cycle_pct", "")),
        limiter=_limiter(r),
        registers=_int(r.get("launch__registers_per_thread", "")),
        shared_kb=sum(known) / 1024 if known else None,
        block=_int(r.get("launch__block_size", "")),
        grid=_int(r.get("launch__grid_size", "")),
        sms=_int(r.get("device__attribute_multiprocessor_count", "")),
        stalls=tuple(stalls[:3]),
    )


def _limiter(r: dict[str, str]) -> str:
    limits = {name: _num(r.get(key, "")) for key, name in LIMITS.items()}
    known = {n: v for n, v in limits.items() if v is not None}
    return min(known, key=known.get) if known else ""


def read(k: Kernel) -> str:
    """The figures in plain words: what bounds the kernel, and what to look at."""
    said = []
    dram, compute, memory = k.dram_pct or 0.0, k.compute_pct or 0.0, k.memory_pct or 0.0
    if dram >= 60 and dram >= compute:
        said.append(f"memory-bound at {dram:.0f}% of DRAM bandwidth")
    elif memory >= 60 and memory >= compute:
        said.append(f"memory-bound at {memory:.0f}% of a cache's bandwidth (DRAM {dram:.0f}%)")
    elif compute >= 60:
        said.append(f"compute-bound at {compute:.0f}% of the SMs' throughput")
    else:
        said.append(
            f"latency-bound: neither memory ({max(dram, memory):.0f}%) nor compute "
            f"({compute:.0f}%) is near its peak"
        )
    if k.grid is not None and k.sms and k.grid < k.sms:
        said.append(f"only {k.grid} blocks for {k.sms} SMs: most of the GPU is idle")
    if k.theoretical_pct is not None and k.theoretical_pct < 100 and k.limiter:
        said.append(f"occupancy limited by {k.limiter} ({k.theoretical_pct:.0f}% at most)")
    if (
        k.occupancy_pct is not None
        and k.theoretical_pct
        and k.occupancy_pct < 0.6 * k.theoretical_pct
    ):
        said.append(
            f"achieved occupancy {k.occupancy_pct:.0f}% of {k.theoretical_pct:.0f}% possible"
        )
    if k.stalls and not said[0].startswith(("memory-bound", "compute-bound")):
        said.append(f"warps mostly stall on {k.stalls[0][0]}")
    return "; ".join(said)


def _num(cell: str) -> float | None:
    match = re.match(r"\s*([-+]?[0-9][0-9,]*\.?[0-9]*(?:[eE][-+]?[0-9]+)?)", cell or "")
    if not match:
        return None
    try:
        return float(match[1].replace(",", ""))
    except ValueError:
        return None


def _first(r: dict[str, str], keys: tuple[str, ...]) -> float | None:
    return next((v for k in keys if (v := _num(r.get(k, ""))) is not None), None)


def _unit(cell: str) -> str:
    """The unit of a cell, per-thing suffixes dropped: "Kbyte/block" is "Kbyte"."""
    parts = (cell or "").split()
    unit = parts[1] if len(parts) > 1 else ""
    return unit if unit.endswith(("/s", "/second")) else unit.split("/")[0]


def _time(cell: str) -> float | None:
    value = _num(cell)
    return value * TIME.get(_unit(cell), 1e-3) if value is not None else None


def _bytes(cell: str) -> float | None:
    value = _num(cell)
    return value * BYTES.get(_unit(cell), 1) if value is not None else None


def _rate(cell: str) -> float | None:
    """A bytes-per-second cell in GB/s."""
    value = _num(cell)
    if value is None:
        return None
    unit = _unit(cell).split("/")[0]
    return value * BYTES[unit] / 1e9 if unit in BYTES else None


def _int(cell: str) -> int | None:
    value = _num(cell)
    return int(value) if value is not None else None
