"""Store methods of §12-108 as the statute reads: the new duplicate's paper and its life,
the board's rulings on orphans and conflicts, and its sign-offs of matched pairs.

A mixin of :class:`scanpipe.store.repository.Store`; every method is one transaction, and
every change is logged in that same transaction.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, update

from scanpipe.errors import DecisionError
from scanpipe.reconcile.pairing import PairStatus
from scanpipe.reconcile.rulings import BoardRuling, PageRuling, RulingKind
from scanpipe.store import ledger
from scanpipe.store.database import Database
from scanpipe.store.models import new_duplicate_table, utcnow
from scanpipe.store.models_statute import (
    board_ruling_table,
    card_ruling_table,
    new_duplicate_page_table,
    pair_signoff_serial_table,
    pair_signoff_table,
)
from scanpipe.store.transaction import close_proposal, insert_event


@dataclass(frozen=True, slots=True)
class Examination:
    """The board's sign-off of one matched pair: who examined it, and which cards."""

    signoff: int
    serial: str
    cards: tuple[str, ...]
    members: Mapping[str, str]
    actor: str
    rule_set: str
    at: datetime

    @property
    def ayes(self) -> tuple[str, ...]:
        return tuple(sorted(m for m, v in self.members.items() if v == "for"))


def _ruling(r: Any) -> BoardRuling:
    return BoardRuling(r.id, r.serial, PairStatus(r.matter), RulingKind(r.ruling), r.card_id, tuple(r.cards), dict(r.members), r.rule_set,
                       r.note)


