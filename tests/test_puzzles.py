"""Every puzzle: its spec, its reference, its shipped solutions, its template.

The correct solutions must pass and each wrong solution must get the verdict and reason its first
line states (`# expect: VERDICT REASON`, several reasons separated by `|`). CPU runs use Triton's
interpreter on the cases a spec marks for it; the gpu-marked runs use every test case.
"""

from pathlib import Path

import numpy as np
import pytest
import torch

from judge.core import check, registry, truth
from judge.core.results import Verdict
from judge.judging import runner
from judge.records import catalogue

ROOT = Path(__file__).resolve().parent.parent / "puzzles"
IDS = registry.puzzle_ids(ROOT)
TIMEOUT_S = 30

FORMULAS = Path(__file__).resolve().parent / "formulas"


def formula(pid: str):
    """tests/formulas/<id>.py: formula(inputs, sizes) -> outputs, in NumPy, written apart from
    the puzzle's PyTorch reference; inputs and outputs are float64 (or int) arrays by name."""
    from judge.core.loader import import_file

    return import_file(FORMULAS / f"{pid}.py", f"tpuzzle_formula_{pid}").formula


def solutions(kind: str) -> list:
    return [
        pytest.param(pid, path, id=f"{pid}/{path.stem}")
        for pid in IDS
        for path in sorted((ROOT / pid / "solutions" / kind).glob("*.py"))
    ]


def expectation(path: Path) -> tuple[str, set[str]]:
    first = path.read_text().splitlines()[0]
    assert first.startswith("# expect: "), f"{path}: first line must be '# expect: VERDICT REASON'"
    verdict, reasons = first.removeprefix("# expect: ").split()
    assert path.stem.startswith(verdict), f"{path}: the file name must start with {verdict}"
    return verdict, set(reasons.split("|"))


# The hints that name the mistakes any puzzle's solution may make, by the key a wrong solution's
# second line gives (`# mistake: KEY`); a puzzle's own mistakes are named in its puzzle.yaml, and
# `# mistake: verdict TEXT` says that the verdict's message itself names it (TEXT in it).
GENERIC_MISTAKES = {
    "mask": "missing its mask",
    "negative_offsets": "are some offsets negative",
    "input": "inputs are read-only",
    "unwritten": "nothing was written",
    "program_id": "tl.program_id(0)",
    "grid": "does the grid round down",
    "precision": "float16 or bfloat16",
}


def mistake_line(path: Path) -> tuple[str, str]:
    """(KEY, TEXT) of a wrong solution's second line `# mistake: KEY [TEXT]`."""
    lines = path.read_text().splitlines()
    second = lines[1] if len(lines) > 1 else ""
    assert second.startswith("# mistake: "), f"{path}: line 2 must be '# mistake: KEY [TEXT]'"
    key, _, text = second.removeprefix("# mistake: ").partition(" ")
    return key, text.strip()


def judge(pid: str, path: Path, gpu: bool):
    spec = registry.get(pid, ROOT)
    options = runner.RunOptions(interpret=not gpu, timing=False, timeout_s=TIMEOUT_S)
    return runner.judge(spec, path, options)


@pytest.mark.parametrize("pid", IDS)
def test_spec_loads_with_solutions(pid):
    spec = registry.get(pid, ROOT)
    assert (spec.directory / "template.py").is_file()
    assert list((spec.directory / "solutions" / "correct").glob("*.py"))
    assert len(list((spec.directory / "solutions" / "wrong").glob("*.py"))) >= 2
    assert not spec.best or (spec.directory / "solutions" / "correct" / spec.best).is_file()
    assert any(c.interpret for c in spec.tests), "no case runs in interpreter mode"
    assert spec.benchmarks, "no benchmark case"


