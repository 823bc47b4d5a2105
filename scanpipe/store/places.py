"""Store methods for what people see: where a card is in the paper, finding a card the way
people name it, and the write-in names auditors recorded.

A mixin of :class:`scanpipe.store.repository.Store`; every method is one read transaction.
A card's place is its batch, the sheet's position in the batch and its file
(:class:`scanpipe.names.CardPlace`). The position is the file's rank among the batch's files
in path order: the order ``ingest`` reads them (and, for a scanner's numbered files, the
order they were fed), so ``B01 #57`` is the 57th sheet of batch B01.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sqlalchemy import func, select

from scanpipe.errors import DecisionError
from scanpipe.names import CardPlace, file_name
from scanpipe.store.database import Database
from scanpipe.store.models import card_table
from scanpipe.store.models_statute import card_ruling_table
from scanpipe.store.models_view import write_in_table
from scanpipe.types import NOTHING_TO_DECIDE

IN_CHUNK = 500
PLACE_REF = re.compile(r"(?P<batch>.+)#(?P<seq>[0-9]{1,7})(?:/p(?P<page>[0-9]{1,5}))?")
HEX_PREFIX = re.compile(r"[0-9a-f]{4,64}(-p[0-9]{1,5})?")


class ViewMixin(Database):
    """Card places, card references (id, unique id prefix, ``BATCH#SEQ``), write-in names."""

    def card_places(self, card_ids: Iterable[str] | None = None) -> dict[str, CardPlace]:
        """``card id -> place`` for these cards (every card when None). Ids that are not
        stored cards (a new duplicate's ``nd-...``) are left out."""
        t = card_table
        wanted = None if card_ids is None else sorted({c for c in card_ids if not c.startswith("nd-")})
        with self._read() as conn:
            if wanted is None:
                rows = conn.execute(select(t.c.card_id, t.c.batch, t.c.path, t.c.page_index, t.c.page_count)).all()
            else:
                rows = []
                for i in range(0, len(wanted), IN_CHUNK):
                    chunk = wanted[i:i + IN_CHUNK]
                    rows += conn.execute(select(t.c.card_id, t.c.batch, t.c.path, t.c.page_index, t.c.page_count)
                                         .where(t.c.card_id.in_(chunk))).all()
            batches = sorted({r.batch for r in rows})
            rank: dict[tuple[str, str], int] = {}
            for batch in batches:
                paths = conn.execute(select(t.c.path).where(t.c.batch == batch).distinct().order_by(t.c.path)).scalars()
                rank.update({(batch, p): n for n, p in enumerate(paths, start=1)})
        return {r.card_id: CardPlace(r.card_id, r.batch, rank[(r.batch, r.path)], file_name(r.path), r.page_index, r.page_count)
                for r in rows}

    def card_status_counts(self) -> dict[str, int]:
        """``status -> cards`` (read, machine_printed, unreadable), and apart from these:
        ``set_aside``, the pages the board ruled are no ballot cards, and ``blank_back``, the
        blank backs of one-sided cards (both kept, with nothing to decide)."""
        quiet = {r.value for r in NOTHING_TO_DECIDE}
        ruled = select(card_ruling_table.c.card_id).distinct().subquery()
        q = (select(card_table.c.status, card_table.c.reason, ruled.c.card_id.is_not(None), func.count())
             .select_from(card_table.outerjoin(ruled, ruled.c.card_id == card_table.c.card_id))
             .group_by(card_table.c.status, card_table.c.reason, ruled.c.card_id.is_not(None)))
        out: dict[str, int] = {}
        with self._read() as conn:
            for status, reason, set_aside, n in conn.execute(q):
                key = "set_aside" if set_aside else "blank_back" if reason in quiet else status
                out[key] = out.get(key, 0) + int(n)
        return out

    def card_place(self, card_id: str) -> CardPlace | None:
        return self.card_places([card_id]).get(card_id)

    def card_id_for(self, ref: str) -> str | None:
        """The card a person named: its id, the path it was ingested from, ``BATCH#SEQ``
        (``BATCH#SEQ/pN`` for a page of a multi-page file) or a unique prefix of its id
        (at least 4 hex digits). None when nothing matches; DecisionError when a prefix or
        place names more than one card."""
        t = card_table
        with self._read() as conn:
            found = conn.execute(select(t.c.card_id).where((t.c.card_id == ref) | ((t.c.path == ref) & (t.c.page_index == 1)))).scalars().first()
            if found is not None:
                return str(found)
            place = PLACE_REF.fullmatch(ref)
            if place is not None:
                return self._card_at(conn, place["batch"], int(place["seq"]), int(place["page"] or 0))
            if not HEX_PREFIX.fullmatch(ref):
                return None
            matches = conn.execute(select(t.c.card_id).where(t.c.card_id.startswith(ref, autoescape=True)).order_by(t.c.card_id).limit(6)).scalars().all()
        if len(matches) > 1:
            shown = ", ".join(m[:12] for m in matches[:5])
            raise DecisionError(f"{ref}: more than one card id starts with this ({shown}{', ...' if len(matches) > 5 else ''}); give more digits")
        return str(matches[0]) if matches else None

    def _card_at(self, conn: object, batch: str, seq: int, page: int) -> str | None:
        t = card_table
        paths = conn.execute(select(t.c.path).where(t.c.batch == batch).distinct().order_by(t.c.path)  # type: ignore[attr-defined]
                             .offset(max(seq - 1, 0)).limit(1)).scalars().all() if seq >= 1 else []
        if not paths:
            n = conn.execute(select(func.count(t.c.path.distinct())).where(t.c.batch == batch)).scalar_one()  # type: ignore[attr-defined]
            if n == 0:
                raise DecisionError(f"{batch}#{seq}: there is no batch {batch!r} holding cards")
            raise DecisionError(f"{batch}#{seq}: batch {batch} has {n} sheet(s)")
        pages = conn.execute(select(t.c.card_id, t.c.page_index).where(t.c.batch == batch, t.c.path == paths[0])  # type: ignore[attr-defined]
                             .order_by(t.c.page_index)).all()
        if page:
            chosen = [r.card_id for r in pages if r.page_index == page]
            if not chosen:
                raise DecisionError(f"{batch}#{seq}/p{page}: that sheet's file has {len(pages)} page(s)")
            return str(chosen[0])
        if len(pages) > 1:
            raise DecisionError(f"{batch}#{seq}: that sheet's file has {len(pages)} pages; name one as {batch}#{seq}/p1 .. /p{len(pages)}")
        return str(pages[0].card_id)

    def write_in_names(self, decision_ids: Iterable[int] | None = None) -> dict[int, dict[str, str]]:
        """``decision id -> {write-in option id: name as read}`` (every decision when None)."""
        t = write_in_table
        q = select(t.c.decision_id, t.c.option, t.c.name)
        wanted = None if decision_ids is None else sorted(set(decision_ids))
        out: dict[int, dict[str, str]] = {}
        with self._read() as conn:
            chunks = [None] if wanted is None else [wanted[i:i + IN_CHUNK] for i in range(0, len(wanted), IN_CHUNK)]
            for chunk in chunks:
                for r in conn.execute(q if chunk is None else q.where(t.c.decision_id.in_(chunk))):
                    out.setdefault(int(r.decision_id), {})[str(r.option)] = str(r.name)
        return out
