"""The library behind each command: load, ingest, count, queue, decide, export.

Each function takes an open :class:`~scanpipe.store.repository.Store` and plain values,
calls the pure core, and writes through the store. The CLI and the review app call these,
so a decision made in either place goes through the same code.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scanpipe.classify import Thresholds, load_thresholds
from scanpipe.counting import CardCount, Decision, DecisionState, count_card, final_decisions
from scanpipe.decisions import Attestation, check_second_half, plan_decision
from scanpipe.election import parse_election, read_definition
from scanpipe.election_diff import DefinitionChange, definition_changes
from scanpipe.errors import ConfigError, DecisionError, SourceError
from scanpipe.interpret import InterpretContext, interpret_file, load_references
from scanpipe.pipeline import FileResult, IngestSummary, ReadingMarks, run_local, store_results
from scanpipe.queue import QueueItem, build_queue
from scanpipe.reconcile.compare import ComparisonScope
from scanpipe.reconcile.pairing import Pairing, pair_cards, serial_of
from scanpipe.reconcile.resolve import NewDuplicate, PairOutcome, apply_pairs, resolve_pair
from scanpipe.rules import rule_set
from scanpipe.sources.files import find_card_files, may_hold_cards, storable_path
from scanpipe.store.records import StoredCard
from scanpipe.store.repository import Store
from scanpipe.tally import TallyRow, tally_precincts
from scanpipe.types import BallotStyle, CardHints, CardKind, Contest, Election, InterpretedCard, LayoutPage, ReadCard, Reason, UnreadableCard

if TYPE_CHECKING:
    from scanpipe.imaging.decode import DecodedPage


def init_election(store: Store, election_path: Path) -> tuple[Election, bool]:
    """Validate a definition and load it (with its layouts and reference scans)."""
    loaded = load_election_file(store, election_path, force=True)
    return loaded.election, loaded.changed


@dataclass(frozen=True)
class ElectionLoad:
    election: Election
    changed: bool
    changes: tuple[DefinitionChange, ...]  # against the definition stored before (none on a first load)
    cards: int  # cards stored when it was loaded
    warnings: tuple[str, ...] = ()  # what a person should look at in the layouts (:func:`layouts_against_blanks`)


def load_election_file(store: Store, election_path: Path, *, force: bool = False, actor: str | None = None,
                       accept_blank_marks: bool = False) -> ElectionLoad:
    """Validate a definition, say what changed against the stored one, and load it.

    Over stored cards, a change that would alter how they were read or counted (ids, vote-for,
    styles, layouts) is refused unless ``force``; a forced load is logged with its changes.
    A reference scan that shows a voter's mark in a target (:func:`marks_on_blanks`: a voted
    card given as the blank) is refused unless ``accept_blank_marks`` (logged; those targets
    are then always read by a person)."""
    path = election_path.resolve()
    if not path.is_file():
        raise SourceError(f"{election_path}: no such file")
    definition, layouts = read_definition(path)
    election = parse_election(definition, layouts, base=path.parent, file=str(path))
    references: dict[tuple[str, int], bytes] = {}
    for style in election.ballot_styles:
        for page in style.layout.pages:
            if page.reference is not None:
                references[(style.id, page.page)] = Path(page.reference).read_bytes()
    blanks = reference_blanks(election, references)
    if marked := marks_on_blanks(blanks):
        lines = [f"{style.layout.path or style.id} ({style.id} page {page}, reference {name}): marks in {', '.join(options)}"
                 for style, page, name, options in marked]
        if not accept_blank_marks:
            raise ConfigError(f"{election_path}: a reference scan shows marks in its targets, as a voted card does:\n  "
                              + "\n  ".join(lines) + "\nA mark on the blank hides the same mark on every card read against "
                              "it. Give the style's unmarked blank, or make one from its voted cards (`scanpipe calibrate "
                              "blank`). Nothing was loaded. If these are printed, not marks (you have looked), run again "
                              "with --accept-blank-marks (logged): those targets are then always read by a person.")
        store.log_event("blank_marks_accepted", {"file": str(path), "marked": lines}, actor=actor)
    changes: tuple[DefinitionChange, ...] = ()
    cards = 0
    if store.elections():
        record = store.current_election_record()
        changes = tuple(definition_changes(record.definition, record.layouts, definition, layouts))
        cards = store.count_cards()
        altering = [c.text for c in changes if c.alters_readings]
        if altering and cards and not force:
            raise ConfigError(f"{election_path}: this definition differs from the one {cards} stored card(s) were read with, in ways "
                              "that change how they are read or counted:\n  " + "\n  ".join(altering)
                              + "\nnothing was loaded. If this is intended, run again with --force (logged): the stored readings are kept and "
                                "are counted under the new definition.")
        if altering and cards:
            store.log_event("election_forced", {"file": str(path), "cards": cards, "changes": altering}, actor=actor)
    changed = store.load_election(definition, layouts, election, references=references, actor=actor)
    return ElectionLoad(election, changed, changes, cards, tuple(layouts_against_blanks(blanks)))


@dataclass(frozen=True)
class ReferenceBlank:
    """A layout page's reference scan, decoded once for the checks of a definition's load."""

    style: BallotStyle
    page: LayoutPage
    blank: DecodedPage
    dpi: float  # the blank's resolution as the reader takes it (:func:`scanpipe.imaging.reference.reference_dpi`)


def reference_blanks(election: Election, references: Mapping[tuple[str, int], bytes]) -> list[ReferenceBlank]:
    """Every layout page's reference scan that decodes; one that does not is left to the
    reader (which says so)."""
    from scanpipe.imaging.decode import ImageDecodeError, decode_card_bytes
    from scanpipe.imaging.reference import reference_dpi, reference_page

    out = []
    for style in election.ballot_styles:
        for page in style.layout.pages:
            data = references.get((style.id, page.page))
            if data is None or page.reference is None or page.reference_dpi is None:
                continue
            try:
                blank = reference_page(decode_card_bytes(data, Path(page.reference).name), page.page)
            except (ImageDecodeError, IndexError):
                continue
            out.append(ReferenceBlank(style, page, blank, reference_dpi(blank, page.reference_dpi, page.size_in)))
    return out


def layouts_against_blanks(blanks: Sequence[ReferenceBlank]) -> list[str]:
    """What a person should look at in the layouts, seen against their blanks: a
    ``reference_dpi`` the blank's size contradicts (the reader goes by the size), and a page
    where under half of the target boxes lie on a target the blank prints (an oval, a box, a
    broken arrow: :func:`scanpipe.imaging.target_snap.targets_printed`): a layout drawn on another
    blank or at another resolution (its boxes are read where they say, and may read nothing)."""
    from scanpipe.imaging.reference import dpi_contradicted
    from scanpipe.imaging.target_snap import MIN_FOUND, targets_printed

    out = []
    for b in blanks:
        style, page, blank, dpi = b.style, b.page, b.blank, b.dpi
        where = f"{style.layout.path or style.id} ({style.id} page {page.page}, reference {Path(str(page.reference)).name})"
        if page.reference_dpi is not None and (why := dpi_contradicted(blank, page.reference_dpi, page.size_in, dpi)):
            out.append(f"{where}: {why}")
        found = targets_printed(blank.image, dpi, [t.box_in for t in page.targets])
        if len(found) >= 2 and sum(found) < MIN_FOUND * len(found):
            out.append(f"{where}: {sum(found)} of {len(found)} target boxes lie on a target the blank prints (a dark "
                       "outline of the box's size, or a broken arrow's gap); is the layout drawn on this blank, at its "
                       "reference_dpi? (targets printed light are not seen here: then all is well)")
    return out


def marks_on_blanks(blanks: Sequence[ReferenceBlank]) -> list[tuple[Any, int, str, list[str]]]:
    """Per reference scan that shows a voter's mark in a target
    (:func:`scanpipe.imaging.blank_marks.marked_on_blank`): its style, page, file name and
    the options marked."""
    from scanpipe.imaging.blank_marks import marked_on_blank

    found = []
    for b in blanks:
        flags = marked_on_blank(b.blank.image, b.dpi, [t.box_in for t in b.page.targets])
        if flags.any():
            found.append((b.style, b.page.page, Path(str(b.page.reference)).name,
                          [t.option for t, f in zip(b.page.targets, flags, strict=True) if f]))
    return found


def interpret_context(store: Store, thresholds: Thresholds | None = None) -> InterpretContext:
    election = store.current_election()
    chosen = thresholds or election_thresholds(store, election.id) or load_thresholds()
    return InterpretContext(election, chosen, load_references(election, store.layout_references()))


THRESHOLDS_EVENT = "election_thresholds"


def election_thresholds(store: Store, election_id: str) -> Thresholds | None:
    """The thresholds recorded for this election (``calibrate election --apply``), if any."""
    from scanpipe.classify import thresholds_from_mapping

    for event in reversed(store.events(THRESHOLDS_EVENT)):
        if event.detail.get("election") == election_id:
            return thresholds_from_mapping(event.detail["thresholds"], source=str(event.detail.get("source", "")))
    return None


def calibrate_election(store: Store, *, apply: bool, actor: str | None = None) -> tuple[Any, int]:
    """Derive the election's thresholds from its stored scores; with ``apply``, record them in
    the log (with their provenance) and read every stored card again from its raw scores.
    Returns the derivation and how many cards changed."""
    from dataclasses import asdict

    from scanpipe.calibration.election import derive_for_election
    from scanpipe.interpret import reclassify

    election = store.current_election()
    scores = [t.score.score for c in store.iter_cards() if isinstance(c.card.interpretation, ReadCard)
              for t in c.card.interpretation.targets]
    derived = derive_for_election(scores, load_thresholds(), election=election.id)
    if not apply:
        return derived, 0
    thresholds = derived.thresholds
    store.log_event(THRESHOLDS_EVENT, {"election": election.id, "thresholds": {k: v for k, v in asdict(thresholds).items()},
                                       "source": thresholds.source, "targets": derived.targets,
                                       "empty_top": derived.empty_top, "marked_bottom": derived.marked_bottom}, actor=actor)
    changed = 0
    for stored in list(store.iter_cards()):
        new = reclassify(stored.card, election, thresholds)
        if new is not None:
            store.replace_interpretation(new, thresholds_source=thresholds.source, actor=actor)
            changed += 1
    return derived, changed


def ingest_paths(
    store: Store,
    paths: Sequence[str],
    *,
    batch: str,
    hints: CardHints,
    workers: int = 1,
    executor: str = "local",
    scheduler: str | None = None,
    on_card: Callable[[InterpretedCard, bool], None] | None = None,
    on_file: Callable[[FileResult], None] | None = None,
    on_total: Callable[[int], None] | None = None,
    duplex: bool = False,
) -> IngestSummary:
    """Read card files into the store. Re-ingesting the same bytes changes nothing.

    ``duplex``: the files are a duplex scan's sides, a file each, saved by software other than
    ``scan --duplex`` (whose manifest says so itself): in each folder, in name order, they are
    taken two by two as one sheet's front and back (:func:`sheets_in_order`), and each sheet is
    told as a duplex scan's is (one style, blank backs, the other side's show-through)."""
    started = datetime.now(UTC)
    found = find_card_files(paths)
    files, skipped = found.cards, found.skipped
    record = store.ensure_batch(batch, style=hints.style, precinct=hints.precinct, kind=hints.kind)
    hints = CardHints(style=hints.style or record.style, precinct=hints.precinct or record.precinct, kind=hints.kind or record.kind)
    context = interpret_context(store)
    _check_hints(context.election, hints)
    known = frozenset(store.known_sha256_all())
    summary = IngestSummary(skipped=list(skipped))
    for path, reason in skipped:
        store.record_skipped(storable_path(path), batch, reason)
    if on_total is not None:
        on_total(len(files))
    store.log_event("ingest_started", {"batch": batch, "files": len(files), "paths": list(paths)})
    if executor == "dask":
        from scanpipe.scale import run_dask

        results = run_dask(files, context, hints, batch, known, scheduler=scheduler, workers=workers)
    else:
        results = run_local(files, context, hints, batch, known, workers,
                            marks=ReadingMarks.default(store.safe_url) if workers <= 1 else None)
    read_now = list(found.folders)

    sides: list[tuple[str, str]] = []  # (path, SHA-256) of every file read, for --duplex

    def file_read(result: FileResult) -> None:
        if result.error is None:
            read_now.append(result.path)
            sides.append((result.path, result.sha256))
        if on_file is not None:
            on_file(result)

    blank_now: dict[str, str] = {}  # card id -> path of the pages this run stored as blank, for the summary
    counted_now: set[str] = set()  # card ids the summary counts

    def card_stored(card: InterpretedCard, flagged: bool) -> None:
        counted_now.add(card.source.card_id)
        if isinstance(card.interpretation, UnreadableCard) and card.interpretation.reason is Reason.BLANK_PAGE:
            blank_now[card.source.card_id] = card.source.path
        if on_card is not None:
            on_card(card, flagged)

    try:
        store_results(results, store.save_cards, summary, on_card=card_stored, on_file=file_read)
    finally:
        for path, reason in summary.missing:
            store.record_skipped(storable_path(path), batch, reason)
        forget_skipped(store, read_now)
    sheets = sheets_in_order(sides) if duplex else []
    for old, new in tell_duplex_sheet_styles(store, context, [Path(p) for p, _why in found.skipped], hints, sheets):
        if old.source.card_id in counted_now:  # counted above as it was read first
            summary.retold(old, new)
    if not duplex:  # a duplex scan saved as a file a side, not said so: neighbours that may be a sheet
        for old, new in tell_neighbour_show_through(store, context, neighbours_in_order(sides)):
            if old.source.card_id in counted_now:
                summary.retold(old, new)
    for card_id in tell_duplex_blank_backs(store, context.election, (Path(p) for p, _why in found.skipped), sheets):
        summary.blank_backs += 1
        if card_id in blank_now:  # counted above as a blank page for a person: no longer
            summary.needs_person -= 1
            summary.unreadable[Reason.BLANK_PAGE.value] -= 1
            summary.unreadable_cards = [u for u in summary.unreadable_cards if u[0] != blank_now[card_id]]
    summary.unreadable += Counter()  # drop counts that fell to nothing
    summary.seconds = (datetime.now(UTC) - started).total_seconds()
    store.log_event("ingest_finished", {"batch": batch, "stored": summary.cards_stored, "files": summary.files})
    return summary


def forget_skipped(store: Store, read: Sequence[str]) -> None:
    """Entries skipped earlier that were read (files) or listed (folders) now: no longer
    skipped, so no longer queued; logged."""
    cleared = store.clear_skipped(storable_path(p) for p in read)
    if cleared:
        store.log_event("skipped_now_read", {"paths": cleared})


def _check_hints(election: Election, hints: CardHints) -> None:
    if hints.style is not None and not election.has_style(hints.style):
        raise ConfigError(f"--style {hints.style}: election '{election.id}' has no such ballot style")
    if hints.precinct is not None and not election.has_precinct(hints.precinct):
        raise ConfigError(f"--precinct {hints.precinct}: election '{election.id}' has no such precinct")


# --------------------------------------------------------------------------------------
# Counting


def to_decision(record: object) -> Decision:
    """A stored decision as the pure core's value."""
    return Decision(
        id=record.id, item=record.item, item_kind=str(record.item_kind), contest=record.contest,  # type: ignore[attr-defined]
        votes=tuple(record.votes), auditors=tuple(record.auditors), state=DecisionState(str(record.state)),  # type: ignore[attr-defined]
        rule=record.rule, note=record.note, created_at=str(record.created_at), supersedes=record.supersedes,  # type: ignore[attr-defined]
    )


