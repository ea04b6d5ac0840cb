"""Do the shipped solutions compile for a GPU? Checked on a machine without one.

Triton's interpreter runs a kernel as Python and so accepts code that its compiler rejects (a
variable that changes type in one branch of an `if`, say). This helper finds out, in two steps:

    python tests/gpu_compile.py record SOLUTIONS.json LAUNCHES.json   (with TRITON_INTERPRET=1)
    python tests/gpu_compile.py compile LAUNCHES.json RESULTS.json     (without it)

`record` runs each solution's `solve()` once in the interpreter, on the interpreter case of its
puzzle with the most work, and notes every kernel launch: the kernel's name, its arguments and its
launch options (an autotuner's chosen config included). `compile` compiles each launch ahead of
time for an sm_90 GPU with `triton.compile`, which needs Triton's bundled `ptxas` but no device,
and writes "ok" or the compiler's error per solution.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET = ("cuda", 90, 32)  # an H100 or H200: compute capability 9.0, 32-thread warps
OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def plain(value):
    """A launch argument as JSON: a tensor as its address, numbers and strings as they are."""
    if hasattr(value, "data_ptr"):
        return int(value.data_ptr())
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return repr(value)


def record(solutions_file: Path, launches_file: Path) -> None:
    from triton.runtime import interpreter

    from judge.core import bench, inputs, registry
    from judge.core.loader import import_file
    from judge.workers import interp
    from judge.workers.tuning import TuningPolicy

    interp.install()
    TuningPolicy().install(True)
    launches: list[dict] = []
    current: dict = {}
    original = interpreter.InterpretedFunction.run

    def run(self, *args, grid, warmup, **kwargs):
        launches.append(
            {
                **current,
                "kernel": self.fn.__name__,
                "args": [plain(a) for a in args],
                "kwargs": {k: plain(v) for k, v in kwargs.items()},
            }
        )
        return original(self, *args, grid=grid, warmup=warmup, **kwargs)

    interpreter.InterpretedFunction.run = run
    failures = []
    for i, (pid, path) in enumerate(json.loads(solutions_file.read_text())):
        current = {"puzzle": pid, "solution": path}
        try:
            spec = registry.get(pid, ROOT / "puzzles")
            # the interpreter case with the most work: the one most likely to need every kernel
            case = max(
                (c for c in spec.tests if c.interpret),
                key=lambda c: bench.work(spec, dict(c.sizes)),
            )
            sizes = dict(case.sizes)
            drawn = inputs.pristine(spec, sizes, case.seed)
            # laid out as the worker lays them out: between guard bands, outputs sentinel-filled
            lays = inputs.layouts(spec, sizes)
            fulls = {
                lay.arg.name: inputs.guarded(lay, drawn.get(lay.arg.name), "cpu") for lay in lays
            }
            pointers = {
                lay.arg.name: inputs.data_view(fulls[lay.arg.name], lay).data_ptr() for lay in lays
            }
            module = import_file(Path(path), f"tpuzzle_compile_{i}")
            module.solve(*inputs.call_args(spec, sizes, pointers))
        except Exception as exc:  # reported as this solution's result
            failures.append({**current, "error": f"{type(exc).__name__}: {exc}"[:2000]})
    launches_file.write_text(json.dumps({"launches": launches, "failures": failures}))


def find_kernel(module, name: str):
    """The JITFunction called `name` in a module, under any autotuner or heuristics around it."""
    from triton.runtime.jit import JITFunction

    for value in vars(module).values():
        while value is not None and not isinstance(value, JITFunction) and hasattr(value, "fn"):
            value = value.fn
        if isinstance(value, JITFunction) and value.fn.__name__ == name:
            return value
    raise LookupError(f"no @triton.jit function named {name}")


def signature(kernel, launch: dict) -> tuple[dict, dict, dict]:
    """(signature, constexprs, options) of one recorded launch, as the GPU launcher would see
    them: addresses and large integers as i64, other integers as i32, floats as fp32."""
    given = dict(zip((p.name for p in kernel.params), launch["args"], strict=False))
    given |= {k: v for k, v in launch["kwargs"].items() if k not in OPTIONS}
    types, constexprs = {}, {}
    for param in kernel.params:
        value = given.get(param.name, param.default)
        if param.is_constexpr:
            types[param.name] = "constexpr"
            constexprs[param.name] = value
        elif isinstance(value, bool):
            types[param.name] = "i1"
        elif isinstance(value, int):
            wide = param.name.endswith("ptr") or not -(2**31) <= value < 2**31
            types[param.name] = "i64" if wide else "i32"
        elif isinstance(value, float):
            types[param.name] = "fp32"
        else:
            raise TypeError(f"argument {param.name} = {value!r}: no GPU type for it")
    options = {k: v for k, v in launch["kwargs"].items() if k in OPTIONS and v is not None}
    return types, constexprs, options


def compile_all(launches_file: Path, results_file: Path) -> None:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from judge.core.loader import import_file

    recorded = json.loads(launches_file.read_text())
    results = {
        f["solution"]: f"did not run in the interpreter: {f['error']}" for f in recorded["failures"]
    }
    modules: dict[str, object] = {}
    done = set()
    for launch in recorded["launches"]:
        path = launch["solution"]
        results.setdefault(path, "ok")
        types = None
        try:
            if path not in modules:
                modules[path] = import_file(Path(path), f"tpuzzle_compile_{len(modules)}")
            kernel = find_kernel(modules[path], launch["kernel"])
            types, constexprs, options = signature(kernel, launch)
            key = (path, launch["kernel"], json.dumps([types, constexprs, options], default=str))
            if key in done:
                continue
            done.add(key)
            source = ASTSource(kernel, types, constexprs=constexprs)
            triton.compile(source, target=GPUTarget(*TARGET), options=options)
        except Exception:
            last = traceback.format_exc(limit=3).strip().splitlines()[-1]
            results[path] = f"{launch['kernel']} ({types}): {last}"[:2000]
    results_file.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    step, source, target = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    record(source, target) if step == "record" else compile_all(source, target)
