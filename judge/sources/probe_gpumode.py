"""A GPU MODE problem, read in the probe's process: `task.yml` (its files, tests and benchmarks,
each a dict of generator arguments with a seed) and `reference.py` (`generate_input(**test)`
returning the data, `ref_kernel(data)` returning the output, `check_implementation`).
Runs third-party code: only `judge.sources.probe` imports this.

The kernel of a GPU MODE problem gets the data and returns its outputs. On tpuzzle's raw-pointer
ABI that is: one pointer per tensor of the data (a tensor, or tuples, lists and dicts of tensors
and numbers: `judge.sources.layout`), each output written into the data's own tensor (the one
ref_kernel returns or fills, else one of the same shape and type made empty by generate_input)
or into a buffer of its own, then the integer generator arguments that shape the tensors, then
the data's numbers that are not constants. The tolerance is the one check_implementation
compares the outputs with (`judge.sources.probe_check`); a check that compares them with none
(residuals, orthogonality) judges them itself, run by the judge (`check: reference`).
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch
import yaml

from judge.sources import checkouts, layout
from judge.sources.probe_check import tolerance
from judge.sources.probing import DTYPES, Recorder, Skip, fill_of

CHECK_CASES = 4  # tests whose tolerance is asked of check_implementation, at most
# A problem judged by its own check (`check: reference`): how far a timed call's outputs may be
# from the first call's on the same inputs (a kernel that sums in a varying order, with atomics).
BETWEEN_CALLS = {"atol": 1e-4, "rtol": 1e-3}
CHECK_ELEMENTS = 1 << 22  # elements of a test's data small enough to be checked on the CPU


def describe(checkout: Path, problem: str, recorder: Recorder) -> dict:
    folder = checkout / problem
    task = _task(folder)
    tests, benchmarks = task["tests"], task.get("benchmarks") or []
    module = _load(folder, task)
    for needed in ("generate_input", "ref_kernel", "check_implementation"):
        if not callable(getattr(module, needed, None)):
            raise Skip(f"reference.py has no {needed}()")
    tree, outputs, checked = _first(module, tests, folder / "reference.py")
    sizes = [k for k, v in tests[0].items() if k != "seed" and _int(v)]
    cases = [_case("test", e, module, tree, outputs, sizes, recorder) for e in tests]
    cases += [_case("benchmark", e, module, tree, outputs, sizes, recorder) for e in benchmarks]
    cases[0]["tolerance"] = checked
    _ask_the_check(module, cases[1 : len(tests)])
    custom = any(c.get("tolerance", {}).get("custom") for c in cases)
    if custom:  # its check judges the outputs, run by the judge: no tolerance of its own
        checked = dict(BETWEEN_CALLS)
        for c in cases:
            c.pop("tolerance", None)
    what, numbers = _resolved(tree, cases, sizes)
    return {
        "title": _title(folder),
        "statement": str(task.get("description") or "").strip(),
        "atol": checked["atol"],
        "rtol": checked["rtol"],
        **({"check": "reference"} if custom else {}),
        "signature": _signature(tree, what, outputs, sizes, numbers),
        "cases": [{k: v for k, v in c.items() if k not in ("leaves", "entry")} for c in cases],
        "data": layout.resolved(tree, what),
        "outputs": [o["name"] for o in outputs],
    }


def _first(module, tests: list[dict], reference: Path) -> tuple[dict, list[dict], dict]:
    """From the first test: the data's layout, where the outputs go, and the tolerance its
    check compares them with. Asked before the larger cases are made, with the second test's
    layout: a problem skipped for either is skipped before its reference runs long."""
    raw = module.generate_input(**tests[0])
    tree = _tree(raw, reference)
    if len(tests) > 1:
        _laid_out(module, tests[1], tree)
    pristine = layout.mapped(raw, torch.Tensor.clone, _is_tensor)
    outputs, result = _outputs(module.ref_kernel, raw, tree, checkouts.returned_names(reference))
    return tree, outputs, tolerance(module, pristine, result, _returned(result))


def _task(folder: Path) -> dict:
    path = folder / "task.yml"
    if not path.is_file():
        raise Skip("no task.yml")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise Skip("task.yml is not a mapping")
    if data.get("multi_gpu"):
        raise Skip("needs several GPUs (multi_gpu)")
    if data.get("lang", "py") != "py":
        raise Skip(f"lang {data.get('lang')!r}: not a Python problem")
    if not data.get("tests"):
        raise Skip("task.yml lists no tests")
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


# ------------------------------------------------------------------------------- the data


def _is_tensor(value: Any) -> bool:
    return isinstance(value, torch.Tensor)


def _tree(raw: Any, reference: Path) -> dict:
    """The data's layout, its leaves named; Skip where a leaf is not mapped or two leaves would
    have one name."""
    try:
        tree = layout.tree(raw, checkouts.data_names(reference), _is_tensor)
    except layout.NotMapped as exc:
        raise Skip(
            f"generate_input gives {exc}: only tensors, numbers, and tuples, lists and dicts "
            "of them are mapped"
        ) from None
    names = layout.names(tree)
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise Skip(f"two parts of the data would both be named {twice!r}")
    return tree


# ------------------------------------------------------------------------------- the outputs


def _outputs(ref_kernel, raw, tree: dict, returned: list[str]) -> tuple[list[dict], Any]:
    """Where each output ref_kernel returns is written ({"name", "new", "direction"}: a data
    tensor, the one returned, else the one empty tensor of its shape and type; or a buffer of
    its own), and what it returned."""
    tensors = {n: t for n, t in layout.leaves(tree, raw) if _is_tensor(t)}
    empty = {n for n, t in tensors.items() if (fill_of(t) or {}).get("dist") == "empty"}
    result = ref_kernel(raw)  # after the fills are read: it may write the data
    outputs: list[dict] = []
    for out in _returned(result):
        taken = {o["name"] for o in outputs if o}
        slot = next((n for n, t in tensors.items() if t is out and n not in taken), None)
        same = [n for n in sorted(empty - taken) if _alike(tensors[n], out)]
        slot = slot or (same[0] if len(same) == 1 else None)
        direction = "out" if slot in empty else "inout"
        outputs.append({"name": slot, "new": False, "direction": direction} if slot else None)
    return _named_new(outputs, returned, set(tensors)), result


def _alike(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def _named_new(outputs: list[dict | None], returned: list[str], taken: set[str]) -> list[dict]:
    """Names for the outputs of their own: `output` (`result` where the data has an `output`)
    for one; for several, the names ref_kernel returns them by, else output0, output1, ..."""
    new = [i for i, o in enumerate(outputs) if o is None]
    named = returned if len(returned) == len(outputs) else [""] * len(outputs)
    for i in new:
        if len(new) == 1:
            name = "result" if "output" in taken else "output"
        else:
            name = named[i] if named[i].isidentifier() and named[i] not in taken else f"output{i}"
        outputs[i] = {"name": name, "new": True, "direction": "out"}
        taken.add(name)
    return outputs


def _returned(result: Any) -> list[torch.Tensor]:
    returned = list(result) if isinstance(result, (tuple, list)) else [result]
    if not returned or not all(_is_tensor(t) for t in returned):
        kinds = sorted({type(t).__name__ for t in returned if not _is_tensor(t)}) or ["nothing"]
        raise Skip(f"ref_kernel returns {' and '.join(kinds)}, not tensors")
    return returned


def _new_outputs(ref_kernel, raw, outputs: list[dict]) -> dict:
    """The shape and type of each output ref_kernel makes of its own for one case: from tensors
    on the meta device (no data, no time), else from the real ones."""
    try:
        result = _returned(ref_kernel(layout.mapped(raw, lambda t: t.to("meta"), _is_tensor)))
    except Skip:
        raise
    except Exception:
        result = _returned(ref_kernel(raw))
    if len(result) != len(outputs):
        raise Skip(
            f"ref_kernel returns {len(result)} outputs in one case, {len(outputs)} in another"
        )
    return {o["name"]: _out(t) for o, t in zip(outputs, result, strict=True) if o["new"]}


def _out(t: torch.Tensor) -> dict:
    dtype = DTYPES.get(t.dtype)
    if dtype is None:
        raise Skip(f"an output is {str(t.dtype).removeprefix('torch.')}, a type tpuzzle lacks")
    return {"tensor": {"dtype": dtype, "shape": list(t.shape), "fill": {"dist": "out"}}}


# ------------------------------------------------------------------------------- the cases


def _case(kind, entry, module, tree, outputs, sizes, recorder: Recorder) -> dict:
    if not isinstance(entry, dict) or not all(_int(entry.get(s)) for s in sizes):
        raise Skip(f"a {kind} lacks an integer {sizes}: {entry!r}")
    raw = module.generate_input(**entry)
    found = _laid_out(module, entry, tree, raw)
    written = {o["name"] for o in outputs if not o["new"] and o["direction"] == "out"}
    values, leaves = {}, {}
    for name, value in found:
        if not _is_tensor(value):
            leaves[name] = value
        elif name in written:
            values[name] = _out(value)
        else:
            values[name] = recorder.value(value)
    if any(o["new"] for o in outputs):
        values |= _new_outputs(module.ref_kernel, raw, outputs)
    values |= {s: {"int": int(entry[s])} for s in sizes}
    return {"kind": kind, "values": values, "leaves": leaves, "seed": entry.get("seed"),
            "entry": entry}  # fmt: skip


def _laid_out(module, entry: dict, tree: dict, raw: Any = None) -> list[tuple[str, Any]]:
    """The leaves of a case's data (`raw`, else generated now), laid out as `tree` says."""
    raw = module.generate_input(**entry) if raw is None else raw
    try:
        return list(layout.leaves(tree, raw))
    except (KeyError, IndexError, TypeError):
        raise Skip(f"generate_input lays the data out otherwise for {entry!r}") from None


