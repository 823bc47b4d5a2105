"""What the staffer's screen and the board's papers say, as plain values with names.

Each ``build_*`` reads the store once through the library (:func:`scanpipe.workflow.standing`,
the queue, the stored pairs) and returns frozen values holding names and card places, ready
to print as a terminal table, HTML or PDF (:mod:`scanpipe.reports.text`,
:mod:`scanpipe.reports.printable`). Ids are kept beside the names only for machine formats.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from scanpipe.names import CardPlace, Names, pair_status_label, reason_label
from scanpipe.queue import QueueItem
from scanpipe.sources.files import shown_path
from scanpipe.store.repository import Store
from scanpipe.tally import UNASSIGNED, TallyRow
from scanpipe.types import Election


@dataclass(frozen=True, slots=True)
class Heading:
    """What every paper carries at its top."""

    title: str
    election: str
    election_date: str
    jurisdiction: str
    generated_at: str

    @staticmethod
    def of(election: Election, title: str) -> Heading:
        now = datetime.now(UTC).astimezone().strftime("%Y-%m-%d %H:%M %Z")
        return Heading(title, election.name, election.date, election.jurisdiction, now)


# --------------------------------------------------------------------------------------
# The queue and the pull list


@dataclass(frozen=True, slots=True)
class QueueRow:
    item: str  # card id or serial (machine formats; commands accept it)
    kind: str  # card | pair
    what: str  # "B01 #57 (0057.png)" or "serial A0042"
    reason: str  # reason code
    reason_text: str
    precinct: str  # the precinct's name
    contests: str  # contest titles
    cards: tuple[CardPlace, ...]  # the paper to pull (a pair: its duplicates and originals)
    ref: str  # what to type in a command (BATCH#SEQ, or the serial)
    roles: tuple[str, ...] = ()  # per card: "duplicate" / "original" (a pair), "card"


def queue_rows(store: Store, election: Election, items: Sequence[QueueItem]) -> list[QueueRow]:
    """The queue with names and the paper each item needs."""
    names = Names(election)
    pairs = {p.serial: p for p in store.pairs()} if any(i.kind == "pair" for i in items) else {}
    card_ids = {i.item for i in items if i.kind == "card"}
    for i in items:
        if i.kind == "pair" and i.item in pairs:
            card_ids.update(pairs[i.item].duplicates + pairs[i.item].originals)
    places = store.card_places(card_ids)
    rows = []
    for i in items:
        if i.kind == "pair":
            p = pairs.get(i.item)
            both = [(c, "duplicate") for c in p.duplicates] + [(c, "original") for c in p.originals] if p is not None else []
            cards = tuple(places[c] for c, _ in both if c in places)
            roles = tuple(role for c, role in both if c in places)
            what, ref = f"serial {i.item}", i.item
        else:
            place = places.get(i.item)
            cards = (place,) if place is not None else ()
            roles = ("card",) * len(cards)
            what = place.label if place is not None else (f"file {shown_path(i.item)}" if i.kind == "file" else i.item)
            ref = place.ref if place is not None else i.item
        rows.append(QueueRow(i.item, i.kind, what, i.reason, reason_label(i.reason), names.precinct(i.precinct),
                             names.contests(i.contests), cards, ref, roles))
    return rows


@dataclass(frozen=True, slots=True)
class PullRow:
    place: CardPlace
    role: str  # card / duplicate / original
    serial: str | None
    reason_text: str
    precinct: str


def pull_list(store: Store, election: Election, items: Sequence[QueueItem]) -> list[PullRow]:
    """Every card a person must see, in the order the paper is kept: batch, then position."""
    rows: dict[tuple[str, str], PullRow] = {}
    for r in queue_rows(store, election, items):
        for place, role in zip(r.cards, r.roles):
            key = (place.card_id, r.reason)
            rows.setdefault(key, PullRow(place, role, r.item if r.kind == "pair" else None, r.reason_text, r.precinct))
    return sorted(rows.values(), key=lambda x: (x.place.batch, x.place.seq, x.place.page, x.reason_text))


# --------------------------------------------------------------------------------------
# The tally


@dataclass(frozen=True, slots=True)
class TallyLine:
    option: str  # name, or "overvotes" / "undervotes" / "awaiting a person"
    option_id: str
    votes: int
    is_option: bool


@dataclass(frozen=True, slots=True)
class ContestTally:
    contest: str  # title
    contest_id: str
    vote_for: int
    lines: tuple[TallyLine, ...]

    @property
    def votes_total(self) -> int:
        return sum(x.votes for x in self.lines if x.is_option)

    def line(self, option_id: str) -> int:
        return next((x.votes for x in self.lines if x.option_id == option_id), 0)


@dataclass(frozen=True, slots=True)
class PrecinctTally:
    precinct: str  # name
    precinct_id: str
    contests: tuple[ContestTally, ...]


@dataclass(frozen=True, slots=True)
class TallyReport:
    heading: Heading
    precincts: tuple[PrecinctTally, ...]
    totals: tuple[ContestTally, ...]  # every precinct added up
    unassigned: int  # cards without a known precinct or style (awaiting a person)
    pending_total: int


def build_tally(election: Election, rows: Sequence[TallyRow]) -> TallyReport:
    """Per precinct with names, and the totals over all precincts (contest by contest)."""
    names = Names(election)
    by_precinct: dict[str, dict[str, list[TallyRow]]] = {}
    unassigned = 0
    for r in rows:
        if r.precinct == UNASSIGNED:
            unassigned += r.votes
            continue
        by_precinct.setdefault(r.precinct, {}).setdefault(r.contest, []).append(r)
    order = {p.id: n for n, p in enumerate(election.precincts)}
    precincts = []
    sums: dict[str, Counter[str]] = {}
    for pid in sorted(by_precinct, key=lambda p: order.get(p, len(order))):
        contests = []
        for cid, crows in by_precinct[pid].items():
            contests.append(_contest_tally(election, names, cid, [(r.option, r.votes) for r in crows]))
            sums.setdefault(cid, Counter()).update({r.option: r.votes for r in crows})
        precincts.append(PrecinctTally(names.precinct(pid), pid, tuple(contests)))
    totals = tuple(_contest_tally(election, names, c.id, list(sums[c.id].items())) for c in election.contests if c.id in sums)
    pending = sum(c.line("#pending") for p in precincts for c in p.contests) + unassigned
    return TallyReport(Heading.of(election, "Recount tally by precinct"), tuple(precincts), totals, unassigned, pending)


def _contest_tally(election: Election, names: Names, cid: str, counts: Sequence[tuple[str, int]]) -> ContestTally:
    contest = election.contest(cid)
    got = dict(counts)
    lines = [TallyLine(names.option(o.id), o.id, got.get(o.id, 0), True) for o in contest.options]
    lines += [TallyLine(names.option(k), k, got.get(k, 0), False) for k in ("#overvotes", "#undervotes", "#pending")]
    return ContestTally(contest.title, cid, contest.vote_for, tuple(lines))


# --------------------------------------------------------------------------------------
# The duplicates report


STATUS_COLUMNS = ("match", "mismatch", "needs_review", "resolved", "orphan_duplicate", "orphan_original", "conflict")


@dataclass(frozen=True, slots=True)
class DuplicatesLine:
    precinct: str  # name ("All precincts" for the total)
    precinct_id: str
    serials: int
    statuses: tuple[int, ...]  # in STATUS_COLUMNS order; they add up to ``serials``
    new_duplicates: int  # serials now counted through a new duplicate (a subset of ``resolved``)
    examined: int = 0  # serials the board has examined (§12-108(d)(1)): sign-off, decisions or ruling


@dataclass(frozen=True, slots=True)
class SerialLine:
    serial: str
    precinct: str
    found: str  # what reconciliation found first (base status), in words
    now: str  # where it stands, in words
    contests: str  # the contests that differ or need a person, by title
    duplicates: tuple[CardPlace, ...]
    originals: tuple[CardPlace, ...]
    counted: str  # "the duplicate", "new duplicate A0042-R1", "nothing yet"
    decided_by: str
    examined: str = ""  # how and by whom the pair was examined; "" while it is not


@dataclass(frozen=True, slots=True)
class DuplicatesReport:
    heading: Heading
    lines: tuple[DuplicatesLine, ...]
    total: DuplicatesLine
    serials: tuple[SerialLine, ...]
    log_missing: tuple[str, ...] = ()  # serials the canvass log expects that no scan carries
    log_unknown: tuple[str, ...] = ()  # scanned serials the log does not know
    log_size: int = 0
    columns: tuple[str, ...] = field(default=STATUS_COLUMNS)
    final: bool = False
    why_not_final: str = ""
    rule_set_line: str = ""
    examinations: tuple[tuple[str, str, str], ...] = ()  # (serial, status in words, "how by whom [rule set]" or "NOT YET EXAMINED")
    pending_paper: tuple[tuple[str, str, str, str], ...] = ()  # (serial, precinct, state in words, next step)
    pending_paper_law: str = ""
    awaiting_board: tuple[str, ...] = ()
    awaiting_board_law: str = ""
    log_types: tuple[tuple[str, int], ...] = ()


def build_duplicates(store: Store, election: Election) -> DuplicatesReport:
    """Per precinct: the serials and where each stands (the status columns add up to the
    serials), how many the board examined, then every serial with its cards' places, what counts and who examined
    it; whether the report is final under the election's rule set, and why not."""
    from scanpipe.reconcile.report import duplicate_report
    from scanpipe.rules import rule_set

    names = Names(election)
    rules = rule_set(election.jurisdiction)
    status = duplicate_report(store)
    how = {r.serial: (f"{r.how} by {', '.join(r.by) or 'unrecorded'}" + (f" [{r.rule_set}]" if r.rule_set else "")) if r.examined
           else "NOT YET EXAMINED" for r in status.examinations}
    pairs = store.pairs()
    places = store.card_places({c for p in pairs for c in (*p.duplicates, *p.originals)})
    per: dict[str | None, Counter[str]] = {}
    serials = []
    for p in pairs:
        c = per.setdefault(p.precinct, Counter())
        c["serials"] += 1
        c["examined"] += how.get(p.serial, "NOT YET EXAMINED") != "NOT YET EXAMINED"
        c[p.status] += 1
        counted_new = p.counted not in ("duplicate", "none")
        c["new"] += counted_new
        counted = "the duplicate" if p.counted == "duplicate" else (f"new duplicate {p.counted}" if counted_new else "nothing yet")
        serials.append(SerialLine(
            p.serial, names.precinct(p.precinct), pair_status_label(str(p.detail.get("base_status", p.status))),
            pair_status_label(p.status), names.contests(p.contests),
            tuple(places[c] for c in p.duplicates if c in places), tuple(places[c] for c in p.originals if c in places),
            counted, ", ".join(p.detail.get("auditors", [])), how.get(p.serial, "")))
    order = {pr.id: n for n, pr in enumerate(election.precincts)}
    lines = tuple(_dup_line(names.precinct(pid), pid or UNASSIGNED, per[pid])
                  for pid in sorted(per, key=lambda x: order.get(x or "", len(order))))
    total = _dup_line("All precincts", "#all", sum(per.values(), Counter()))
    log = store.duplication_log()
    scanned = {p.serial for p in pairs}
    status_of = {p.serial: pair_status_label(p.status) for p in pairs}
    return DuplicatesReport(
        Heading.of(election, status.heading), lines, total, tuple(serials),
        tuple(sorted(set(log) - scanned)) if log else (), tuple(sorted(scanned - set(log))) if log else (), len(log),
        final=status.final, why_not_final=status.why_not_final, rule_set_line=status.rule_set_line,
        examinations=tuple((r.serial, status_of.get(r.serial, r.status), how[r.serial]) for r in status.examinations),
        pending_paper=tuple((x.serial, names.precinct(x.precinct), x.state.value.replace("_", " "), x.next_step) for x in status.pending_paper),
        pending_paper_law=rules.store_source.citation, awaiting_board=status.awaiting_board,
        awaiting_board_law=rules.missing_record_source.citation, log_types=status.log_types)


