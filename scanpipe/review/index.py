"""The review index: the queue kept as rows (``review_item``), so pages never count every card.

:func:`refresh_all` rebuilds it from the library's queue (:func:`scanpipe.workflow.queue`,
the one truth) as a batch job after ingest or reconcile; :func:`refresh_item` recomputes the
rows of one card or serial after a decision, with the same pure functions the queue uses
(:func:`~scanpipe.counting.count_card`, :func:`~scanpipe.queue.card_queue_items`,
:func:`~scanpipe.queue.pair_queue_items`). Pages query it with indexes and pagination.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, func, select

from scanpipe.counting import Decision, count_card, final_decisions, open_decisions
from scanpipe.queue import QueueItem, card_queue_items
from scanpipe.store.models import card_table, decision_table, pair_table, utcnow
from scanpipe.store.models_review import review_item_table
from scanpipe.store.repository import Store
from scanpipe.types import Election, Reason

STATE_OF = {Reason.AWAITING_SECOND_AUDITOR.value: "awaiting", Reason.ESCALATED.value: "escalated"}
PAGE_SIZE = 50


@dataclass(frozen=True, slots=True)
class ReviewItem:
    item: str
    reason: str
    kind: str
    precinct: str | None
    batch: str | None
    contests: tuple[str, ...]
    state: str
    first_auditors: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Progress:
    """Contest decisions: final, awaiting a second auditor, escalated, left to start."""

    decided: int
    awaiting: int
    escalated: int
    left: int


def _rows(items: Iterable[QueueItem], batches: dict[str, str], opened: dict[tuple[str, str], Decision]) -> list[dict[str, Any]]:
    now = utcnow()
    out = []
    for i in items:
        state = STATE_OF.get(i.reason, "open")
        firsts = sorted({a for c in i.contests if (d := opened.get((i.item, c))) is not None for a in d.auditors}) if state != "open" else []
        out.append({"item": i.item, "reason": i.reason, "kind": i.kind, "precinct": i.precinct, "batch": batches.get(i.item),
                    "contests": list(i.contests), "units": max(1, len(i.contests)), "state": state,
                    "first_auditors": firsts, "updated_at": now})
    return out


def _decisions(conn: Connection, item: str | None = None) -> list[Decision]:
    from scanpipe.store.transaction import decision_record
    from scanpipe.workflow import to_decision

    q = select(decision_table).order_by(decision_table.c.id)
    if item is not None:
        q = q.where(decision_table.c.item == item)
    return [to_decision(decision_record(r)) for r in conn.execute(q).mappings()]


def _batches(conn: Connection, items: Sequence[QueueItem]) -> dict[str, str]:
    """Item -> batch: a card's own; a serial's first duplicate (else original) card's."""
    card_batch = dict(conn.execute(select(card_table.c.card_id, card_table.c.batch)).all())
    out = {i.item: card_batch[i.item] for i in items if i.kind == "card" and i.item in card_batch}
    for r in conn.execute(select(pair_table.c.serial, pair_table.c.duplicates, pair_table.c.originals)):
        first = next((c for c in (*r.duplicates, *r.originals) if c in card_batch), None)
        if first is not None:
            out[r.serial] = card_batch[first]
    return out


def review_in_use(store: Store) -> bool:
    """Whether anyone has a review account: otherwise the index is built when the app starts."""
    from scanpipe.store.models_review import user_table

    with store._read() as conn:
        return conn.execute(select(user_table.c.username).limit(1)).first() is not None


def refresh_all(store: Store, items: Sequence[QueueItem] | None = None) -> int:
    """Rebuild the whole index from the library's queue (``items`` when the caller has it
    already); returns the number of rows."""
    from scanpipe.workflow import queue

    items = queue(store) if items is None else list(items)
    items = [i for i in items if i.kind != "file"]  # a file not read is the operator's to fix, not an auditor's to decide
    with store._write() as conn:
        rows = _rows(items, _batches(conn, items), open_decisions(_decisions(conn)))
        conn.execute(delete(review_item_table))
        if rows:
            conn.execute(review_item_table.insert(), rows)
    return len(rows)


def items_of_card(store: Store, election: Election, card_id: str) -> list[QueueItem]:
    """The queue items of one card not decided through a pair (the queue's own functions)."""
    stored = store.get_card(card_id)
    if stored is None:
        return []
    with store._read() as conn:
        decisions = _decisions(conn, card_id)
        paired = any(card_id in (*r.duplicates, *r.originals) for r in conn.execute(select(pair_table.c.duplicates, pair_table.c.originals)
                     .where(pair_table.c.serial == (stored.card.label.base_serial if stored.card.label else "")))) 
    if paired:
        return []
    ident = store.identifications().get(card_id, (None, None))
    count = count_card(election, stored.card, final_decisions(decisions), voided=stored.batch_voided, identified=ident)
    if not (count.counts or count.card_pending):
        return []
    return card_queue_items(count, open_decisions(decisions))