def _ask_the_check(module, tests: list[dict]) -> None:
    """Tests small enough (CHECK_ELEMENTS) get, up to CHECK_CASES in all, the tolerance
    check_implementation compares the reference's own output with, as their "tolerance"."""
    chosen = [c for c in tests if _elements(c) <= CHECK_ELEMENTS][: CHECK_CASES - 1]
    for case in chosen:
        data = module.generate_input(**case["entry"])
        output = module.ref_kernel(layout.mapped(data, torch.Tensor.clone, _is_tensor))
        case["tolerance"] = tolerance(module, data, output, _returned(output))


def _elements(case: dict) -> int:
    tensors = [v["tensor"]["shape"] for v in case["values"].values() if "tensor" in v]
    return sum(int(torch.Size(s).numel()) for s in tensors)


def _resolved(tree: dict, cases: list[dict], sizes: list[str]) -> tuple[dict, list[dict]]:
    """What each leaf of the data is, by name (`layout.number` for those that are no tensor),
    and the numbers that become arguments of their own (each case's value written into its
    values)."""
    tensors = {n for n, v in cases[0]["values"].items() if "tensor" in v}
    if any({n for n, v in c["values"].items() if "tensor" in v} != tensors for c in cases):
        raise Skip("generate_input gives tensors in one case where another has numbers")
    known = {s: [c["values"][s]["int"] for c in cases] for s in sizes}
    what, numbers = {n: {"tensor": n} for n in tensors}, []
    for name in (n for n in layout.names(tree) if n not in tensors):
        seen = [c["leaves"].get(name) for c in cases]
        try:
            what[name] = layout.number(name, seen, known)
        except layout.NotMapped as exc:
            raise Skip(f"the data's {name!r} is {exc}") from None
        kind = "float" if "scalar" in what[name] else "int"
        if name not in sizes and what[name] in ({"size": name}, {"scalar": name}):
            numbers.append({"name": name, "kind": kind})
            for case, value in zip(cases, seen, strict=True):
                case["values"][name] = {kind: value}
    return what, numbers


def _signature(tree, what, outputs, sizes, numbers) -> list[dict]:
    directions = {o["name"]: o["direction"] for o in outputs}
    signature = [
        {"name": n, "kind": "pointer", "direction": directions.get(n, "in")}
        for n in layout.names(tree)
        if "tensor" in what[n]
    ]
    signature += [{"name": o["name"], "kind": "pointer", "direction": "out"} for o in outputs
                  if o["new"]]  # fmt: skip
    signature += [{"name": s, "kind": "int", "direction": "in"} for s in sizes]
    signature += [{**n, "direction": "in"} for n in numbers]
    names = [a["name"] for a in signature]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise Skip(f"two arguments would both be named {twice!r}")
    return signature


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
