"""``scanpipe audit verify``: the log, the data it covers, and the tally they give.

1. The hash chain (:func:`scanpipe.audit.verify_chain`): every entry edited, inserted,
   deleted, moved, or written without a hash is named; with ``--head`` the chain must still
   contain a head hash written down earlier.
2. The rows (:mod:`scanpipe.store.ledger`): replaying the log gives the digest every covered
   row must have now; every row edited, inserted or deleted outside the log is named.
3. The tally: recomputed from verified data only (the store with every row named in 2 left
   out) and compared with the tally of the store as it is, contest by contest; and compared
   with the last tally the log recorded (``tally`` logs each it prints) when nothing that can
   change a count was logged since.
4. The pairs: recomputed from verified data and compared with the stored ``pair`` rows
   (derived data, which ``export pairs`` and the report read); a difference right after an
   ingest only means ``reconcile`` has not run since, so it is a note, not a failure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Connection, select

from scanpipe.audit import ChainReport, verify_chain
from scanpipe.store import ledger
from scanpipe.store.models import event_table
from scanpipe.store.repository import Store
from scanpipe.tally import TallyRow, tally_csv

COUNTING_TABLES = frozenset(ledger.COVERED) - {"user_account", "pair_signoff"}


@dataclass(frozen=True)
class AuditReport:
    chain: ChainReport
    head_found: bool | None  # None: no --head given
    rows: tuple[ledger.RowProblem, ...]
    tally: tuple[str, ...]  # differences between the verified tally and the store's
    logged_tally: str  # what the comparison with the last logged tally found
    logged_tally_ok: bool
    pair_notes: tuple[str, ...]
    tally_rows: int

    @property
    def ok(self) -> bool:
        return self.chain.ok and self.head_found is not False and not self.rows and not self.tally and self.logged_tally_ok


def _events(conn: Connection, chunk: int = 2000) -> Iterator[Any]:
    t = event_table
    last = -1
    while True:
        batch = conn.execute(select(t.c.id, t.c.action, t.c.detail).where(t.c.id > last).order_by(t.c.id).limit(chunk)).mappings().all()
        yield from batch
        if len(batch) < chunk:
            return
        last = batch[-1]["id"]


def verify_store(store: Store, *, expected_head: str | None = None) -> AuditReport:
    """Check the log, the rows it covers, and the tally they give (see the module docstring)."""
    with store._read() as conn:
        chain = verify_chain(conn)
        head_found = None if expected_head is None else (
            conn.execute(select(event_table.c.id).where(event_table.c.hash == expected_head)).first() is not None)
        expected, replayed = ledger.replay(_events(conn))
        problems = replayed + ledger.check_rows(expected, ledger.stored_digests(conn))
        last_tally, changed_since = _last_tally(_events(conn))
    bad: dict[str, set[str]] = {}
    for p in problems:
        bad.setdefault(p.table, set()).add(p.key)
    if not store.elections():
        return AuditReport(chain, head_found, tuple(problems), (), "no election is loaded: nothing to tally", True, (), 0)
    if "election" in bad:
        return AuditReport(chain, head_found, tuple(problems), ("the election definition was changed outside the log: "
                                                                 "no tally can be recomputed from verified data",),
                           "", True, (), 0)
    from scanpipe.workflow import standing

    verified = standing(cast(Store, VerifiedView(store, bad)))
    verified_rows = _tally(verified)
    differences: list[str] = []
    if bad:
        differences = _tally_differences(verified_rows, _tally(standing(store)))
    logged, logged_ok = _compare_logged(verified_rows, last_tally, changed_since)
    notes = _pair_notes(store, verified)
    return AuditReport(chain, head_found, tuple(problems), tuple(differences), logged, logged_ok, tuple(notes), len(verified_rows))


def _tally(s: Any) -> list[TallyRow]:
    from scanpipe.tally import tally_precincts

    return tally_precincts(s.election, s.counts)


def tally_digest(rows: Iterable[TallyRow]) -> str:
    """The SHA-256 of the tally CSV: what ``tally`` logs and ``audit verify`` recomputes."""
    return hashlib.sha256(tally_csv(rows).encode("utf-8")).hexdigest()


def _last_tally(entries: Iterable[Mapping[str, Any]]) -> tuple[Mapping[str, Any] | None, int]:
    """The last ``tally`` entry and how many entries that may change a count came after it."""
    last: Mapping[str, Any] | None = None
    since = 0
    for e in entries:
        detail = e["detail"] or {}
        if e["action"] == "tally" and isinstance(detail.get("sha256"), str):
            last, since = e, 0
        elif isinstance(detail.get("rows"), dict) and COUNTING_TABLES & set(detail["rows"]):
            since += 1
    return last, since


def _compare_logged(rows: list[TallyRow], last: Mapping[str, Any] | None, since: int) -> tuple[str, bool]:
    if last is None:
        return "no tally was logged yet", True
    if since:
        return f"the last logged tally (entry {last['id']}) predates {since} logged change(s) that may change a count", True
    if last["detail"]["sha256"] == tally_digest(rows):
        return f"equals the tally logged at entry {last['id']}", True
    return (f"differs from the tally logged at entry {last['id']}, though nothing that can change a count was logged "
            "since: data was changed outside the log"), False


def _tally_differences(verified: list[TallyRow], stored: list[TallyRow]) -> list[str]:
    a = {(r.precinct, r.contest, r.option): r.votes for r in verified}
    b = {(r.precinct, r.contest, r.option): r.votes for r in stored}
    out = []
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            precinct, contest, option = key
            out.append(f"{precinct} / {contest} / {option}: the store says {b.get(key, 0)}, verified data gives {a.get(key, 0)}")
    return out


def _pair_notes(store: Store, s: Any) -> list[str]:
    from scanpipe.reconcile.service import pair_row

    stored = {p.serial: (p.status, p.counted, tuple(p.contests)) for p in store.pairs()}
    derived = {}
    for o in s.pairs:
        row = pair_row(o, s)
        derived[str(row["serial"])] = (row["status"], row["counted"], tuple(cast(list[str], row["contests"])))
    notes = []
    for serial in sorted(set(stored) | set(derived)):
        if stored.get(serial) != derived.get(serial):
            have, want = stored.get(serial), derived.get(serial)
            notes.append(f"serial {serial}: the stored pair row says {_pair_text(have)}, verified data gives {_pair_text(want)}")
    return notes


def _pair_text(p: tuple[Any, ...] | None) -> str:
    return "nothing" if p is None else f"{p[0]}, counted {p[1]}" + (f", contests {', '.join(p[2])}" if p[2] else "")


class VerifiedView:
    """The store with the rows the log does not vouch for left out (for recounting only).

    Cards named, cards of batches named, decisions named (with their board votes),
    identifications, new duplicates, board rulings and duplication-log rows named are not
    read; everything else is the store's own method."""

    def __init__(self, store: Store, bad: Mapping[str, set[str]]) -> None:
        self._store = store
        self._bad = bad

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def _ok_card(self, stored: Any) -> bool:
        return (stored.card_id not in self._bad.get("card", ()) and
                stored.card.source.batch not in self._bad.get("batch", ()))

    def iter_cards(self, **kwargs: Any) -> Iterator[Any]:
        return (c for c in self._store.iter_cards(**kwargs) if self._ok_card(c))

    def cards_of_serial(self, *args: Any, **kwargs: Any) -> list[Any]:
        return [c for c in self._store.cards_of_serial(*args, **kwargs) if self._ok_card(c)]

    def decisions(self, *args: Any, **kwargs: Any) -> list[Any]:
        return [d for d in self._store.decisions(*args, **kwargs) if str(d.id) not in self._bad.get("decision", ())]

    def identifications(self) -> dict[str, Any]:
        return {k: v for k, v in self._store.identifications().items() if k not in self._bad.get("identification", ())}

    def stated_serials(self) -> dict[str, str]:
        return {k: v for k, v in self._store.stated_serials().items() if k not in self._bad.get("identification", ())}

    def board_rulings(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {k: r for k, r in self._store.board_rulings(*args, **kwargs).items() if str(r.id) not in self._bad.get("board_ruling", ())}

    def page_rulings(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {k: r for k, r in self._store.page_rulings(*args, **kwargs).items() if str(r.id) not in self._bad.get("card_ruling", ())}

    def comparison_scopes(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {k: v for k, v in self._store.comparison_scopes(*args, **kwargs).items() if k not in self._bad.get("duplication_log", ())}

    def new_duplicates(self, *args: Any, **kwargs: Any) -> list[Any]:
        return [n for n in self._store.new_duplicates(*args, **kwargs) if n.serial not in self._bad.get("new_duplicate", ())]
