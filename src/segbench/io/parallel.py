"""How many threads a step may use (the CPUs this process is allowed to run on), and a per-frame
work done on that many threads."""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from tqdm import tqdm

Item = TypeVar("Item")
Result = TypeVar("Result")


def workers() -> int:
    return len(os.sched_getaffinity(0))


def each_in_threads(work: Callable[[Item], Result], items: Sequence[Item], what: str,
                    progress: bool = False) -> list[Result]:
    """[work(item) for item in items] on workers() threads, each taking the next item when it is
    free: no future per item, and the calling thread woken once per thread, not once per item
    (against a pool's map, a tenth of a 400-frame scoring's time, docs/performance.md). `work`
    should release the GIL for most of its time. The first item whose work raises, in the items'
    order, raises here, as a map would: the threads take no item after a failure, and every item
    before it was taken and finishes. `progress`: a bar on stderr, `what` its label."""
    results: list = [None] * len(items)
    failures: dict[int, BaseException] = {}
    taken = itertools.count()
    lock = threading.Lock()
    with tqdm(total=len(items), unit="frame", desc=what, disable=not progress) as bar:

        def take_in_turn() -> None:
            while not failures and (i := next(taken)) < len(items):
                try:
                    results[i] = work(items[i])
                except BaseException as exc:  # raised again in the calling thread
                    failures[i] = exc
                with lock:
                    bar.update()

        with ThreadPoolExecutor(workers()) as pool:
            for running in [pool.submit(take_in_turn) for _ in range(min(workers(), len(items)))]:
                running.result()
    if failures:
        raise failures[min(failures)]
    return results