def items_of_pair(store: Store, serial: str) -> list[QueueItem]:
    """The queue items of one serial, from its stored reconciliation row."""
    from scanpipe.queue import pair_queue_items
    from scanpipe.reconcile.pairing import PairStatus
    from scanpipe.reconcile.resolve import PairOutcome

    with store._read() as conn:
        r = conn.execute(select(pair_table).where(pair_table.c.serial == serial)).mappings().first()
        decisions = _decisions(conn, serial)
    if r is None:
        return []
    d = r["detail"]
    decided = tuple((c, tuple(v)) for c, v in d.get("decided", {}).items())
    waiting = set(d.get("waiting", r["contests"]))
    listed = tuple(r["contests"]) if r["contests"] else tuple(c for c, _ in decided) + tuple(sorted(waiting))
    outcome = PairOutcome(serial, PairStatus(r["status"]), PairStatus(d.get("base_status", r["status"])), r["precinct"], d.get("style"),
                          tuple(r["duplicates"]), tuple(r["originals"]), listed, None, decided, r["counted"], None,
                          tuple(d.get("auditors", ())), bool(d.get("text_code_disagree", False)))
    return pair_queue_items(outcome, open_decisions(decisions))


def refresh_item(store: Store, election: Election, item: str, kind: str) -> list[ReviewItem]:
    """Recompute the rows of one card or serial (after a decision or an identification)."""
    from scanpipe.recount.scope import scope_items
    from scanpipe.recount.service import active_scope

    items = items_of_pair(store, item) if kind == "pair" else items_of_card(store, election, item)
    items = scope_items(items, active_scope(store))  # an open recount case asks about its scope only
    with store._write() as conn:
        rows = _rows(items, _batches_of(conn, item, kind), open_decisions(_decisions(conn, item)))
        conn.execute(delete(review_item_table).where(review_item_table.c.item == item))
        if rows:
            conn.execute(review_item_table.insert(), rows)
    return [_item(r) for r in rows]


def _batches_of(conn: Connection, item: str, kind: str) -> dict[str, str]:
    if kind == "card":
        b = conn.execute(select(card_table.c.batch).where(card_table.c.card_id == item)).scalar()
        return {item: b} if b is not None else {}
    r = conn.execute(select(pair_table.c.duplicates, pair_table.c.originals).where(pair_table.c.serial == item)).first()
    for cid in (*r.duplicates, *r.originals) if r is not None else ():
        b = conn.execute(select(card_table.c.batch).where(card_table.c.card_id == cid)).scalar()
        if b is not None:
            return {item: b}
    return {}


def _item(r: Any) -> ReviewItem:
    return ReviewItem(r["item"], r["reason"], r["kind"], r["precinct"], r["batch"], tuple(r["contests"]), r["state"],
                      tuple(r["first_auditors"]))


# --------------------------------------------------------------------------------------
# queries of the pages


@dataclass(frozen=True, slots=True)
class Filters:
    precinct: str | None = None
    batch: str | None = None
    reason: str | None = None
    state: str | None = None


def page_of_items(store: Store, filters: Filters, *, page: int = 1, size: int = PAGE_SIZE) -> tuple[list[ReviewItem], int]:
    """One page of the index, ordered by precinct then item, and the total matching."""
    t = review_item_table
    conds = [col == val for col, val in ((t.c.precinct, filters.precinct), (t.c.batch, filters.batch),
                                           (t.c.reason, filters.reason), (t.c.state, filters.state)) if val]
    q = select(t).where(*conds).order_by(t.c.precinct, t.c.item, t.c.reason).limit(size).offset((max(page, 1) - 1) * size)
    with store._read() as conn:
        rows = conn.execute(q).mappings().all()
        total = conn.execute(select(func.count()).select_from(t).where(*conds)).scalar_one()
    return [_item(r) for r in rows], int(total)


def next_item(store: Store, after: str, *, me: str | None = None) -> ReviewItem | None:
    """The next item (by id, wrapping round) still waiting for an auditor; with ``me``, one
    that auditor may decide (not one waiting only for someone else's second half of their own)."""
    t = review_item_table
    q = select(t).where(t.c.state.in_(("open", "awaiting")), t.c.item != after)
    with store._read() as conn:
        for cond in (t.c.item > after, t.c.item <= after):
            offset = 0
            while True:
                rows = conn.execute(q.where(cond).order_by(t.c.item, t.c.reason).limit(100).offset(offset)).mappings().all()
                for r in rows:
                    item = _item(r)
                    if me is None or item.state == "open" or me not in item.first_auditors:
                        return item
                if len(rows) < 100:
                    break
                offset += 100
    return None


def rows_of(store: Store, item: str) -> list[ReviewItem]:
    t = review_item_table
    with store._read() as conn:
        return [_item(r) for r in conn.execute(select(t).where(t.c.item == item).order_by(t.c.reason)).mappings()]


def progress(store: Store) -> Progress:
    t = review_item_table
    with store._read() as conn:
        units = dict(conn.execute(select(t.c.state, func.sum(t.c.units)).group_by(t.c.state)).all())
        decided = conn.execute(select(func.count()).select_from(decision_table).where(decision_table.c.state == "final")).scalar_one()
    return Progress(int(decided), int(units.get("awaiting") or 0), int(units.get("escalated") or 0), int(units.get("open") or 0))


def filter_choices(store: Store) -> dict[str, list[str]]:
    """The distinct precincts, batches and reasons in the index (for the filter menus)."""
    t = review_item_table
    out = {}
    with store._read() as conn:
        for name, col in (("precinct", t.c.precinct), ("batch", t.c.batch), ("reason", t.c.reason)):
            out[name] = [v for v in conn.execute(select(col).where(col.is_not(None)).distinct().order_by(col)).scalars()]
    return out
