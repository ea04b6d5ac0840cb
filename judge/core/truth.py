"""The trusted side of a case: its pristine inputs and its reference outputs.

Computed in the parent from the seed alone, before any submission code runs, in float64 where the
dtype is a float; the worker's buffers are read back from its files and compared against these.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections import OrderedDict
from typing import NamedTuple

import torch

from judge.core import inputs, truth_store
from judge.core.loader import LoadError, import_file
from judge.core.spec import FLOAT_DTYPES, Case, PuzzleSpec
from judge.core.truth_store import Held


def load_reference(spec: PuzzleSpec):
    """The puzzle's trusted reference function, reference(*args) like solve() but on tensors."""
    return import_file(spec.directory / "reference.py", f"tpuzzle_reference_{spec.id}").reference


class Sealed(Held):
    """A read-only copy of a tensor's bytes that another process can map: a Linux memfd sealed
    against every write, shrink and growth, readable by the worker at `path`. The worker maps
    the inputs the parent drew instead of drawing them again, and cannot change them for anyone.
    The file closes when this object is collected."""

    def __init__(self, tensor: torch.Tensor):
        super().__init__(os.memfd_create("tpuzzle-input", os.MFD_ALLOW_SEALING | os.MFD_CLOEXEC))
        raw = tensor.contiguous().view(-1).view(torch.uint8).numpy()
        with open(self.fd, "wb", closefd=False) as f:
            f.write(memoryview(raw))
        fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, SEALS)
        self.nbytes = raw.nbytes


SEALS = (
    getattr(fcntl, "F_SEAL_WRITE", 0)
    | getattr(fcntl, "F_SEAL_SHRINK", 0)
    | getattr(fcntl, "F_SEAL_GROW", 0)
    | getattr(fcntl, "F_SEAL_SEAL", 0)
)
CAN_SEAL = hasattr(os, "memfd_create") and hasattr(fcntl, "F_ADD_SEALS")


SEAL_MIN_BYTES = 1 << 20  # smaller input sets are drawn again by the worker: cheap, and no fd


class Truth(NamedTuple):
    """What a case's buffers must hold: inputs as drawn, outputs as the reference computed;
    and the files they travel in to the judge's processes, each made when first asked.

    A confined worker reads its inputs from sealed copies only. The timer (the judge's own
    process, unconfined) reads a truth kept on the disk from the store's files themselves,
    held open (`kept`), and copies nothing; a truth computed here, from sealed copies too."""

    initial: dict[str, torch.Tensor]  # every drawn buffer (in and inout), native dtype
    outputs: dict[str, torch.Tensor]  # every out and inout buffer, float64 where a float
    travels: bool  # inputs go as files (large, or stored beside the puzzle); else drawn again
    kept: dict[str, dict[str, Held]]  # the store's files ("initial", "outputs"), if read back
    files: dict[str, Sealed]  # the drawn buffers, sealed for the worker when first asked
    sealed_outputs: dict[str, Sealed]  # the outputs, sealed for the timer when first asked
    sealing: threading.Lock  # its files are made once, whichever lane asks first

    def input_paths(self) -> dict[str, str]:
        """Where a worker maps the drawn inputs: sealed copies (none for a small set, which the
        worker draws again, nor where the platform cannot seal or no file descriptor is left)."""
        if not (self.travels and CAN_SEAL):
            return {}
        with self.sealing:
            if not self.files:
                try:
                    made = {name: Sealed(t) for name, t in self.initial.items()}
                except OSError:
                    return {}
                self.files.update(made)
                if not self.kept:  # drawn here: read back from the files, not held twice
                    for name, t in self.initial.items():
                        self.initial[name] = made[name].tensor(t.dtype).view(t.shape)
        return {name: f.path for name, f in self.files.items()}

    def timer_input_paths(self) -> dict[str, str]:
        """Where the timer maps the drawn inputs: the store's files when kept there, else the
        worker's sealed copies."""
        if self.kept and self.travels:
            return {name: f.path for name, f in self.kept["initial"].items()}
        return self.input_paths()

    def output_files(self) -> dict[str, Held]:
        """The expected outputs as files the timer maps: the store's when kept there, else
        sealed copies (the truth then reads its outputs from them, not holding them twice)."""
        if self.kept:
            return self.kept["outputs"]
        with self.sealing:
            if not self.sealed_outputs:
                for name, tensor in self.outputs.items():
                    self.sealed_outputs[name] = Sealed(tensor)
                    mapped = self.sealed_outputs[name].tensor(tensor.dtype)
                    self.outputs[name] = mapped.view(tensor.shape)
        return self.sealed_outputs


def reference_truth(spec: PuzzleSpec, reference, case: Case) -> Truth:
    """Reference outputs from pristine inputs, in float64 where the dtype is a float: read back
    from the disk where an earlier process kept them (judge.core.truth_store), else computed."""
    # a worker is handed no cases: inputs of a case's own (stored, or drawn its own way) travel
    stored = any(c.inputs or c.draws for c in (*spec.tests, *spec.benchmarks))
    name = truth_store.key(spec, case)
    kept = truth_store.load(name)
    if kept is not None:
        drawn, outputs, files = kept
    else:
        started = time.perf_counter()
        drawn = inputs.pristine(spec, case.size_map, case.seed, case.draw)
        outputs = computed(spec, reference, case, drawn)
        truth_store.keep(name, drawn, outputs, time.perf_counter() - started)
        files = {}
    size = sum(t.numel() * t.element_size() for t in drawn.values())
    travels = stored or size >= SEAL_MIN_BYTES
    if files and not travels:  # inputs no process maps: their files need not stay open
        files = {**files, "initial": {}}
    return Truth(drawn, outputs, travels, files, {}, {}, threading.Lock())


