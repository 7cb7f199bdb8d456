"""Per-frame work on threads (io/parallel.each_in_threads): results in the items' order, the first
failure in that order raised as a map raises it, nothing taken after a failure."""

from __future__ import annotations

import threading
import time

import pytest

from segbench.io import parallel
from segbench.io.parallel import each_in_threads


@pytest.fixture(params=[1, 2, 3])
def threads(request, monkeypatch):
    monkeypatch.setattr(parallel, "workers", lambda: request.param)
    return request.param


def test_results_come_in_the_items_order_whoever_finishes_first(threads):
    seen = set()

    def slow_first(i: int) -> int:
        time.sleep(0.02 if i % 3 == 0 else 0)  # later items finish before earlier ones
        seen.add(threading.get_ident())
        return i * i

    assert each_in_threads(slow_first, list(range(30)), "x") == [i * i for i in range(30)]
    assert len(seen) == min(threads, 30)
    assert each_in_threads(slow_first, [], "x") == []


def test_the_first_failure_in_the_items_order_is_raised_and_nothing_after_it_is_taken(threads):
    started = []

    def fails_at_5_and_8(i: int) -> int:
        started.append(i)
        if i == 8:
            raise ValueError("eight")
        if i == 5:
            time.sleep(0.05)  # item 8 fails first in time: 5 must still be the one raised
            raise ValueError("five")
        return i

    with pytest.raises(ValueError, match="five"):
        each_in_threads(fails_at_5_and_8, list(range(100)), "x")
    assert set(range(6)) <= set(started)  # every item before the raised one was taken
    assert max(started) < 5 + 2 * threads + 1  # each thread stops once an item has failed


def test_a_progress_bar_counts_every_item(capsys, threads):
    each_in_threads(lambda i: i, list(range(7)), "scoring", progress=True)
    err = capsys.readouterr().err
    assert "scoring: 100%" in err and "7/7" in err
    each_in_threads(lambda i: i, list(range(7)), "scoring")
    assert capsys.readouterr().err == ""
