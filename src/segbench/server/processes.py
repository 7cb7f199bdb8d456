"""`segbench server run --processes N`: N forked processes serving one listening socket (the
kernel hands each connection to one of them), supervised by the process that bound it.

Each process keeps its own boards (correct across processes: a board is rebuilt when the phase's
`board_version` in the database is later than the one it was built for, server/board_cache.py),
opens its own database connections and counts 1/N of each rate limit (server/web.Limits), so a
team never passes a limit however its requests are spread. SIGTERM or SIGINT to the supervisor
stops every process; a process that exits on its own stops the others, and the status is 1."""

from __future__ import annotations

import os
import signal
import sys
import traceback
from collections.abc import Callable


def run_processes(count: int, serve: Callable[[], None]) -> int:
    """serve() in `count` forked processes; returns the exit status once all have stopped."""
    sys.stdout.flush()
    sys.stderr.flush()
    children = []
    for _ in range(count):
        pid = os.fork()
        if pid == 0:
            os._exit(child(serve))
        children.append(pid)
    return supervise(set(children))


def child(serve: Callable[[], None]) -> int:
    try:
        serve()
    except BaseException:  # the host's log; the other processes are stopped by the supervisor
        traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return 0


def supervise(children: set[int]) -> int:
    stopping, status = False, 0

    def stop(*_args) -> None:
        nonlocal stopping
        stopping = True
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while children:
        pid, code = os.wait()
        children.discard(pid)
        if not stopping:  # one stopped on its own: stop the rest
            print(f"segbench server: process {pid} stopped ({os.waitstatus_to_exitcode(code)}); stopping the others",
                  file=sys.stderr, flush=True)
            status = 1
            stop()
    return status
