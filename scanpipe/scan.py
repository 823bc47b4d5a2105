"""Scanning at the workstation: device -> durable file -> manifest -> interpret -> store.

Every page goes through the same steps, one page at a time, in this order:

1. written to ``<out>/<batch>/<seq:05d>.<ext>`` (via ``.part``, fsynced, renamed, folder
   fsynced), so a file with a final name is always whole;
2. hashed (SHA-256) and appended to the batch manifest ``manifest.jsonl`` as ``written``;
3. interpreted with the batch's hints and stored (the store is keyed by SHA-256, so a page
   stored twice counts once);
4. marked ``stored`` in the manifest, and one line is shown to the operator.

So whatever stops a scan (a jam, an empty feeder, a scanner unplugged, Ctrl-C, a power
cut) every page already delivered is on disk, and ``--resume`` can finish the job: files
that are not in the manifest are added, pages written but not stored (or stored in the
manifest but missing from the database) are interpreted and stored first, and numbering
goes on after the last sequence number. Device errors end the run as an
:class:`~scanpipe.sources.base.AcquisitionError` in the summary, never a lost page.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scanpipe.errors import ConfigError, SourceError
from scanpipe.names import Names, reason_label
from scanpipe.pipeline import ReadingMarks, interpret_path, needs_person, read_apart, retold_counts, streak_line, streaked
from scanpipe.sources.base import AcquiredPage, AcquisitionError, DeviceInfo, PageSource, ScanSettings
from scanpipe.store.repository import Store
from scanpipe.types import NOTHING_TO_DECIDE, CardHints, InterpretedCard, MachinePrintedCard, ReadCard, Reason, UnreadableCard

MANIFEST = "manifest.jsonl"
PAGE_NAME = re.compile(r"^(\d{5,})\.(png|jpe?g|tiff?|pdf)$", re.IGNORECASE)
LineSink = Callable[[str], None]


# --------------------------------------------------------------------------------------
# Devices


def open_source(device: str, settings: ScanSettings) -> PageSource:
    """The source for a ``--device`` name: ``replay:/dir``, ``twain:<name>``, else SANE."""
    if device.startswith("replay:"):
        from scanpipe.sources.replay import ReplaySource

        return ReplaySource(device, settings)
    if device.startswith("twain:"):
        from scanpipe.sources.twain import TwainSource

        return TwainSource(device, settings)
    from scanpipe.sources.sane import SaneSource

    return SaneSource(device.removeprefix("sane:"), settings)


def list_devices() -> list[DeviceInfo]:
    """Every scanner SANE (and TWAIN, on Windows) can see."""
    from scanpipe.sources.sane import sane_devices
    from scanpipe.sources.twain import twain_devices

    return sane_devices() + twain_devices()


# --------------------------------------------------------------------------------------
# The batch manifest


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    seq: int
    file: str  # name inside the batch folder
    sha256: str
    state: str  # "written" | "stored"
    side: str = "front"


class Manifest:
    """``manifest.jsonl``: append-only JSON lines; the last line of a sequence number wins."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / MANIFEST
        self.entries: dict[int, ManifestEntry] = {}
        if self.path.is_file():
            self._load()

    def _load(self) -> None:
        lines = self.path.read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                entry = ManifestEntry(int(d["seq"]), str(d["file"]), str(d["sha256"]), str(d["state"]), str(d.get("side", "front")))
            except (ValueError, KeyError, TypeError) as e:
                if n == len(lines):  # cut short by a crash: drop it; its page is found again on disk
                    self._truncate_last_line(lines[:-1])
                    continue
                raise SourceError(f"{self.path}: line {n} is not a manifest entry ({e})") from e
            self.entries[entry.seq] = entry

    def _truncate_last_line(self, keep: list[str]) -> None:
        tmp = self.path.with_name(MANIFEST + ".tmp")
        tmp.write_text("".join(line + "\n" for line in keep), encoding="utf-8")
        os.replace(tmp, self.path)

    @property
    def last_seq(self) -> int:
        return max(self.entries, default=0)

    @staticmethod
    def duplex_sheets(folder: Path) -> list[tuple[str, str]]:
        """``(front SHA-256, back SHA-256)`` of every sheet a duplex scan wrote into ``folder``,
        from its manifest, read only (a folder copied from a workstation and ingested
        elsewhere: nothing in it is changed); lines that do not parse are passed over."""
        entries: dict[int, tuple[str, str]] = {}  # seq -> (side, sha256); the last line of a seq wins
        path = folder / MANIFEST
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if path.is_file() else []:
            try:
                d = json.loads(line)
                entries[int(d["seq"])] = (str(d.get("side", "front")), str(d["sha256"]))
            except (ValueError, KeyError, TypeError):
                continue
        return [(entries[seq - 1][1], sha) for seq, (side, sha) in sorted(entries.items())
                if side == "back" and entries.get(seq - 1, ("", ""))[0] == "front"]

    def append(self, entry: ManifestEntry, **extra: Any) -> None:
        record = {"seq": entry.seq, "file": entry.file, "sha256": entry.sha256, "state": entry.state,
                  "side": entry.side, "at": datetime.now(UTC).isoformat(timespec="seconds"), **extra}
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())
        self.entries[entry.seq] = entry


