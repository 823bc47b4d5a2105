"""Ingest: card files -> interpretation (in-process, a process pool, or Dask) -> the store.

Workers are sent file paths and return small results (interpreted values with scores,
never decoded images). Results are written by this coordinator only, in short
transactions, so a worker that dies loses nothing and counts nothing twice: a file whose
cards are not stored is simply read again by the next run. Files already stored (same
SHA-256) are recognised before decoding and change nothing.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import stat
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from scanpipe.errors import ScanpipeError
from scanpipe.heap import COORDINATOR_SOFT_MB, WORKER_SOFT_MB, trim_if_over
from scanpipe.imaging.decode import LIMITS, too_large_file
from scanpipe.interpret import InterpretContext, interpret_file, unreadable_file_card
from scanpipe.lifeline import die_with, process_alive
from scanpipe.names import reason_label
from scanpipe.queue import PERSON_READS
from scanpipe.sources.files import may_hold_cards, shown_path
from scanpipe.types import (
    NOTHING_TO_DECIDE,
    CardHints,
    ContestOutcome,
    InterpretedCard,
    MachinePrintedCard,
    ReadCard,
    Reason,
    UnreadableCard,
)

log = logging.getLogger(__name__)

COMMIT_EVERY_CARDS = 64
COMMIT_EVERY_SECONDS = 1.0
SHOWN_UNREADABLE = 50  # unreadable cards named one per line in the ingest summary
CRASHES_IN_A_ROW = 3  # files ending their reading process one after another: the machine, not the files


@dataclass(frozen=True, slots=True)
class FileResult:
    """What a worker sends back for one file."""

    path: str
    sha256: str
    cards: tuple[InterpretedCard, ...]  # empty when the file was already stored
    already_stored: bool = False
    error: str | None = None  # the file vanished or could not be read at all


def retold_counts(old: InterpretedCard, new: InterpretedCard) -> tuple[int, Counter[str], int]:
    """How a summary's counts change when a card it counted as ``old`` is told ``new``: cards
    needing a person, unreadable cards by reason, blank backs."""
    person, unreadable, blank_backs = 0, Counter[str](), 0
    for card, sign in ((old, -1), (new, 1)):
        person += sign * needs_person(card)
        result = card.interpretation
        if isinstance(result, UnreadableCard) and result.reason in NOTHING_TO_DECIDE:
            blank_backs += sign
        elif isinstance(result, UnreadableCard):
            unreadable[result.reason.value] += sign
    return person, unreadable, blank_backs


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
    blank_backs: int = 0  # blank backs of one-sided cards (kept, nothing to decide)
    streaked: int = 0  # cards with a scanner streak across their targets (the glass wants cleaning)
    seconds: float = 0.0

    def retold(self, old: InterpretedCard, new: InterpretedCard) -> None:
        """A card this summary counted as ``old``, told ``new`` after the run read it (a
        duplex sheet's side read as the style of its other side): counted as ``new`` instead."""
        person, unreadable, blank_backs = retold_counts(old, new)
        self.needs_person += person
        self.unreadable += unreadable  # (a Counter's += drops the counts that fall to nothing)
        self.blank_backs += blank_backs
        self.streaked += streaked(new) - streaked(old)
        src, before = old.source, old.interpretation
        if isinstance(before, UnreadableCard):
            where = src.path + (f" (page {src.page_index} of {src.page_count})" if src.page_count > 1 else "")
            self.unreadable_cards = [u for u in self.unreadable_cards if (u[0], u[1]) != (where, before.reason.value)]

    def not_read(self) -> list[tuple[str, str]]:
        """Files that may be cards and were not read (skipped ones that may hold cards, and
        card files that could not be read): the queue lists them as ``file_unread``."""
        return [(p, r) for p, r in self.skipped if may_hold_cards(p)] + list(self.missing)

    def lines(self) -> list[str]:
        """The summary for a person; every path escaped (:func:`shown_path`), so a file name
        cannot forge a line."""
        return [shown_path(line) for line in self._lines()]

    def _lines(self) -> list[str]:
        out = [f"{self.files} file(s) read: {self.cards_stored} card(s) stored, {self.cards_already} already stored"
               + (f", {self.files_already} file(s) stored by an earlier run (not read again)" if self.files_already else "")
               + (f", {self.needs_person} need a person" if self.needs_person else "")
               + f" ({self.seconds:.1f} s)"]
        if self.blank_backs:
            out.append(f"  {self.blank_backs} blank back(s) of cards printed on one side: kept with their fronts, nothing to decide")
        if self.streaked:
            out.append(streak_line(self.streaked))
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
        not_read = len(self.not_read())
        if not_read:
            out.append(f"  {not_read} card file(s) or folder(s) not read: fix what is said above and ingest again; "
                       "`scanpipe queue` lists them (file_unread) until they are read")
        return out


# --------------------------------------------------------------------------------------
# Worker side

_WORKER: dict[str, object] = {}


def _init_worker(context: InterpretContext, known: frozenset[str], coordinator: int) -> None:
    die_with(coordinator)  # a worker never outlives the ingest it works for (scanpipe.lifeline)
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


def interpret_path(path: str, context: InterpretContext, hints: CardHints, batch: str, known: frozenset[str], *,
                   location: str | None = None, where: str = "") -> FileResult:
    """Read one card file and interpret it (never raises for a bad card or file).

    ``location``: where to read it when not at ``path`` (a Dask worker reads an absolute
    path; the result keeps ``path`` as ingest found it); ``where`` ends a read problem's
    text (" on worker X")."""
    try:
        # O_NONBLOCK: a named pipe put where a card was found must not hang the reader
        with open(os.open(location or path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                return FileResult(path, "", (), error=f"not a regular file any more: nothing was read{where}")
            if st.st_size > LIMITS.file_bytes:  # refused unread: hashed in pieces, never held in memory
                sha = hashlib.file_digest(f, "sha256").hexdigest()
                data = None
            else:
                data = f.read()
                sha = hashlib.sha256(data).hexdigest()
    except OSError as e:
        return FileResult(path, "", (), error=read_problem(e) + where)
    if sha in known:
        return FileResult(path, sha, (), already_stored=True)
    if data is None:
        refused = too_large_file(st.st_size)
        return FileResult(path, sha, (unreadable_file_card(path, sha, batch, hints, UnreadableCard(refused.reason, f"{path}: {refused.detail}")),))
    return FileResult(path, sha, tuple(interpret_file(path, context, hints, batch, data=data, sha256=sha)))


def read_problem(error: OSError) -> str:
    """Why a card file could not be read, for a person."""
    if isinstance(error, PermissionError):
        return f"no permission to read it ({error.strerror}): give the ingest account read access"
    if isinstance(error, FileNotFoundError):
        return "it vanished before it was read"
    return f"cannot be read: {error.strerror or error}"


def _read_task(args: tuple[str, CardHints, str]) -> FileResult:
    result = read_one(*args)
    trim_if_over(WORKER_SOFT_MB)  # a pool worker keeps to its share of the ingest's memory
    return result


# --------------------------------------------------------------------------------------
# Coordinator side


def run_local(files: Sequence[str], context: InterpretContext, hints: CardHints, batch: str, known: frozenset[str], workers: int,
              *, marks: ReadingMarks | None = None) -> Iterator[FileResult]:
    """Results as files finish: in-process for one worker, else a process pool. ``marks``: where
    the in-process reading notes the file it reads (:class:`ReadingMarks`)."""
    if workers <= 1:
        import cv2

        left = set(marks.left_by_the_dead({os.path.abspath(f) for f in files})) if marks is not None else set()
        suspects = [f for f in files if os.path.abspath(f) in left]
        if suspects:
            # an ingest that read in its own process died reading these: each is read first in a
            # process of its own, so that one that ends it again is kept for a person, not this ingest
            log.warning("an earlier ingest ended while reading %s: reading it in a process of its own first", ", ".join(suspects))
            yield from _read_alone(suspects, context, hints, batch, known, multiprocessing.get_context("forkserver"))
            files = [f for f in files if os.path.abspath(f) not in left]
        _WORKER.update(context=context, known=known)
        previous = _one_opencv_thread()
        try:
            for f in files:
                if marks is not None:
                    marks.reading(os.path.abspath(f))
                yield read_one(f, hints, batch)
        finally:
            cv2.setNumThreads(previous)
            if marks is not None:
                marks.done()
        return
    chunk = max(1, min(16, len(files) // (workers * 8) or 1))
    # "forkserver", never plain fork: a process that already ran OpenCV (or any threads) and
    # then forks can leave the child holding a lock no thread will release (seen: the child
    # hung in cv2.setNumThreads after the demo had generated cards in the parent).
    mp = multiprocessing.get_context("forkserver")
    if threading.current_thread() is threading.main_thread():  # the fork server dies with the thread that starts it
        # The fork server also imports the CLI's modules (SQLAlchemy and the store; no numpy or
        # OpenCV, so it stays single-threaded and safe to fork): every worker starts by
        # importing the main module, ``scanpipe.cli``, which then costs nothing (it was ~0.5 s
        # a worker, one after another, before the first card).
        mp.set_forkserver_preload(["scanpipe._forkserver_lifeline", "scanpipe.cli"])
    remaining = list(files)
    while remaining:
        done = 0
        try:
            with ProcessPoolExecutor(max_workers=workers, mp_context=mp, initializer=_init_worker,
                                     initargs=(context, known, os.getpid())) as pool:
                for result in pool.map(_read_task, [(f, hints, batch) for f in remaining], chunksize=chunk):
                    done += 1
                    yield result
            return
        except BrokenProcessPool:
            # a worker died (a crash in a native library on one file, or killed): the files it may
            # have held are read again one at a time, each in a process of its own, so the file that
            # ends its process again is found and kept for a person; then the rest as before
            remaining = remaining[done:]
            suspects, remaining = remaining[: (workers + 1) * chunk * 2], remaining[(workers + 1) * chunk * 2:]
            log.warning("a reading process ended abruptly; reading %d file(s) again one at a time to find the one that ends it",
                        len(suspects))
            yield from _read_alone(suspects, context, hints, batch, known, mp)


def _read_alone(files: Sequence[str], context: InterpretContext, hints: CardHints, batch: str, known: frozenset[str],
                mp: multiprocessing.context.BaseContext) -> Iterator[FileResult]:
    """``files`` read one after another by a single worker process; a file whose reading ends
    that process (it never returned) becomes a card of its own, unreadable (``internal_error``),
    kept for a person, and the next file is read by a new process."""
    remaining = list(files)
    in_a_row = 0  # files whose reading ended its process, one after another
    while remaining:
        done = 0
        try:
            with ProcessPoolExecutor(max_workers=1, mp_context=mp, initializer=_init_worker,
                                     initargs=(context, known, os.getpid())) as pool:
                for result in pool.map(_read_task, [(f, hints, batch) for f in remaining]):
                    done += 1
                    in_a_row = 0
                    yield result
            return
        except BrokenProcessPool:
            in_a_row += 1
            if in_a_row >= CRASHES_IN_A_ROW:
                raise ScanpipeError(f"{CRASHES_IN_A_ROW} reading processes in a row ended abruptly, the last on "
                                    f"{remaining[done]}: no process can read cards on this machine now (out of memory? "
                                    "killed?); what was read is stored, ingest again to go on") from None
            yield crashed_file(remaining[done], hints, batch, known)
            remaining = remaining[done + 1:]


def read_apart(path: str, context: InterpretContext, hints: CardHints, batch: str, known: frozenset[str]) -> FileResult:
    """``path`` read in a process of its own (a file an earlier reading ended the process of):
    its result, or, where it ends this process too, the card :func:`crashed_file` stores."""
    return list(_read_alone([path], context, hints, batch, known, multiprocessing.get_context("forkserver")))[0]


def crashed_file(path: str, hints: CardHints, batch: str, known: frozenset[str]) -> FileResult:
    """What is stored for a file whose reading ended the reading process (a native library's
    crash, or the process killed while reading it): one unreadable card naming the file, for a
    person; the file itself is kept where it is."""
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
            sha = hashlib.file_digest(f, "sha256").hexdigest()
    except OSError as e:
        return FileResult(path, "", (), error=read_problem(e))
    if sha in known:
        return FileResult(path, sha, (), already_stored=True)
    log.error("reading %s ended the reading process abruptly (twice); it is kept for a person", path)
    detail = (f"{path}: reading this file ended the reading process abruptly (a crash in an image library, or the "
              "process was killed), so nothing of it could be read; it is kept for a person (open the file to "
              "look at it, or rescan the card)")
    return FileResult(path, sha, (unreadable_file_card(path, sha, batch, hints, UnreadableCard(Reason.INTERNAL_ERROR, detail)),))


class ReadingMarks:
    """The file an ingest that reads in its own process (``--workers 1``) is reading, noted in a
    small file of its own while it reads (``<folder>/<store>-<pid>``), so that when a file ends
    that process (a crash in an image library: no exception to catch) the next ingest into the
    same store finds the note, reads that file first in a process of its own and keeps it for a
    person if it ends that one too (:func:`crashed_file`), instead of dying on it again. The note
    is removed when the ingest ends in any other way. Noting never stops an ingest: a folder
    that cannot be written just means no notes."""

    def __init__(self, folder: Path, store: str) -> None:
        self.folder = folder
        self.prefix = hashlib.sha256(store.encode()).hexdigest()[:16]
        self.path = folder / f"{self.prefix}-{os.getpid()}"
        self.ok = True  # False once a note could not be written: no more are tried
        self.made = False  # the folder exists

    @classmethod
    def default(cls, store: str) -> ReadingMarks | None:
        """Marks under ``$XDG_STATE_HOME/scanpipe/reading`` (``~/.local/state``; Windows:
        ``%LOCALAPPDATA%``); None where there is no such folder to be had."""
        if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
            base = Path(os.environ["LOCALAPPDATA"])
        else:
            try:
                base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
            except RuntimeError:  # no home folder (a service account)
                return None
        return cls(base / "scanpipe" / "reading", store)

    def left_by_the_dead(self, among: set[str]) -> list[str]:
        """The files of ``among`` (absolute paths) that ingests into this store, no longer
        running, were reading when they ended (their notes are removed: each is read once
        more, alone; a note of a file not among them is left for the ingest that reads it)."""
        found: list[str] = []
        try:
            notes = list(self.folder.glob(f"{self.prefix}-*"))
        except OSError:
            return found
        for note in notes:
            try:
                pid = int(note.name.rsplit("-", 1)[1])
                if process_alive(pid):
                    continue
                text = note.read_text(encoding="utf-8")
                if text not in among:
                    continue
                note.unlink()
            except (OSError, ValueError, UnicodeDecodeError):
                continue
            found.append(text)
        return found

    def reading(self, path: str) -> None:
        """Note ``path`` as the file being read (in place of the last)."""
        if not self.ok:
            return
        try:
            if not self.made:
                self.folder.mkdir(parents=True, exist_ok=True)
                self.made = True
            self.path.write_text(path, encoding="utf-8")
        except OSError as e:
            self.ok = False
            log.debug("cannot note the file being read in %s: %s", self.folder, e)

    def done(self) -> None:
        """The reading ended without its process dying: no note is left."""
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass


def streak_line(cards: int) -> str:
    """The summary's line on ``cards`` streaked cards (ingest's and scan's)."""
    return (f"  {cards} card(s) show a scanner streak across their targets (a line down the whole scan: dust or a mark on "
            "the scanner's glass; clean it before the next batch): a target it crosses is read only where the line hides "
            "nothing, else a person reads it")


def streaked(card: InterpretedCard) -> bool:
    """Whether a scanner streak runs across the card's targets (``scanner_streak``)."""
    result = card.interpretation
    return isinstance(result, ReadCard) and Reason.SCANNER_STREAK in result.reasons


def needs_person(card: InterpretedCard) -> bool:
    """Whether the card waits for a person, as the queue has it: an unreadable card (but for
    those with nothing to decide), a read card with a contest pending or a reason of its own;
    the reasons a person reads through the contests they leave pending (a mark, a write-in, a
    scanner streak) count only where one is pending (a streak across targets read clearly
    either side of it left nothing to decide)."""
    result = card.interpretation
    if isinstance(result, UnreadableCard):
        return result.reason not in NOTHING_TO_DECIDE
    assert isinstance(result, ReadCard | MachinePrintedCard)
    return (any(r not in PERSON_READS for r in result.reasons)
            or any(c.outcome is ContestOutcome.PENDING for c in result.contests))


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
            trim_if_over(COORDINATOR_SOFT_MB)
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
                summary.streaked += streaked(card)
                if isinstance(card.interpretation, UnreadableCard) and card.interpretation.reason in NOTHING_TO_DECIDE:
                    summary.blank_backs += 1
                elif isinstance(card.interpretation, UnreadableCard):
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
