"""Scale past one machine: interpret card files on a Dask cluster, store them here.

How it works (``scanpipe ingest --executor dask [--scheduler ADDR]``):

* The coordinator (the ``ingest`` process) connects to a running Dask scheduler, or starts a
  :class:`~distributed.LocalCluster` of ``workers`` single-threaded processes when no
  address is given.
* The interpretation context (election, thresholds, decoded reference scans) and the set of
  already-stored SHA-256 are sent to every worker once (``scatter(broadcast=True)``); each
  task then carries only a few file paths.
* Tasks are pure: read the image by path from storage every worker sees (a shared folder),
  interpret it, return a small :class:`~scanpipe.pipeline.FileResult` (scores and readings,
  never pixels). Paths are made absolute on the coordinator for reading, while the result
  keeps the path as ``ingest`` found it (the CVR ``Location``).
* Only the coordinator writes to the database, as results arrive (``as_completed``). A
  worker that dies loses nothing: the scheduler runs its tasks again elsewhere, and each
  task's result is consumed once, so nothing is counted twice (the store also ignores a
  card id it already has). A task that raises is retried ``retries`` times; a file whose
  task still fails is reported as not read (it is not stored, so the next run reads it).

A remote cluster's workers must run the same scanpipe version as the coordinator; this is
checked on connecting.
"""

from __future__ import annotations

import ctypes
import logging
import os
import platform
import socket
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

import scanpipe
from scanpipe.errors import SourceError
from scanpipe.interpret import InterpretContext
from scanpipe.pipeline import FileResult, interpret_path
from scanpipe.types import CardHints

if TYPE_CHECKING:
    from distributed import Client, Future

CONNECT_TIMEOUT_S = 5.0
WORKER_WAIT_S = 30.0
TASK_RETRIES = 2
MAX_CHUNK = 16  # files per task at most (~0.3 s of work): fewer tasks, less scheduler and coordinator CPU
TASKS_PER_WORKER = 8  # at least, so the last tasks still keep every worker busy


# --------------------------------------------------------------------------------------
# Worker side (module-level functions: pickled by reference, so workers import scanpipe)


def read_files(items: Sequence[tuple[str, str]], shared: tuple[InterpretContext, frozenset[str]],
               hints: CardHints, batch: str) -> list[FileResult]:
    """Interpret a few files; ``items`` are ``(path as found, absolute path to read)``."""
    context, known = shared
    _one_opencv_thread_once()
    return [_read_file(path, location, context, hints, batch, known) for path, location in items]


def _read_file(path: str, location: str, context: InterpretContext, hints: CardHints, batch: str,
               known: frozenset[str]) -> FileResult:
    return interpret_path(path, context, hints, batch, known, location=location, where=f" (on worker {_host()})")


_OPENCV_SINGLE: list[bool] = []


def _one_opencv_thread_once() -> None:
    """Parallelism is by worker process: OpenCV's own thread pool would oversubscribe the
    cores and stall small calls (as in :func:`scanpipe.pipeline._one_opencv_thread`)."""
    if not _OPENCV_SINGLE:
        import cv2

        steady_allocator()  # undoes the cost of the nanny's MALLOC_TRIM_THRESHOLD_ (see there)
        cv2.setNumThreads(1)
        _OPENCV_SINGLE.append(True)


# glibc mallopt parameters
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
STEADY_MMAP_THRESHOLD = 32 << 20  # a 300-dpi letter page is 8.4 MB; a 600-dpi one 34 MB
STEADY_TRIM_THRESHOLD = 64 << 20
_ALLOCATOR_SET: list[bool] = []


def steady_allocator() -> bool:
    """Let glibc keep freed page-sized buffers for the next card (once per process).

    Each card allocates and frees a few page-sized arrays. glibc serves a block above its
    mmap threshold with a fresh ``mmap`` whose pages the kernel must zero on first touch;
    normally the threshold rises after the first such free, but an explicit
    ``MALLOC_TRIM_THRESHOLD_`` (Dask's nanny sets 65536 in every worker) freezes it at
    128 kB, and a Dask worker then read cards at half the speed (35 vs 17 ms a card,
    measured). Fixed thresholds keep page buffers in the heap. Called in Dask workers only:
    elsewhere glibc's own dynamic threshold does about as well, and the process pool's
    resident memory stays as measured by ``scripts/bench_memory.py``. Returns False where
    the C library is not glibc (the setting is only a speed-up).
    """
    if _ALLOCATOR_SET:
        return _ALLOCATOR_SET[0]
    ok = False
    if sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
        try:
            libc = ctypes.CDLL(None)
            ok = bool(libc.mallopt(_M_MMAP_THRESHOLD, STEADY_MMAP_THRESHOLD)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, STEADY_TRIM_THRESHOLD))
        except (OSError, AttributeError):
            ok = False
    _ALLOCATOR_SET.append(ok)
    return ok


def _host() -> str:
    return os.uname().nodename if hasattr(os, "uname") else "?"


def _worker_version() -> str:
    return scanpipe.__version__