@pytest.mark.parametrize("pid", IDS)
def test_reference_matches_an_independent_formula(pid):
    spec = registry.get(pid, ROOT)
    reference = truth.load_reference(spec)
    for case in [c for c in spec.tests if c.interpret][:6]:
        from judge.core import inputs

        drawn = {
            k: v.double().numpy()
            for k, v in inputs.pristine(spec, case.size_map, case.seed, case.draw).items()
        }
        want = formula(pid)(drawn, case.size_map)
        got = truth.reference_truth(spec, reference, case).outputs
        for name, values in want.items():
            np.testing.assert_allclose(got[name].double().numpy(), values, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("pid", IDS)
def test_a_memory_bound_puzzle_ranks_on_a_shape_of_at_least_128_mib(pid):
    """Where a copy reaches about 90% of its peak: a small shape alone measures launches."""
    from judge.core import bench

    spec = registry.get(pid, ROOT)
    if spec.speed_of_light.measure == "bytes":
        assert max(bench.work(spec, c.size_map) for c in spec.benchmarks) >= 128 << 20


@pytest.mark.parametrize("pid", IDS)
def test_every_puzzle_names_the_library_call_of_its_reference(pid):
    """`library:` labels the reference's time in reports ("vs torch.cumsum")."""
    assert registry.get(pid, ROOT).library.strip(), "no `library:` label for the reference's call"


@pytest.mark.parametrize("pid", IDS)
def test_every_library_call_gives_the_references_answer(pid):
    """The other library calls reference.py lists (LIBRARY), on the CPU in the puzzle's dtypes,
    on its first interpreter cases, within the puzzle's tolerance."""
    from judge.core import inputs
    from judge.core.loader import import_file

    spec = registry.get(pid, ROOT)
    module = import_file(spec.directory / "reference.py", f"tpuzzle_library_{pid}")
    for label, call in (getattr(module, "LIBRARY", None) or {}).items():
        for case in [c for c in spec.tests if c.interpret][:3]:
            sizes = case.size_map
            want = truth.reference_truth(spec, truth.load_reference(spec), case).outputs
            drawn = inputs.pristine(spec, sizes, case.seed, case.draw)
            buffers = {
                lay.arg.name: drawn[lay.arg.name].clone()
                if lay.arg.name in drawn
                else torch.zeros(lay.n, dtype=inputs.torch_dtype(lay.arg.dtype))
                for lay in inputs.layouts(spec, sizes)
            }
            views = {lay.arg.name: buffers[lay.arg.name] for lay in inputs.layouts(spec, sizes)}
            call(*inputs.call_args(spec, sizes, views))
            tol = spec.tolerance.at(sizes)
            for name, expected in want.items():
                got = buffers[name].double()
                err = (got - expected.double()).abs()
                assert bool((err <= tol.atol + tol.rtol * expected.double().abs()).all()), label


@pytest.mark.parametrize("pid", IDS)
def test_every_case_discriminates(pid):
    """An all-zero answer must fail every case: the reference sits well above atol."""
    spec = registry.get(pid, ROOT)
    reference = truth.load_reference(spec)
    for case in (c for c in spec.tests if c.interpret):
        for name, values in truth.reference_truth(spec, reference, case).outputs.items():
            tolerance = spec.tolerance.at(case.size_map)
            assert check.discriminates(values, tolerance), f"{case.name}: {name}"


@pytest.mark.parametrize("pid, path", solutions("correct"))
def test_correct_solution_passes(pid, path):
    report = judge(pid, path, gpu=False)
    assert report.verdict is Verdict.PASSED, f"{report.reason}: {report.message}"


@pytest.mark.parametrize("pid, path", solutions("wrong"))
def test_wrong_solution_gets_its_verdict(pid, path):
    verdict, reasons = expectation(path)
    report = judge(pid, path, gpu=False)
    assert report.verdict.value == verdict, f"{report.reason}: {report.message}"
    assert report.reason in reasons, report.message
    assert_mistake_named(pid, path, report)


def assert_mistake_named(pid: str, path: Path, report) -> None:
    """The report names the wrong solution's mistake: its puzzle's hint for it, a generic hint,
    or the verdict's own message."""
    key, text = mistake_line(path)
    hints = [h for c in report.cases for h in c.hints]
    own = {m.name: m.hint for m in registry.get(pid, ROOT).mistakes}
    if key == "verdict":
        assert text and text in report.message, f"{text!r} not in {report.message!r}"
    elif key in own:
        assert own[key] in hints, f"no hint {key!r}; hints: {hints}"
    else:
        assert key in GENERIC_MISTAKES, f"{path}: unknown mistake {key!r}"
        assert any(GENERIC_MISTAKES[key] in h for h in hints), f"no {key!r} hint in {hints}"


@pytest.mark.parametrize("name", ["merge_path", "merge_path_linked"])
@pytest.mark.parametrize("n", [1, 33, 100, 129, 257, 1000])
def test_the_merge_sort_with_small_tiles_merges_through_many_passes(n, name):
    """The merge sorts' tiles shrunk (blocks of 32, 16 outputs a program), so that the
    interpreter runs every kind of merge pass: runs that end past N, a second run shorter than
    the first or empty, programs whose outputs end their pair of runs, duplicates, and an odd
    or even number of passes (for merge_path_linked.py, words passed on across them all)."""
    from judge.core.loader import import_file

    path = ROOT / f"sort/solutions/correct/{name}.py"
    module = import_file(path, f"tpuzzle_{name}_{n}")
    module.LOG_B, module.LOG_T = 5, 4
    generator = torch.Generator().manual_seed(n)
    for data in (
        torch.rand(n, generator=generator) * 2000 - 1000,
        torch.randint(-3, 3, (n,), generator=generator).float(),
        torch.arange(n, 0, -1).float(),
    ):
        expected = torch.sort(data).values
        module.solve(data.data_ptr(), n)
        assert torch.equal(data, expected)


@pytest.mark.parametrize("row_cost", [0, 2, 5])
@pytest.mark.parametrize("n", [97, 300])
def test_the_stream_k_attention_splits_rows_by_their_cost(n, row_cost):
    """causal_attention's stream_k.py in the interpreter (32-query tiles, 5 programs) on more
    rows than programs: every row's fixed cost moves the cuts, so ranges start inside rows and
    in their units of fixed cost, programs hold several rows, and rows cut in three or more
    pieces are merged from float16 partials. The output must match attention in float64."""
    from judge.core.loader import import_file

    path = ROOT / "causal_attention/solutions/correct/stream_k.py"
    module = import_file(path, f"tpuzzle_stream_k_{n}_{row_cost}")
    module.ROW_COST = row_cost
    module.attention_kernel.configs = module.attention_kernel.configs[:1]  # nothing to time
    d = 16
    generator = torch.Generator().manual_seed(n + row_cost)
    q, k = (torch.rand(n, d, generator=generator).half() * 4 - 2 for _ in range(2))
    v = torch.rand(n, d, generator=generator).half() * 2 - 1
    out = torch.empty(n, d, dtype=torch.float16)
    module.solve(q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), n, d)
    sizes = {"N": n, "d": d}
    drawn = {"q_ptr": q, "k_ptr": k, "v_ptr": v}
    expected = formula("causal_attention")({a: x.double().numpy() for a, x in drawn.items()}, sizes)
    tol = registry.get("causal_attention", ROOT).tolerance.at(sizes)
    got = out.double().numpy().reshape(-1)
    np.testing.assert_allclose(got, expected["output_ptr"], atol=tol.atol, rtol=tol.rtol)