class StatuteMixin(Database):
    """The paper of new duplicates, board rulings and sign-offs."""

    # the new duplicate's paper

    def set_new_duplicate_pages(self, serial: str, pages: Sequence[bytes], *, dpi: int) -> str:
        """Store the rendered pages (PNG) of a new duplicate, replacing earlier ones; returns page 1's SHA-256."""
        now = utcnow()
        t = new_duplicate_page_table
        shas = [hashlib.sha256(p).hexdigest() for p in pages]
        with self._write() as conn:
            ledger.before(conn, "new_duplicate", [serial])  # its pages are part of its row digest
            conn.execute(delete(t).where(t.c.serial == serial))
            conn.execute(t.insert(), [{"serial": serial, "page": i, "png": p, "sha256": sha, "dpi": dpi, "rendered_at": now}
                                      for i, (p, sha) in enumerate(zip(pages, shas, strict=True), start=1)])
            conn.execute(update(new_duplicate_table).where(new_duplicate_table.c.serial == serial)
                         .values(image_sha256=shas[0]))
            insert_event(conn, "new_duplicate_rendered", {"serial": serial, "pages": len(pages), "sha256": shas}, None, now)
        return shas[0]

    def new_duplicate_pages(self, serial: str) -> list[tuple[bytes, int]]:
        """The rendered pages of a new duplicate, in page order: ``(png, dpi)``."""
        t = new_duplicate_page_table
        with self._read() as conn:
            return [(bytes(r.png), int(r.dpi)) for r in conn.execute(select(t.c.png, t.c.dpi).where(t.c.serial == serial).order_by(t.c.page))]

    def mark_new_duplicate_printed(self, serial: str, *, by: str) -> None:
        """Record that the new duplicate's paper was printed (again: the latest print is kept; each is logged)."""
        now = utcnow()
        with self._write() as conn:
            ledger.before(conn, "new_duplicate", [serial])
            conn.execute(update(new_duplicate_table).where(new_duplicate_table.c.serial == serial).values(printed_at=now, printed_by=by))
            insert_event(conn, "new_duplicate_printed", {"serial": serial}, by, now)

    def set_new_duplicate_scan_problem(self, serial: str, problem: str | None) -> None:
        """Why the scanned printed new duplicate was not accepted (None: nothing wrong)."""
        with self._write() as conn:
            old = conn.execute(select(new_duplicate_table.c.scan_problem).where(new_duplicate_table.c.serial == serial)).scalar()
            if old == problem:
                return
            ledger.before(conn, "new_duplicate", [serial])
            conn.execute(update(new_duplicate_table).where(new_duplicate_table.c.serial == serial).values(scan_problem=problem))
            if problem is not None:
                insert_event(conn, "new_duplicate_scan_problem", {"serial": serial, "problem": problem}, None, utcnow())

    def mark_new_duplicate_stored(self, serial: str, *, by: str, where: str) -> None:
        """Record that the printed new duplicate is stored with its original (§12-108(c)(2))."""
        now = utcnow()
        t = new_duplicate_table
        with self._write() as conn:
            row = conn.execute(select(t.c.scanned_card_id, t.c.superseded_by, t.c.stored_at).where(t.c.serial == serial).with_for_update()).first()
            if row is None:
                raise DecisionError(f"there is no new duplicate {serial}")
            if row.superseded_by is not None:
                raise DecisionError(f"new duplicate {serial} was superseded by {row.superseded_by}: store that one")
            if row.scanned_card_id is None:
                raise DecisionError(f"new duplicate {serial} has not been scanned back and read as decided yet: "
                                    "print it, ingest the printed card and run `scanpipe reconcile` first")
            if row.stored_at is not None:
                raise DecisionError(f"new duplicate {serial} is already recorded as stored")
            ledger.before(conn, "new_duplicate", [serial])
            conn.execute(update(t).where(t.c.serial == serial).values(stored_at=now, stored_by=by, stored_where=where))
            insert_event(conn, "new_duplicate_stored", {"serial": serial, "where": where}, by, now)

    # board rulings

    def add_board_ruling(self, *, serial: str, matter: PairStatus, ruling: RulingKind, card: str | None, cards: Sequence[str],
                         members: Mapping[str, str], actor: str, rule_set: str, note: str | None,
                         proposal: int | None = None) -> BoardRuling:
        """Record the board's ruling on an orphan or conflict with each member's vote (one transaction, logged);
        ``proposal``: the board proposal whose members' own votes these are, closed in the same transaction."""
        now = utcnow()
        t = board_ruling_table
        with self._write() as conn:
            new_id = conn.execute(t.insert().returning(t.c.id), {
                "serial": serial, "matter": matter.value, "ruling": ruling.value, "card_id": card, "cards": sorted(cards),
                "members": dict(members), "note": note, "actor": actor, "rule_set": rule_set, "created_at": now}).scalar_one()
            ledger.inserted(conn, "board_ruling", [new_id])
            if proposal is not None:
                close_proposal(conn, proposal, members=members, closed_by=actor, recorded_as=f"ruling {new_id}")
            insert_event(conn, "board_ruling", {"serial": serial, "matter": matter.value, "ruling": ruling.value, "card": card,
                                                "members": dict(members), "ruling_id": new_id, "rule_set": rule_set}, actor, now)
            row = conn.execute(select(t).where(t.c.id == new_id)).one()
        return _ruling(row)

    def board_rulings(self, serial: str | None = None) -> dict[str, BoardRuling]:
        """The latest ruling per serial (a later one replaces an earlier one)."""
        t = board_ruling_table
        q = select(t).order_by(t.c.id)
        if serial is not None:
            q = q.where(t.c.serial == serial)
        with self._read() as conn:
            return {r.serial: _ruling(r) for r in conn.execute(q)}

    # the board's rulings on single pages

    def add_page_rulings(self, *, cards: Sequence[str], why: str, members: Mapping[str, str], actor: str, rule_set: str,
                         note: str | None) -> list[PageRuling]:
        """Record the board's ruling that ``cards`` are no ballot cards, with each member's vote:
        one row a page, one transaction and one log entry for the decision."""
        now = utcnow()
        t = card_ruling_table
        with self._write() as conn:
            ids = [conn.execute(t.insert().returning(t.c.id), {
                "card_id": card, "ruling": "not_a_ballot", "why": why, "members": dict(members), "note": note, "actor": actor,
                "rule_set": rule_set, "created_at": now}).scalar_one() for card in cards]
            ledger.inserted(conn, "card_ruling", ids)
            insert_event(conn, "page_ruling", {"cards": list(cards), "ruling": "not_a_ballot", "why": why, "members": dict(members),
                                               "ruling_ids": ids, "rule_set": rule_set}, actor, now)
        return [PageRuling(i, card, why, dict(members), rule_set, actor, note) for i, card in zip(ids, cards, strict=True)]

    def page_rulings(self) -> dict[str, PageRuling]:
        """The board's rulings on single pages, per card (a later one replaces an earlier one)."""
        t = card_ruling_table
        with self._read() as conn:
            return {r.card_id: PageRuling(r.id, r.card_id, r.why, dict(r.members), r.rule_set, r.actor, r.note)
                    for r in conn.execute(select(t).order_by(t.c.id))}

    # the board's sign-off of matched pairs

    def add_pair_signoff(self, cards: Mapping[str, Sequence[str]], *, members: Mapping[str, str], actor: str, rule_set: str,
                         note: str | None, proposal: int | None = None) -> int:
        """One board decision examining a batch of pairs (``serial -> its cards``); logged (``proposal`` as for a ruling)."""
        now = utcnow()
        with self._write() as conn:
            signoff = conn.execute(pair_signoff_table.insert().returning(pair_signoff_table.c.id), {
                "members": dict(members), "note": note, "actor": actor, "rule_set": rule_set, "created_at": now}).scalar_one()
            conn.execute(pair_signoff_serial_table.insert(), [{"signoff_id": signoff, "serial": s, "cards": sorted(c)}
                                                               for s, c in sorted(cards.items())])
            ledger.inserted(conn, "pair_signoff", [signoff])
            if proposal is not None:
                close_proposal(conn, proposal, members=members, closed_by=actor, recorded_as=f"sign-off {signoff}")
            insert_event(conn, "pairs_signed_off", {"signoff": signoff, "serials": sorted(cards), "members": dict(members),
                                                    "rule_set": rule_set}, actor, now)
        return int(signoff)

    def examinations(self, serial: str | None = None) -> dict[str, list[Examination]]:
        """Every sign-off of each serial, oldest first."""
        s, o = pair_signoff_serial_table, pair_signoff_table
        q = select(s.c.signoff_id, s.c.serial, s.c.cards, o.c.members, o.c.actor, o.c.rule_set, o.c.created_at) \
            .join(o, o.c.id == s.c.signoff_id).order_by(s.c.signoff_id)
        if serial is not None:
            q = q.where(s.c.serial == serial)
        out: dict[str, list[Examination]] = defaultdict(list)
        with self._read() as conn:
            for r in conn.execute(q):
                out[r.serial].append(Examination(r.signoff_id, r.serial, tuple(r.cards), dict(r.members), r.actor, r.rule_set, r.created_at))
        return dict(out)
