"""The board's part in §12-108: rulings on orphans and conflicts, and the examination of
every pair (the store side; the values and vote rules are :mod:`scanpipe.reconcile.rulings`).

* :func:`rule_on_serial`: a missing original or duplicate, or a serial used twice, is the
  board's question (§12-108(c)); its ruling, with each member's vote, says whether and how
  the serial counts, and the serial is reconciled at once.
* :func:`set_aside_pages`: stored pages that are no ballot cards (a sheet fed by mistake, a
  batch header, a card of another election, the blank backs of a stack scanned on both
  sides) are set aside by the board's ruling: they count nothing and leave the queue, kept
  as evidence.
* :func:`sign_off_pairs`: the board examines matched pairs in batches (§12-108(d)(1)): one
  decision per batch, logged, the cards it saw kept with it. A mismatched pair is examined
  through the auditors' decisions, an orphan or conflict through the board's ruling.
* :func:`examination_rows`: per serial, who examined it and how (for the report), and
  :func:`unexamined_pairs`: the matched pairs the board has not signed off.

Board members are the active review accounts of role ``board``; a database without any
account (a test deck) accepts free names only when the caller says so (``no_accounts``),
and that is logged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scanpipe.errors import DecisionError
from scanpipe.reconcile.pairing import PairStatus
from scanpipe.reconcile.rulings import BOARD_MATTERS, BoardRuling, PageRuling, RulingKind, check_board_votes
from scanpipe.rules import rule_set
from scanpipe.store.repository import Store
from scanpipe.types import NOTHING_TO_DECIDE, Reason, UnreadableCard
from scanpipe.workflow import Standing, resolve_card, standing


def board_members(store: Store, members: Mapping[str, str], *, no_accounts: bool) -> list[str]:
    """Who may vote as the board: the active board accounts; where no account exists at
    all, the names given, and only with ``no_accounts``."""
    from scanpipe.review.accounts import list_users, usernames_with_role

    if list_users(store):
        if no_accounts:
            raise DecisionError("this database has review accounts: board members are named by their accounts (drop --no-accounts)")
        return usernames_with_role(store, "board")
    if not no_accounts:
        raise DecisionError("this database has no review accounts (`scanpipe user add NAME --role board`); "
                            "on a test deck without accounts, say --no-accounts to accept the names given")
    return list(members)


def rule_on_serial(store: Store, serial: str, *, ruling: RulingKind, card: str | None, members: Mapping[str, str], actor: str,
                   note: str | None = None, no_accounts: bool = False, proposal: int | None = None) -> BoardRuling:
    """Record the board's ruling on an orphan or conflict and reconcile that serial.

    ``members`` must be each member's own vote: from their own review login (``proposal``,
    :mod:`scanpipe.review.board`, closed with the ruling) or their password at the command line."""
    from scanpipe.reconcile.service import reconcile

    s = standing(store, serial=serial)
    pair = next((p for p in s.pairs if p.serial == serial), None)
    if pair is None:
        raise DecisionError(f"{serial}: no scanned card carries this serial")
    if pair.base_status not in BOARD_MATTERS:
        raise DecisionError(f"serial {serial} is a {pair.base_status.value} pair, not an orphan or a conflict: it is not the board's to rule on")
    rules = rule_set(s.election.jurisdiction)
    check_board_votes(members, board_members(store, members, no_accounts=no_accounts), rules.board_quorum)
    cards = (*pair.duplicates, *pair.originals)
    _check_card(s, pair.serial, pair.base_status, ruling, card, cards)
    made = store.add_board_ruling(serial=serial, matter=pair.base_status, ruling=ruling, card=card, cards=cards, members=members,
                                  actor=actor, rule_set=rules.id, note=note, proposal=proposal)
    if no_accounts:
        store.log_event("no_accounts", {"what": "board ruling", "serial": serial, "members": sorted(members)}, actor=actor)
    reconcile(store, serial=serial)
    return made


def set_aside_pages(store: Store, card_refs: Sequence[str], *, why: str, members: Mapping[str, str], actor: str,
                    note: str | None = None, no_accounts: bool = False) -> list[PageRuling]:
    """Record the board's ruling that stored pages are no ballot cards (a sheet fed by
    mistake, a batch header, a card of another election, the blank backs of a stack scanned on
    both sides): they count nothing and leave the queue; their images, hashes and readings are
    kept. One decision for them all (one vote, one transaction, one log entry). Only a page the
    machine read as no card of the election, and that carries no serial, may be set aside so:
    a ballot is identified and read by people, a serial's card is the board's through its
    serial (``board rule``). Nothing is recorded when any page is refused."""
    if not why.strip():
        raise DecisionError("say what the board saw on the paper (--why): the ruling is evidence")
    cards = list(dict.fromkeys(_page_to_set_aside(store, ref) for ref in card_refs))
    if not cards:
        raise DecisionError("name at least one page to set aside")
    rules = rule_set(store.current_election().jurisdiction)
    check_board_votes(members, board_members(store, members, no_accounts=no_accounts), rules.board_quorum)
    made = store.add_page_rulings(cards=cards, why=why.strip(), members=members, actor=actor, rule_set=rules.id, note=note)
    if no_accounts:
        store.log_event("no_accounts", {"what": "page ruling", "cards": cards, "members": sorted(members)}, actor=actor)
    return made


def blank_pages_of(store: Store, batch: str) -> list[str]:
    """The batch's pages the machine found blank (``blank_page``) and the board has not set aside."""
    if batch not in {b.name for b in store.list_batches()}:
        raise DecisionError(f"there is no batch {batch!r}")
    ruled = store.page_rulings()
    return [c.card_id for c in store.iter_cards(targets=False)
            if c.card.source.batch == batch and c.card_id not in ruled
            and isinstance(c.card.interpretation, UnreadableCard) and c.card.interpretation.reason is Reason.BLANK_PAGE]


