from pathlib import Path

from judge.core.spec import Case
from judge.judging import plan
from judge.judging.plan import Plan, mix_seed

SMALL = Case(name="N=300", sizes=(("N", 300),), seed=4)
BIG = Case(name="N=25M", sizes=(("N", 25_000_000),), seed=7)  # 3 x 100 MB: two sets


class FakeTruth:
    def __init__(self, case):
        self.case = case

    def input_paths(self):
        return {"a_ptr": f"/sealed/{self.case.seed}/a"}

    def timer_input_paths(self):
        return {"a_ptr": f"/kept/{self.case.seed}/a"}


class FakeTruths:
    """Hands out truths whose sealed files are named by their seed, and remembers the order."""

    def __init__(self):
        self.asked = []

    def get(self, case):
        self.asked.append(case.seed)
        return FakeTruth(case)

    def output_files(self, case):
        return {"c_ptr": {"path": f"/sealed/{case.seed}/c", "dtype": "float64", "n": 300}}


def make(spec, secret="", interpret=False, truths=None):
    return Plan(spec, Path("sub.py"), secret, interpret, truths or FakeTruths())


def test_given_cases_are_judged_as_given_and_the_spec_s_are_filtered_and_mixed(vector_add):
    assert make(vector_add, secret="s").tests((SMALL,), small=True) == [SMALL]
    everything = make(vector_add).tests(None, small=False)
    assert everything == list(vector_add.tests)
    small = make(vector_add, secret="s").tests(None, small=True)
    assert [c.name for c in small] == [c.name for c in vector_add.tests if c.interpret]
    assert [c.seed for c in small] == [
        mix_seed(c.seed, "s") for c in vector_add.tests if c.interpret
    ]


def test_benchmark_sets_rotate_three_small_sets_or_two_large_ones(vector_add):
    ordinary = make(vector_add)
    assert ordinary.bench_seeds(SMALL) == [4, 5, 6]
    assert ordinary.bench_seeds(BIG) == [7, 8]
    assert 3 * 4 * 25_000_000 >= plan.BIG_SET_BYTES
    secret = make(vector_add, secret="s").bench_seeds(SMALL)
    assert secret == [mix_seed(s, "s") for s in (4, 5, 6)]
    fresh = ordinary.recheck_seeds(SMALL)
    assert fresh == [mix_seed(s, "recheck") for s in (4, 5, 6)]
    assert not set(fresh) & {4, 5, 6}


def test_the_truths_wanted_are_the_cases_then_each_timed_shape_s_sets(vector_add):
    p = make(vector_add)
    wanted = p.wanted([SMALL], [BIG])
    assert [c.seed for c in wanted] == [4, 7, 8, *p.recheck_seeds(BIG)]
    assert all(c.sizes == BIG.sizes for c in wanted[1:])
    assert p.wanted([SMALL], []) == [SMALL]
    assert p.fresh_sets([BIG]) == wanted[3:]  # the timer's own


def test_case_and_bench_commands_name_the_parent_s_sealed_inputs(vector_add):
    truths = FakeTruths()
    p = make(vector_add, truths=truths)
    one = p.case_command(SMALL, 4)
    assert one == {
        "sizes": {"N": 300},
        "seed": 4,
        "draw": "",
        "scalars": {},  # a case's own scalars travel: the worker is handed no cases
        "inputs": {"a_ptr": "/sealed/4/a"},
    }
    command = p.bench_command(SMALL, True)
    fresh = p.recheck_seeds(SMALL)
    assert command["seeds"] == [4, 5, 6] and command["recheck"] == fresh
    assert command["inputs"] == [{"a_ptr": f"/sealed/{s}/a"} for s in (4, 5, 6)]
    assert command["recheck_inputs"] == [{"a_ptr": f"/sealed/{s}/a"} for s in fresh]
    assert truths.asked == [4, 4, 5, 6, *fresh]  # the timed sets' truths before the fresh ones
    reference = p.reference_command(SMALL)
    assert reference["op"] == "time_reference" and reference["seeds"] == [4, 5, 6]
    assert reference["inputs"] == [{"a_ptr": f"/kept/{s}/a"} for s in (4, 5, 6)]  # the timer's
    check = p.check_command(SMALL, "case0", {"steps": []}, Path("kernels"))
    assert check["inputs"] == {"a_ptr": "/kept/4/a"} and check["truths"]["c_ptr"]["n"] == 300


def test_a_timed_worker_never_sees_the_fresh_sets_which_are_the_timer_s(vector_add, tmp_path):
    p = make(vector_add)
    command = p.bench_command(SMALL, False)
    fresh = p.recheck_seeds(SMALL)
    assert "recheck" not in command and "recheck_inputs" not in command
    assert not set(fresh) & set(command["seeds"])
    replay = p.replay_command(SMALL, "bench0", {"steps": []}, tmp_path)
    assert replay["op"] == "replay" and replay["seeds"] == fresh
    assert replay["inputs"] == [{"a_ptr": f"/kept/{s}/a"} for s in fresh]  # the timer's files
    assert replay["truths"] == [
        {"c_ptr": {"path": f"/sealed/{s}/c", "dtype": "float64", "n": 300}} for s in fresh
    ]
    assert (replay["kernels"], replay["sequence"]) == (str(tmp_path), {"steps": []})


def test_buffer_files_are_named_by_the_parent(vector_add, tmp_path):
    files = make(vector_add).buffer_files(tmp_path, "case3")
    assert files == {n: str(tmp_path / f"case3_{n}.bin") for n in ("a_ptr", "b_ptr", "c_ptr")}


def test_a_case_that_did_not_pass_carries_the_command_that_reproduces_it(vector_add):
    mixed = Case(name="mixed", sizes=(("N", 99),), seed=5, draw="mixed")
    line = make(vector_add, interpret=True).reproduce(mixed)
    assert line == "tpuzzle run vector_add sub.py --size N=99 --seed 5 --draw mixed --interpret"
    assert (
        make(vector_add).reproduce(SMALL) == "tpuzzle run vector_add sub.py --size N=300 --seed 4"
    )
    p = make(vector_add)
    assert p.case_result(SMALL, "passed").reproduce == ""
    failed = p.case_result(SMALL, "failed", max_error=2.0)
    assert failed.reproduce == p.reproduce(SMALL) and failed.max_error == 2.0
    assert (failed.name, failed.sizes, failed.seed) == ("N=300", {"N": 300}, 4)


def test_the_largest_case_has_the_most_elements(vector_add):
    assert make(vector_add).largest([SMALL, BIG, SMALL]) is BIG


def test_the_timer_prepares_the_replay_s_own_sets_before_the_recording_ends(vector_add, tmp_path):
    p = make(vector_add)
    prepare = p.prepare_command(SMALL, "bench0")
    replay = p.replay_command(SMALL, "bench0", {"steps": []}, tmp_path)
    assert prepare["op"] == "prepare" and "sequence" not in prepare and "kernels" not in prepare
    assert {k: v for k, v in replay.items() if k in prepare and k != "op"} == {
        k: v for k, v in prepare.items() if k != "op"
    }
