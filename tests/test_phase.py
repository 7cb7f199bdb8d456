"""core/phase: a phase is open on [start, end), unbounded where a bound is None."""

from datetime import datetime, timedelta, timezone

import pytest

from segbench.core.phase import Phase
from segbench.errors import SegbenchError

START = datetime(2026, 3, 1, tzinfo=timezone.utc)
END = datetime(2026, 4, 1, tzinfo=timezone.utc)


def phase(start, end) -> Phase:
    return Phase("dev", "painting-vision", "test", start, end, 5, None, 1, True, 0.5)


@pytest.mark.parametrize(("now", "expected"), [
    (START - timedelta(microseconds=1), False),
    (START, True),
    (END - timedelta(microseconds=1), True),
    (END, False),
    # the same instant as START, written in UTC+01:00
    (datetime(2026, 3, 1, 1, 0, tzinfo=timezone(timedelta(hours=1))), True),
    (datetime(2026, 3, 1, 0, 59, tzinfo=timezone(timedelta(hours=1))), False),
])
def test_open_from_the_start_until_before_the_end(now, expected):
    assert phase(START, END).is_open(now) is expected


def test_a_missing_bound_is_no_bound():
    assert phase(None, END).is_open(datetime(1970, 1, 1, tzinfo=timezone.utc))
    assert phase(START, None).is_open(datetime(2999, 1, 1, tzinfo=timezone.utc))
    assert phase(None, None).is_open(START)


def test_a_time_without_its_zone_is_refused():
    with pytest.raises(SegbenchError, match=r"^phase 'dev': is_open needs a time with its time zone, got 2026-03-01T00:00:00$"):
        phase(START, END).is_open(datetime(2026, 3, 1))
