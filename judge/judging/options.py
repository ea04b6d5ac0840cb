"""How to judge one submission (RunOptions) and the instructor's secret seed: plain data that the
command line, the judge server and batches build without importing PyTorch."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from judge.core.spec import Case, Draw
from judge.workers.launcher import SECRET_ENV, SECRET_FILE_ENV


@dataclass(frozen=True)
class RunOptions:
    """How to judge: mode, which cases, deadlines."""

    interpret: bool | None = None  # None: the interpreter exactly when no CUDA device is present
    timing: bool = True  # time the benchmark cases (GPU mode only)
    cases: tuple[Case, ...] | None = None  # judge these instead of the spec's tests
    timeout_s: float | None = None  # override the spec's per-phase deadline
    secret: str = ""  # an instructor's secret seed, mixed into every case's seed
    gpu: int | None = None  # which CUDA device (CUDA_VISIBLE_DEVICES for the worker)
    submitter: str = ""  # who submitted, for the stored result
    recalibrate: bool = False  # measure the device and the reference again, ignoring the cache
    sweep: bool = False  # also time every distinct test size (for a plot against size)
    sanitize: Path | None = None  # compute-sanitizer: the small cases once, untimed, under memcheck
    reveal_hidden: bool = False  # report hidden cases in full (grading); else pass or fail only


def secret_from_env() -> str:
    """The instructor's secret seed: TPUZZLE_SECRET_SEED, or the file TPUZZLE_SECRET_SEED_FILE."""
    if os.environ.get(SECRET_ENV):
        return os.environ[SECRET_ENV]
    path = os.environ.get(SECRET_FILE_ENV)
    return Path(path).read_text().strip() if path else ""


def fields_to_dict(fields: dict) -> dict:
    """RunOptions' fields as JSON: cases as plain dicts, paths as strings."""
    cases = fields.get("cases")
    sanitize = fields.get("sanitize")
    return {
        **fields,
        "cases": None if cases is None else [dataclasses.asdict(c) for c in cases],
        "sanitize": str(sanitize) if sanitize else None,
    }


def fields_from_dict(data: dict) -> dict:
    """The inverse of fields_to_dict."""
    cases = data.get("cases")
    if cases is not None:
        cases = tuple(
            Case(
                **{
                    **c,
                    "sizes": tuple((str(k), int(v)) for k, v in c["sizes"]),
                    "draws": tuple((str(k), Draw(**d)) for k, d in c.get("draws", ())),
                    "scalars": tuple((str(k), float(v)) for k, v in c.get("scalars", ())),
                }
            )
            for c in cases
        )
    sanitize = Path(data["sanitize"]) if data.get("sanitize") else None
    return {**data, "cases": cases, "sanitize": sanitize}
