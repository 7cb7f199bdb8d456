"""Side-by-side timing for the benchmark scripts: every method once per round, medians and ratios."""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{len(os.sched_getaffinity(0))} cores ({cpu}), Python {platform.python_version()}, {platform.system()} {platform.release()}"


def rounds(methods: dict[str, Callable[[], object]], count: int, warmup: int = 1) -> dict[str, list[float]]:
    """Seconds per method per round; the order rotates every round so none always goes first."""
    names = list(methods)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(warmup + count):
        order = names[r % len(names):] + names[: r % len(names)]
        for name in order:
            start = time.perf_counter()
            methods[name]()
            if r >= warmup:
                times[name].append(time.perf_counter() - start)
    return times


def median(values: list[float]) -> float:
    return statistics.median(values)


def ratio(times: dict[str, list[float]], name: str, reference: str) -> float:
    """The median over rounds of time(name) / time(reference) measured in the same round."""
    return statistics.median(a / b for a, b in zip(times[name], times[reference]))
