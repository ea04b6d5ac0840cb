import torch
import triton
import triton.language as tl
from triton.runtime import autotuner

from judge.workers import tuning


def test_interpreter_autotune_picks_the_first_config(monkeypatch):
    monkeypatch.setattr(autotuner.Autotuner, "_bench", autotuner.Autotuner._bench)
    tuning.TuningPolicy().install(interpret=True)

    @triton.autotune(configs=[triton.Config({"B": 32}), triton.Config({"B": 64})], key=["n"])
    @triton.jit
    def fill(x_ptr, n, B: tl.constexpr):
        x_ptr = x_ptr.to(tl.pointer_type(tl.float32))
        offs = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(x_ptr + offs, B * 1.0, mask=offs < n)

    x = torch.zeros(100)
    fill[lambda meta: (triton.cdiv(100, meta["B"]),)](x.data_ptr(), 100)
    assert bool((x == 32.0).all())


class FakeTuner:
    """Stands for an Autotuner: a cache of chosen configs and the benchmarker it would use."""

    def __init__(self):
        self.cache = {}
        self.seen = []


def test_quick_tuning_only_while_quick_and_its_choices_are_forgotten(monkeypatch):
    def original(tuner, *args, config, **meta):
        tuner.seen.append(tuner.__dict__.get("do_bench"))
        return [1.0, 1.0, 1.0]

    monkeypatch.setattr(autotuner.Autotuner, "_bench", original)
    policy = tuning.TuningPolicy()
    policy.install(interpret=False)
    bench = autotuner.Autotuner._bench
    assert bench is not original

    tuner = FakeTuner()
    policy.quick = True
    bench(tuner, config="c1")
    tuner.cache[(1024,)] = "c1"
    policy.after_quick_calls()
    assert tuner.seen == [tuning.quick_benchmarker]
    assert "do_bench" not in tuner.__dict__  # the tuner's own benchmarker is back

    policy.forget_quick_choices()
    assert tuner.cache == {}  # tuned again, properly, before a benchmark
    policy.quick = False
    bench(tuner, config="c2")
    tuner.cache[(25_000_000,)] = "c2"
    assert tuner.seen[-1] is None
    policy.forget_quick_choices()
    assert tuner.cache == {(25_000_000,): "c2"}  # full tuning is kept