def dirty_counters(monkeypatch, garbage: str, tag: int, generator) -> list:
    """Make every int64 `torch.empty` (a solution's counters) come back dirty: the timer's 0xFF
    bytes ("poison"), random words, or a count under another tag ("untagged-count"). Returns
    the list the dirty tensors are added to, in order."""
    counters = []
    empty = torch.empty

    def dirty_empty(*size, dtype=None, **kwargs):
        made = empty(*size, dtype=dtype, **kwargs)
        if dtype == torch.int64:
            if garbage == "poison":
                made.fill_(-1)
            elif garbage == "random":
                made.random_(generator=generator)
            else:
                made.fill_(((tag + 1) << 16) + 1)
            counters.append(made)
        return made

    monkeypatch.setattr(torch, "empty", dirty_empty)
    return counters


@pytest.mark.parametrize("garbage", ["poison", "random", "untagged-count"])
def test_the_stream_k_attention_counts_on_unzeroed_counters_and_leaves_none_tagged(
    garbage, monkeypatch
):
    """stream_k.py's row counters are not zeroed before its launch: whatever they hold (the
    timer's 0xFF bytes, random words, a count under another tag) must count as no piece
    arrived, and after the call no counter may still carry the tag, or the next call on the
    same memory would start from this one's count."""
    from judge.core.loader import import_file

    path = ROOT / "causal_attention/solutions/correct/stream_k.py"
    module = import_file(path, f"tpuzzle_stream_k_counters_{garbage}")
    module.attention_kernel.configs = module.attention_kernel.configs[:1]
    n, d = 300, 16
    generator = torch.Generator().manual_seed(7)
    q, k, v = (torch.rand(n, d, generator=generator).half() * 2 - 1 for _ in range(3))
    expected = formula("causal_attention")(
        {"q_ptr": q.double().numpy(), "k_ptr": k.double().numpy(), "v_ptr": v.double().numpy()},
        {"N": n, "d": d},
    )["output_ptr"]
    tol = registry.get("causal_attention", ROOT).tolerance.at({"N": n, "d": d})
    empty = torch.empty
    counters = dirty_counters(monkeypatch, garbage, module.COUNTER_TAG, generator)
    for _ in range(2):
        out = empty(n, d, dtype=torch.float16)
        module.solve(q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), n, d)
        np.testing.assert_allclose(
            out.double().numpy().reshape(-1), expected, atol=tol.atol, rtol=tol.rtol
        )
    assert len(counters) == 2
    for made in counters:
        assert not ((made >> 16) == module.COUNTER_TAG).any()


