"""Exports that read the store: the CVR file.

Roles (contract section 6): a regular ballot is ``regular``; a duplicate is ``duplicate`` while
it counts (or waits) and ``superseded`` once a new duplicate replaced it; an original is
``original``; a new duplicate is ``new_duplicate``, with ``UniqueId`` ``nd-<serial>-R<n>`` and,
until its printed card is scanned, the rendered card as its image. The cards of one serial
share ``BallotPrePrintedId`` (the base serial; a new duplicate's is ``<serial>-R<n>``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from scanpipe.counting import final_decisions
from scanpipe.errors import ScanpipeError
from scanpipe.exports.cvr import CvrEntry, build_cvr_report, validate_cvr_report, write_cvr_stream
from scanpipe.exports.images import check_image_files
from scanpipe.store.repository import Store
from scanpipe.types import CardKind, CardSource, InterpretedCard, ReadCard
from scanpipe.workflow import Standing, standing

ROLE = {CardKind.BALLOT: "regular", CardKind.DUPLICATE: "duplicate", CardKind.ORIGINAL: "original", CardKind.UNKNOWN: "regular"}
VALIDATE_UP_TO = 20_000  # cards; above this the report is streamed and checked only by tests


def cvr_entries(store: Store, s: Standing | None = None, *, paper_dir: Path | None = None) -> Iterator[CvrEntry]:
    """One entry per stored card (printed new duplicates attach to their record) and one per new duplicate.

    ``paper_dir``: where a new duplicate's rendered card is written when no file of it exists
    yet (one decided in the review), so its ``BallotImage`` names a file that is there."""
    s = s or standing(store)
    by_id = {c.card_id: c for c in s.counts}
    finals = final_decisions(s.decisions)
    superseded = {cid for p in s.pairs if p.counted == "new" for cid in p.duplicates}
    reprints = {c.source.card_id: c for pairing in s.pairings for c in pairing.reprints}
    set_aside = store.page_rulings()
    for stored in store.iter_cards():
        card = stored.card
        cid = card.source.card_id
        if cid in reprints:
            continue
        count = by_id.get(cid)
        decided = count is not None and any((cid, r.contest) in finals for r in count.contests)
        notes = tuple(d.note for (item, _), d in finals.items() if item == cid and d.note)
        role = "superseded" if cid in superseded else ROLE[card.kind]
        yield CvrEntry(card=card, role=role, preprinted_id=card.label.base_serial if card.label else None,
                       modified=count.contests if decided and count is not None else None,
                       auditors=count.decided_by if count is not None else (), notes=notes,
                       set_aside=set_aside[cid].id if cid in set_aside else None)
    yield from _new_duplicate_entries(store, s, reprints, paper_dir)


def _new_duplicate_entries(store: Store, s: Standing, reprints: dict[str, InterpretedCard], paper_dir: Path | None) -> Iterator[CvrEntry]:
    counted = {c.source.card_id for c in s.cards}
    cards = _Whole(store, counted)  # the templates' targets go into the CVR: load those cards whole
    scanned_by_serial = {c.label.serial: c for c in reprints.values() if c.label is not None}
    for nd in store.new_duplicates():
        base_card = next((cards[c] for c in nd.superseded_cards if c in cards and isinstance(cards[c].interpretation, ReadCard)), None)
        scanned = scanned_by_serial.get(nd.serial) if nd.scanned_card_id else None
        if scanned is not None and scanned.source.card_id in cards:
            scanned = cards[scanned.source.card_id]
        template = scanned or base_card
        if template is None:
            template = next((cards[c] for c in nd.original_cards if c in cards and isinstance(cards[c].interpretation, ReadCard)), None)
        if template is None:
            continue  # nothing to describe its style's targets with (people decided an unread pair)
        image_path = nd.image_path
        if scanned is None and paper_dir is not None and (image_path is None or not Path(image_path).is_file()):
            from scanpipe.reconcile.paper import write_paper_files

            image_path = str(write_paper_files(store, s.election, nd.serial, paper_dir)[0])
            nd = next(n for n in store.new_duplicates(base_serial=nd.base_serial) if n.serial == nd.serial)
        path = scanned.source.path if scanned is not None else (image_path or "")
        sha = scanned.source.sha256 if scanned is not None else (nd.image_sha256 or hashlib.sha256(nd.serial.encode()).hexdigest())
        source = CardSource(f"nd-{nd.serial}", sha, path, 1, 1, template.source.batch)
        card = replace(template, source=source, kind=CardKind.DUPLICATE)
        yield CvrEntry(card=card, role="new_duplicate", preprinted_id=nd.serial, modified=nd.contests,
                       auditors=nd.auditors or ("unrecorded",))


class _Whole:
    """``card id -> card`` loaded whole (with target scores) on first use, for ids in ``known``."""

    def __init__(self, store: Store, known: set[str]) -> None:
        self._store, self._known = store, known
        self._loaded: dict[str, InterpretedCard] = {}

    def __contains__(self, card_id: object) -> bool:
        return card_id in self._known

    def __getitem__(self, card_id: str) -> InterpretedCard:
        if card_id not in self._loaded:
            stored = self._store.get_card(card_id)
            if stored is None:
                raise KeyError(card_id)
            self._loaded[card_id] = stored.card
        return self._loaded[card_id]


def export_cvr_file(store: Store, out: Path, *, validate: bool = True) -> int:
    """Write the NIST SP 1500-103 report; refuse to write one that does not validate, or one
    whose image files changed since they were read (:func:`check_image_files`)."""
    election = store.current_election()
    check_image_files(store, what=f"export cvr {out}")
    s = standing(store)
    now = datetime.now(UTC)
    paper_dir = out.parent / f"{out.stem}-new-duplicates"
    try:
        if validate and len(s.counts) <= VALIDATE_UP_TO:
            entries = list(cvr_entries(store, s, paper_dir=paper_dir))
            report = build_cvr_report(election, entries, generated_at=now)
            errors = validate_cvr_report(report)
            if errors:
                raise ScanpipeError(f"{out}: the CVR report does not validate against NIST SP 1500-103 ({len(errors)} errors), first: {errors[0]}")
            from scanpipe.exports.cvr import write_cvr_report

            write_cvr_report(report, out)
            return len(entries)
        return write_cvr_stream(election, cvr_entries(store, s, paper_dir=paper_dir), out, generated_at=now)
    except OSError as e:
        raise ScanpipeError(f"{out}: cannot be written: {e.strerror or e}") from e
