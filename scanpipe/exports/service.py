"""Exports that read the store: the CVR file."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from scanpipe.counting import final_decisions
from scanpipe.errors import ScanpipeError
from scanpipe.exports.cvr import CvrEntry, build_cvr_report, validate_cvr_report
from scanpipe.store.repository import Store
from scanpipe.types import CardKind
from scanpipe.workflow import standing

ROLE = {CardKind.BALLOT: "regular", CardKind.DUPLICATE: "duplicate", CardKind.ORIGINAL: "original", CardKind.UNKNOWN: "regular"}


def cvr_entries(store: Store) -> list[CvrEntry]:
    """One entry per stored card, with the adjudicated snapshot where people decided."""
    s = standing(store)
    by_id = {c.card_id: c for c in s.counts}
    finals = final_decisions(s.decisions)
    entries = []
    for stored in store.iter_cards():
        card = stored.card
        count = by_id[card.source.card_id]
        decided = any((card.source.card_id, r.contest) in finals for r in count.contests)
        notes = tuple(d.note for (item, _), d in finals.items() if item == card.source.card_id and d.note)
        entries.append(CvrEntry(
            card=card, role=ROLE[card.kind], preprinted_id=card.label.base_serial if card.label else None,
            modified=count.contests if decided else None, auditors=count.decided_by, notes=notes,
        ))
    return entries


def export_cvr_file(store: Store, out: Path, *, validate: bool = True) -> int:
    """Write the NIST SP 1500-103 report; refuse to write one that does not validate."""
    election = store.current_election()
    entries = cvr_entries(store)
    report = build_cvr_report(election, entries, generated_at=datetime.now(UTC))
    if validate:
        errors = validate_cvr_report(report)
        if errors:
            raise ScanpipeError(f"{out}: the CVR report does not validate against NIST SP 1500-103 ({len(errors)} errors), first: {errors[0]}")
    tmp = out.with_name(out.name + ".part")
    try:
        tmp.write_text(json.dumps(report, indent=1), encoding="utf-8")
        tmp.replace(out)
    except OSError as e:
        raise ScanpipeError(f"{out}: cannot be written: {e.strerror or e}") from e
    return len(entries)
