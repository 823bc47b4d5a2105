"""A hot folder: ingest card files as scanner software drops them (``ingest --watch``).

Each poll lists the folders (recursively) and decides per file:

- temporary names are ignored: ``*.part``, ``*.tmp``, ``*.crdownload``, ``~*``, dotfiles and
  files under dot-folders (scanner software writes there first and renames at the end);
- a file is read only when its size and mtime are the same on two polls in a row and it
  can be opened (a file still being written is never read half-way); an empty file
  waits :data:`EMPTY_FILE_POLLS` polls, since writers often create the file first;
- a file that is not a card file is skipped once and recorded (``store.record_skipped``);
- a file that vanishes before it is read is reported and dropped from the watch list;
- a settled card file that still cannot be opened after :data:`EMPTY_FILE_POLLS` polls (no
  read permission) is reported once and recorded as not read (the queue lists it until it is
  read); it stays watched, and is read as soon as it can be opened;
- every path shown is escaped (a newline in a name cannot forge a line);
- a file whose SHA-256 is already stored changes nothing, so stopping and restarting the
  watch loses nothing and repeats nothing.

Ready files go through the same pipeline as ``ingest`` (``run_local`` and
``store_results``), a poll's worth at a time.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scanpipe.errors import SourceError
from scanpipe.pipeline import FileResult, IngestSummary, ReadingMarks, needs_person, read_problem, run_local, store_results
from scanpipe.sources.files import CARD_SUFFIXES, shown_path, storable_path
from scanpipe.store.repository import Store
from scanpipe.types import CardHints, InterpretedCard

TEMP_SUFFIXES = (".part", ".tmp", ".crdownload", ".partial", ".download")
EMPTY_FILE_POLLS = 10


def is_temporary(name: str) -> bool:
    """A name scanner software (or an editor, or a copy) uses while a file is not finished."""
    low = name.lower()
    return name.startswith(("~", ".")) or low.endswith(TEMP_SUFFIXES) or low.endswith("~")


@dataclass(frozen=True, slots=True)
class FileState:
    size: int
    mtime_ns: int


@dataclass
class _Tracked:
    state: FileState
    unchanged_polls: int = 0


@dataclass(frozen=True, slots=True)
class PollResult:
    ready: tuple[str, ...]  # card files whose writing is over, in name order
    skipped: tuple[tuple[str, str], ...]  # (path, reason) newly seen non-card files
    vanished: tuple[str, ...]  # files that disappeared before they were read
    unopenable: tuple[tuple[str, str], ...] = ()  # (path, why) settled card files that still cannot be opened


@dataclass
class FolderWatcher:
    """Which files of some folders are ready to read; remembers what it handed out."""

    roots: tuple[Path, ...]
    tracked: dict[str, _Tracked] = field(default_factory=dict)
    handed_out: dict[str, FileState] = field(default_factory=dict)
    skipped: set[str] = field(default_factory=set)
    blocked: dict[str, int] = field(default_factory=dict)  # settled files that could not be opened: polls so far

    def poll(self) -> PollResult:
        current = dict(self._listing())
        ready: list[str] = []
        new_skips: list[tuple[str, str]] = []
        unopenable: list[tuple[str, str]] = []
        for path, state in sorted(current.items()):
            if Path(path).suffix.lower() not in CARD_SUFFIXES:
                if path not in self.skipped:
                    self.skipped.add(path)
                    new_skips.append((path, f"not a card file (extension '{Path(path).suffix or 'none'}')"))
                continue
            if self.handed_out.get(path) == state:
                continue
            if not self._settled(path, state):
                continue
            problem = _open_problem(path)
            if problem is None:
                ready.append(path)
                self.handed_out[path] = state
                del self.tracked[path]
                self.blocked.pop(path, None)
                continue
            self.blocked[path] = self.blocked.get(path, 0) + 1
            if self.blocked[path] == EMPTY_FILE_POLLS:
                unopenable.append((path, problem))
        vanished = tuple(p for p in self.tracked if p not in current)
        for p in vanished:
            del self.tracked[p]
        return PollResult(tuple(ready), tuple(new_skips), vanished, tuple(unopenable))

    def _settled(self, path: str, state: FileState) -> bool:
        seen = self.tracked.get(path)
        if seen is None or seen.state != state:
            self.tracked[path] = _Tracked(state)
            return False
        seen.unchanged_polls += 1
        return seen.unchanged_polls >= (EMPTY_FILE_POLLS if state.size == 0 else 1)

    def _listing(self) -> list[tuple[str, FileState]]:
        out = []
        for root in self.roots:
            if root.is_file():
                out.extend(_stat(str(root)))
                continue
            for folder, dirs, files in os.walk(root):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                out.extend(s for name in files if not is_temporary(name) for s in _stat(os.path.join(folder, name)))
        return out


def _stat(path: str) -> list[tuple[str, FileState]]:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return []
    return [(path, FileState(st.st_size, st.st_mtime_ns))]


def _can_open(path: str) -> bool:
    """False while another program holds the file exclusively (Windows) or it just vanished."""
    return _open_problem(path) is None


def _open_problem(path: str) -> str | None:
    """Why the file cannot be opened now, else None."""
    try:
        with open(path, "rb"):
            return None
    except OSError as e:
        return read_problem(e)


def watch_folder(
    store: Store,
    paths: Sequence[str],
    *,
    batch: str,
    hints: CardHints,
    workers: int = 1,
    poll_seconds: float = 1.0,
    stop: threading.Event | None = None,
    max_idle_seconds: float | None = None,
    on_line: Callable[[str], None] | None = None,
) -> IngestSummary:
    """Ingest card files as they appear under ``paths`` until ``stop`` is set, nothing new
    has come for ``max_idle_seconds``, or Ctrl-C. One line per card is given to ``on_line``
    (printed when None). Returns what was read."""
    from scanpipe.scan import card_line
    from scanpipe.workflow import interpret_context, neighbours_in_order, tell_neighbour_show_through

    say = on_line or (lambda line: print(line, flush=True))
    roots = tuple(Path(p) for p in paths)
    for root in roots:
        if not root.exists():
            raise SourceError(f"{root}: no such file or folder")
    record = store.ensure_batch(batch, style=hints.style, precinct=hints.precinct, kind=hints.kind)
    hints = CardHints(style=hints.style or record.style, precinct=hints.precinct or record.precinct, kind=hints.kind or record.kind)
    context = interpret_context(store)
    watcher = FolderWatcher(roots)
    summary = IngestSummary()
    started = last_activity = time.monotonic()
    cards_seen = 0
    stop = stop or threading.Event()
    store.log_event("watch_started", {"batch": batch, "paths": list(paths)})
    say(f"watching {', '.join(paths)} for batch {batch} (every {poll_seconds:g} s; Ctrl-C to stop)")

    counted: set[str] = set()  # card ids the summary counts

    def card_done(card: InterpretedCard, flagged: bool) -> None:
        nonlocal cards_seen
        cards_seen += 1
        counted.add(card.source.card_id)
        say(card_line(card.source.path, card, flagged, cards_seen, started))

    sides: list[tuple[str, str]] = []  # (path, SHA-256) of every file read or found stored, all passes
    new_now: set[str] = set()  # the SHA-256 of this pass's files

    def file_done(result: FileResult) -> None:
        if result.error is None:
            sides.append((result.path, result.sha256))
            new_now.add(result.sha256)
        if result.error is not None:
            say(f"{shown_path(result.path)}: {result.error}; skipped")
        elif result.already_stored:
            say(f"{shown_path(result.path)}: already stored (same SHA-256): nothing changes")

    try:
        while not stop.is_set():
            polled = watcher.poll()
            for path, reason in polled.skipped:
                store.record_skipped(path, batch, reason)
                summary.skipped.append((path, reason))
                say(f"{shown_path(path)}: skipped, {reason}")
            for path in polled.vanished:
                summary.missing.append((path, "vanished before it was read"))
                say(f"{shown_path(path)}: vanished before it was read; skipped")
            for path, reason in polled.unopenable:
                store.record_skipped(storable_path(path), batch, reason)
                summary.missing.append((path, reason))
                say(f"{shown_path(path)}: not read: {reason}; it is read once it can be opened")
            if polled.ready:
                known = frozenset(store.known_sha256(_hashes(polled.ready)))
                results = run_local(list(polled.ready), context, hints, batch, known, workers,
                                    marks=ReadingMarks.default(store.safe_url) if workers <= 1 else None)
                new_now.clear()
                store_results(results, store.save_cards, summary, on_card=card_done, on_file=file_done)
                # a sheet whose two side files came in two passes is told as one coming together
                pairs = [pair for pair in neighbours_in_order(sides) if new_now.intersection(pair)]
                for old, new in tell_neighbour_show_through(store, context, pairs):
                    if old.source.card_id in counted:  # counted as it was read first
                        summary.retold(old, new)
                    say(card_line(new.source.path, new, needs_person(new), cards_seen, started) + " (told with the file next to it)")
            if polled.ready or polled.skipped or watcher.tracked:
                last_activity = time.monotonic()
            elif max_idle_seconds is not None and time.monotonic() - last_activity >= max_idle_seconds:
                break
            stop.wait(poll_seconds)
    finally:
        summary.seconds = time.monotonic() - started
        store.log_event("watch_finished", {"batch": batch, "stored": summary.cards_stored, "files": summary.files})
    return summary


def _hashes(paths: Sequence[str]) -> list[str]:
    out = []
    for p in paths:
        try:
            out.append(hashlib.sha256(Path(p).read_bytes()).hexdigest())
        except OSError:
            continue  # vanished: interpret_path reports it
    return out
