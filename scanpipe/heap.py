"""Give freed memory back to the operating system when a process holds more than its share.

Reading a card allocates and frees a few page-sized arrays (the decoded image, its gray and
ink versions, the registered targets). glibc keeps what is freed for the next card: the
heap's resident size settles at the largest card's working set, per process. Over an
``ingest --workers 2`` run that is three processes (the coordinator and two workers), and
the tree's resident memory went over the 500 MB budget once every worker also carried the
blanks' page models of the vendor reader (``scripts/bench_memory.py``).

:func:`trim_if_over` returns the free heap to the kernel (``malloc_trim(0)``) only when the
process is over a soft limit, so a worker within its share never pays the page faults of
touching returned memory again. :data:`WORKER_SOFT_MB` is a share of the budget the
benchmark checks; elsewhere (not Linux with glibc) nothing is done.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys

# The ingest budget (scripts/bench_memory.py: 500 MB for the process tree of
# ``ingest --workers 2``) split: a worker reading cards keeps to about 120 MB between cards,
# the coordinator (the database, the results of a batch) to about 110 MB.
WORKER_SOFT_MB = 120.0
COORDINATOR_SOFT_MB = 110.0

_LIBC: list[ctypes.CDLL | None] = []


def _glibc() -> ctypes.CDLL | None:
    if not _LIBC:
        lib = None
        if sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
            try:
                lib = ctypes.CDLL(None)
                lib.malloc_trim  # noqa: B018 (present in every glibc; checked once)
            except (OSError, AttributeError):
                lib = None
        _LIBC.append(lib)
    return _LIBC[0]


def resident_mb() -> float | None:
    """This process's resident memory in MB (Linux ``/proc``), or None where unknown."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError, IndexError):
        return None


def trim_if_over(soft_mb: float) -> bool:
    """Return the heap's free memory to the kernel when this process holds over ``soft_mb``.
    True when it did."""
    libc = _glibc()
    if libc is None:
        return False
    rss = resident_mb()
    if rss is None or rss <= soft_mb:
        return False
    libc.malloc_trim(0)
    return True
