"""``reconcile`` and pair decisions: the store side of reconciliation.

Reconciling reads every card and decision (:func:`scanpipe.workflow.standing`), makes the new
duplicates that people's decisions call for (a new revision only when the decided contests
change, so running it again changes nothing), renders them as printable cards, attaches
scanned printed new duplicates, and stores one row per serial for pages and exports.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from scanpipe.decisions import Attestation
from scanpipe.errors import DecisionError
from scanpipe.reconcile.compare import Difference, counted_votes
from scanpipe.reconcile.paper import render_paper, write_paper_files
from scanpipe.reconcile.resolve import PairOutcome
from scanpipe.rules import rule_set
from scanpipe.store.pairs import NewDuplicateRecord
from scanpipe.store.repository import Store
from scanpipe.types import CardHints, Election, InterpretedCard, ReadCard, Reason, UnreadableCard
from scanpipe.workflow import BoardVotes, DecisionOutcome, Standing, record_decision, standing

SERIAL_CHARS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


@dataclass
class ReconcileSummary:
    statuses: Counter[str] = field(default_factory=Counter)
    new_duplicates: list[str] = field(default_factory=list)
    paper: dict[str, str] = field(default_factory=dict)  # new duplicate -> its PDF, when written to a folder
    reprints_attached: list[str] = field(default_factory=list)
    reprint_problems: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        total = sum(self.statuses.values())
        out = [f"{total} serial(s): " + (", ".join(f"{n} {s}" for s, n in sorted(self.statuses.items())) or "none")]
        out += [f"  new duplicate {s}: " + (f"printable at {self.paper[s]}" if s in self.paper else f"print it with `scanpipe duplicates print {s}`")
                for s in self.new_duplicates]
        out += [f"  printed new duplicate scanned: {s}" for s in self.reprints_attached]
        out += [f"  problem: {p}" for p in self.reprint_problems]
        return out


def reconcile(store: Store, *, render_dir: Path | None = None, serial: str | None = None) -> ReconcileSummary:
    """Pair, compare, make decided new duplicates, store the pairs. Idempotent.

    ``serial``: reconcile that base serial only (after a decision on it), reading only its
    cards; every other serial's stored row is left as it is."""
    summary = ReconcileSummary()
    s = standing(store, serial=serial)
    rules = rule_set(s.election.jurisdiction)
    if read_originals_with_duplicate_style(store, s):
        s = standing(store, serial=serial)
    current = {nd.base_serial: nd for nd in store.new_duplicates()}
    made = False
    for outcome in s.pairs:
        if outcome.counted != "new" or outcome.new_contests is None:
            continue
        nd = current.get(outcome.serial)
        if nd is not None and tuple(nd.contests) == tuple(outcome.new_contests):
            continue
        decision_ids = [d.id for d in s.decisions if d.item == outcome.serial and d.state.value == "final"]
        created = store.add_new_duplicate(
            base_serial=outcome.serial, style=outcome.style or "", precinct=outcome.precinct, contests=outcome.new_contests,
            decisions=decision_ids, auditors=outcome.auditors, original_cards=outcome.originals, superseded_cards=outcome.duplicates,
            rule_set=rules.id)
        summary.new_duplicates.append(created.serial)
        store.log_event("new_duplicate", {"serial": created.serial, "auditors": list(outcome.auditors), "supersedes": list(outcome.duplicates),
                                          "rule_set": rules.id})
        render_paper(store, s.election, created.serial)
        if render_dir is not None:
            summary.paper[created.serial] = str(write_paper_files(store, s.election, created.serial, render_dir)[1])
        made = True
    if made:
        s = standing(store, serial=serial)
    if render_dir is not None:
        summary.paper.update(write_missing_paper(store, s.election, render_dir, serial=serial))
    _attach_reprints(store, s, summary)
    if serial is None:
        store.replace_pairs([pair_row(o, s, rules.id) for o in s.pairs])
    else:
        store.replace_pairs_of(serial, [pair_row(o, s, rules.id) for o in s.pairs if o.serial == serial])
    summary.statuses.update(o.status.value for o in s.pairs)
    detail: dict[str, object] = {"statuses": dict(summary.statuses), "new_duplicates": summary.new_duplicates, "rule_set": rules.id}
    store.log_event("reconcile", detail if serial is None else {**detail, "serial": serial})
    return summary


def write_missing_paper(store: Store, election: Election, render_dir: Path, *, serial: str | None = None) -> dict[str, str]:
    """Write the PNG and PDF of every current new duplicate (of ``serial``'s, when given) whose
    paper was never written: a run killed after the decision was stored and before its paper
    was written leaves one. Returns ``{new duplicate: its PDF}``."""
    written = {}
    for nd in store.new_duplicates(base_serial=serial):
        if nd.image_path is None:
            written[nd.serial] = str(write_paper_files(store, election, nd.serial, render_dir)[1])
    return written


