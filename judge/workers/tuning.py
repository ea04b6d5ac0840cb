"""How a submission's `@triton.autotune` benchmarks its configs inside the worker.

Triton's autotuner times every config for every new key (usually the sizes) with `do_bench`,
about 25 ms of warm-up and 100 ms of repetitions per config, whatever the size. A puzzle has a
dozen test sizes, so a four-config kernel would spend seconds choosing configs for cases whose time
nobody measures. The worker therefore tunes quickly (a few milliseconds per config) during the
correctness cases and forgets those choices before a benchmark, where the autotuner tunes again
with Triton's own benchmarker. Every config a kernel offers must give correct results, so which one
the quick tuning picks does not change a verdict; it only saves the judge's time. On a GPU shared
with other judgings, a benchmark shape's first calls are made before the judging has the device
alone, so they tune quickly too; a tuner that did (`tuned`) tunes again, properly, once it has
(`Worker.op_bench`).

In interpreter mode there is no GPU to time configs on: every config gets the same time, so the
first one is used.
"""

from __future__ import annotations

import weakref

QUICK_WARMUP_MS = 1
QUICK_REP_MS = 5


def quick_benchmarker(kernel_call, quantiles):
    import triton.testing

    return triton.testing.do_bench(
        kernel_call, warmup=QUICK_WARMUP_MS, rep=QUICK_REP_MS, quantiles=quantiles
    )


class TuningPolicy:
    """Quick tuning while `quick` is set; `forget_quick_choices()` drops what it chose."""

    def __init__(self) -> None:
        self.quick = False
        self.tuned: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # tuner -> keys

    def install(self, interpret: bool) -> None:
        from triton.runtime import autotuner

        if interpret:
            autotuner.Autotuner._bench = lambda self, *args, **kwargs: [0.0, 0.0, 0.0]
            return
        original = autotuner.Autotuner._bench
        policy = self

        def _bench(tuner, *args, **kwargs):
            if not policy.quick:
                return original(tuner, *args, **kwargs)
            policy.tuned.setdefault(tuner, set())
            saved = tuner.__dict__.get("do_bench", _MISSING)
            tuner.__dict__["do_bench"] = quick_benchmarker  # shadows the cached property
            try:
                return original(tuner, *args, **kwargs)
            finally:
                if saved is _MISSING:
                    tuner.__dict__.pop("do_bench", None)
                else:
                    tuner.__dict__["do_bench"] = saved

        autotuner.Autotuner._bench = _bench

    def after_quick_calls(self) -> None:
        """Note the keys chosen so far by every tuner that tuned quickly."""
        for tuner, keys in self.tuned.items():
            keys.update(getattr(tuner, "cache", {}))

    def forget_quick_choices(self) -> None:
        """Before a benchmark: the configs picked by quick tuning are tuned again, properly."""
        self.after_quick_calls()
        for tuner, keys in self.tuned.items():
            cache = getattr(tuner, "cache", {})
            for key in keys:
                cache.pop(key, None)
        self.tuned.clear()


_MISSING = object()