@dataclass(frozen=True)
class Standing:
    """Everything counted at one moment: per card (pairs applied), the pairs, the decisions."""

    election: Election
    counts: tuple[CardCount, ...]
    decisions: tuple[Decision, ...]
    pairs: tuple[PairOutcome, ...] = ()
    pairings: tuple[Pairing, ...] = ()
    cards: tuple[InterpretedCard, ...] = ()  # the cards that carry a serial (labelled or stated)


def standing(store: Store, *, serial: str | None = None) -> Standing:
    """Read every card and decision and say what counts (the one truth for tally, queue, CVR).

    Cards are read without their per-target raw scores (counting needs the contest readings
    and statuses only): ``Standing.cards`` is for pairing and counting; load a card whole
    with ``store.get_card`` to show or export its targets.

    ``serial``: only that base serial's cards (labelled with it, or stated by a person) and
    its new duplicates: what reconciling one serial after a decision needs, without reading
    every card. Its ``counts`` cover those cards only (never a tally)."""
    election = store.current_election()
    decisions = tuple(to_decision(d) for d in store.decisions())
    finals = final_decisions(decisions)
    identified = store.identifications()
    stated = store.stated_serials()
    set_aside = store.page_rulings()  # pages the board ruled are no ballot card: like a voided batch's, they count nothing
    cards: list[InterpretedCard] = []  # only cards that may pair: the rest is not kept in memory
    per_card: dict[str, CardCount] = {}
    if serial is None:
        stored_cards: Iterable[StoredCard] = store.iter_cards(targets=False)
    else:  # its labelled cards and those a person stated it for; a person's statement wins over a label
        mine = sorted(cid for cid, text in stated.items() if text.partition("-R")[0] == serial)
        stored_cards = (c for c in store.cards_of_serial(serial, also=mine, targets=False)
                        if (serial_of(c.card, stated) or ("",))[0] == serial)
    for stored in stored_cards:
        if stored.card.label is not None or stored.card_id in stated:
            cards.append(stored.card)
        per_card[stored.card_id] = count_card(election, stored.card, finals, voided=stored.batch_voided or stored.card_id in set_aside,
                                              identified=identified.get(stored.card_id, (None, None)))
    voided = {cid for cid, c in per_card.items() if c.voided}
    current = store.new_duplicates(base_serial=serial)
    late = late_cards(cards, current)  # labelled with a serial people already resolved
    pairings = tuple(pair_cards((c for c in cards if c.source.card_id not in voided | late), stated))
    scopes = store.comparison_scopes(serial)
    rulings = store.board_rulings(serial)
    outcomes = tuple(resolve_pair(election, p, per_card, finals, scopes.get(p.serial, ComparisonScope()), rulings.get(p.serial))
                     for p in pairings)
    new_dups = {nd.base_serial: NewDuplicate(nd.serial, nd.base_serial, nd.style, nd.precinct, nd.contests, nd.auditors)
                for nd in current}
    live = {nd.serial for nd in current}
    counts = apply_pairs(per_card, outcomes, new_dups, election)
    reprints = {c.source.card_id: c for p in pairings for c in p.reprints}
    superseded = {cid for cid, c in reprints.items() if c.label is not None and c.label.serial not in live} | late
    counts = [replace(c, counts=False, card_pending=True, reasons=tuple(dict.fromkeys(c.reasons + (Reason.SUPERSEDED_LABEL,))))
              if c.card_id in superseded else replace(c, counts=False) if c.card_id in reprints else c for c in counts]
    return Standing(election, tuple(counts), decisions, outcomes, pairings, tuple(cards))