def read_originals_with_duplicate_style(store: Store, s: Standing) -> int:
    """An original whose card code could not be read is read again with its duplicate's
    style as the first hypothesis; the reading is kept only when that layout fits the card
    (:data:`scanpipe.interpret.HYPOTHESIS_MIN_FIT`). Returns how many were read."""
    from scanpipe.interpret import interpret_file
    from scanpipe.workflow import interpret_context

    todo = []
    for pairing in s.pairings:
        if len(pairing.duplicates) != 1 or len(pairing.originals) != 1 or pairing.duplicates[0].style is None:
            continue
        dup = pairing.duplicates[0]
        pages: list[int | None] = list(sorted({c.interpretation.page for c in dup.cards if isinstance(c.interpretation, ReadCard)}))
        for card in pairing.originals[0].cards:
            r = card.interpretation
            if isinstance(r, UnreadableCard) and r.reason in (Reason.UNKNOWN_STYLE, Reason.AMBIGUOUS_STYLE) and card.card_code is None:
                todo.append((card, dup.style, pages))
    if not todo:
        return 0
    context = interpret_context(store)
    done = 0
    for card, style, pages in todo:
        if not Path(card.source.path).is_file():
            continue
        for page in pages or [None]:
            hints = CardHints(style=style, page=page, kind=card.kind, serial=card.label.serial if card.label else None, style_is_hypothesis=True)
            again = next((c for c in interpret_file(card.source.path, context, hints, card.source.batch) if c.source.card_id == card.source.card_id), None)
            if again is not None and isinstance(again.interpretation, ReadCard):
                store.replace_interpretation(again)
                store.log_event("original_read_with_duplicate_style", {"card": card.source.card_id, "style": style, "page": again.interpretation.page})
                done += 1
                break
    return done


def pair_row(o: PairOutcome, s: Standing, rules_id: str | None = None) -> dict[str, object]:
    """The stored row of one serial (also what ``export pairs`` writes)."""
    differences = []
    if o.comparison is not None:
        for d in o.comparison.differences:
            differences.append({
                "contest": d.contest, "difference": d.difference.value,
                "duplicate": _reading_json(d.duplicate), "original": _reading_json(d.original),
            })
    counted = _counted_label(o, s)
    return {
        "serial": o.serial, "status": o.status.value, "precinct": o.precinct, "duplicates": list(o.duplicates),
        "originals": list(o.originals), "contests": [] if o.base_status.value.startswith("orphan") else list(o.listed),
        "counted": counted,
        "detail": {"differences": differences, "original_only": list(o.comparison.original_only) if o.comparison else [],
                   "decided": {c: list(v) for c, v in o.decided}, "auditors": list(o.auditors), "base_status": o.base_status.value,
                   "waiting": list(o.waiting), "style": o.style, "text_code_disagree": o.text_code_disagree,
                   "ballot_type": o.ballot_type.value, "ruling": o.ruling.id if o.ruling is not None else None,
                   "ruling_kind": o.ruling.ruling.value if o.ruling is not None else None, "awaits_board": o.awaits_board,
                   "rule_set": rules_id},
    }


def _counted_label(o: PairOutcome, s: Standing) -> str:
    if o.counted == "duplicate":
        return "duplicate"
    if o.counted == "new":
        nd = next((c for c in s.counts if c.card_id.startswith(f"nd-{o.serial}-R")), None)
        return nd.card_id[3:] if nd is not None else "none"
    return "none"


def _reading_json(r: object) -> dict[str, object] | None:
    if r is None:
        return None
    from scanpipe.store.pairs import reading_to_json

    return reading_to_json(r)  # type: ignore[arg-type]


def _attach_reprints(store: Store, s: Standing, summary: ReconcileSummary) -> None:
    """A scanned printed new duplicate attaches to its record and must read as decided."""
    records = {nd.serial: nd for nd in store.new_duplicates(current_only=False)}
    for pairing in s.pairings:
        for card in pairing.reprints:
            assert card.label is not None
            nd = records.get(card.label.serial)
            if nd is None:
                summary.reprint_problems.append(f"{card.source.path}: label DUP-{card.label.serial} names no new duplicate")
                continue
            if nd.superseded_by is not None:
                summary.reprint_problems.append(f"{card.source.path}: new duplicate {nd.serial} was superseded by {nd.superseded_by}")
                continue
            problem = _reprint_problem(card, nd)
            if problem is not None:
                summary.reprint_problems.append(f"{card.source.path}: {problem}")
                if nd.scanned_card_id is None:
                    store.set_new_duplicate_scan_problem(nd.serial, f"{card.source.path}: {problem}")
                continue
            if nd.scanned_card_id != card.source.card_id:
                store.attach_scanned_new_duplicate(nd.serial, card.source.card_id)
                summary.reprints_attached.append(nd.serial)


