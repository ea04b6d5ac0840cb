"""A buffer's shape as expressions in the sizes, found from the shapes a problem's generators
gave it in every case: tpuzzle allocates each buffer from its spec, so an imported buffer needs
a shape that holds for every size.

Pure: observations in, expressions out.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from judge.core.spec import evaluate

Observation = tuple[dict[str, int], tuple[int, ...]]  # (the case's sizes, the buffer's shape)


def infer(observations: Sequence[Observation], names: Sequence[str]) -> list[str] | None:
    """Expressions for each dimension that give every observed shape from its case's sizes;
    for shapes of differing rank, one expression for the element count; None when no candidate
    fits."""
    if not observations:
        return None
    ranks = {len(shape) for _, shape in observations}
    if len(ranks) == 1 and ranks != {0}:
        dims = []
        for j in range(ranks.pop()):
            fit = fitting([(sizes, shape[j]) for sizes, shape in observations], names)
            if fit is None:
                break
            dims.append(fit)
        else:
            return dims
    counts = [(sizes, _count(shape)) for sizes, shape in observations]
    fit = fitting(counts, names)
    return [fit] if fit is not None else None


def fitting(targets: Sequence[tuple[dict[str, int], int]], names: Sequence[str]) -> str | None:
    """The first candidate expression equal to each target under its sizes."""
    for expr in candidates(names, {value for _, value in targets}):
        if all(_value(expr, sizes) == value for sizes, value in targets):
            return expr
    return None


def candidates(names: Sequence[str], values: set[int]) -> Iterator[str]:
    """Expressions in the sizes, simplest first: a size; a constant (when every case agrees);
    products; a size plus or minus a small number, scaled, divided; differences of sizes."""
    yield from names
    if len(values) == 1:
        yield str(next(iter(values)))
    for a, b in itertools.combinations_with_replacement(names, 2):
        yield f"{a} * {b}"
    for a, b, c in itertools.combinations_with_replacement(names, 3):
        yield f"{a} * {b} * {c}"
    for a, b in itertools.combinations_with_replacement(names, 2):
        for k in (2, 3, 4):
            yield f"{k} * {a} * {b}"
    for a, b, c, d in itertools.combinations_with_replacement(names, 4):
        yield f"{a} * {b} * {c} * {d}"
    for a in names:
        for k in (1, 2, 3, 4):
            yield f"{a} + {k}"
            yield f"{a} - {k}"
        for k in (2, 3, 4, 8):
            yield f"{k} * {a}"
        for k in (2, 4, 8, 16, 32, 64, 128):
            yield f"{a} // {k}"
            yield f"cdiv({a}, {k})"
    for a, b in itertools.permutations(names, 2):
        yield f"cdiv({a}, {b})"
        yield f"{a} // {b}"
        yield f"{a} - {b} + 1"
        yield f"{a} - {b}"
        yield f"{a} + {b}"
        yield f"({a} - {b} + 1) * ({a} - {b} + 1)"
    for a, b, c in itertools.permutations(names, 3):
        yield f"{a} * ({b} - {c} + 1)"
        yield f"{a} * {b} - {c}"
        yield f"{a} * ({b} // {c})"
        yield f"{a} * cdiv({b}, {c})"
        yield f"cdiv({a}, {c}) * cdiv({b}, {c})"
    for a, b, c, d in itertools.permutations(names, 4):
        yield f"({a} - {b} + 1) * ({c} - {d} + 1)"


def _value(expr: str, sizes: dict[str, int]) -> float | None:
    try:
        return evaluate(expr, sizes)
    except (ValueError, ZeroDivisionError):
        return None


def _count(shape: tuple[int, ...]) -> int:
    count = 1
    for d in shape:
        count *= d
    return count