def write_durably(path: Path, data: bytes) -> None:
    """Write ``data`` so that ``path`` either does not exist or holds all of it."""
    if path.exists():
        raise SourceError(f"{path}: already exists; scanpipe never overwrites a scanned page")
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --------------------------------------------------------------------------------------
# What the operator sees


@dataclass
class ScanSummary:
    batch: str
    folder: Path
    device: str = ""
    pages_written: int = 0
    cards_stored: int = 0
    cards_already: int = 0
    needs_person: int = 0
    recovered: int = 0  # pages of an earlier run stored by this --resume
    discarded: list[str] = field(default_factory=list)  # half-written pages found on resume
    unreadable: Counter[str] = field(default_factory=Counter)
    blank_backs: int = 0  # blank backs of one-sided cards scanned duplex (kept, nothing to decide)
    streaked: int = 0  # cards with a scanner streak across their targets (the glass wants cleaning)
    first_seq: int | None = None
    last_seq: int = 0
    stopped_on: tuple[int, str, tuple[str, ...]] | None = None  # (seq, file, reasons) with --stop-on-flag
    stopped_for_streak: bool = False  # ... on a card read clearly but for the scanner's streak across it
    fed_after_stop: int = 0
    error: AcquisitionError | None = None
    seconds: float = 0.0

    def lines(self) -> list[str]:
        span = f" (pages {self.first_seq}-{self.last_seq})" if self.first_seq is not None else ""
        out = [f"batch {self.batch}: {self.pages_written} page(s) scanned into {self.folder}{span}; "
               f"{self.cards_stored} card(s) stored, {self.cards_already} already stored, "
               f"{self.needs_person} need a person ({self.seconds:.1f} s)"]
        if self.recovered:
            out.append(f"  {self.recovered} page(s) written before the interruption were stored first")
        for name in self.discarded:
            out.append(f"  {name}: was cut short while being written and was removed; feed that card again")
        if self.blank_backs:
            out.append(f"  {self.blank_backs} blank back(s) of cards printed on one side: kept with their fronts, nothing to decide")
        if self.streaked:
            out.append(streak_line(self.streaked))
        for reason, n in sorted(self.unreadable.items()):
            out.append(f"  unreadable: {n} x {reason}")
        return out

    def stop_message(self) -> str | None:
        """Why the scan ended early, for the operator, with what to do next."""
        resume = f"scanpipe scan --device {self.device} --batch {self.batch} --resume"
        if self.stopped_on is not None:
            seq, name, reasons = self.stopped_on
            after = (f"; the scanner had already fed {self.fed_after_stop} more card(s), stored too, so it is the "
                     f"{_ordinal(self.fed_after_stop + 1)} card counting back from the last one fed") if self.fed_after_stop else \
                    "; it is the last card fed"
            if self.stopped_for_streak:
                return (f"stopped: card {self.batch}/{seq:05d} ({name}) shows a scanner streak across its targets "
                        f"({', '.join(reasons)}){after}. It was read (the line hid none of its marks) and needs no one. Clean the "
                        f"scanner's glass before feeding more: every card after it would carry the line. Every card fed so far is "
                        f"stored; do not feed any stored card again. Leave the cards not yet fed in the feeder and run: {resume}")
            glass = " Its scan shows a scanner streak: clean the scanner's glass before feeding more." if "scanner_streak" in reasons else ""
            return (f"stopped: card {self.batch}/{seq:05d} ({name}) needs a person ({', '.join(reasons)}){after}.{glass} "
                    f"Every card fed so far is stored. Take that card out of the output tray and set it aside for a person; "
                    f"do not feed any stored card again. Leave the cards not yet fed in the feeder and run: {resume}")
        if self.error is not None:
            kept = f"pages up to {self.batch}/{self.last_seq:05d} are kept" if self.last_seq else "no page was scanned"
            return f"{self.error}. {kept}; fix the scanner, put back the cards not yet fed, and run: {resume}"
        return None