def _dup_line(name: str, pid: str, c: Counter[str]) -> DuplicatesLine:
    line = DuplicatesLine(name, pid, c["serials"], tuple(c[s] for s in STATUS_COLUMNS), c["new"], c["examined"])
    assert sum(line.statuses) == line.serials, "every serial has exactly one status"
    return line


# --------------------------------------------------------------------------------------
# The staffer's status screen


@dataclass(frozen=True, slots=True)
class NewDuplicateToPrint:
    """A new duplicate whose paper is not yet stored with its original (§12-108(c)(2))."""

    serial: str
    precinct: str
    state: str  # in words: to print, to scan, reads differently, to store
    next_step: str


@dataclass(frozen=True, slots=True)
class StatusReport:
    heading: Heading
    cards: int
    cards_by_status: tuple[tuple[str, int], ...]  # read / machine-printed / could not be read
    batches: tuple[tuple[str, int, str], ...]  # (name, cards, state)
    waiting_by_reason: tuple[tuple[str, int], ...]
    waiting_by_precinct: tuple[tuple[str, int], ...]
    waiting_total: int
    pairs: tuple[tuple[str, int], ...]  # status in words, serials
    new_duplicates: tuple[NewDuplicateToPrint, ...]  # not yet stored with their originals


def build_status(store: Store, election: Election, items: Sequence[QueueItem]) -> StatusReport:
    """Cards read, what waits for a person (by reason and precinct), pairs, new duplicates to print."""
    names = Names(election)
    by_status = store.card_status_counts()
    words = {"read": "read", "machine_printed": "machine-printed records read", "unreadable": "could not be read (queued)",
             "blank_back": "blank backs of cards printed on one side (kept, nothing to decide)",
             "set_aside": "set aside by the board as no ballot card (kept, counted nowhere)"}
    counts = store.batch_card_counts()
    batches = tuple((b.name, counts.get(b.name, 0), f"voided: {b.void_reason}" if b.voided else "active") for b in store.list_batches())
    reasons = Counter(reason_label(i.reason) for i in items)
    precincts = Counter(names.precinct(i.precinct) for i in items)
    from scanpipe.reconcile.paper import pending_new_duplicates

    pairs = store.pair_status_counts()
    to_print = tuple(NewDuplicateToPrint(p.serial, names.precinct(p.precinct), p.state.value.replace("_", " "), p.next_step)
                     for p in pending_new_duplicates(store))
    return StatusReport(
        Heading.of(election, "Status"), sum(by_status.values()),
        tuple((words.get(k, k), n) for k, n in sorted(by_status.items())), batches,
        tuple(sorted(reasons.items(), key=lambda x: (-x[1], x[0]))), tuple(sorted(precincts.items(), key=lambda x: (-x[1], x[0]))),
        len(items), tuple((pair_status_label(s), pairs[s]) for s in (*STATUS_COLUMNS, *sorted(set(pairs) - set(STATUS_COLUMNS))) if pairs.get(s)),
        to_print)
