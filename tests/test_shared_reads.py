"""server.shared_reads: concurrent requests share one read that began after each of them arrived."""

from __future__ import annotations

import asyncio
import threading

import pytest

from segbench.server.shared_reads import SharedReads


class Database:
    """A stand-in row whose value is the number of writes committed; a read returns it. `gate`
    holds a read in flight until the test lets it finish."""

    def __init__(self) -> None:
        self.value, self.reads = 0, 0
        self.gate = threading.Event()
        self.started = threading.Event()

    def query(self) -> int:
        self.reads += 1
        seen = self.value  # read when the query starts
        self.started.set()
        assert self.gate.wait(5)
        return seen


async def started(database: Database) -> None:
    while not database.started.is_set():
        await asyncio.sleep(0.001)
    database.started.clear()


def test_requests_arriving_during_a_read_share_the_next_one_which_sees_what_came_before_them():
    async def scenario() -> None:
        reads, database = SharedReads(), Database()
        first = asyncio.ensure_future(reads.read("phase", database.query))
        await started(database)  # the first read is in flight, having seen 0
        database.value = 1  # a write committed after that read began
        later = [asyncio.ensure_future(reads.read("phase", database.query)) for _ in range(20)]
        await asyncio.sleep(0.01)
        assert database.reads == 1  # the 20 wait: they must not get a read older than their arrival
        database.gate.set()
        assert await first == 0
        assert await asyncio.gather(*later) == [1] * 20  # one read for all 20, begun after they came
        assert database.reads == 2
        assert reads.next == {} and reads.running == {}

    asyncio.run(scenario())


def test_a_lone_request_waits_for_one_read_and_keys_do_not_share():
    async def scenario() -> None:
        reads, database = SharedReads(), Database()
        database.gate.set()
        assert await reads.read("a", database.query) == 0
        database.value = 7
        assert await asyncio.gather(reads.read("a", database.query), reads.read("b", database.query)) == [7, 7]
        assert database.reads == 3

    asyncio.run(scenario())


def test_a_failed_read_fails_each_of_its_requests_and_the_next_read_runs_again():
    calls = []

    def failing() -> int:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("database unavailable")
        return 5

    async def scenario() -> None:
        reads = SharedReads()
        outcomes = await asyncio.gather(*(reads.read("phase", failing) for _ in range(3)), return_exceptions=True)
        assert [str(o) for o in outcomes] == ["database unavailable"] * 3
        assert await reads.read("phase", failing) == 5
        assert len(calls) == 2

    asyncio.run(scenario())


def test_a_request_that_goes_away_leaves_the_read_to_the_others():
    async def scenario() -> None:
        reads, database = SharedReads(), Database()
        gone = asyncio.ensure_future(reads.read("phase", database.query))
        staying = asyncio.ensure_future(reads.read("phase", database.query))
        await started(database)
        gone.cancel()
        database.gate.set()
        assert await staying == 0
        with pytest.raises(asyncio.CancelledError):
            await gone
        assert database.reads == 1

    asyncio.run(scenario())