# --------------------------------------------------------------------------------------
# Coordinator side


def run_dask(files: Sequence[str], context: InterpretContext, hints: CardHints, batch: str, known: frozenset[str], *,
             scheduler: str | None, workers: int, chunk: int | None = None,
             retries: int = TASK_RETRIES) -> Iterator[FileResult]:
    """Interpret ``files`` on a Dask cluster; yield one result per file as tasks finish.

    Raises :class:`SourceError` when the scheduler cannot be reached or has no workers.
    The client (and a local cluster) is closed when the iterator ends, fails or is closed.
    """
    if not files:
        return
    with dask_client(scheduler, workers) as client:
        shared = client.scatter((context, known), broadcast=True, hash=False)
        batches = chunked([(f, os.path.abspath(f)) for f in files], chunk or task_size(len(files), _worker_count(client)))
        futures = {client.submit(read_files, items, shared, hints, batch, key=f"scanpipe-read-{i}-{os.urandom(4).hex()}",
                                 pure=False, retries=retries): items for i, items in enumerate(batches)}
        yield from collect(client, futures, retries)


def collect(client: Client, futures: dict[Future, list[tuple[str, str]]], retries: int) -> Iterator[FileResult]:
    """Results of finished futures, each consumed (and released) exactly once."""
    from distributed import as_completed

    for future in as_completed(list(futures), loop=client.loop):
        items = futures.pop(future)
        if future.status == "error":
            reason = f"interpretation failed on the cluster after {retries} retries: {future.exception()!r}"
            yield from (FileResult(path, "", (), error=reason) for path, _ in items)
        else:
            yield from future.result()
        future.release()


def task_size(files: int, workers: int) -> int:
    """Files per task: as many as :data:`MAX_CHUNK` while every worker still gets
    :data:`TASKS_PER_WORKER` tasks. Measured on 604 cards, 2 local workers: 2 files a task
    cost the coordinator 1.5 CPU seconds (scheduling, messages), 16 a task 0.4 s."""
    return max(1, min(MAX_CHUNK, files // (max(1, workers) * TASKS_PER_WORKER)))


def _worker_count(client: Client) -> int:
    """Worker threads of the cluster (each runs one task at a time)."""
    return sum(client.nthreads().values()) or 1


def chunked(items: list[Any], size: int) -> list[list[Any]]:
    size = max(1, size)
    return [items[i:i + size] for i in range(0, len(items), size)]


@contextmanager
def dask_client(scheduler: str | None, workers: int) -> Iterator[Client]:
    """A client of ``scheduler``, or of a new local cluster; closed on exit (Ctrl-C too)."""
    from distributed import Client, LocalCluster

    with ExitStack() as stack:
        if scheduler is None:
            cluster = stack.enter_context(LocalCluster(
                n_workers=max(1, workers), threads_per_worker=1, processes=True,
                dashboard_address=None, silence_logs=logging.ERROR))
            client = stack.enter_context(Client(cluster, set_as_default=False))
        else:
            client = stack.enter_context(connect(scheduler))
            check_workers(client, scheduler)
        yield client


def connect(scheduler: str) -> Client:
    """Connect to a running scheduler within :data:`CONNECT_TIMEOUT_S`."""
    from distributed import Client

    probe_scheduler(scheduler)
    try:
        return Client(scheduler, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise SourceError(f"dask scheduler {scheduler}: cannot connect within {CONNECT_TIMEOUT_S:g} s ({_reason(e)})") from e
    except (ValueError, TypeError) as e:
        raise SourceError(f"dask scheduler {scheduler}: not a scheduler address ({_reason(e)})") from e


def probe_scheduler(scheduler: str) -> None:
    """Fail fast (refused, unknown host) for a TCP address, with the system's reason."""
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port

    try:
        protocol, location = parse_address(scheduler)
        host, port = parse_host_port(location)
    except (ValueError, TypeError) as e:
        raise SourceError(f"dask scheduler {scheduler}: not a scheduler address ({_reason(e)})") from e
    if protocol not in ("tcp", "tls"):
        return  # inproc://, ucx://...: left to the client
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as e:
        raise SourceError(f"dask scheduler {scheduler}: cannot connect ({e.strerror or _reason(e)})") from e


def check_workers(client: Client, scheduler: str) -> None:
    """The cluster has workers, and they run this scanpipe version."""
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_S)
    except TimeoutError as e:
        raise SourceError(f"dask scheduler {scheduler}: no worker joined within {WORKER_WAIT_S:g} s") from e
    try:
        versions = client.run(_worker_version)
    except ImportError as e:
        raise SourceError(f"dask scheduler {scheduler}: a worker cannot import scanpipe ({_reason(e)})") from e
    wrong = {addr: v for addr, v in versions.items() if v != scanpipe.__version__}
    if wrong:
        detail = ", ".join(f"{addr} has {v}" for addr, v in sorted(wrong.items()))
        raise SourceError(f"dask scheduler {scheduler}: workers run another scanpipe version than {scanpipe.__version__} ({detail})")


def _reason(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]
