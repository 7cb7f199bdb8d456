"""One database read shared by the requests that wait for it (a board's phase row, polled by many
readers at once).

A request is answered with a read that began after the request arrived, so that it never sees a
row older than what was committed before it was sent (what board_cache promises). While one read
of a key is in flight, every request arriving for that key waits for the next one, which starts
when the first ends: under N concurrent readers the database answers one query per round trip
instead of N, and a lone reader still waits for one query only. All of it runs on the server's
event loop; the query itself runs in the thread pool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from starlette.concurrency import run_in_threadpool

Read = TypeVar("Read")


class SharedReads(Generic[Read]):
    """key -> the next read of it, which the requests arriving before it starts share."""

    def __init__(self) -> None:
        self.next: dict[Hashable, asyncio.Future] = {}  # not started yet: arrivals join it
        self.running: dict[Hashable, asyncio.Future] = {}  # the read in flight, if any
        self.tasks: set[asyncio.Task] = set()  # held: the loop keeps only weak references to tasks

    async def read(self, key: Hashable, query: Callable[[], Read]) -> Read:
        """The result of `query()` (or its exception) from a call that starts after this one was made."""
        waiting = self.next.get(key)
        if waiting is None:
            waiting = self.next[key] = asyncio.get_running_loop().create_future()
            task = asyncio.ensure_future(self._start(key, waiting, query))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        return await asyncio.shield(waiting)  # a caller that goes away leaves the read to the others

    async def _start(self, key: Hashable, waiting: asyncio.Future, query: Callable[[], Read]) -> None:
        previous = self.running.get(key)
        if previous is not None:
            await asyncio.wait([previous])  # its outcome is its own callers'
        del self.next[key]  # from here on, arrivals wait for a later read
        self.running[key] = waiting
        try:
            waiting.set_result(await run_in_threadpool(query))
        except asyncio.CancelledError:  # the loop is closing
            waiting.cancel()
            raise
        except Exception as error:  # noqa: BLE001 -- every caller of this read gets its exception
            waiting.set_exception(error)
        finally:
            del self.running[key]