@pytest.mark.parametrize("garbage", ["poison", "random", "untagged-count"])
def test_the_matmul_copy_beside_waits_for_every_chunk_and_leaves_no_counter_tagged(
    garbage, monkeypatch
):
    """matmul's copy_beside.py in the interpreter, with chunks of 32 rows of B so that N = 100
    makes four (the last short) and K = 260 two groups of columns: its counters are not zeroed
    before the launch, so whatever they hold must count as zero, every chunk of both groups
    must be waited for, and after the call every counter must be back to zero, or the next
    call on the same memory would start from this one's counts."""
    from judge.core.loader import import_file

    path = ROOT / "matmul/solutions/correct/copy_beside.py"
    module = import_file(path, f"tpuzzle_copy_beside_{garbage}")
    module.CHUNK = 32
    M, N, K = 70, 100, 260
    generator = torch.Generator().manual_seed(11)
    a = torch.rand(M, N, generator=generator) * 2 - 1
    b = torch.rand(N, K, generator=generator) * 2 - 1
    sizes = {"M": M, "N": N, "K": K}
    expected = formula("matmul")({"a_ptr": a.double().numpy(), "b_ptr": b.double().numpy()}, sizes)
    tol = registry.get("matmul", ROOT).tolerance.at(sizes)
    empty = torch.empty
    counters = dirty_counters(monkeypatch, garbage, module.COUNTER_TAG, generator)
    for _ in range(2):
        c = empty(M, K)
        module.solve(a.data_ptr(), b.data_ptr(), c.data_ptr(), M, N, K)
        np.testing.assert_allclose(
            c.double().numpy().reshape(-1), expected["c_ptr"], atol=tol.atol, rtol=tol.rtol
        )
    assert len(counters) == 2
    for made in counters:
        assert made.numel() == 2 * 4 + 1
        assert (made == 0).all()


