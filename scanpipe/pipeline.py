"""Ingest: card files -> interpretation (in-process, a process pool, or Dask) -> the store.

Workers are sent file paths and return small results (interpreted values with scores,
never decoded images). Results are written by this coordinator only, in short
transactions, so a worker that dies loses nothing and counts nothing twice: a file whose
cards are not stored is simply read again by the next run. Files already stored (same
SHA-256) are recognised before decoding and change nothing.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from scanpipe.errors import SourceError
from scanpipe.interpret import InterpretContext, interpret_file
from scanpipe.names import reason_label
from scanpipe.types import (
    CardHints,
    InterpretedCard,
    MachinePrintedCard,
    ReadCard,
    UnreadableCard,
)

CARD_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".tif", ".tiff", ".pdf"})
COMMIT_EVERY_CARDS = 64
COMMIT_EVERY_SECONDS = 1.0
SHOWN_UNREADABLE = 50  # unreadable cards named one per line in the ingest summary


@dataclass(frozen=True, slots=True)
class FileResult:
    """What a worker sends back for one file."""

    path: str
    sha256: str
    cards: tuple[InterpretedCard, ...]  # empty when the file was already stored
    already_stored: bool = False
    error: str | None = None  # the file vanished or could not be read at all


@dataclass
class IngestSummary:
    files: int = 0
    cards_stored: int = 0
    cards_already: int = 0
    files_already: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    missing: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    unreadable: Counter[str] = field(default_factory=Counter)
    unreadable_cards: list[tuple[str, str, str]] = field(default_factory=list)  # (file [page], reason, detail)
    needs_person: int = 0
    seconds: float = 0.0

    def lines(self) -> list[str]:
        out = [f"{self.files} file(s) read: {self.cards_stored} card(s) stored, {self.cards_already} already stored"
               + (f", {self.needs_person} need a person" if self.needs_person else "")
               + f" ({self.seconds:.1f} s)"]
        for reason, n in sorted(self.unreadable.items()):
            out.append(f"  unreadable: {n} x {reason} ({reason_label(reason)})")
        for where, reason, detail in self.unreadable_cards[:SHOWN_UNREADABLE]:
            out.append(f"  unreadable {where}: {reason}: {detail}")
        if len(self.unreadable_cards) > SHOWN_UNREADABLE:
            out.append(f"  ... and {len(self.unreadable_cards) - SHOWN_UNREADABLE} more unreadable card(s): `scanpipe queue` lists every one")
        for path, reason in self.skipped:
            out.append(f"  skipped {path}: {reason}")
        for path, reason in self.missing:
            out.append(f"  not read {path}: {reason}")
        return out


def find_card_files(paths: Sequence[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """Card files under ``paths`` (recursively, sorted) and the files skipped with why.

    A path that does not exist raises :class:`SourceError` (the command cannot run).
    """
    cards: list[str] = []
    skipped: list[tuple[str, str]] = []
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise SourceError(f"{raw}: no such file or folder")
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file())
        for f in files:
            if f.suffix.lower() in CARD_SUFFIXES:
                cards.append(str(f))
            elif not f.name.startswith("."):
                skipped.append((str(f), f"not a card file (extension '{f.suffix or 'none'}'; cards are {', '.join(sorted(CARD_SUFFIXES))})"))
    return cards, skipped


# --------------------------------------------------------------------------------------
# Worker side

_WORKER: dict[str, object] = {}


def _init_worker(context: InterpretContext, known: frozenset[str]) -> None:
    _WORKER["context"] = context
    _WORKER["known"] = known
    _one_opencv_thread()


def _one_opencv_thread() -> int:
    """Run OpenCV single-threaded in a worker; return the previous thread count.

    Ingest is parallel by process: OpenCV's own thread pool would oversubscribe the cores,
    and on a busy machine each small parallel call then waits for a descheduled thread.
    """
    import cv2

    previous = cv2.getNumThreads()
    cv2.setNumThreads(1)
    return previous


def read_one(path: str, hints: CardHints, batch: str) -> FileResult:
    """Interpret one file in a worker (or in-process). Never raises for a bad card."""
    context = _WORKER["context"]
    known = _WORKER["known"]
    assert isinstance(context, InterpretContext) and isinstance(known, frozenset)
    return interpret_path(path, context, hints, batch, known)


def interpret_path(path: str, context: InterpretContext, hints: CardHints, batch: str, known: frozenset[str]) -> FileResult:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        return FileResult(path, "", (), error=f"cannot be read: {e.strerror or e}")
    sha = hashlib.sha256(data).hexdigest()
    if sha in known:
        return FileResult(path, sha, (), already_stored=True)
    return FileResult(path, sha, tuple(interpret_file(path, context, hints, batch, data=data, sha256=sha)))


def _read_task(args: tuple[str, CardHints, str]) -> FileResult:
    return read_one(*args)


# --------------------------------------------------------------------------------------
# Coordinator side


def run_local(files: Sequence[str], context: InterpretContext, hints: CardHints, batch: str, known: frozenset[str], workers: int) -> Iterator[FileResult]:
    """Results as files finish: in-process for one worker, else a process pool."""
    if workers <= 1:
        import cv2

        _WORKER.update(context=context, known=known)
        previous = _one_opencv_thread()
        try:
            for f in files:
                yield read_one(f, hints, batch)
        finally:
            cv2.setNumThreads(previous)
        return
    chunk = max(1, min(16, len(files) // (workers * 8) or 1))
    # "forkserver", never plain fork: a process that already ran OpenCV (or any threads) and
    # then forks can leave the child holding a lock no thread will release (seen: the child
    # hung in cv2.setNumThreads after the demo had generated cards in the parent).
    mp = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp, initializer=_init_worker, initargs=(context, known)) as pool:
        yield from pool.map(_read_task, [(f, hints, batch) for f in files], chunksize=chunk)


def needs_person(card: InterpretedCard) -> bool:
    result = card.interpretation
    if isinstance(result, UnreadableCard):
        return True
    assert isinstance(result, ReadCard | MachinePrintedCard)
    return bool(result.reasons) or any(c.outcome.value == "pending" for c in result.contests)


def store_results(
    results: Iterable[FileResult],
    save_cards: Callable[[Sequence[InterpretedCard]], int],
    summary: IngestSummary,
    on_card: Callable[[InterpretedCard, bool], None] | None = None,
    on_file: Callable[[FileResult], None] | None = None,
) -> None:
    """Write results in short transactions (every few cards or every second)."""
    pending: list[InterpretedCard] = []
    last = time.monotonic()

    def flush() -> None:
        nonlocal pending, last
        if pending:
            stored = save_cards(pending)
            summary.cards_stored += stored
            summary.cards_already += len(pending) - stored
            pending = []
        last = time.monotonic()

    try:
        for result in results:
            summary.files += 1
            if result.error is not None:
                summary.missing.append((result.path, result.error))
            elif result.already_stored:
                summary.files_already += 1
            for card in result.cards:
                flagged = needs_person(card)
                summary.needs_person += flagged
                if isinstance(card.interpretation, UnreadableCard):
                    summary.unreadable[card.interpretation.reason.value] += 1
                    src = card.source
                    where = src.path + (f" (page {src.page_index} of {src.page_count})" if src.page_count > 1 else "")
                    detail = card.interpretation.detail.removeprefix(f"{src.path}: ")  # the line names the file already
                    summary.unreadable_cards.append((where, card.interpretation.reason.value, detail))
                if on_card is not None:
                    on_card(card, flagged)
                pending.append(card)
            if on_file is not None:
                on_file(result)
            if len(pending) >= COMMIT_EVERY_CARDS or time.monotonic() - last > COMMIT_EVERY_SECONDS:
                flush()
    finally:
        flush()  # also on Ctrl-C or a worker's crash: what was read is kept