def card_line(label: str, card: InterpretedCard, flagged: bool, done: int, started: float, names: Names | None = None) -> str:
    """One line per card: where it is, what it is, whether a person must look, the pace."""
    rate = done / max(time.monotonic() - started, 1e-6) * 60.0
    if card.source.page_count > 1:
        label = f"{label} p{card.source.page_index}"
    return f"{label}  {describe_card(card, names)}{'  -> NEEDS A PERSON' if flagged else ''}   [{done} card(s), {rate:.1f}/min]"


def describe_card(card: InterpretedCard, names: Names | None = None) -> str:
    """One card in a few words: its style, page and precinct, or why it could not be read, and
    what a person must look at (precinct names and reasons in words when ``names`` is given)."""
    def precinct(pid: str | None) -> str:
        return names.precinct(pid) if names is not None else (pid or "?")

    def reasons(codes: tuple[Reason, ...]) -> str:
        shown = [reason_label(x.value) if names is not None else x.value for x in codes]
        return f"  ({', '.join(shown)})" if shown else ""

    r = card.interpretation
    if isinstance(r, UnreadableCard) and r.reason in NOTHING_TO_DECIDE:
        return r.detail if names is not None else f"{r.reason.value}: {r.detail}"
    if isinstance(r, UnreadableCard):
        return f"unreadable ({reason_label(r.reason.value) if names is not None else r.reason.value}): {r.detail}"
    if isinstance(r, ReadCard):
        return f"style {r.style} page {r.page} {'' if names is not None else 'precinct '}{precinct(r.precinct)}{reasons(r.reasons)}"
    assert isinstance(r, MachinePrintedCard)
    return f"machine-printed record, style {r.record.style} {'' if names is not None else 'precinct '}{precinct(r.record.precinct)}{reasons(r.reasons)}"


def card_reasons(card: InterpretedCard) -> tuple[str, ...]:
    r = card.interpretation
    if isinstance(r, UnreadableCard):
        return (r.reason.value,)
    reasons = tuple(x.value for x in r.reasons)
    pending = tuple(f"pending:{c.contest}" for c in r.contests if c.outcome.value == "pending")
    return reasons + pending or ("needs review",)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# --------------------------------------------------------------------------------------
# Scanning


@dataclass
class _Run:
    """What one scan_batch call shares between its steps."""

    store: Store
    context: Any  # scanpipe.interpret.InterpretContext
    hints: CardHints
    batch: str
    manifest: Manifest
    summary: ScanSummary
    on_line: LineSink
    started: float
    cards_seen: int = 0
    counted: set[int] = field(default_factory=set)  # pages whose cards this run's summary counts
    marks: ReadingMarks | None = None  # where the page being read is noted (a crash reading it ends the scan)


