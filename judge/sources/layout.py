"""The data a GPU MODE problem's generate_input gives, as a layout: a tree of tuples, lists and
dicts (JSON, kept in the converted reference) whose leaves are arguments of the signature or
constants, so that the data can be built again from a call's arguments.

    {"tuple": [node, ...]}   {"list": [node, ...]}   {"dict": [[key, node], ...]}
    {"tensor": name}   {"size": name}   {"scalar": name}   {"value": constant}

The probe first writes each leaf as {"leaf": name} (`tree`), then says what each leaf is
(`number` for those that are no tensor; `resolved`).

Pure: Python values in, trees and values out; a tensor is whatever `is_tensor` says.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

CONTAINERS = {tuple: "tuple", list: "list"}
SCALARS = (bool, int, float, str, type(None))  # leaves besides tensors


class NotMapped(Exception):
    """A value the layout has no node for, with what it is."""


def tree(data: Any, names: list[str], is_tensor: Callable[[Any], bool]) -> dict:
    """The layout of `data` with its leaves named where they are: a tuple's items by `names`
    (the names ref_kernel unpacks it into) or x0, x1, ...; a dict's by their keys; a nested
    item by its container's name and its own key or index. One tensor alone is `data`."""
    if type(data) in CONTAINERS:
        given = names if len(names) == len(data) else [f"x{i}" for i in range(len(data))]
        items = [_node(v, n, is_tensor) for v, n in zip(data, given, strict=True)]
        return {CONTAINERS[type(data)]: items}
    if isinstance(data, dict):
        return _node(data, "", is_tensor)
    return _node(data, "data", is_tensor)


def _node(value: Any, name: str, is_tensor) -> dict:
    if type(value) in CONTAINERS:
        items = [_node(v, _joined(name, str(i)), is_tensor) for i, v in enumerate(value)]
        return {CONTAINERS[type(value)]: items}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise NotMapped("a dict whose keys are not all strings")
        return {"dict": [[k, _node(v, _joined(name, k), is_tensor)] for k, v in value.items()]}
    if is_tensor(value) or isinstance(value, SCALARS):
        return {"leaf": name}
    raise NotMapped(f"a {type(value).__name__}")


def _joined(parent: str, key: str) -> str:
    name = re.sub(r"\W+", "_", f"{parent}_{key}" if parent else key).strip("_")
    return name if name and not name[0].isdigit() else f"x{name}"


def leaves(node: dict, data: Any) -> Iterator[tuple[str, Any]]:
    """(name, value) of every leaf, in order, for data of this layout (KeyError, IndexError or
    TypeError where the data is laid out otherwise)."""
    if "leaf" in node:
        yield node["leaf"], data
        return
    if "dict" in node:
        if not isinstance(data, dict) or list(data) != [k for k, _ in node["dict"]]:
            raise KeyError("other keys")
        for key, child in node["dict"]:
            yield from leaves(child, data[key])
        return
    kind = next(iter(node))
    if CONTAINERS.get(type(data)) != kind or len(data) != len(node[kind]):
        raise TypeError("another container")
    for child, item in zip(node[kind], data, strict=True):
        yield from leaves(child, item)


def names(node: dict) -> list[str]:
    """The names of the leaves, in order."""
    if "leaf" in node:
        return [node["leaf"]]
    children = [c for _, c in node["dict"]] if "dict" in node else next(iter(node.values()))
    return [n for child in children for n in names(child)]


def number(name: str, seen: list, sizes: dict[str, list[int]]) -> dict:
    """What a leaf that is no tensor is, from its value in every case (`seen`) and the values of
    each size in every case: an int that is a size in every case is that size (one of the same
    name first); a value that never changes is a constant; any other int is a size of its own,
    any other float a scalar; NotMapped for anything else."""
    ints = all(isinstance(v, int) and not isinstance(v, bool) for v in seen)
    same = [s for s, values in sizes.items() if ints and values == seen]
    if same:
        plain = [s for s in same if _plain(s) == _plain(name)]
        return {"size": (plain or same)[0]}
    if all(v == seen[0] and type(v) is type(seen[0]) for v in seen):
        return {"value": seen[0]}
    if ints and name not in sizes:
        return {"size": name}
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in seen):
        return {"scalar": name}
    raise NotMapped(f"{seen[0]!r} in one case, {seen[-1]!r} in another")


def _plain(name: str) -> str:
    return name.lower().replace("_", "")


def resolved(node: dict, what: dict[str, dict]) -> dict:
    """The layout with each leaf replaced by what it is ({"tensor": ...}, {"size": ...},
    {"scalar": ...} or {"value": ...}), by its name."""
    if "leaf" in node:
        return what[node["leaf"]]
    if "dict" in node:
        return {"dict": [[k, resolved(c, what)] for k, c in node["dict"]]}
    kind = next(iter(node))
    return {kind: [resolved(c, what) for c in node[kind]]}


def build(node: dict, argument: Callable[[str, str], Any]) -> Any:
    """The data of a resolved layout: each argument leaf is `argument(kind, name)`."""
    if "value" in node:
        return node["value"]
    for kind in ("tensor", "size", "scalar"):
        if kind in node:
            return argument(kind, node[kind])
    if "dict" in node:
        return {k: build(c, argument) for k, c in node["dict"]}
    items = [build(c, argument) for c in node.get("tuple", node.get("list", []))]
    return tuple(items) if "tuple" in node else items


def mapped(data: Any, fn: Callable[[Any], Any], is_tensor: Callable[[Any], bool]) -> Any:
    """The data with every tensor replaced by fn(tensor), containers and other leaves kept."""
    if type(data) in CONTAINERS:
        return type(data)(mapped(v, fn, is_tensor) for v in data)
    if isinstance(data, dict):
        return {k: mapped(v, fn, is_tensor) for k, v in data.items()}
    return fn(data) if is_tensor(data) else data
