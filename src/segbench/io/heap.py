"""How much freed memory a long-lived process keeps (glibc's malloc; elsewhere nothing is done).

glibc keeps what a process frees in its arenas (one per thread that allocated) for reuse, and
after the first large block is freed it raises the size above which blocks are mapped on their
own (and handed back when freed) from 128 KiB up to 32 MiB. A process that runs several models
one after another, with helper threads each allocating batches, bands and masks, then holds
far more than is live: in the one-shot command, 330-400 MiB of the heap free but kept while
SegFormer ran, on top of 220-270 MiB in use (mallinfo2, measured).

`bound_retention` fixes that size at 8 MiB: blocks of 8 MiB or more (a batch, a frame's logits)
are mapped on their own and go back when freed, at the cost of the page faults that touching
fresh pages again takes. `release_freed_memory` hands the free pages of every arena back, for
the end of a stage (a model's inference) before the next one."""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import lru_cache

M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)
MAPPED_FROM = 8 << 20  # bytes: blocks this large or larger are mapped on their own


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL | None:
    """The C library when it is glibc (it has malloc_trim), else None."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None


def bound_retention() -> bool:
    """Blocks of MAPPED_FROM bytes or more are mapped on their own from now on (in every thread);
    whether the C library could."""
    libc = _libc()
    return libc is not None and bool(libc.mallopt(M_MMAP_THRESHOLD, MAPPED_FROM))


def release_freed_memory() -> bool:
    """Return the process's freed heap pages to the system; whether the C library could."""
    libc = _libc()
    return libc is not None and bool(libc.malloc_trim(0))