def _page_to_set_aside(store: Store, card_ref: str) -> str:
    """The card id of a page the board may set aside (see :func:`set_aside_pages`), else why not."""
    stored = resolve_card(store, card_ref)
    card, cid = stored.card, stored.card_id
    result = card.interpretation
    if not isinstance(result, UnreadableCard):
        raise DecisionError(f"card {cid} is read as a ballot card; the board does not set a ballot aside: a person corrects "
                            "its reading (identify, adjudicate), or the whole batch is voided (batch void)")
    if result.reason in NOTHING_TO_DECIDE:
        raise DecisionError(f"card {cid} is {result.reason.value}: it counts nothing and awaits no one already")
    serial = card.label.serial if card.label is not None else store.stated_serials().get(cid)
    if serial is not None:
        raise DecisionError(f"card {cid} carries serial {serial}: the board rules on its serial (board rule), not on the page")
    earlier = store.page_rulings().get(cid)
    if earlier is not None:
        raise DecisionError(f"card {cid} was set aside by the board already (page ruling {earlier.id}: {earlier.why})")
    return cid


def _check_card(s: Standing, serial: str, matter: PairStatus, ruling: RulingKind, card: str | None, cards: Sequence[str]) -> None:
    """``card`` names the duplicate that counts as it is (needed when the serial has several
    duplicates), or the sheet a new duplicate is based on; that duplicate must be fully read."""
    if card is not None and card not in cards:
        raise DecisionError(f"card {card} is not a card of serial {serial}; its cards: {', '.join(cards)}")
    if ruling is not RulingKind.COUNTS_AS_IS:
        return
    pairing = next(p for p in s.pairings if p.serial == serial)
    if not pairing.duplicates:
        raise DecisionError(f"serial {serial} has no duplicate: an original never counts as it is (rule a new duplicate or nothing)")
    if card is None and len(pairing.duplicates) > 1:
        raise DecisionError(f"serial {serial} is on {len(pairing.duplicates)} duplicates: say which counts as it is (--card): "
                            + "; ".join(", ".join(d.card_ids) for d in pairing.duplicates))
    sheet = next((d for d in pairing.duplicates if card is None or card in d.card_ids), None)
    if sheet is None:
        raise DecisionError(f"card {card} is an original of serial {serial}: an original never counts as it is")
    counts = {c.card_id: c for c in s.counts}
    for cid in sheet.card_ids:
        c = counts.get(cid)
        if c is None or c.card_pending or c.pending_contests:
            what = ", ".join(c.pending_contests) if c is not None and c.pending_contests else "the card could not be read"
            raise DecisionError(f"the duplicate of serial {serial} cannot count as it is ({what}): "
                                "rule a new duplicate instead, so auditors decide its contests")


