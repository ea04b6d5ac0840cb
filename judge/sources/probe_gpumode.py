"""A GPU MODE problem, read in the probe's process: `task.yml` (its files, tests and benchmarks,
each a dict of generator arguments with a seed) and `reference.py` (`generate_input(**test)`
returning the data tuple, `ref_kernel(data)` returning the output, `check_implementation`).
Runs third-party code: only `judge.sources.probe` imports this.

The kernel of a GPU MODE problem gets the data tuple and returns its output. On tpuzzle's
raw-pointer ABI that is: one pointer per tensor of the tuple, the output written into the tuple's
own output tensor (the one ref_kernel returns or fills, else one of the same shape and type made
empty by generate_input, else a buffer of its own), then the integer generator arguments that
shape the tensors.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch
import yaml

from judge.sources.probe import DTYPES, Recorder, Skip, fill_of


def describe(checkout: Path, problem: str, recorder: Recorder) -> dict:
    folder = checkout / problem
    task = _task(folder)
    if task.get("multi_gpu"):
        raise Skip("needs several GPUs (multi_gpu)")
    if task.get("lang", "py") != "py":
        raise Skip(f"lang {task.get('lang')!r}: not a Python problem")
    tests, benchmarks = task.get("tests") or [], task.get("benchmarks") or []
    if not tests:
        raise Skip("task.yml lists no tests")
    module = _load(folder, task)
    for needed in ("generate_input", "ref_kernel"):
        if not callable(getattr(module, needed, None)):
            raise Skip(f"reference.py has no {needed}()")
    raw = module.generate_input(**tests[0])
    first = _tuple(raw)
    names = _data_names(folder / "reference.py")
    names = names if names and len(names) == len(first) else [f"x{i}" for i in range(len(first))]
    if not isinstance(raw, (tuple, list)):
        names = ["data"]
    slots = _output_slots(module.ref_kernel, raw)
    sizes = [k for k, v in tests[0].items() if k != "seed" and _int(v)]
    atol, rtol = _tolerance(folder / "reference.py", module)
    cases = []
    for kind, entries in (("test", tests), ("benchmark", benchmarks)):
        for entry in entries:
            cases.append(_case(kind, entry, module, names, slots, sizes, recorder))
    signature = [
        {"name": n, "kind": "pointer", "direction": slots.get(i, "in")} for i, n in enumerate(names)
    ]
    new = "result" if "output" in names else "output"
    signature += [{"name": new, "kind": "pointer", "direction": "out"}] * (NEW in slots)
    signature += [{"name": s, "kind": "int", "direction": "in"} for s in sizes]
    return {
        "title": _title(folder),
        "statement": str(task.get("description") or "").strip(),
        "atol": atol,
        "rtol": rtol,
        "signature": signature,
        "cases": cases,
        "tuple": isinstance(raw, (tuple, list)),
        "returns": new if NEW in slots else names[next(iter(slots))],
        "new_output": NEW in slots,
    }


def _task(folder: Path) -> dict:
    path = folder / "task.yml"
    if not path.is_file():
        raise Skip("no task.yml")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise Skip("task.yml is not a mapping")
    return data


def _title(folder: Path) -> str:
    first = (folder / "task.yml").read_text(encoding="utf-8").splitlines()[:1]
    if first and first[0].startswith("# name:"):
        return first[0].removeprefix("# name:").strip()
    return folder.name


def _load(folder: Path, task: dict):
    """reference.py, with the files task.yml names (task.py, ../utils.py, ...) importable under
    their names, from a folder of copies."""
    staged = Path(tempfile.mkdtemp(prefix="tpuzzle-gpumode-"))
    for entry in task.get("files") or []:
        source = str(entry.get("source", ""))
        if source.startswith("@") or entry.get("name") in ("submission.py", "eval.py"):
            continue
        path = (folder / source).resolve()
        if path.is_file():
            shutil.copy(path, staged / str(entry["name"]))
    for name in ("task.py", "reference.py"):
        if not (staged / name).exists() and (folder / name).is_file():
            shutil.copy(folder / name, staged / name)
    for name in ("task", "utils", "reference"):
        sys.modules.pop(name, None)  # each problem brings its own
    sys.path.insert(0, str(staged))
    try:
        spec = importlib.util.spec_from_file_location("reference", staged / "reference.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["reference"] = module
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(staged))
    return module


def _tuple(data: Any) -> tuple:
    data = tuple(data) if isinstance(data, (tuple, list)) else (data,)
    for item in data:
        if not isinstance(item, torch.Tensor):
            raise Skip(f"generate_input gives a {type(item).__name__}: only tensors have pointers")
    return data


def _data_names(reference: Path) -> list[str]:
    """The names ref_kernel unpacks the data tuple into (`a, b, c = data`), if it does."""
    tree = ast.parse(reference.read_text(encoding="utf-8"))
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        if fn.name != "ref_kernel" or not fn.args.args:
            continue
        given = fn.args.args[0].arg
        for node in ast.walk(fn):
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Name)
                and node.value.id == given
                and isinstance(node.targets[0], ast.Tuple)
            ):
                names = [getattr(e, "id", "") for e in node.targets[0].elts]
                if all(n.isidentifier() for n in names) and len(set(names)) == len(names):
                    return names
    return []


NEW = "new"  # the output is a tensor of its own: a buffer `output` after the data's


def _output_slots(ref_kernel, raw) -> dict:
    """Where the output is written: {index: "out" or "inout"} for a data tensor (the one
    ref_kernel returns, else the one empty tensor of its shape and type), {NEW: "out"} for an
    output of its own."""
    data = _tuple(raw)
    made_empty = [(fill_of(t) or {}).get("dist") == "empty" for t in data]  # before it runs
    out = _returned(ref_kernel(raw))
    for i, t in enumerate(data):
        if t is out:
            return {i: "out" if made_empty[i] else "inout"}
    empty = [
        i
        for i, t in enumerate(data)
        if made_empty[i] and t.shape == out.shape and t.dtype == out.dtype
    ]
    if len(empty) == 1:
        return {empty[0]: "out"}
    return {NEW: "out"}


def _returned(result: Any) -> torch.Tensor:
    returned = result if isinstance(result, (tuple, list)) else (result,)
    if len(returned) != 1 or not isinstance(returned[0], torch.Tensor):
        raise Skip("ref_kernel returns other than one tensor")
    return returned[0]


def _new_output(ref_kernel, raw) -> dict:
    """The shape and type of the output ref_kernel makes for one case: from tensors on the meta
    device (no data, no time), else from the real ones."""
    try:
        meta = tuple(t.to("meta") for t in _tuple(raw))
        out = _returned(ref_kernel(meta if isinstance(raw, (tuple, list)) else meta[0]))
    except Skip:
        raise
    except Exception:
        out = _returned(ref_kernel(raw))
    dtype = DTYPES.get(out.dtype)
    if dtype is None:
        raise Skip(f"the output is {out.dtype}, a type tpuzzle lacks")
    return {"tensor": {"dtype": dtype, "shape": list(out.shape), "fill": {"dist": "out"}}}


def _case(kind, entry, module, names, slots, sizes, recorder: Recorder) -> dict:
    if not isinstance(entry, dict) or not all(_int(entry.get(s)) for s in sizes):
        raise Skip(f"a {kind} lacks an integer {sizes}: {entry!r}")
    raw = module.generate_input(**entry)
    data = _tuple(raw)
    if len(data) != len(names):
        raise Skip(
            f"generate_input gives {len(data)} tensors for one case, {len(names)} for another"
        )
    values = {}
    for i, (name, t) in enumerate(zip(names, data, strict=True)):
        if slots.get(i) == "out":
            dtype = DTYPES.get(t.dtype)
            if dtype is None:
                raise Skip(f"the output is {t.dtype}, a type tpuzzle lacks")
            values[name] = {
                "tensor": {"dtype": dtype, "shape": list(t.shape), "fill": {"dist": "out"}}
            }
        else:
            values[name] = recorder.value(t)
    if NEW in slots:
        values["result" if "output" in names else "output"] = _new_output(module.ref_kernel, raw)
    values |= {s: {"int": int(entry[s])} for s in sizes}
    return {"kind": kind, "values": values, "seed": entry.get("seed")}


def _tolerance(reference: Path, module) -> tuple[float, float]:
    """(atol, rtol) of check_implementation: make_match_reference's keywords over the defaults
    of utils.match_reference; exact for verbose_allequal; else the check is custom."""
    tree = ast.parse(reference.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "make_match_reference":
            defaults = _defaults(module)
            given = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
            return float(given.get("atol", defaults["atol"])), float(
                given.get("rtol", defaults["rtol"])
            )
    if "verbose_allequal" in reference.read_text(encoding="utf-8"):
        return 0.0, 0.0
    raise Skip("check_implementation is custom code, not make_match_reference")


def _defaults(module) -> dict:
    utils = sys.modules.get("utils")
    match = getattr(utils, "match_reference", None)
    params = inspect.signature(match).parameters if match else {}
    return {
        key: params[key].default if key in params else fallback
        for key, fallback in (("atol", 1e-08), ("rtol", 1e-05))
    }


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