def scan_batch(store: Store, source: PageSource, *, batch: str, out_dir: Path, stop_on_flag: bool = False,
               resume: bool = False, on_line: LineSink | None = None, hints: CardHints | None = None) -> ScanSummary:
    """Scan a stack into ``batch``: every page written, hashed, manifested, interpreted, stored.

    Raises SourceError when the command cannot start (the batch folder already holds pages
    and ``resume`` is false; the device cannot be opened). A device that fails mid-batch
    ends the run with ``summary.error`` set; nothing already delivered is lost.
    """
    from scanpipe.workflow import interpret_context

    folder = (out_dir / batch).resolve()
    manifest = Manifest(folder)
    if (manifest.entries or _page_files(folder)) and not resume:
        raise SourceError(f"{folder}: batch {batch} already holds {max(len(manifest.entries), len(_page_files(folder)))} "
                          "scanned page(s); add --resume to carry on with it, or scan into another --batch")
    hints = hints or CardHints()
    record = store.ensure_batch(batch, style=hints.style, precinct=hints.precinct, kind=hints.kind)
    hints = CardHints(style=hints.style or record.style, precinct=hints.precinct or record.precinct, kind=hints.kind or record.kind)
    context = interpret_context(store)
    _check_hints(context.election, hints)
    summary = ScanSummary(batch, folder, device=source.name)
    run = _Run(store, context, hints, batch, manifest, summary, on_line or (lambda line: None), time.monotonic(),
               marks=ReadingMarks.default(store.safe_url))
    store.log_event("scan_started", {"batch": batch, "device": source.name, "folder": str(folder), "resume": resume})
    try:
        if resume:
            _recover(run)
        with source:  # a device that cannot be opened raises here: the command cannot run
            folder.mkdir(parents=True, exist_ok=True)
            try:
                _feed(run, source, stop_on_flag, duplex=bool(getattr(getattr(source, "settings", None), "duplex", False)))
            except AcquisitionError as e:
                summary.error = e
    finally:
        if run.marks is not None:  # the scan ended without its process dying: no page is left noted
            run.marks.done()
    summary.seconds = time.monotonic() - run.started
    store.log_event("scan_finished", {"batch": batch, "device": source.name, "pages": summary.pages_written,
                                      "stored": summary.cards_stored, "last_seq": summary.last_seq,
                                      "error": str(summary.error) if summary.error else None,
                                      "stopped_on": summary.stopped_on[0] if summary.stopped_on else None})
    return summary


def _feed(run: _Run, source: PageSource, stop_on_flag: bool, *, duplex: bool = False) -> None:
    """Take pages from the device until it ends (or stops after a flagged card). Scanning
    both sides, a front that is only a blank page is judged with its back (delivered next): a
    card fed face down shows its face there, and its blank front is then no one's matter."""
    seq = run.manifest.last_seq
    waiting: tuple[int, tuple[str, ...]] | None = None  # a blank front whose back may show it was fed face down
    for page in source.pages():
        seq += 1
        flagged = _take_page(run, seq, page)
        seq_flagged = seq
        if waiting is not None:  # the back of a blank front (or, a back missing, the next front)
            front = run.store.get_card(run.manifest.entries[waiting[0]].sha256)
            if page.side != "back" or (front is not None and needs_person(front.card)):  # not this card's blank back
                flagged, seq_flagged = waiting[1] + tuple(r for r in flagged if r not in waiting[1]), waiting[0]
            waiting = None
        if run.summary.stopped_on is not None:
            run.summary.fed_after_stop += 1
        elif flagged and stop_on_flag and duplex and page.side == "front" and seq_flagged == seq and flagged == (Reason.BLANK_PAGE.value,):
            waiting = (seq, flagged)  # decided with the back side, which the scanner delivers next
        elif flagged and stop_on_flag:
            entry = run.manifest.entries[seq_flagged]
            run.summary.stopped_on = (seq_flagged, entry.file, flagged)
            stored = run.store.get_card(entry.sha256)
            run.summary.stopped_for_streak = stored is not None and not needs_person(stored.card)  # read, the glass streaked
            source.stop()


def _take_page(run: _Run, seq: int, page: AcquiredPage) -> tuple[str, ...]:
    """Write, manifest, interpret and store one page; the reasons it needs a person."""
    name = f"{seq:05d}{page.extension}"
    path = run.manifest.folder / name
    write_durably(path, page.image_bytes)
    entry = ManifestEntry(seq, name, hashlib.sha256(page.image_bytes).hexdigest(), "written", page.side)
    run.manifest.append(entry, device=run.summary.device)
    s = run.summary
    s.pages_written += 1
    s.first_seq = seq if s.first_seq is None else s.first_seq
    s.last_seq = seq
    return _store_page(run, entry)