def computed(spec: PuzzleSpec, fn, case: Case, initial: dict[str, torch.Tensor]) -> dict:
    """What `fn` (the reference, or one of its mistakes) writes into each output buffer, called
    like solve() on the case's inputs widened to float64."""
    tensors = widened(spec, case.size_map, initial)
    fn(*inputs.call_args(spec, case.size_map, tensors, case.draw))
    return {a.name: tensors[a.name] for a in spec.buffers if a.role != "in"}


def widened(spec: PuzzleSpec, sizes: dict, given: dict[str, torch.Tensor]) -> dict:
    """A copy of every buffer of a call, floats widened to float64 (zeros where not given)."""
    tensors = {}
    for lay in inputs.layouts(spec, sizes):
        wide = torch.float64 if lay.arg.dtype in FLOAT_DTYPES else inputs.torch_dtype(lay.arg.dtype)
        start = given.get(lay.arg.name)
        tensors[lay.arg.name] = (
            torch.zeros(lay.n, dtype=wide) if start is None else start.to(wide, copy=True)
        )
    return tensors


def load_check(spec: PuzzleSpec):
    """reference.py's `check(*args) -> str | None` for a puzzle whose outputs it judges
    (`check: reference`); None for the others."""
    if spec.check != "reference":
        return None
    module = import_file(spec.directory / "reference.py", f"tpuzzle_check_{spec.id}")
    found = getattr(module, "check", None)
    if not callable(found):
        raise LoadError("no-check", f"{spec.id}: reference.py defines no check(*args)")
    return found


def checked(spec: PuzzleSpec, fn, case: Case, initial: dict, outputs: dict) -> str | None:
    """What the puzzle's `check` says of a call's outputs (None: right; else why not), called
    like the reference: the inputs as drawn and the outputs as written, floats widened to
    float64."""
    tensors = widened(spec, case.size_map, {**initial, **outputs})
    said = fn(*inputs.call_args(spec, case.size_map, tensors, case.draw))
    if said is not None and not isinstance(said, str):
        return f"the puzzle's check answered {said!r}, not a message"
    return said


def load_mistakes(spec: PuzzleSpec) -> dict:
    """reference.py's mistake_<name> functions, for the spec's mistakes that have one."""
    if not spec.mistakes:
        return {}
    module = import_file(spec.directory / "reference.py", f"tpuzzle_mistakes_{spec.id}")
    found = {m.name: getattr(module, f"mistake_{m.name}", None) for m in spec.mistakes}
    return {name: fn for name, fn in found.items() if callable(fn)}


class TruthCache:
    """Truths kept across the runs of one process (a `bench` or `grade` batch judges many
    submissions of the same puzzle), least recently used first out, within a byte budget.

    The key holds the puzzle's files' modification times, so an edited spec or reference is never
    served from the cache. Truths are only read after they are made. Lanes of a batch share the
    cache from their threads: a truth wanted by two lanes at once is computed once, by the first.
    """

    def __init__(self, budget_bytes: int):
        self.budget = budget_bytes
        self.entries: OrderedDict[tuple, tuple[Truth, int]] = OrderedDict()
        self.used = 0
        self.lock = threading.Lock()  # guards entries and used
        self.making: dict[tuple, threading.Lock] = {}  # one lock per truth being computed

    def get(self, spec: PuzzleSpec, reference, case: Case) -> Truth:
        key = (str(spec.directory), puzzle_stamp(spec), case.sizes, case.seed, case.draw)
        with self.lock:
            found = self._lookup(key)
            if found is not None:
                return found
            making = self.making.setdefault(key, threading.Lock())
        with making:
            with self.lock:
                found = self._lookup(key)  # made by another lane while this one waited
            if found is not None:
                return found
            truth = reference_truth(spec, reference, case)
            with self.lock:
                self._keep(key, truth)
                self.making.pop(key, None)
        return truth

    def _lookup(self, key: tuple) -> Truth | None:
        if key not in self.entries:
            return None
        self.entries.move_to_end(key)
        return self.entries[key][0]

    def _keep(self, key: tuple, truth: Truth) -> None:
        size = truth_bytes(truth)
        if size > self.budget:
            return
        if key in self.entries:
            self.used -= self.entries.pop(key)[1]
        self.entries[key] = (truth, size)
        self.used += size
        while self.used > self.budget:
            _, (_, dropped) = self.entries.popitem(last=False)
            self.used -= dropped


def puzzle_stamp(spec: PuzzleSpec) -> tuple[int, ...]:
    stamps = []
    for name in ("puzzle.yaml", "reference.py"):
        try:
            stamps.append((spec.directory / name).stat().st_mtime_ns)
        except OSError:
            stamps.append(0)
    return tuple(stamps)


def truth_bytes(truth: Truth) -> int:
    tensors = [*truth.initial.values(), *truth.outputs.values()]
    return sum(t.numel() * t.element_size() for t in tensors)


def default_budget() -> int:
    """Bytes of truths kept: TPUZZLE_TRUTH_CACHE_MB, else a quarter of memory, at most 8 GiB."""
    if os.environ.get("TPUZZLE_TRUTH_CACHE_MB"):
        return int(float(os.environ["TPUZZLE_TRUTH_CACHE_MB"]) * 2**20)
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        memory = 16 << 30
    return min(8 << 30, memory // 4)


CACHE = TruthCache(default_budget())