def sheets_in_order(sides: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """(front, back) SHA-256 of each sheet among ``sides`` ((path, SHA-256) of files read): in
    each folder, the files in name order (numbers by value: ``2`` before ``10``), taken two by
    two. A folder's odd last file is a sheet of its own. A pairing that is off (a page missing)
    shows as sides of two styles, held for a person (``style_conflict``)."""
    return [(files[k], files[k + 1]) for files in _folders_in_order(sides) for k in range(0, len(files) - 1, 2)]


def neighbours_in_order(sides: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """(first, second) SHA-256 of every two files next to each other in a folder's name order
    (:func:`sheets_in_order`'s order): the sheets a duplex scan saved as a file a side may be,
    whoever saved them (:func:`tell_neighbour_show_through` takes only those whose sides say so)."""
    return [(files[k], files[k + 1]) for files in _folders_in_order(sides) for k in range(len(files) - 1)]


def _folders_in_order(sides: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Per folder (in name order), the SHA-256 of its files in name order, numbers by value."""
    def natural(name: str) -> list[tuple[int, int | str]]:
        return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name) if part]

    by_folder: dict[str, list[tuple[str, str]]] = {}
    for path, sha in sides:
        by_folder.setdefault(str(Path(path).parent), []).append((Path(path).name, sha))
    return [[sha for _name, sha in sorted(by_folder[folder], key=lambda f: natural(f[0]))] for folder in sorted(by_folder)]


def tell_neighbour_show_through(store: Store, context: InterpretContext,
                                pairs: Sequence[tuple[str, str]]) -> list[tuple[InterpretedCard, InterpretedCard]]:
    """Files next to each other in name order that may be one sheet's sides
    (:func:`scanpipe.interpret.may_be_one_sheet`: one style, an odd page then the page after
    it), one of them with a light tone for a person: each side's such targets read again with
    the other side's show-through taken out (:func:`scanpipe.interpret.sheet_show_through`),
    which takes only a show-through it measures under three or more of the other side's marks,
    mirrored as a sheet turns, and far stronger than under the other mirror: two sides of
    different sheets show none, and stay as read. Nothing else of a sheet is told (its style,
    blank backs: ``ingest --duplex`` says the files are sheets). Each side read otherwise is
    reinterpreted (logged); returns (before, after) of each."""
    from scanpipe.interpret import may_be_one_sheet, sheet_show_through, show_through_may_change

    def unsettled(front: InterpretedCard, back: InterpretedCard) -> bool:
        return may_be_one_sheet(front, back) and show_through_may_change([front, back])

    changed = []
    for front_sha, back_sha in _sheets_to_tell(store, pairs, unsettled):
        front, back = store.get_card(front_sha), store.get_card(back_sha)
        if front is None or back is None:
            continue
        sides = [front.card, back.card]
        for old, new in zip(sides, sheet_show_through(sides, context), strict=True):
            if new != old:
                store.replace_interpretation(new, actor="ingest")
                changed.append((old, new))
    return changed


def tell_duplex_blank_backs(store: Store, election: Election, files: Iterable[Path],
                            sheets: Sequence[tuple[str, str]] = ()) -> list[str]:
    """Cards stored as blank pages that a duplex scan's manifest shows to be the blank backs of
    one-sided cards (a scan folder written by ``scan --duplex`` and ingested, on this
    workstation or another): the back side found blank after a front read so, or the front side
    of a card fed face down whose back (its face) reads so. Each is reinterpreted as
    ``blank_back`` (logged); returns their card ids. ``files``: what ingest found that is no
    card file (a scan folder's manifest among them). Only the sheets :func:`_sheets_to_tell`
    finds unsettled are loaded whole."""
    from scanpipe.interpret import blank_back

    def unsettled(front: InterpretedCard, back: InterpretedCard) -> bool:
        return blank_back(front, back, election) is not back or blank_back(back, front, election) is not front

    return [card.source.card_id for front, back in _sheets_to_tell(store, _duplex_sheets(files) + list(sheets), unsettled)
            for card in tell_sheet_blank_backs(store, election, front, back, actor="ingest")]


def tell_duplex_sheet_styles(store: Store, context: InterpretContext, files: Iterable[Path],
                             hints: CardHints, sheets: Sequence[tuple[str, str]] = ()) -> list[tuple[InterpretedCard, InterpretedCard]]:
    """The sides of every sheet a duplex scan's manifest names (:func:`tell_duplex_blank_backs`)
    read as one style (:func:`tell_sheet_style`); (before, after) of each side told otherwise.
    Only the sheets :func:`_sheets_to_tell` finds unsettled are loaded whole."""
    from scanpipe.interpret import sheet_style, show_through_may_change

    def unsettled(front: InterpretedCard, back: InterpretedCard) -> bool:
        rereads: list[InterpretedCard] = []

        def reread(side: InterpretedCard, _style: str) -> None:  # what would be read again: unsettled
            rereads.append(side)

        told = sheet_style([front, back], context.election, reread)
        return bool(rereads) or told != [front, back] or show_through_may_change(told)

    return [told for front, back in _sheets_to_tell(store, _duplex_sheets(files) + list(sheets), unsettled)
            for told in tell_sheet_style(store, context, front, back, hints=hints, actor="ingest")]


def _sheets_to_tell(store: Store, sheets: Sequence[tuple[str, str]],
                    unsettled: Callable[[InterpretedCard, InterpretedCard], bool]) -> list[tuple[str, str]]:
    """The sheets (front, back SHA-256) both of whose sides are stored and which ``unsettled``
    says a telling would change, judged on the sides loaded without their targets (a telling
    looks at the sides' readings, never at their targets' scores): a few queries however many
    sheets a folder holds. What is settled is so however it came to be stored (a rerun over a
    folder told whole loads no sheet again), and a sheet whose sides were stored by a run that
    stopped before telling it is told by the next."""
    stored = store.get_cards({side for sheet in sheets for side in sheet}, targets=False)
    return [(front, back) for front, back in sheets
            if front in stored and back in stored and stored[front].card.source.page_count == 1 == stored[back].card.source.page_count
            and unsettled(stored[front].card, stored[back].card)]


def _duplex_sheets(files: Iterable[Path]) -> list[tuple[str, str]]:
    """(front, back) SHA-256 of every sheet the duplex scans' manifests among ``files`` name."""
    from scanpipe.scan import MANIFEST, Manifest

    manifests = {f.parent for f in files if f.name == MANIFEST}
    return [sheet for folder in sorted(manifests) for sheet in Manifest.duplex_sheets(folder)]


def tell_sheet_style(store: Store, context: InterpretContext, front_sha: str, back_sha: str, *, hints: CardHints,
                     actor: str) -> list[tuple[InterpretedCard, InterpretedCard]]:
    """The stored sides of one duplex-scanned sheet (single-page files, whose card id is their
    SHA-256) read as one ballot style, as a two-page file's sides are
    (:func:`scanpipe.interpret.sheet_style`): a side too close to call (``ambiguous_style``) is
    read again from its file as the style of its other side, and taken when it reads as
    another page of it; two sides read as two styles, or as one page twice, are both held
    (``style_conflict``). Then each side's light tones a person was to read are read again with
    the other side's show-through taken out (:func:`scanpipe.interpret.sheet_show_through`).
    Each side told otherwise is reinterpreted (logged); returns (before, after) of each."""
    from scanpipe.interpret import reread_card, sheet_show_through, sheet_style

    front, back = store.get_card(front_sha), store.get_card(back_sha)
    if front is None or back is None:
        return []
    sides = [front.card, back.card]
    told = sheet_style(sides, context.election, lambda side, style: reread_card(side, context, replace(hints, style=style, page=None)))
    told = sheet_show_through(told, context)
    changed = [(old, new) for old, new in zip(sides, told, strict=True) if new != old]
    for _old, new in changed:
        store.replace_interpretation(new, actor=actor)
    return changed


def tell_sheet_blank_backs(store: Store, election: Election, front_sha: str, back_sha: str, *, actor: str) -> list[InterpretedCard]:
    """The stored sides of one duplex-scanned sheet (single-page files, whose card id is their
    SHA-256) that are a one-sided card's blank back (:func:`scanpipe.interpret.blank_back`):
    the back found blank after a front read so, or the front of a card fed face down whose
    back, its face, reads so. Each is reinterpreted as ``blank_back`` (logged) and returned."""
    from scanpipe.interpret import blank_back

    front, back = store.get_card(front_sha), store.get_card(back_sha)
    if front is None or back is None:
        return []
    told = []
    for read, blank in ((front, back), (back, front)):
        card = blank_back(read.card, blank.card, election)
        if card is not blank.card:
            store.replace_interpretation(card, actor=actor)
            told.append(card)
    return told


def late_cards(cards: Sequence[InterpretedCard], current: Sequence[object]) -> set[str]:
    """Cards labelled with a base serial whose pair people already resolved with a new
    duplicate, but which were not part of that decision: they must not reopen it."""
    decided = {nd.base_serial: set(nd.superseded_cards) | set(nd.original_cards) for nd in current}  # type: ignore[attr-defined]
    return {c.source.card_id for c in cards
            if c.label is not None and c.label.revision is None and c.label.base_serial in decided
            and c.source.card_id not in decided[c.label.base_serial]}


def tally(store: Store) -> list[TallyRow]:
    s = standing(store)
    return tally_precincts(s.election, s.counts)


def files_not_read(store: Store) -> list[tuple[str, str]]:
    """Card files (and folders) ingest found but could not read, and has not read since:
    ``(path, reason)``, the first reason recorded for a path."""
    out: dict[str, str] = {}
    for row in store.skipped_files():
        if may_hold_cards(row.path):
            out.setdefault(row.path, row.reason)
    return list(out.items())


def queue(store: Store) -> list[QueueItem]:
    """What needs a person; while a recount case is open, only what its scope needs."""
    from scanpipe.recount.scope import scope_items
    from scanpipe.recount.service import active_scope

    return scope_items(queue_of(standing(store), files_not_read(store)), active_scope(store))


def queue_of(s: Standing, not_read: Sequence[tuple[str, str]] = ()) -> list[QueueItem]:
    """Every item of a standing awaiting a person (no recount scope applied); ``not_read``:
    the card files ingest could not read (:func:`files_not_read`), listed as ``file`` items."""
    paired = {cid for p in s.pairs for cid in (*p.duplicates, *p.originals)}
    return build_queue(s.counts, s.decisions, s.pairs, paired_cards=paired, files_not_read=not_read)


# --------------------------------------------------------------------------------------
# People's decisions


def resolve_card(store: Store, card_ref: str):  # noqa: ANN201 - StoredCard
    """A card by id, a unique prefix of its id, its place ``BATCH#SEQ`` or the path it was
    ingested from."""
    found = store.card_id_for(card_ref)
    card = store.get_card(found) if found is not None else None
    if card is None and Path(card_ref).exists():
        card = store.find_card_by_path(str(Path(card_ref)))
    if card is None:
        raise DecisionError(f"{card_ref}: no stored card has this id, id prefix, place (BATCH#SEQ) or path")
    return card


def identify(store: Store, card_ref: str, *, style: str | None, page: int | None, precinct: str | None, kind: CardKind | None, serial: str | None, actor: str | None = None) -> InterpretedCard:
    """A person states what the machine could not tell; the card is interpreted again."""
    stored = resolve_card(store, card_ref)
    context = interpret_context(store)
    election = context.election
    if style is not None and not election.has_style(style):
        raise DecisionError(f"--style {style}: election '{election.id}' has no such ballot style")
    if precinct is not None and not election.has_precinct(precinct):
        raise DecisionError(f"--precinct {precinct}: election '{election.id}' has no such precinct")
    src = stored.card.source
    path = Path(src.path)
    if not path.is_file():
        raise SourceError(f"{src.path}: the card's image is no longer there, so it cannot be read again")
    hints = CardHints(style=style, page=page, precinct=precinct, kind=kind, serial=serial)
    cards = interpret_file(src.path, context, hints, src.batch)
    card = next((c for c in cards if c.source.card_id == src.card_id), None)
    if card is None:
        raise SourceError(f"{src.path}: the file no longer has the bytes ingested as card {src.card_id}")
    if kind is not None and card.kind is not kind:
        card = replace(card, kind=kind)
    store.replace_interpretation(card)
    store.set_identification(src.card_id, style=style, precinct=precinct, kind=kind, serial=serial)
    store.log_event("identify", {"card": src.card_id, "style": style, "page": page, "precinct": precinct, "kind": kind and kind.value, "serial": serial}, actor=actor)
    return card


@dataclass(frozen=True)
class DecisionOutcome:
    decision_id: int
    state: DecisionState
    message: str
    new_duplicates: tuple[str, ...] = ()  # new duplicates the decision made (their paper is in the database)


def adjudicate_card(
    store: Store, card_ref: str, *, contest: str, votes: Sequence[str], auditors: Sequence[str],
    attestation: Attestation, rule: str | None = None, note: str | None = None, write_ins: Mapping[str, str] | None = None,
) -> DecisionOutcome:
    """Record a person's reading of one contest of one card (contract section 5).

    A contest nothing queued (the machine read it clearly and no one is deciding it) is
    changed only with ``attestation.override`` (the reason, logged)."""
    stored = resolve_card(store, card_ref)
    election = store.current_election()
    card_id = stored.card_id
    s = standing(store)
    count = next(c for c in s.counts if c.card_id == card_id)
    carried = {r.contest for r in count.contests}
    if contest not in carried:
        what = ", ".join(sorted(carried)) or "none (identify the card's style first)"
        raise DecisionError(f"card {card_id} does not carry contest '{contest}'; its contests: {what}")
    paired = {cid for p in s.pairs for cid in (*p.duplicates, *p.originals)}
    queued = {c for item in build_queue(s.counts, s.decisions, s.pairs, paired_cards=paired) if item.item == card_id
              for c in item.contests}
    title = election.contest(contest).title
    if contest not in queued and attestation.override is None:
        raise DecisionError(f"card {card_id}: {title} ('{contest}') is not queued for a person (the machine's reading stands); "
                            "to change it anyway pass --override --reason TEXT (logged)")
    if contest in queued and attestation.override is not None:
        attestation = replace(attestation, override=None)  # nothing to override: it is queued
    return record_decision(store, election, item=card_id, item_kind="card", contest=contest, votes=votes, auditors=auditors,
                           rule=rule, note=note, attestation=attestation, write_ins=write_ins)


def record_decision(
    store: Store, election: Election, *, item: str, item_kind: str, contest: str, votes: Sequence[str],
    auditors: Sequence[str], rule: str | None, note: str | None, attestation: Attestation, board: BoardVotes | None = None,
    write_ins: Mapping[str, str] | None = None,
) -> DecisionOutcome:
    """Apply the two-people rule and store the decision in one transaction.

    ``attestation``: with accounts, every auditor must be an active review account (a board
    member's account for a board decision) and the second half must come from another
    operator than the first; without (a test deck), the database must have no account.
    ``board``: the board settles an escalated contest (``auditors`` are the members who voted
    for the reading); the escalation is superseded, the final decision, every member's vote
    and the ``board_decision`` log entry are written in that same transaction.
    """
    c = election.contest(contest)
    valid = {o.id for o in c.options}
    bad = [v for v in votes if v not in valid]
    if bad:
        raise DecisionError(f"--votes: {', '.join(bad)} not an option of contest '{contest}' ({', '.join(sorted(valid))})")
    auditors = [a.strip() for a in auditors if a.strip()]
    if not auditors:
        raise DecisionError("a decision needs at least one --auditor")
    if len(set(auditors)) != len(auditors):
        raise DecisionError(f"the same auditor is named twice: {', '.join(auditors)}")
    rules = rule_set(election.jurisdiction)
    if rule is not None and rule not in rules.intent_rule_codes():
        raise DecisionError(f"--rule {rule}: not a voter-intent rule of {rules.name}; rules: {', '.join(rules.intent_rule_codes())}")
    ordered = tuple(o.id for o in c.options if o.id in set(votes))
    names = checked_write_ins(c, ordered, write_ins or {})
    with store.transaction() as tx:
        tx.check_attestation(auditors, attestation, role="board" if board is not None else "auditor")
        existing = [to_decision(d) for d in tx.decisions(item=item) if d.contest == contest]
        first = next((d for d in reversed(existing) if d.state is DecisionState.FIRST_HALF), None)
        if first is not None and board is None and rules.two_auditors and len(auditors) < 2 and auditors[0] not in first.auditors:
            check_second_half(tx.operator_of(first.id), attestation)
        plan = plan_decision(existing, ordered, tuple(auditors), two_auditors=rules.two_auditors,
                             board_settles=board.escalation if board is not None else None)
        for old_id, state in plan.updates:
            tx.set_decision_state(old_id, state.value)
        new = tx.add_decision(item=item, item_kind=item_kind, contest=contest, votes=list(ordered), auditors=list(plan.auditors), rule=rule, note=note, state=plan.state.value, supersedes=plan.supersedes,
                              rule_set=rules.id)
        tx.add_write_in_names(new.id, names)
        tx.attest(new.id, attestation)
        how = {"operator": attestation.operator, "accounts": attestation.accounts}
        if attestation.override is not None:
            how["override"] = attestation.override
        if len(auditors) >= 2 and board is None:
            how["joint"] = True
        if names:
            how["write_ins"] = names
        tx.log_event("decision", {"item": item, "contest": contest, "votes": list(ordered), "auditors": list(plan.auditors), "state": plan.state.value, "rule": rule,
                                  "rule_set": rules.id, **how}, actor=",".join(auditors))
        if board is not None:
            if board.proposal is not None:
                tx.close_proposal(board.proposal, members=board.members, decision_id=new.id, closed_by=board.actor)
            tx.add_board_votes(new.id, board.members)
            tx.log_event("board_decision", {"item": item, "contest": contest, "votes": list(ordered), "members": dict(board.members),
                                            "decision": new.id, "replaces": [old_id for old_id, _ in plan.updates]}, actor=board.actor)
    return DecisionOutcome(new.id, plan.state, plan.message)


WRITE_IN_NAME_MAX = 200


def checked_write_ins(contest: Contest, votes: Sequence[str], write_ins: Mapping[str, str]) -> dict[str, str]:
    """The write-in names to keep: each for a write-in option of ``contest`` that the decision
    counts (a name beside an option not voted is refused, not silently dropped)."""
    kept: dict[str, str] = {}
    write_in_options = {o.id for o in contest.options if o.write_in}
    for option, name in write_ins.items():
        name = " ".join(name.split())
        if not name:
            continue
        if option not in write_in_options:
            raise DecisionError(f"a write-in name was given for {option}, which is not a write-in option of {contest.title}")
        if option not in votes:
            raise DecisionError(f"a write-in name ({name}) was given, but the decision does not count the write-in of {contest.title}: "
                                "tick the write-in option too, or clear the name")
        if len(name) > WRITE_IN_NAME_MAX:
            raise DecisionError(f"the write-in name is longer than {WRITE_IN_NAME_MAX} characters")
        kept[option] = name
    return kept


@dataclass(frozen=True)
class BoardVotes:
    """A board decision: the open escalation it settles, each member present with their vote
    (``for`` / ``against`` / ``abstain`` the reading, each cast from that member's own login
    on ``proposal``), and who closed the vote."""

    escalation: int
    members: Mapping[str, str]
    actor: str
    proposal: int | None = None
