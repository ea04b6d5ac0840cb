"""A problem's tolerance as a puzzle spec says it: one number, or a number times an expression in
the sizes, found from the tolerance the problem's own check applied to each case it was asked of
(a check that scales its tolerance with the input, such as `1e-5 * sqrt(n)`).

Pure: observations in, a number or an expression out.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence

from judge.core.spec import evaluate

Observation = tuple[dict[str, int], float]  # (the case's sizes, the tolerance its check applied)
SAME = 1e-6  # relative difference under which two tolerances are one


def fitted(observations: Sequence[Observation], names: Sequence[str]) -> float | str | None:
    """The tolerance of every observed case: their value where they agree, else the first
    `c * expression` (a size, its square root, a product of two and its root) that gives each;
    None when none does."""
    values = [value for _, value in observations]
    if all(math.isclose(v, values[0], rel_tol=SAME) for v in values):
        return max(values)
    for expr in candidates(names):
        scales = [evaluate(expr, sizes) for sizes, _ in observations]
        if any(s <= 0 for s in scales):
            continue
        ratios = [v / s for v, s in zip(values, scales, strict=True)]
        if all(math.isclose(r, ratios[0], rel_tol=SAME) for r in ratios):
            return f"{float(f'{ratios[0]:.6g}')!r} * {expr}"
    return None


def candidates(names: Sequence[str]) -> Iterator[str]:
    """Expressions a tolerance may grow by, simplest first."""
    for name in names:
        yield f"sqrt({name})"
        yield name
    for a, b in itertools.combinations_with_replacement(names, 2):
        yield f"sqrt({a} * {b})"
        yield f"{a} * {b}"
