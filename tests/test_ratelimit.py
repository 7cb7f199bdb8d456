"""Per-key rate limits over a sliding window (a fake clock)."""

from segbench.server.ratelimit import RateLimit


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_window_takes_its_allowance_then_refuses_until_the_oldest_event_leaves_it():
    clock = Clock()
    limit = RateLimit(3, 60.0, clock)
    assert [limit.take("a") for _ in range(4)] == [True, True, True, False]
    clock.now += 59.9
    assert not limit.take("a")  # the refusal was not counted, the three events are still inside
    clock.now += 0.1  # the first three left at exactly 60 s
    assert [limit.take("a") for _ in range(4)] == [True, True, True, False]


def test_each_key_has_its_own_window():
    limit = RateLimit(1, 60.0, Clock())
    assert (limit.take("team:1"), limit.take("team:2"), limit.take("team:1")) == (True, True, False)
