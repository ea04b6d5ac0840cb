"""A converted puzzle tried before it is kept: its reference (the source's own code) computes the
truth of its smallest test, in a process of its own, as the judge would; a puzzle its own check
judges must see that check pass the reference's answer and fail outputs of zeros.

    python -m judge.sources.verify PUZZLE_DIR [PUZZLE_DIR ...]

prints one JSON line per folder: {"puzzle": DIR, "error": null} or the error in one line.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def check(directory: Path) -> str | None:
    """None when the puzzle loads and its reference computes its smallest test; else why not."""
    from judge.core import inputs
    from judge.core.spec_reader import load_spec
    from judge.core.truth import load_reference, reference_truth

    try:
        spec = load_spec(directory / "puzzle.yaml")
        small = [c for c in spec.tests if c.interpret] or list(spec.tests)
        case = min(small, key=lambda c: sum(lay.n for lay in inputs.layouts(spec, c.size_map)))
        truth = reference_truth(spec, load_reference(spec), case)
    except Exception as exc:  # the source's code: whatever it raises is the reason
        first = (str(exc).splitlines() or [""])[0][:200]
        return f"its reference fails on the converted case: {type(exc).__name__}: {first}".strip()
    return judged_by_its_check(spec, case, truth) if spec.check == "reference" else None


def judged_by_its_check(spec, case, truth) -> str | None:
    """A puzzle its own check judges: the check passes the reference's answer and fails
    outputs of zeros, called as the judge calls it; else why not."""
    import torch

    from judge.core.truth import checked, load_check

    try:
        fn = load_check(spec)
        right = checked(spec, fn, case, truth.initial, truth.outputs)
        zeros = {name: torch.zeros_like(t) for name, t in truth.outputs.items()}
        wrong = checked(spec, fn, case, truth.initial, zeros)
    except Exception as exc:  # the source's code
        first = (str(exc).splitlines() or [""])[0][:200]
        return f"its check fails on the converted case: {type(exc).__name__}: {first}".strip()
    if right is not None:
        return f"its check rejects its reference's answer: {right}"
    if wrong is None:
        return "its check accepts outputs of zeros"
    return None


def main(argv: list[str]) -> int:
    for folder in argv:
        print(json.dumps({"puzzle": folder, "error": check(Path(folder))}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
