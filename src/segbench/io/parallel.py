"""How many threads a step may use: the CPUs this process is allowed to run on."""

import os


def workers() -> int:
    return len(os.sched_getaffinity(0))