# --------------------------------------------------------------------------------------
# The examination of every pair


def sign_off_pairs(store: Store, serials: Sequence[str], *, members: Mapping[str, str], actor: str, note: str | None = None,
                   no_accounts: bool = False, proposal: int | None = None) -> int:
    """The board signs off a batch of matched pairs it examined (one decision, logged); returns its id.
    Every serial must be a matched pair now; the cards it saw are kept with the sign-off."""
    if not serials:
        raise DecisionError("a sign-off needs at least one pair")
    election = store.current_election()
    rules = rule_set(election.jurisdiction)
    check_board_votes(members, board_members(store, members, no_accounts=no_accounts), rules.board_quorum)
    cards: dict[str, tuple[str, ...]] = {}
    for serial in dict.fromkeys(serials):
        pair = store.get_pair(serial)
        if pair is None or pair.status != PairStatus.MATCH.value:
            raise DecisionError(f"serial {serial} is not a matched pair ({pair.status if pair else 'unknown serial'}): "
                                "only matched pairs are signed off in a batch; nothing was recorded")
        cards[serial] = (*pair.duplicates, *pair.originals)
    signoff = store.add_pair_signoff(cards, members=members, actor=actor, rule_set=rules.id, note=note, proposal=proposal)
    if no_accounts:
        store.log_event("no_accounts", {"what": "pair sign-off", "signoff": signoff, "members": sorted(members)}, actor=actor)
    return signoff


@dataclass(frozen=True, slots=True)
class ExaminationRow:
    """Who examined one serial, and how (the report's "examined by")."""

    serial: str
    precinct: str | None
    status: str
    how: str  # "board sign-off 3", "auditors' decisions", "board ruling 2", or "" when not yet examined
    by: tuple[str, ...]
    rule_set: str | None

    @property
    def examined(self) -> bool:
        return bool(self.how)


def examination_rows(store: Store) -> list[ExaminationRow]:
    """Per stored pair row (run ``reconcile`` first): who examined it and how."""
    signed = store.examinations()
    rulings = store.board_rulings()
    rows = []
    for p in store.pairs():
        cards = sorted((*p.duplicates, *p.originals))
        base = str(p.detail.get("base_status", p.status))
        how: str = ""
        by: tuple[str, ...] = ()
        rules: str | None = None
        if base == PairStatus.MATCH.value:
            valid = [e for e in signed.get(p.serial, []) if sorted(e.cards) == cards]
            if valid:
                how, by, rules = f"board sign-off {valid[-1].signoff}", valid[-1].ayes, valid[-1].rule_set
        elif base in {m.value for m in BOARD_MATTERS}:
            r = rulings.get(p.serial)
            if r is not None and r.applies_to(PairStatus(base), cards):
                how, by, rules = f"board ruling {r.id} ({r.ruling.value})", r.ayes, r.rule_set
        elif p.status == PairStatus.RESOLVED.value:
            how, by, rules = "auditors' decisions", tuple(p.detail.get("auditors", ())), p.detail.get("rule_set")
        rows.append(ExaminationRow(p.serial, p.precinct, p.status, how, tuple(by), rules))
    return rows


def unexamined_pairs(store: Store) -> list[str]:
    """Matched pairs the board has not signed off (with the cards it has now)."""
    return [r.serial for r in examination_rows(store) if r.status == PairStatus.MATCH.value and not r.examined]
