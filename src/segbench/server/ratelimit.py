"""Per-key rate limits (a team's requests a minute, its uploads an hour), counted in the server
process over a sliding window. One server process per deployment keeps them exact; the N processes
of `server run --processes N` each count 1/N of each limit (server/web.Limits); several `server
run` commands on one database each count their own (docs/server.md)."""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque


class RateLimit:
    def __init__(self, allowed: int, window_seconds: float, clock=time.monotonic):
        self.allowed, self.window, self.clock = allowed, window_seconds, clock
        self.events: dict[str, deque[float]] = defaultdict(deque)
        self.lock = threading.Lock()

    def take(self, key: str) -> bool:
        """Count one event for `key`; False (and nothing counted) when the window is full."""
        now = self.clock()
        with self.lock:
            events = self.events[key]
            while events and events[0] <= now - self.window:
                events.popleft()
            if len(events) >= self.allowed:
                return False
            events.append(now)
            return True
