"""io/heap.py: what a process keeps of the memory it freed (glibc), each case in a fresh process,
since the settings are process-wide."""

from __future__ import annotations

import subprocess
import sys

import pytest

from segbench.io.heap import _libc

# Frees a 20 MiB block (glibc then maps only blocks over 20 MiB on their own), then fills and
# frees a 16 MiB one, and prints how many MiB of resident memory that left: after `before`.
SCRIPT = """
import numpy as np
from segbench.io import heap

def resident():
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmRSS")) / 1024

{before}
first = np.ones(20 << 18, np.float32)
del first
start = resident()
block = np.ones(16 << 18, np.float32)
del block
{after}
print(round(resident() - start))
"""

glibc = pytest.mark.skipif(_libc() is None, reason="needs glibc's malloc")


def kept_mib(before: str = "", after: str = "") -> int:
    run = subprocess.run([sys.executable, "-c", SCRIPT.format(before=before, after=after)], capture_output=True,
                         text=True, check=True)
    return int(run.stdout)


@glibc
def test_a_freed_block_is_kept_by_default_and_handed_back_once_bounded_or_trimmed():
    assert kept_mib() >= 15  # the 16 MiB block came from the heap and stays there
    assert kept_mib(before="assert heap.bound_retention()") <= 1  # mapped on its own, unmapped when freed
    assert kept_mib(after="assert heap.release_freed_memory()") <= 1