def compiled_run(script: str):
    """Run a Python script in a process of its own, out of Triton's interpreter (on the GPU)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    return subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT.parent,
    )


@pytest.mark.gpu
def test_the_linked_merge_sort_is_right_when_its_programs_search_both_boundaries():
    """merge_path_linked.py with a single read of each word (SPINS = 0): on the GPU, every
    program that reads its predecessor's word before it is written searches that boundary
    itself. The sort must come out the same, whichever way each program got its boundaries."""
    import textwrap

    script = textwrap.dedent(
        f"""
        import torch
        from judge.core.loader import import_file
        module = import_file({str(ROOT / "sort/solutions/correct/merge_path_linked.py")!r}, "m")
        module.SPINS = 0
        for n in (1, 4097, 1_000_000, 16_777_211):
            for data in (torch.rand(n, device="cuda") * 2000 - 1000,
                         torch.randint(-3, 3, (n,), device="cuda").float()):
                expected = torch.sort(data).values
                module.solve(data.data_ptr(), n)
                torch.cuda.synchronize()
                assert torch.equal(data, expected), n
        print("sorted")
        """
    )
    done = compiled_run(script)
    assert done.returncode == 0 and "sorted" in done.stdout, done.stderr[-2000:]


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["decoupled_lookback", "lookback_wide"])
def test_the_prefix_sum_look_backs_stay_right_call_after_call(name):
    """A look-back that reads its window of state words in more threads than words can combine
    two threads' views of a word into a wrong prefix, once in many calls: a whole tile off by a
    predecessor's total. Hundreds of calls at each of the wide scan's paths (tiles numbered by
    program, 2 K tiles, 4 K tiles), every one checked."""
    import textwrap

    script = textwrap.dedent(
        f"""
        import torch
        from judge.core.loader import import_file
        module = import_file({str(ROOT / "prefix_sum/solutions/correct")!r} + "/{name}.py", "m")
        wrong = []
        for n, calls in ((250_000, 1000), (1_000_003, 300), (4_000_037, 100)):
            data = torch.empty(n, device="cuda")
            out = torch.empty(n, device="cuda")
            for call in range(calls):
                data.uniform_(0.0, 1.0)  # every prefix grows: a missing tile total shows
                out.fill_(float("nan"))
                module.solve(data.data_ptr(), out.data_ptr(), n)
                expected = torch.cumsum(data.double(), 0)
                bad = ((out.double() - expected).abs() > 1e-4 * expected + 1e-2).sum().item()
                if bad:
                    wrong.append((n, call, bad))
        print("wrong", wrong)
        """
    )
    done = compiled_run(script)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "wrong []" in done.stdout, done.stdout[-2000:]


def window_layouts(solution: Path, sizes: list[int], cache: Path) -> list[tuple[int, int]]:
    """Compile a prefix_sum solution for an H100 on this machine (no GPU needed) at each size,
    and give each compiled look-back's window: (words read at once, words one pass of the
    layout Triton chose for that load covers: its words a thread times the program's threads)."""
    import json
    import re
    import textwrap

    script = textwrap.dedent(
        f"""
        import json, os
        os.environ["TRITON_CACHE_DIR"] = {str(cache)!r}
        from judge.workers import ahead
        ahead.install(90, 32, {{"max_shared_mem": 232448, "max_num_regs": 65536,
                               "multiprocessor_count": 132, "warpSize": 32}})
        from judge.core.loader import import_file
        module = import_file({str(solution)!r}, "m")
        a, b = ahead.fake_pointers("ab").values()
        for n in {sizes!r}:
            module.solve(a, b, n)
        print("compiled")
        """
    )
    done = compiled_run(script)
    assert done.returncode == 0 and "compiled" in done.stdout, done.stderr[-2000:]
    found = []
    for ttgir in cache.rglob("*.ttgir"):
        text = ttgir.read_text()
        layouts = {
            name: [int(x) for x in re.findall(r"\[(\d+)\]", body)[:3]]
            for name, body in re.findall(r"^#(\w+) = #ttg\.blocked<\{(.*)\}>", text, re.M)
        }
        for words, name in re.findall(
            r"isVolatile = true\} : tensor<(\d+)x!tt\.ptr<i64>, #(\w+)>", text
        ):
            per_thread, lanes, warps = layouts[name]
            found.append((int(words), per_thread * lanes * warps))
    assert found, "no volatile window load found in " + json.dumps(
        [p.name for p in cache.rglob("*")]
    )
    return found


