"""What runs the third-party code of an import, in a process of its own (never in a judge's):
it loads each problem of a checkout, calls its generators on the CPU, and writes down what they
gave, for `judge.sources.convert` to turn into a puzzle (the machinery: judge.sources.probing).

    python -m judge.sources.probe KIND CHECKOUT OUT PROBLEM [PROBLEM ...]
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

import torch

from judge.sources.probing import (
    TIME_LIMIT_S,
    Recorder,
    Skip,
    forget_fills,
    redirect_cuda,
    time_limit,
)


def main(argv: list[str]) -> int:
    kind, checkout, out, problems = argv[0], Path(argv[1]), Path(argv[2]), argv[3:]
    if kind == "leetgpu":
        from judge.sources.probe_leetgpu import describe
    elif kind == "gpumode":
        from judge.sources.probe_gpumode import describe
    else:
        print(f"unknown source {kind!r}", file=sys.stderr)
        return 2
    redirect_cuda()
    torch.manual_seed(0)
    for index, problem in enumerate(problems):
        folder = out / str(index)
        folder.mkdir(parents=True, exist_ok=True)
        recorder = Recorder(folder)
        try:
            with time_limit(TIME_LIMIT_S):
                description = describe(checkout, problem, recorder)
        except Skip as skip:
            description = {"skip": " ".join(str(skip).split())[:400]}  # one line
        except Exception as exc:  # third-party code: anything it raises is a skip with reason
            where = traceback.extract_tb(exc.__traceback__)[-1]
            first = (str(exc).splitlines() or [""])[0][:200]
            description = {
                "skip": f"its code raised {type(exc).__name__}: {first} "
                f"({Path(where.filename).name}:{where.lineno})"
            }
        recorder.write({"problem": problem, **description})
        forget_fills()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