def _store_page(run: _Run, entry: ManifestEntry, *, apart: bool = False) -> tuple[str, ...]:
    """Interpret and store one written page; the reasons it needs a person. The page is noted
    while it is read (:class:`~scanpipe.pipeline.ReadingMarks`): a crash in a native library
    ends the scan with no exception to catch, and ``--resume`` then reads that page ``apart``,
    in a process of its own, keeping it for a person (``internal_error``) if it ends that one too."""
    path = run.manifest.folder / entry.file
    known = frozenset(run.store.known_sha256([entry.sha256]))
    if apart:
        result = read_apart(str(path), run.context, run.hints, run.batch, known)
    else:
        if run.marks is not None:
            run.marks.reading(os.path.abspath(path))
        result = interpret_path(str(path), run.context, run.hints, run.batch, known)
    if result.error is not None:
        raise SourceError(f"{path}: {result.error}")
    if result.sha256 != entry.sha256:
        raise SourceError(f"{path}: its bytes changed after it was written (SHA-256 {result.sha256}, "
                          f"manifest {entry.sha256}); it is left as it is for someone to look at")
    if entry.side == "back":
        result = replace(result, cards=tuple(_as_back(run, entry, card) for card in result.cards))
    stored = run.store.save_cards(result.cards) if result.cards else 0
    if entry.side == "back" and len(result.cards) == 1:
        told = _sheet_style(run, entry)
        result = replace(result, cards=tuple(told.get(card.source.card_id, card) for card in result.cards))
        _front_as_back(run, entry)
    s = run.summary
    s.cards_stored += stored
    s.cards_already += len(result.cards) - stored
    reasons: tuple[str, ...] = ()
    label = f"{run.batch}/{entry.seq:05d}"
    for card in result.cards:
        run.cards_seen += 1
        flagged = needs_person(card)
        s.needs_person += flagged
        s.streaked += streaked(card)
        if flagged or streaked(card):  # a streak stops the feed too (--stop-on-flag): every card after it would carry it
            reasons += tuple(r for r in card_reasons(card) if r not in reasons)
        if isinstance(card.interpretation, UnreadableCard) and card.interpretation.reason in NOTHING_TO_DECIDE:
            s.blank_backs += 1
        elif isinstance(card.interpretation, UnreadableCard):
            s.unreadable[card.interpretation.reason.value] += 1
        run.on_line(card_line(label, card, flagged, run.cards_seen, run.started, Names(run.context.election)))
    run.counted.add(entry.seq)
    if result.already_stored:
        run.on_line(f"{label}  already stored (the same image as a card stored before): counted once")
    run.manifest.append(ManifestEntry(entry.seq, entry.file, entry.sha256, "stored", entry.side),
                        cards=len(result.cards), stored=stored, needs_person=bool(reasons))
    return reasons


def _as_back(run: _Run, entry: ManifestEntry, card: InterpretedCard) -> InterpretedCard:
    """The back side of a duplex scan, told a one-sided card's blank back where it is one
    (:func:`scanpipe.interpret.blank_back`): its front is the page scanned just before it."""
    from scanpipe.interpret import blank_back

    front_entry = run.manifest.entries.get(entry.seq - 1)
    if front_entry is None or front_entry.side != "front" or not isinstance(card.interpretation, UnreadableCard):
        return card
    front = run.store.get_card(front_entry.sha256)  # a one-page file's card id is its SHA-256
    return card if front is None else blank_back(front.card, card, run.context.election)


def _sheet_style(run: _Run, entry: ManifestEntry) -> dict[str, InterpretedCard]:
    """The two sides of a duplex-scanned sheet read as one style
    (:func:`scanpipe.workflow.tell_sheet_style`), once its back (``entry``) is stored: a side
    too close to call read as the style of its other side, two sides of two styles both held.
    The front, counted when it was stored, is counted as told now; the back (not yet counted)
    is returned as told, by card id."""
    from scanpipe.workflow import tell_sheet_style

    front_entry = run.manifest.entries.get(entry.seq - 1)
    if front_entry is None or front_entry.side != "front":
        return {}
    told: dict[str, InterpretedCard] = {}
    for old, new in tell_sheet_style(run.store, run.context, front_entry.sha256, entry.sha256, hints=run.hints, actor="scan"):
        if new.source.sha256 == entry.sha256:
            told[new.source.card_id] = new
            continue
        if front_entry.seq in run.counted:
            s = run.summary
            person, unreadable, blank_backs = retold_counts(old, new)
            s.needs_person += person
            s.unreadable += unreadable  # (a Counter's += drops the counts that fall to nothing)
            s.blank_backs += blank_backs
            s.streaked += streaked(new) - streaked(old)
        run.on_line(card_line(f"{run.batch}/{front_entry.seq:05d}", new, needs_person(new), run.cards_seen, run.started,
                              Names(run.context.election)) + "  (told with its sheet's other side)")
    return told


