"""`tpuzzle run --sanitize`: the submission's small cases once, untimed, under NVIDIA's
compute-sanitizer (memcheck).

Guard bands catch stores just before or after a buffer; memcheck catches every access outside any
allocation, misaligned accesses and errors inside kernels. PyTorch's caching allocator is turned off
in the worker (PYTORCH_NO_CUDA_MEMORY_CACHING=1), so each buffer is an allocation of its own and an
access past it is seen rather than landing in a neighbour from the same cached block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from judge.core.results import RunReport, Verdict
from judge.workers import tools

TOOL_ENV = "TPUZZLE_COMPUTE_SANITIZER"  # the tool's path, when it is not found by itself
LOG_NAME = "sanitizer.log"
SLOWDOWN = 20.0  # deadlines are stretched by this much under memcheck
MAX_FINDINGS = 8

_PREFIX = re.compile(r"^=+ ?")
_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors?")
_HEADLINE = re.compile(
    r"^(Invalid __\w+__ (?:read|write|atomic)[^\n]*|Misaligned [^\n]*|Out-of-range [^\n]*|"
    r"Program hit [^\n]*|Malloc/Free error[^\n]*|Leaked [^\n]*|Barrier error[^\n]*|"
    r"Illegal instruction[^\n]*|Hardware exception[^\n]*)"
)
_WHERE = re.compile(r"^at (?:0x[0-9a-f]+ in )?(.+)$")


@dataclass(frozen=True)
class Findings:
    """What memcheck reported: its error count and the first distinct errors, each with the
    kernel (or call) it happened in."""

    errors: int
    findings: tuple[str, ...]
    complete: bool  # False when the log had no summary (the worker died or was killed)

    def to_dict(self) -> dict:
        return {
            "tool": "compute-sanitizer memcheck",
            "errors": self.errors,
            "findings": list(self.findings),
            "complete": self.complete,
        }


def find_tool() -> Path:
    """compute-sanitizer: TPUZZLE_COMPUTE_SANITIZER, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin."""
    needed = "--sanitize needs NVIDIA's compute-sanitizer (it comes with the CUDA toolkit)"
    return tools.find("compute-sanitizer", TOOL_ENV, needed)


def wrapper(tool: Path, job_dir: Path) -> list[str]:
    """The command prefix that runs the worker under memcheck, its log in the job directory."""
    return [
        str(tool),
        "--tool",
        "memcheck",
        "--log-file",
        str(job_dir / LOG_NAME),
        "--print-limit",
        "100",
    ]


def worker_env() -> dict[str, str]:
    return {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}


def parse(log: str) -> Findings:
    """The error count and the first distinct findings of a memcheck log."""
    lines = [_PREFIX.sub("", line).strip() for line in log.splitlines()]
    summary = next((m for m in map(_SUMMARY.search, lines) if m), None)
    findings: list[str] = []
    headline_count = 0
    for i, line in enumerate(lines):
        headline = _HEADLINE.match(line)
        if not headline:
            continue
        headline_count += 1
        where = next(
            (m.group(1) for m in map(_WHERE.match, lines[i + 1 : i + 4]) if m),
            "",
        )
        text = headline.group(1).rstrip(".") + (f" in {where}" if where else "")
        if text not in findings and len(findings) < MAX_FINDINGS:
            findings.append(text)
    errors = int(summary.group(1)) if summary else headline_count
    return Findings(errors=errors, findings=tuple(findings), complete=summary is not None)


def read(job_dir: Path) -> Findings:
    try:
        return parse((job_dir / LOG_NAME).read_text(errors="replace"))
    except OSError:
        return Findings(errors=0, findings=(), complete=False)


def with_findings(report: RunReport, findings: Findings) -> RunReport:
    """A report with memcheck's findings: any error fails a run that otherwise passed."""
    notes = [f"compute-sanitizer memcheck: {findings.errors} error(s)"]
    notes += [f"memcheck: {f}" for f in findings.findings]
    if not findings.complete:
        notes.append("memcheck's log has no summary: the worker ended before it could write one")
    report = replace(report, sanitizer=findings.to_dict(), notes=(*report.notes, *notes))
    if findings.errors and report.verdict is Verdict.PASSED:
        first = findings.findings[0] if findings.findings else "see the log"
        return replace(
            report,
            verdict=Verdict.FAILED,
            reason="memcheck",
            message=f"compute-sanitizer memcheck found {findings.errors} error(s): {first}",
        )
    return report