def _reprint_problem(card: InterpretedCard, nd: NewDuplicateRecord) -> str | None:
    """Why a scanned printed new duplicate does not stand for its record (None: it reads as decided).
    Every contest of its layout it carries must read as decided (a contest off the layout is on its printed note)."""
    result = card.interpretation
    if not isinstance(result, ReadCard):
        return f"the printed new duplicate {nd.serial} could not be read"
    if result.style != nd.style:
        return f"the printed new duplicate {nd.serial} reads as style {result.style}, not {nd.style}"
    decided = {c.contest: counted_votes(c) for c in nd.contests}
    read = {c.contest: counted_votes(c) for c in result.contests}
    wrong = sorted(c for c in read if c in decided and read[c] != decided[c])
    if wrong:
        return f"new duplicate {nd.serial} reads differently from the decision in {', '.join(wrong)}"
    return None


def adjudicate_pair(
    store: Store, serial: str, *, contest: str, votes: Sequence[str], auditors: Sequence[str], attestation: Attestation,
    rule: str | None = None, note: str | None = None, render_dir: Path | None = None, board: BoardVotes | None = None,
    write_ins: Mapping[str, str] | None = None,
) -> DecisionOutcome:
    """Record a decision for one contest of a serial (one transaction; ``board`` as in
    :func:`~scanpipe.workflow.record_decision`), then reconcile that serial at once (reading
    its cards only). A new duplicate the decision makes is rendered into the database (and
    written to ``render_dir`` when given); the outcome names it."""
    s = standing(store, serial=serial)
    if render_dir is not None:  # the same decision again after a kill: its paper first, whatever the decision's fate
        write_missing_paper(store, s.election, render_dir, serial=serial)
    pair = next((p for p in s.pairs if p.serial == serial), None)
    if pair is None:
        raise DecisionError(f"{serial}: no scanned card carries this serial")
    if pair.awaits_board:
        citation = rule_set(s.election.jurisdiction).missing_record_source.citation
        raise DecisionError(f"serial {serial} ({pair.base_status.value}) is a matter for the board ({citation}): "
                            "the board rules first (`scanpipe board rule`, or the review's board page)")
    if contest not in pair.listed:
        listed = ", ".join(pair.listed) or ("none: it matches" if pair.status.value == "match" else "none: identify its cards' style first")
        raise DecisionError(f"serial {serial} ({pair.status.value}) does not list contest '{contest}' for a decision; it lists: {listed}")
    _check_eligible(s, pair, contest, votes)
    outcome = record_decision(store, s.election, item=serial, item_kind="pair", contest=contest, votes=votes, auditors=auditors,
                              rule=rule, note=note, attestation=attestation, board=board, write_ins=write_ins)
    summary = reconcile(store, render_dir=render_dir, serial=serial)
    return replace(outcome, new_duplicates=tuple(summary.new_duplicates))


def _check_eligible(s: Standing, pair: PairOutcome, contest: str, votes: Sequence[str]) -> None:
    """A provisional voter's vote in a contest they were not eligible for never counts
    (§12-108(a)(2)(ii)): only "no vote" can be decided there."""
    if not votes or pair.comparison is None:
        return
    if any(d.contest == contest and d.difference is Difference.INELIGIBLE for d in pair.comparison.differences):
        title = s.election.contest(contest).title
        raise DecisionError(f"serial {pair.serial} is a provisional ballot whose voter was not eligible for {title}: "
                            f"only no vote (--votes \"\") can be decided there")


# --------------------------------------------------------------------------------------
# Exports


def pairs_csv(store: Store) -> str:
    """``export pairs`` (contract section 6): one row per base serial, sorted by serial."""
    paths = {s.card_id: s.card.source.path for s in store.iter_cards()}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(["serial", "status", "duplicate", "original", "contests", "counted"])
    for p in store.pairs():
        dup = ";".join(dict.fromkeys(paths.get(c, c) for c in p.duplicates))
        org = ";".join(dict.fromkeys(paths.get(c, c) for c in p.originals))
        w.writerow([p.serial, p.status, dup, org, ";".join(p.contests), p.counted])
    return buf.getvalue()


__all__ = ["Reason", "ReconcileSummary", "adjudicate_pair", "pairs_csv", "reconcile"]