@pytest.mark.parametrize("name", ["decoupled_lookback", "lookback_wide"])
def test_the_prefix_sum_look_backs_read_one_state_word_a_thread(name, tmp_path):
    """Compiled for an H100 at each of the wide scan's paths: the layout of every look-back
    window covers it with no thread to spare. A thread to spare holds a copy of a word that
    another thread holds too; both load it, and the window's reductions can then mix their two
    views (5 of 355 timed calls wrong, on an H100 with Triton 3.9). Checked on the CPU."""
    path = ROOT / "prefix_sum" / "solutions" / "correct" / f"{name}.py"
    for words, covered in window_layouts(path, [250_000, 1_000_003, 4_000_037], tmp_path):
        assert covered <= words, f"a window of {words} words in a layout that covers {covered}"


@pytest.mark.parametrize("pid", IDS)
def test_every_puzzle_has_a_ladder_of_hints_and_functions_for_its_mistakes(pid):
    spec = registry.get(pid, ROOT)
    assert 2 <= len(spec.hints) <= 4, f"{pid}: {len(spec.hints)} hints"
    assert all("tl." not in h or "def " not in h for h in spec.hints)  # the idea, never the code
    found = truth.load_mistakes(spec)
    assert set(found) == {m.name for m in spec.mistakes}, "a mistake without mistake_<name>"
    named = {mistake_line(p)[0] for p in (ROOT / pid / "solutions" / "wrong").glob("*.py")}
    assert {m.name for m in spec.mistakes} <= named, "a mistake no wrong solution makes"


@pytest.mark.parametrize("pid", IDS)
def test_template_fails_cleanly(pid):
    """The untouched template compiles and runs; it fails because it writes nothing (an in-place
    puzzle's buffer keeps its input, which is a wrong answer)."""
    report = judge(pid, ROOT / pid / "template.py", gpu=False)
    assert report.verdict is Verdict.FAILED, report.message
    assert report.reason in ("unwritten", "wrong-answer"), report.message


# ------------------------------------------------------------------------------ on the GPU


@pytest.mark.gpu
@pytest.mark.parametrize("pid, path", solutions("correct"))
def test_correct_solution_passes_on_gpu(pid, path):
    report = judge(pid, path, gpu=True)
    assert report.verdict is Verdict.PASSED, f"{report.reason}: {report.message}"
    assert len(report.cases) == len(registry.get(pid, ROOT).tests)


@pytest.mark.gpu
@pytest.mark.parametrize("pid, path", solutions("wrong"))
def test_wrong_solution_gets_its_verdict_on_gpu(pid, path):
    verdict, reasons = expectation(path)
    report = judge(pid, path, gpu=True)
    assert report.verdict.value == verdict, f"{report.reason}: {report.message}"
    assert report.reason in reasons, report.message


@pytest.mark.gpu
@pytest.mark.parametrize("pid", IDS)
def test_timed_run_on_gpu(pid):
    spec = registry.get(pid, ROOT)
    path = catalogue.best_solution(spec)
    report = runner.judge(spec, path, runner.RunOptions(interpret=False, timeout_s=120))
    assert report.verdict is Verdict.PASSED, f"{report.reason}: {report.message}"
    timing = report.timing[0]
    assert timing.samples >= 10 and timing.p20_ms <= timing.median_ms <= timing.p80_ms
    assert timing.sol_pct is not None and 0 < timing.sol_pct
    assert timing.speedup_vs_reference is not None and report.ranked == (
        not timing.above_speed_of_light
    )
    assert report.env.driver and report.env.copy_gbps > 100
    assert torch.cuda.is_available()


def test_signatures_match_the_published_catalogue():
    """Signatures are a contract: every puzzle of ../shared/puzzles.md, argument for argument."""
    import re

    catalogue = ROOT.parent.parent / "shared" / "puzzles.md"
    if not catalogue.is_file():
        pytest.skip("../shared/puzzles.md is not beside this checkout")
    published = dict(re.findall(r"^\| (\w+) \| \(([^)]*)\)", catalogue.read_text(), re.M))
    assert set(published) == set(IDS)
    for pid in IDS:
        spec = registry.get(pid, ROOT)
        assert ", ".join(a.name for a in spec.args) == published[pid], pid
