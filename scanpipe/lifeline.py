"""Worker processes die with the process they work for.

``ingest --workers N`` reads cards in a process pool started through multiprocessing's
fork server, so a worker's parent is the fork server, not the ``ingest`` process. When
``ingest`` is killed outright (``kill -9``, the out-of-memory killer, a lost SSH session
with a hard kill), nothing tells the pool: its workers, each holding a few hundred MB, waited
forever (issue 9 item 12). Two lifelines, set in every worker as it starts:

1. **A watch on the coordinator** (:func:`die_with`): a daemon thread waits on a Linux
   ``pidfd`` of the ``ingest`` process, which becomes readable the moment that process ends
   (no polling, and a pid reused later cannot fool it), then ends the worker with
   ``os._exit``. Where ``pidfd_open`` is not available (another OS, an old kernel), the
   thread checks every :data:`POLL_SECONDS` whether the process still exists.
2. **The kernel's parent-death signal** (``prctl(PR_SET_PDEATHSIG, SIGKILL)`` via ctypes,
   Linux only): the worker is killed when its parent (the fork server) ends. The fork server
   itself gets the same signal towards ``ingest`` when it starts (:func:`die_with_parent`,
   run from :mod:`scanpipe._forkserver_lifeline`, preloaded into the fork server), so the
   chain holds even if the watch thread could not start.

A worker that ends this way had its results not yet stored; nothing is lost, since only the
coordinator writes and the next run reads those files again.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import sys
import threading
import time

POLL_SECONDS = 1.0
EXIT_STATUS = 70  # what a worker whose coordinator vanished ends with (EX_SOFTWARE)
_PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send ``sig`` to this process when its parent ends (Linux);
    returns whether it was set. Ends this process at once if the parent is already gone."""
    if not sys.platform.startswith("linux"):
        return False
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if os.getppid() != parent:  # the parent ended before the signal was asked for
        os._exit(EXIT_STATUS)
    return True


def die_with(pid: int) -> threading.Thread:
    """End this process (``os._exit``) as soon as process ``pid`` ends; also set the
    parent-death signal. Returns the watching thread (a daemon)."""
    die_with_parent()
    fd = _pidfd(pid)
    if fd is None and not process_alive(pid):
        os._exit(EXIT_STATUS)
    thread = threading.Thread(target=_watch, args=(pid, fd), name=f"scanpipe-lifeline-{pid}", daemon=True)
    thread.start()
    return thread


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux >= 5.3, or already gone
        return None


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` is running (this machine's; one of another user's counts)."""
    if sys.platform == "win32":  # os.kill there ends the process
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        ctypes.windll.kernel32.CloseHandle(handle)
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _watch(pid: int, fd: int | None) -> None:
    if fd is not None:
        select.select([fd], [], [])  # readable once the process has ended
        os._exit(EXIT_STATUS)
    while process_alive(pid):
        time.sleep(POLL_SECONDS)
    os._exit(EXIT_STATUS)