def _front_as_back(run: _Run, entry: ManifestEntry) -> None:
    """A card fed face down through a duplex scanner: the side scanned as the front is the
    card's blank back, stored before its face was read. Once the face (this back side) reads
    as a one-sided card, that stored front is told a blank back too (reinterpreted, logged)."""
    from scanpipe.workflow import tell_sheet_blank_backs

    front_entry = run.manifest.entries.get(entry.seq - 1)
    if front_entry is None or front_entry.side != "front":
        return
    for told in tell_sheet_blank_backs(run.store, run.context.election, front_entry.sha256, entry.sha256, actor="scan"):
        s = run.summary
        s.blank_backs += 1
        if front_entry.seq in run.counted:  # counted as a blank page for a person by this run: no longer
            s.needs_person -= 1
            s.unreadable[Reason.BLANK_PAGE.value] -= 1
            s.unreadable += Counter()  # drop a count that fell to nothing
        run.on_line(f"{run.batch}/{front_entry.seq:05d}  {told.interpretation.detail} (the card was fed face down)")  # type: ignore[union-attr]


def _recover(run: _Run) -> None:
    """--resume: adopt page files missing from the manifest, drop half-written ones, and
    store every page not (or no longer) in the database, in sequence order."""
    folder, manifest = run.manifest.folder, run.manifest
    for part in sorted(folder.glob("*.part")) if folder.is_dir() else []:
        part.unlink()
        run.summary.discarded.append(part.name)
    for seq, path in _page_files(folder).items():
        if seq not in manifest.entries:
            manifest.append(ManifestEntry(seq, path.name, hashlib.sha256(path.read_bytes()).hexdigest(), "written"),
                            recovered=True)
    stored_shas = {e.sha256 for e in manifest.entries.values() if e.state == "stored"}
    in_db = run.store.known_sha256(stored_shas) if stored_shas else set()
    pending = [e for _, e in sorted(manifest.entries.items()) if e.state != "stored" or e.sha256 not in in_db]
    # a page a scan that died was reading when it ended (a crash in a native library): read apart
    dead = set(run.marks.left_by_the_dead({os.path.abspath(folder / e.file) for e in pending})) if run.marks is not None else set()
    for entry in pending:
        if not (folder / entry.file).is_file():
            raise SourceError(f"{folder / entry.file}: listed in {MANIFEST} but missing; the batch cannot be resumed "
                              "until it is put back (or the batch is voided and scanned again)")
        apart = os.path.abspath(folder / entry.file) in dead
        if apart:
            run.on_line(f"{run.batch}/{entry.seq:05d}  the scan ended while reading this page: reading it in a process of its own")
        _store_page(run, entry, apart=apart)
        run.summary.recovered += 1


def _page_files(folder: Path) -> dict[int, Path]:
    if not folder.is_dir():
        return {}
    found = {}
    for f in folder.iterdir():
        m = PAGE_NAME.match(f.name)
        if m is not None and f.is_file():
            found[int(m.group(1))] = f
    return dict(sorted(found.items()))


def _check_hints(election: Any, hints: CardHints) -> None:
    if hints.style is not None and not election.has_style(hints.style):
        raise ConfigError(f"--style {hints.style}: election '{election.id}' has no such ballot style")
    if hints.precinct is not None and not election.has_precinct(hints.precinct):
        raise ConfigError(f"--precinct {hints.precinct}: election '{election.id}' has no such precinct")


def default_batch_name(now: datetime | None = None) -> str:
    return "scan-" + (now or datetime.now()).strftime("%Y%m%d-%H%M%S")


def iter_manifest(folder: Path) -> Iterable[ManifestEntry]:
    """The batch's pages in sequence order, as the manifest last recorded them."""
    return (e for _, e in sorted(Manifest(folder).entries.items()))
