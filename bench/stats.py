"""Measuring (hmsbench's MicroBenchmark: warm-up, then timed iterations with optional pre/post
steps outside the timing) and summarising samples."""

from __future__ import annotations

import math
import time
from collections.abc import Callable


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not sorted_values:
        return math.nan
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = (len(sorted_values) - 1) * q
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(samples_s: list[float]) -> dict:
    """Milliseconds: median, p90, max, min, mean and the raw samples."""
    ms = [s * 1000.0 for s in samples_s]
    srt = sorted(ms)
    if not srt:
        return {"iterations": 0}
    return {
        "iterations": len(srt),
        "median_ms": round(percentile(srt, 0.5), 3),
        "p90_ms": round(percentile(srt, 0.9), 3),
        "max_ms": round(srt[-1], 3),
        "min_ms": round(srt[0], 3),
        "mean_ms": round(sum(srt) / len(srt), 3),
        "samples_ms": [round(x, 3) for x in ms],
    }


def measure(test: Callable[[int], object], *, warmup: int, iterations: int,
            pre: Callable[[int], object] | None = None,
            post: Callable[[int], object] | None = None,
            budget_s: float = 0.0, min_iterations: int = 3,
            warm_test: Callable[[int], object] | None = None) -> list[float]:
    """Run ``warmup`` untimed rounds, then up to ``iterations`` timed ones.

    ``pre(i)`` / ``post(i)`` run around each round outside the timing (hmsbench's pre/post).  When
    ``budget_s`` > 0, the timed phase stops once it has used that much wall time and has at least
    ``min_iterations`` samples (warm-up stops after a quarter of the budget).  ``warm_test`` replaces
    ``test`` during warm-up (e.g. a smaller batch).  Returns the samples in seconds.
    """
    start = time.monotonic()
    wt = warm_test or test
    for i in range(warmup):
        if budget_s and time.monotonic() - start > budget_s / 4:
            break
        if pre:
            pre(-1 - i)
        wt(-1 - i)
        if post:
            post(-1 - i)
    samples: list[float] = []
    start = time.monotonic()
    for i in range(iterations):
        if budget_s and len(samples) >= min_iterations and time.monotonic() - start > budget_s:
            break
        if pre:
            pre(i)
        t0 = time.perf_counter()
        test(i)
        samples.append(time.perf_counter() - t0)
        if post:
            post(i)
    return samples
