"""Interpret one card file: bytes in, :class:`~scanpipe.types.InterpretedCard` values out.

This is the one orchestrator of the imaging stages and reads top to bottom:

1. decode the file into pages (an undecodable file is one UnreadableCard);
2. per page, read its codes (card code QR, pairing label Code 128, SPV1 record);
3. decide the style and page: card code, else the batch's ``--style``, else matching the
   layouts' reference scans;
4. register the page (fiducials, else the reference; upside-down feeds turned);
5. score every target, classify each score, apply the contest rules;
6. collect what a person must still look at as reason codes.

Per-card problems never raise: each becomes a value with a reason. Pages of one file share
the kind and serial found on any of them (contract section 4).
"""

from __future__ import annotations

import hashlib
import logging
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import cv2
import numpy as np

from scanpipe.classify import (
    Thresholds,
    classify_contest,
    classify_target,
    is_between_levels,
    is_write_in_flag,
    settle_page,
)
from scanpipe.errors import ConfigError
from scanpipe.imaging import show_through
from scanpipe.imaging.codes import (
    LabelCandidate,
    PageBox,
    barcode_like_boxes,
    find_codes_fast,
    find_qr,
    looks_like_barcode,
    parse_card_code,
    parse_machine_record,
    parse_pairing_label,
    printed_codes_in,
    shows_blank_print,
    shows_qr,
    speckle_made,
    symbol_box,
    vendor_printed,
)
from scanpipe.imaging.decode import DecodedPage, ImageDecodeError, decode_card_bytes, iter_card_pages
from scanpipe.imaging.marks import score_targets
from scanpipe.imaging.page import print_darkness, print_restored, without_bed
from scanpipe.imaging.reference import (
    PageModel,
    ReferenceIndex,
    dpi_contradicted,
    learn_page,
    paper_level,
    printed_share,
    reference_dpi,
    reference_page,
)
from scanpipe.imaging.registration import RegistrationFailure, register_card
from scanpipe.imaging.streaks import (
    PAINT_BESIDE,
    Streak,
    StreakLine,
    crossing,
    light_streaks,
    nothing_under,
    on_print,
    painted_over,
    streak_line,
    upright_columns,
    vertical_streaks,
)
from scanpipe.imaging.style import StyleAmbiguous, StyleMatch, StyleUnknown, build_style_groups, identify_style
from scanpipe.imaging.target_snap import snapped_page
from scanpipe.types import (
    Box,
    CardCode,
    CardHints,
    CardKind,
    CardSource,
    CodeSymbology,
    ContestOutcome,
    ContestReading,
    DamageCause,
    DecodedCode,
    Election,
    InterpretedCard,
    LayoutPage,
    MachinePrintedCard,
    MachineRecord,
    MarkStatus,
    PairingLabel,
    ReadCard,
    Reason,
    TargetReading,
    TargetScore,
    UnreadableCard,
)

log = logging.getLogger(__name__)

# A style hypothesis (an original read with its duplicate's style) is accepted only when
# this share of the layout's printed targets is seen where the layout puts them.
HYPOTHESIS_MIN_FIT = 0.9
LIGHT_STREAK_RETRY = frozenset({Reason.UNKNOWN_STYLE, Reason.REGISTRATION_FAILED})  # refusals read again past a light streak
STREAK_PAINT_MAX_SHARE = 0.25  # a crossed target is read with the streak painted over only where the painted band is this share of its width or less
# The smallest image side worth reading: a 3-inch VVPAT record at 100 dpi.
MIN_PAGE_SIDE_PX = 300
# A page with print on less than this share of it is blank (the back of a card printed on one
# side, scanned on both; a sheet fed by mistake): a ballot side, timing marks and all, carries
# a few percent; a blank sheet's specks and dust 0.001%
BLANK_PAGE_PRINTED = 0.0005
BLANK_PAGE_WHY = (" (a ballot side carries a few percent): the back of a card printed on one side, a sheet fed by mistake, "
                  "or a card fed face down on a one-sided scanner")  # a blank page's detail after its figure
SHEET_SIDES = 2  # a file of this many pages is one sheet (front and back); one of more is a stack of cards


@dataclass(frozen=True)
class InterpretContext:
    """Everything interpretation needs besides the image: built once, sent to every worker.

    ``index`` is what the reader learned from the layouts' blank reference scans (page models,
    style groups); it is built explicitly (:func:`load_references`) and carried here, so a
    card's reading never depends on module state or on the cards read before it.
    """

    election: Election
    thresholds: Thresholds
    index: ReferenceIndex = field(default_factory=ReferenceIndex)

    def reference_for(self, style: str, page: int) -> np.ndarray | None:
        model = self.index.get(style, page)
        return None if model is None else model.image

    @cached_property
    def blank_print_darkness(self) -> float | None:
        """The median darkness of the blanks' darkest print (:func:`~scanpipe.imaging.page.print_darkness`;
        None without blanks): a washed-out card's print is restored to it."""
        values = [print_darkness(model.image)[1] for model in self.index]
        return float(np.median(values)) if values else None

    @cached_property
    def qr_boxes(self) -> tuple[Box, ...]:
        """Every layout's card-code box, once."""
        boxes = [p.qr_in for s in self.election.ballot_styles for p in s.layout.pages if p.qr_in is not None]
        return tuple(dict.fromkeys(boxes))


def _layout_page(context: InterpretContext, style: str, page: int) -> LayoutPage:
    """The layout's page, its target boxes snapped to the targets its blank prints
    (:mod:`scanpipe.imaging.target_snap`: a layout drawn a little loose or off reads)."""
    layout_page = next(p for p in context.election.style(style).layout.pages if p.page == page)
    model = context.index.get(style, page)
    if model is None:
        return layout_page
    return snapped_page(layout_page, model.image, model.dpi, model.memo)


def load_references(election: Election, stored: dict[tuple[str, int], bytes] | None = None, *,
                    cache: Path | None | bool = True) -> ReferenceIndex:
    """Decode the layouts' blank reference scans (the store's copy, else the file) and learn
    from them (page models, style groups): see :mod:`scanpipe.imaging.reference`. What was
    learned is kept between runs (:mod:`scanpipe.learned_cache`): ``cache`` True uses the
    folder the environment names, a path that folder, False or None none."""
    from scanpipe import learned_cache
    from scanpipe.imaging.decode import ImageDecodeError

    blanks: list[learned_cache.BlankInput] = []
    images: list[tuple[np.ndarray, float, tuple[bytes, str]]] = []
    contradicted: list[str] = []
    for style in election.ballot_styles:
        for page in style.layout.pages:
            key = (style.id, page.page)
            data = (stored or {}).get(key)
            if data is None and page.reference is not None and Path(page.reference).is_file():
                data = Path(page.reference).read_bytes()
            if data is None or page.reference_dpi is None:
                continue
            try:
                blank = reference_page(decode_card_bytes(data, str(page.reference)), page.page)
            except ImageDecodeError as e:
                raise ConfigError(f"{page.reference}: the reference scan of style {style.id} page {page.page} "
                                  f"cannot be read: {e.detail}") from None
            dpi = reference_dpi(blank, page.reference_dpi, page.size_in)
            if (why := dpi_contradicted(blank, page.reference_dpi, page.size_in, dpi)) is not None:
                contradicted.append(f"{page.reference}: {why}")
            boxes = tuple(t.box_in for t in page.targets) + tuple(t.write_in_area_in for t in page.targets if t.write_in_area_in)
            blanks.append(learned_cache.BlankInput(key, hashlib.sha256(data).hexdigest(), dpi, boxes, tuple(page.distinguish_in)))
            images.append((blank.image, dpi, (data, str(page.reference))))
    if contradicted:  # one line, not one per page and worker: `scanpipe init` lists every page
        log.warning("%d layout page(s) name a reference_dpi their blank's size contradicts, each read at its size's "
                    "resolution (correct the layouts; `scanpipe init` lists them): %s", len(contradicted), contradicted[0])
    folder = learned_cache.cache_dir() if cache is True else (cache or None)
    known = learned_cache.load(blanks, folder)
    keeper = learned_cache.pair_keeper(blanks, folder)
    if known is not None:
        models = [learn_page(b.key[0], b.key[1], image, dpi, p, source) for b, (image, dpi, source), p in zip(blanks, images, known.points, strict=True)]
        groups = known.style_groups(models, keeper)
        if groups is not None:
            return ReferenceIndex({m.key: m for m in models}, groups)
    models = [learn_page(b.key[0], b.key[1], image, dpi, source=source) for b, (image, dpi, source) in zip(blanks, images, strict=True)]
    groups = build_style_groups(models, {b.key: b.boxes for b in blanks}, {b.key: b.distinguish for b in blanks},
                                keeper=keeper)
    learned_cache.save(blanks, models, groups, folder)
    return ReferenceIndex({m.key: m for m in models}, groups)


# --------------------------------------------------------------------------------------
# The file level


def card_id_for(sha256: str, page_index: int) -> str:
    """The CVR UniqueId of a card: the file's SHA-256, ``-p<N>`` for page N > 1."""
    return sha256 if page_index == 1 else f"{sha256}-p{page_index}"


def interpret_file(path: str, context: InterpretContext, hints: CardHints, batch: str, *, data: bytes | None = None,
                   sha256: str | None = None) -> list[InterpretedCard]:
    """Read and interpret every page of one card file. Never raises for a bad card.

    ``sha256``: the hex digest of ``data``, when the caller passes both (saves hashing twice).
    """
    started = time.perf_counter()
    if data is None:
        data, sha256 = Path(path).read_bytes(), None
    sha = sha256 if sha256 is not None else hashlib.sha256(data).hexdigest()
    cards: list[InterpretedCard] = []
    try:
        for page in iter_card_pages(data, path):  # one decoded page in memory at a time
            source = CardSource(card_id_for(sha, page.page_index), sha, path, page.page_index, page.page_count, batch)
            cards.append(_interpret_page_safely(page, context, hints, source))
            del page
    except ImageDecodeError as e:
        return [unreadable_file_card(path, sha, batch, hints, UnreadableCard(e.reason, f"{path}: {e.detail}"), time.perf_counter() - started)]
    except Exception as e:  # noqa: BLE001 - one card never stops a batch (see internal_error)
        return [unreadable_file_card(path, sha, batch, hints, internal_error(path, "decoding", e), time.perf_counter() - started)]
    if len(cards) == SHEET_SIDES:
        cards = sheet_style(cards, context.election,
                            lambda card, style: _reread(data, path, card.source.page_index, context, replace(hints, style=style, page=None), cards))
        cards = _without_show_through(cards, lambda: list(iter_card_pages(data, path)), context, path)
    cards = blank_backs(share_sheet_identity(cards), context.election)
    elapsed = (time.perf_counter() - started) / max(1, len(cards))
    return [replace(c, seconds=elapsed) for c in cards]


def sheet_show_through(cards: list[InterpretedCard], context: InterpretContext) -> list[InterpretedCard]:
    """:func:`_without_show_through` for the two sides of a sheet stored as files of their own
    (a duplex scan's front and back): each side's page is read again from its file; a file
    gone or changed since leaves the sides as they were read."""
    def pages() -> list[DecodedPage]:
        out = []
        for card in cards:
            data = Path(card.source.path).read_bytes()
            if hashlib.sha256(data).hexdigest() != card.source.sha256:
                raise ValueError(f"{card.source.path} no longer holds the card's bytes")
            out.append(next(p for p in iter_card_pages(data, card.source.path) if p.page_index == card.source.page_index))
        return out

    return _without_show_through(cards, pages, context, " and ".join(c.source.path for c in cards))


def may_be_one_sheet(front: InterpretedCard, back: InterpretedCard) -> bool:
    """Whether two cards of single-page files, next to each other in name order, may be one
    sheet's sides as a duplex scan saves them: both read as one style, the first an odd page
    and the second the page after it (a sheet's front and back; the back of one sheet and the
    front of the next are an even page and an odd one). Only what the sides then show can
    confirm it (:func:`sheet_show_through` takes out only a show-through both measure)."""
    a, b = front.interpretation, back.interpretation
    return (isinstance(a, ReadCard) and isinstance(b, ReadCard) and a.style == b.style and a.page % 2 == 1
            and b.page == a.page + 1 and front.source.page_count == 1 == back.source.page_count)


def show_through_may_change(cards: Sequence[InterpretedCard]) -> bool:
    """Whether :func:`sheet_show_through` may read a side otherwise (judged on the sides'
    reasons alone): both sides read, one with a mark for a person, neither streaked."""
    results = [c.interpretation for c in cards]
    return (len(results) == SHEET_SIDES and all(isinstance(r, ReadCard) and Reason.SCANNER_STREAK not in r.reasons for r in results)
            and any(Reason.MARGINAL_MARK in r.reasons for r in results if isinstance(r, ReadCard)))


def _without_show_through(cards: list[InterpretedCard], pages: Callable[[], list[DecodedPage]], context: InterpretContext,
                          where: str) -> list[InterpretedCard]:
    """The two sides of one sheet (``pages()`` decodes them again: only a sheet with a light
    tone for a person pays for it, and a file's pages are never all held while it is read),
    each target a person was to read for a
    light tone (a score between the levels) read again with the other side's show-through
    taken out (:mod:`scanpipe.imaging.show_through`): where the other side's marks, mirrored
    as the sheet turns, account for the tone, the target reads as it is without them. Only a
    reading of no vote is taken from the corrected side; a vote, a clear no vote, a flag and
    every target of a side without a measurable show-through stand as read. A side crossed by a
    scanner streak is left as read. Never raises: the sides then stand as read (for a person)."""
    results = [c.interpretation for c in cards]
    if not all(isinstance(r, ReadCard) and Reason.SCANNER_STREAK not in r.reasons for r in results):
        return cards
    read = [r for r in results if isinstance(r, ReadCard)]
    if not any(is_between_levels(t) for r in read for t in r.targets):
        return cards
    try:
        sides = [_sheet_side(page, r, context) for page, r in zip(pages(), read, strict=True)]
        out = list(cards)
        for k, (card, result) in enumerate(zip(cards, read, strict=True)):
            here, there = sides[k], sides[1 - k]
            if here is None or there is None or not any(is_between_levels(t) for t in result.targets):
                continue
            show = show_through.measure(here.ink, here.blank, there.ink, there.blank)
            if show is None:
                continue
            corrected = show_through.taken_out(here.upright, here.hom, show_through.ghost(there.ink, there.blank, show))
            again = score_targets(corrected, result.registration, here.layout_page, reference=here.model.image,
                                  reference_dpi=here.model.dpi, reference_memo=here.model.memo)
            out[k] = replace(card, interpretation=_read_without(result, again, show, context, here.layout_page))
        return out
    except Exception as e:  # noqa: BLE001 - one sheet never stops a batch: its sides stand as read
        log.warning("%s: the other side's show-through could not be measured (%s: %s); the sides stand as read",
                    where, type(e).__name__, e, exc_info=e)
        return cards


@dataclass(frozen=True)
class _SheetSide:
    upright: np.ndarray
    hom: np.ndarray
    model: PageModel
    layout_page: LayoutPage
    ink: np.ndarray
    blank: np.ndarray


def _sheet_side(page: DecodedPage, result: ReadCard, context: InterpretContext) -> _SheetSide | None:
    """One side of a sheet as :func:`_without_show_through` compares it (None without a blank)."""
    model = context.index.get(result.style, result.page)
    if model is None:
        return None
    gray = _as_read(cv2.rotate(page.image, cv2.ROTATE_90_CLOCKWISE) if result.registration.quarter_turned else page.image, context)
    upright = cv2.rotate(gray, cv2.ROTATE_180) if result.registration.rotated_180 else gray
    hom = np.array(result.registration.homography, np.float64).reshape(3, 3)
    layout_page = _layout_page(context, result.style, result.page)
    key = ("show-through print", layout_page.size_in)
    if key not in model.memo:  # the blank's side, once per blank
        model.memo[key] = show_through.blank_print(model.image, model.dpi, layout_page.size_in)
    blank: np.ndarray = model.memo[key]  # type: ignore[assignment]
    return _SheetSide(upright, hom, model, layout_page, show_through.added_ink(upright, hom, blank, layout_page.size_in), blank)


def _read_without(result: ReadCard, again: Sequence[TargetScore], show: show_through.ShowThrough,
                  context: InterpretContext, layout_page: LayoutPage) -> ReadCard:
    """``result`` with each target between the levels that reads as no vote in ``again`` (the
    side scored without the other side's show-through) read so; contests and reasons anew."""
    readings = []
    for old, score in zip(result.targets, again, strict=True):
        new = classify_target(score, context.thresholds)
        if is_between_levels(old) and new.status is MarkStatus.NO:
            readings.append(replace(new, why=f"{new.why}, {show.describe()}"))
        else:
            readings.append(old)
    readings = list(_settled(context.election, readings, context.thresholds))
    if [r.status for r in readings] == [r.status for r in result.targets]:
        return result
    log.info("%s page %d: %d target(s) a light tone sent to a person read as no vote: %s", result.style, result.page,
             sum(a.status is not b.status for a, b in zip(readings, result.targets, strict=True)), show.describe())
    reasons: list[Reason] = [r for r in result.reasons if r is not Reason.MARGINAL_MARK]
    if any(_marginal(r, streaked=False) for r in readings):
        reasons.append(Reason.MARGINAL_MARK)
    return replace(result, targets=tuple(readings), contests=_contest_readings(context.election, layout_page, readings),
                   reasons=tuple(dict.fromkeys(reasons)))


def unreadable_file_card(path: str, sha: str, batch: str, hints: CardHints, result: UnreadableCard, seconds: float = 0.0) -> InterpretedCard:
    """The one card a file that cannot be decoded (or is over a limit) is stored as."""
    source = CardSource(card_id_for(sha, 1), sha, path, 1, 1, batch)
    return replace(InterpretedCard(source, hints.kind or CardKind.BALLOT, None, None, result), seconds=seconds)


def _interpret_page_safely(page: DecodedPage, context: InterpretContext, hints: CardHints, source: CardSource) -> InterpretedCard:
    """:func:`interpret_page`, with an unexpected error turned into this card's reason.

    This is the one place scanpipe catches every exception: whatever goes wrong while reading
    one card (a bug, an image no test foresaw) becomes that card's ``internal_error``, with the
    traceback logged, and the batch goes on. The card is stored and queued for a person.
    """
    try:
        return interpret_page(page, context, hints, source)
    except Exception as e:  # noqa: BLE001 - deliberate: one card never stops a batch
        where = source.path if source.page_count == 1 else f"{source.path} page {source.page_index}"
        return InterpretedCard(source, hints.kind or CardKind.BALLOT, None, None, internal_error(where, "reading", e))


def internal_error(where: str, stage: str, error: BaseException) -> UnreadableCard:
    """An unexpected error while handling one card, as that card's value; traceback logged."""
    frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    at = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    log.error("internal error while %s %s", stage, where, exc_info=error)
    message = " ".join(str(error).split())[:300]
    return UnreadableCard(Reason.INTERNAL_ERROR,
                          f"{where}: internal error while {stage} this card ({type(error).__name__}: {message}{at}); "
                          "it is kept for a person and the error is logged")


def sheet_style(cards: list[InterpretedCard], election: Election,
                reread: Callable[[InterpretedCard, str], InterpretedCard | None]) -> list[InterpretedCard]:
    """The two sides of one sheet (a two-page file, or two page files a duplex scan wrote) are
    one ballot style. A side whose style was too close to call (``ambiguous_style``: its page
    prints alike on several styles) is read again among the pages of the style its other side
    is read as (``reread(side, style)``), and taken when it reads as another page of that style. Two sides read as two
    different styles, or as the same page, are both held (``style_conflict``): one of them is
    misread, or the sheet is two cards (not where either style prints one side: an election
    may name a sheet's two sides as two styles)."""
    out = list(cards)
    for k in (0, 1):
        here, there = out[k].interpretation, out[1 - k].interpretation
        if (isinstance(here, UnreadableCard) and here.reason is Reason.AMBIGUOUS_STYLE and isinstance(there, ReadCard)
                and election.has_style(there.style) and len(election.style(there.style).layout.pages) > 1):
            again = reread(out[k], there.style)
            if again is not None and isinstance(again.interpretation, ReadCard) and again.interpretation.page != there.page:
                log.info("%s page %d: its style was too close to call; read as %s page %d, the style of its sheet's other side",
                         again.source.path, again.source.page_index, again.interpretation.style, again.interpretation.page)
                out[k] = again
    first, second = (c.interpretation for c in out)
    if not (isinstance(first, ReadCard) and isinstance(second, ReadCard)):
        return out
    two_sided = all(election.has_style(r.style) and len(election.style(r.style).layout.pages) > 1 for r in (first, second))
    if (first.style, first.page) == (second.style, second.page) or (first.style != second.style and two_sided):
        # (styles of one page each may be an election's way of naming a sheet's two sides)
        return [replace(c, interpretation=replace(r, reasons=tuple(dict.fromkeys((*r.reasons, Reason.STYLE_CONFLICT)))))
                for c, r in ((c, c.interpretation) for c in out) if isinstance(r, ReadCard)]
    return out


def _reread(data: bytes, path: str, index: int, context: InterpretContext, hints: CardHints,
            cards: list[InterpretedCard]) -> InterpretedCard | None:
    """Page ``index`` of the file decoded and interpreted again under ``hints``."""
    source = next(c.source for c in cards if c.source.page_index == index)
    try:
        page = next((p for p in iter_card_pages(data, path) if p.page_index == index), None)
    except ImageDecodeError:
        return None
    return None if page is None else _interpret_page_safely(page, context, hints, source)


def reread_card(card: InterpretedCard, context: InterpretContext, hints: CardHints) -> InterpretedCard | None:
    """A stored card's page read again from its file under ``hints`` (a duplex-scanned side as
    the style of its sheet's other side); None where the file is gone or no longer holds the
    card's bytes."""
    try:
        data = Path(card.source.path).read_bytes()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != card.source.sha256:
        return None
    return _reread(data, card.source.path, card.source.page_index, context, hints, [card])


def blank_back(front: InterpretedCard, back: InterpretedCard, election: Election) -> InterpretedCard:
    """``back`` as the blank back of a card printed on one side, where it is one: a page
    with nothing printed on it (``blank_page``) scanned with a front read as a style whose
    layout has a single page, or with a machine-printed record. Such a page holds nothing of
    the voter's and nothing for a person to decide (``blank_back``: kept, neither counted nor
    queued). Every other blank page stays ``blank_page`` for a person: one of a two-sided style
    (its print is missing), one beside a front that was not read, or a sheet alone."""
    back_result, front_result = back.interpretation, front.interpretation
    if not (isinstance(back_result, UnreadableCard) and back_result.reason is Reason.BLANK_PAGE):
        return back
    where = (f"page {front.source.page_index} of this sheet" if front.source.path == back.source.path
             else f"its front, {Path(front.source.path).name},")
    if isinstance(front_result, MachinePrintedCard):  # a printed record has one side
        front_is = f"{where} is a machine-printed record"
    elif (isinstance(front_result, ReadCard) and election.has_style(front_result.style)
          and len(election.style(front_result.style).layout.pages) == 1):
        front_is = f"{where} is read as style {front_result.style}, which prints one side only"
    else:
        return back
    detail = f"the blank back of a card printed on one side: {front_is} ({back_result.detail.removesuffix(BLANK_PAGE_WHY)})"
    return replace(back, interpretation=UnreadableCard(Reason.BLANK_BACK, detail))


def blank_backs(cards: list[InterpretedCard], election: Election) -> list[InterpretedCard]:
    """The pages of one sheet (a two-page file: front and back), a blank back of a one-sided
    card told as such (:func:`blank_back`)."""
    if len(cards) != SHEET_SIDES:
        return cards
    first, second = cards
    return [blank_back(second, first, election), blank_back(first, second, election)]


def share_sheet_identity(cards: list[InterpretedCard]) -> list[InterpretedCard]:
    """Pages of one sheet share the kind and pairing label found on any of them. A sheet has
    two sides: a file of more pages is a stack of cards (a scanner's batch saved as one PDF or
    TIFF), each page a card of its own, and nothing is shared (one sticker would otherwise
    make every ballot of the batch a duplicate, or an original that does not count)."""
    labels = {c.label for c in cards if c.label is not None}
    if len(cards) != SHEET_SIDES or len(labels) != 1:
        return cards
    (label,) = labels
    return [c if c.label is not None else replace(c, label=label, kind=label.kind if c.kind in (CardKind.BALLOT, CardKind.UNKNOWN) else c.kind) for c in cards]


# --------------------------------------------------------------------------------------
# The page level


@dataclass(frozen=True)
class PageCodes:
    codes: tuple[DecodedCode, ...]
    card_code: CardCode | None
    card_code_symbol: DecodedCode | None
    machine_record: MachineRecord | None
    label: PairingLabel | None
    label_problem: str | None  # why a label could not be used
    suspects: tuple[tuple[PageBox, str], ...] = ()  # what makes the label problem: barcodes that are no pairing label (image px), each with its problem


NO_CODES = PageCodes((), None, None, None, None, None)


def read_page_codes(gray: np.ndarray, context: InterpretContext, dpi: float | None = None, *,
                    qr_anywhere: bool = True, decode_if: Callable[[LabelCandidate], bool] | None = None) -> PageCodes:
    """Find and parse every code on the page: the card code first where layouts put it;
    ``qr_anywhere`` false: no QR symbol elsewhere (see :func:`_qr_when_unread`); ``decode_if``:
    the label patches worth decoding (:func:`_no_blank_print`)."""
    from scanpipe.imaging.codes import find_card_code

    election = context.election
    qr_boxes = context.qr_boxes
    size_in = election.ballot_styles[0].layout.pages[0].size_in
    estimate = gray.shape[1] / size_in[0]
    if dpi is None or abs(dpi - estimate) > 0.1 * estimate:  # files often claim 72 dpi
        dpi = estimate
    card = find_card_code(gray, qr_boxes, size_in, dpi) if qr_boxes else None
    codes = find_codes_fast(gray, card_code=card, dpi=dpi, qr_anywhere=qr_anywhere, decode_if=decode_if)
    card_code = card_symbol = None
    machine = None
    labels: list[PairingLabel] = []
    label_symbols: list[DecodedCode] = []
    bad_labels: list[str] = []
    for code in codes:
        if code.symbology == CodeSymbology.QR:
            parsed = parse_card_code(code.text)
            if parsed is not None and card_code is None:
                card_code, card_symbol = parsed, code
            record = parse_machine_record(code.text)
            if record is not None and machine is None:
                machine = record
        elif code.symbology == CodeSymbology.CODE128:
            label = parse_pairing_label(code.text)
            if label is None:
                bad_labels.append(code.text)
            elif label not in labels:
                labels.append(label)
                label_symbols.append(code)
    problem = None
    suspects: tuple[tuple[PageBox, str], ...] = ()
    if len({(lb.kind, lb.serial) for lb in labels}) > 1:
        names = ", ".join(f"{lb.kind.value[:3].upper()}-{lb.serial}" for lb in labels)
        if _overlap(label_symbols):
            problem = f"one sticker read two ways ({names}): its serial cannot be trusted"
        else:
            problem = "two different pairing labels: " + names
    elif not labels and (bad_labels or looks_like_barcode(gray)):
        # each barcode that is no pairing label, with what it would make of the card (a
        # symbol that decodes first, as before); the card's blank may print them all
        # (:func:`_without_vendor_codes`); a patch a speckled scan makes of printed text is none
        symbols = [(symbol_box(c), f"a Code 128 label that is not a pairing label: {c.text!r}")
                   for c in codes if c.symbology == CodeSymbology.CODE128]
        patches = [box for box in barcode_like_boxes(gray, dpi=dpi) if not any(_meet(box, s) for s, _why in symbols)]
        suspects = tuple(symbols) + tuple((box, BARCODE_UNREAD) for box in patches if not speckle_made(gray, box, dpi))
        problem = suspects[0][1] if suspects else (BARCODE_UNREAD if bad_labels or not patches else None)
    label = labels[0] if len(labels) == 1 else None
    return PageCodes(codes, card_code, card_symbol, machine, label, problem, suspects)


BARCODE_UNREAD = "a barcode-like label that does not decode"


def _meet(a: PageBox, b: PageBox) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _without_vendor_codes(codes: PageCodes, result: ReadCard, gray: np.ndarray, context: InterpretContext) -> PageCodes:
    """``codes`` without its label problem where every barcode that made it is the vendor's
    print (:func:`~scanpipe.imaging.codes.vendor_printed`: where the card's blank prints a
    barcode of its own, a style code such as Hart's Interleaved 2 of 5 or a Code 128, or a
    shading that alternates like bars, and the card shows the blank's print there): the
    vendor's print is no sticker. Each is mapped into the blank's frame by the card's
    registration; the blank's own barcodes are found once per blank
    (:func:`~scanpipe.imaging.codes.printed_codes_in`). A sticker that reads as a pairing
    label is never dropped, nor one away from the vendor's barcodes or stuck over them."""
    model = context.index.get(result.style, result.page)
    if codes.label_problem is None or not codes.suspects or model is None:
        return codes
    key = ("printed codes",)
    if key not in model.memo:
        model.memo[key] = printed_codes_in(model.image, model.dpi)
    blank_codes: tuple[PageBox, ...] = model.memo[key]  # type: ignore[assignment]
    if not blank_codes:
        return codes
    inches_to_card = _inches_to_card(result, gray)
    left = [problem for box, problem in codes.suspects if not vendor_printed(gray, inches_to_card, box, model.image, model.dpi, blank_codes)]
    return replace(codes, label_problem=left[0] if left else None)


def _inches_to_card(result: ReadCard, gray: np.ndarray) -> np.ndarray:
    """A read card's layout inches to ``gray``'s pixels (3x3), its feed direction folded in."""
    inches_to_card = np.asarray(result.registration.homography, np.float64).reshape(3, 3)
    if result.registration.rotated_180:  # the homography is of the card turned upright
        h, w = gray.shape[:2]
        inches_to_card = np.array([[-1.0, 0.0, w - 1.0], [0.0, -1.0, h - 1.0], [0.0, 0.0, 1.0]]) @ inches_to_card
    return inches_to_card


def _no_blank_print(result: ReadCard | MachinePrintedCard | UnreadableCard, gray: np.ndarray,
                    context: InterpretContext) -> Callable[[LabelCandidate], bool] | None:
    """Which of a page's label patches are worth decoding once the card is read against its
    blank: those that do not show the blank's print and nothing else
    (:func:`~scanpipe.imaging.codes.shows_blank_print`). A vendor's card prints rows of numbered
    ovals and lines of text that look like bars to the patch finder (about 7 a page of the
    sixth renderer, ~6 ms each to decode for nothing); a sticker hides the print it is stuck
    over and its bars are no print of the blank's, so it is always decoded. None (decode every
    patch) for a card not read against a blank."""
    model = context.index.get(result.style, result.page) if isinstance(result, ReadCard) else None
    if model is None:
        return None
    assert isinstance(result, ReadCard)
    key = ("paper level",)
    if key not in model.memo:
        model.memo[key] = paper_level(model.image)
    blank_paper = float(model.memo[key])  # type: ignore[arg-type]
    inches_to_card = _inches_to_card(result, gray)
    paper: list[float] = []  # the card's, measured once and only if a patch is compared

    def decode_if(candidate: LabelCandidate) -> bool:
        # only a saving: should the comparison itself fail, the patch is decoded as any other
        # (logged with its traceback), never the page lost for it
        try:
            if not paper:
                paper.append(paper_level(gray))
            x, y, w, h, _angle = candidate.region
            return not shows_blank_print(gray, paper[0], inches_to_card, (x, y, x + w, y + h), model.image, model.dpi, blank_paper)
        except Exception:
            log.warning("label patch at %s: comparing it with the blank's print failed; decoding it", candidate.region, exc_info=True)
            return True

    return decode_if


def _overlap(symbols: Sequence[DecodedCode]) -> bool:
    """Whether decoded symbols lie on top of each other (one sticker decoded differently)."""
    boxes = []
    for sym in symbols:
        xs, ys = [p[0] for p in sym.corners_px], [p[1] for p in sym.corners_px]
        boxes.append((min(xs), min(ys), max(xs), max(ys)))
    return any(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3] for i, a in enumerate(boxes) for b in boxes[i + 1:])


def interpret_page(page: DecodedPage, context: InterpretContext, hints: CardHints, source: CardSource) -> InterpretedCard:
    """Interpret one card (one page of a file). A page that stands a quarter turn from every
    blank (fed sideways, :func:`_sideways`) is read turned a quarter clockwise (upside down
    after that, as any card may be); where it does not read so, as it came (its reason then
    says it stands sideways)."""
    if _sideways(page.image.shape, [m.size_in for m in context.index]):
        card = _interpret_page(replace(page, image=cv2.rotate(page.image, cv2.ROTATE_90_CLOCKWISE)), context, hints, source,
                               fed=page.image)
        if isinstance(card.interpretation, ReadCard):
            result = card.interpretation
            return replace(card, interpretation=replace(result, registration=replace(result.registration, quarter_turned=True)))
    return _interpret_page(page, context, hints, source)


def _as_read(gray: np.ndarray, context: InterpretContext, source: CardSource | None = None) -> np.ndarray:
    """The page as the reader looks at it: a dark scanner bed round it painted as paper (no
    print of the card's; :func:`~scanpipe.imaging.page.without_bed`), its print restored to the
    blanks' darkness where the scan is washed out (:func:`~scanpipe.imaging.page.print_restored`;
    logged with ``source``: a scanner set too bright, the board should know)."""
    gray = without_bed(gray)
    restored = print_restored(gray, context.blank_print_darkness)
    if restored is not gray and source is not None:
        log.warning("%s page %d: the scan is washed out (its darkest print %.0f%% of the way from paper to black); "
                    "read with its print restored: check the scanner's brightness", source.path, source.page_index,
                    100.0 * print_darkness(gray)[1])
    return restored


def _interpret_page(page: DecodedPage, context: InterpretContext, hints: CardHints, source: CardSource,
                    fed: np.ndarray | None = None) -> InterpretedCard:
    """One page read as it stands; ``fed``: the page as it came, where it is read turned a
    quarter (the scanner's streaks run down the scan as fed)."""
    gray = page.image
    if min(gray.shape[:2]) < MIN_PAGE_SIDE_PX:
        detail = (f"the image is only {gray.shape[1]} x {gray.shape[0]} pixels: too small to be a scanned card "
                  f"(at least {MIN_PAGE_SIDE_PX} pixels on the short side)")
        return InterpretedCard(source, hints.kind or CardKind.BALLOT, None, None, UnreadableCard(Reason.UNREADABLE_IMAGE, detail))
    gray = _as_read(gray, context, source)
    printed = printed_share(gray)
    if printed is not None and printed < BLANK_PAGE_PRINTED:
        detail = f"the page is blank: print on {printed:.3%} of it{BLANK_PAGE_WHY}"
        return InterpretedCard(source, hints.kind or CardKind.BALLOT, None, None, UnreadableCard(Reason.BLANK_PAGE, detail))
    qr_later = _qr_when_unread(context, hints) and not shows_qr(gray)
    if qr_later:
        # no card code and no QR: the page's codes are its stickers, which tell nothing of its
        # reading; read after it, only the patches that are not the blank's print are decoded
        result = _interpret_content(gray, page, NO_CODES, context, hints)
        codes = _stated_label(read_page_codes(gray, context, page.dpi, qr_anywhere=False,
                                              decode_if=_no_blank_print(result, gray, context)), hints)
    else:
        codes = _stated_label(read_page_codes(gray, context, page.dpi), hints)
        result = _interpret_content(gray, page, codes, context, hints)
    if qr_later and not isinstance(result, ReadCard) and find_qr(gray):  # a QR symbol after all: a machine-printed record, say
        codes = _stated_label(read_page_codes(gray, context, page.dpi), hints)
        result = _interpret_content(gray, page, codes, context, hints)
    if fed is None and isinstance(result, UnreadableCard) and result.reason in LIGHT_STREAK_RETRY:
        result = _past_light_streaks(result, gray, page, codes, context, hints, source)
    if isinstance(result, ReadCard):
        codes = _stated_label(_without_vendor_codes(codes, result, gray, context), hints)
    # looked for on the scan as it came (as fed: a card read turned a quarter was fed sideways), a
    # dark bed round the page and all: a streak runs from the paper's top edge to its bottom edge,
    # and the bed painted as paper would make it stop short
    if streaks := vertical_streaks(page.image if fed is None else fed):
        result = _with_streaks(result, streaks, gray, context, across=fed is not None)
    kind, kind_reasons = _kind_of(codes, hints)
    if isinstance(result, ReadCard | MachinePrintedCard):
        reasons = tuple(dict.fromkeys(result.reasons + kind_reasons))
        result = replace(result, reasons=reasons)
    return InterpretedCard(source, kind, codes.label, codes.card_code, result, codes.codes)


def _past_light_streaks(result: UnreadableCard, gray: np.ndarray, page: DecodedPage, codes: PageCodes, context: InterpretContext,
                        hints: CardHints, source: CardSource) -> ReadCard | MachinePrintedCard | UnreadableCard:
    """A card refused for its style or its fit (``result``) read again with the light streaks
    of its scan (:func:`~scanpipe.imaging.streaks.light_streaks`: a sensor element reading too
    bright cuts a line through every stroke down the page) painted over from beside them (its
    marks and fills then read whole) and no glyph judged on them: a glyph of the blank's own
    print cut so is unlike the blank's, which refuses a card whose blank has no look-alike (one
    glyph decides there), and a stroke the line hides wholly cannot be painted back. Logged
    with ``source``: the board should know the scanner needs service. ``result`` stands where
    the scan shows none, or the card still cannot be read (its detail then says the streak)."""
    streaks = light_streaks(gray)
    if not streaks:
        return result
    where = "; ".join(s.describe(gray.shape[1]) for s in streaks)
    columns = [(s.x0, s.x1) for s in streaks]
    again = _interpret_content(painted_over(gray, columns), page, codes, context, hints, unseen=columns)
    if isinstance(again, UnreadableCard):
        return replace(result, detail=f"{result.detail} (the scan shows a light streak, a line down the whole image cutting "
                                      f"its print, at {where})")
    log.warning("%s page %d: the scan shows a light streak cutting its print at %s (a scanner's sensor reading too bright); "
                "read with it painted over from beside it: have the scanner looked at", source.path, source.page_index, where)
    return again


def _with_streaks(result: ReadCard | MachinePrintedCard | UnreadableCard, streaks: tuple[Streak, ...], gray: np.ndarray,
                  context: InterpretContext, *, across: bool = False) -> ReadCard | MachinePrintedCard | UnreadableCard:
    """A card whose scan shows scanner streaks (:mod:`scanpipe.imaging.streaks`) is scored
    again with the streaks painted over from beside them
    (:func:`~scanpipe.imaging.streaks.painted_over`): a line through a name or a write-in line
    beside a target is no ink of the voter's. A target a streak crosses reads so only as a
    vote (the voter's ink reaches beyond the line) or as no vote where the line shows nothing
    under it: light enough to see through, or a thin black line with nothing beside it but the
    blank's print (:func:`_through_streaks`); any other is damaged (its
    damage score 1: a stroke under the line cannot be seen, so a person reads it, and reading it
    again under other thresholds keeps it so). A card a streak crosses targets on says so
    (``scanner_streak``) either way, so the board learns the glass needs cleaning; a card that
    could not be read says the streak in its detail (it may be why). A line the blank prints
    itself is no streak. ``across``: the card was read turned a quarter (fed sideways), so the
    streaks, down the scan as fed, run across it; they are measured on the upright card
    transposed, where they are columns again (its targets' boxes transposed alike)."""
    width = gray.shape[0] if across else gray.shape[1]  # the scan's as fed
    where = "; ".join(s.describe(width) for s in streaks)
    if isinstance(result, UnreadableCard):
        return replace(result, detail=f"{result.detail} (the scan shows a scanner streak, a dark line down the whole image at "
                                      f"{where}: clean the scanner's glass and rescan)")
    if not isinstance(result, ReadCard):
        return result
    registration = result.registration
    columns = [upright_columns(s, width, registration.rotated_180) for s in streaks]
    model = context.index.get(result.style, result.page)
    hom = np.array(registration.homography).reshape(3, 3)
    upright = cv2.rotate(gray, cv2.ROTATE_180) if registration.rotated_180 else gray
    # the card as the streaks are measured, with its pixels -> the upright card's: columns down it
    along, to_upright = (np.ascontiguousarray(upright.T), _SWAP_XY) if across else (upright, np.eye(3))
    blank = None  # the measured card's pixels -> its blank's, and the blank
    if model is not None:
        blank = (np.diag([model.dpi, model.dpi, 1.0]) @ np.linalg.inv(hom) @ to_upright, model.image)
        columns = [c for c in columns if not on_print(c, along.shape[0], *blank)]
    if not columns:
        return result
    # the card scored again with the streaks painted over from beside them: a line beside a
    # target (through its name, its write-in line) is no ink of the voter's
    layout_page = _layout_page(context, result.style, result.page)
    painted = painted_over(along, columns)
    again = score_targets(np.ascontiguousarray(painted.T) if across else painted, registration, layout_page,
                          reference=model.image if model else None,
                          reference_dpi=model.dpi if model else layout_page.reference_dpi,
                          reference_memo=model.memo if model is not None else None)
    px_per_in = float(np.sqrt(abs(np.linalg.det(hom[:2, :2]))))
    lines = {c: streak_line(along, c, px_per_in, blank) for c in columns}
    crossed_by = [crossing(columns, _box_along(r.score.box_px, across)) for r in result.targets]
    readings = _settled(context.election, [_through_streaks(r, classify_target(s, context.thresholds), by, lines, context.thresholds, across=across)
                                           for r, s, by in zip(result.targets, again, crossed_by, strict=True)], context.thresholds)
    crossed = any(crossed_by)
    reasons: list[Reason] = [r for r in result.reasons if r not in (Reason.MARGINAL_MARK, Reason.WRITE_IN)]
    if crossed:
        reasons.append(Reason.SCANNER_STREAK)
    if any(_marginal(r, streaked=crossed) for r in readings):
        reasons.append(Reason.MARGINAL_MARK)
    if any(is_write_in_flag(r) for r in readings):
        reasons.append(Reason.WRITE_IN)
    return replace(result, targets=readings, contests=_contest_readings(context.election, layout_page, readings),
                   reasons=tuple(dict.fromkeys(reasons)))


_SWAP_XY = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # a transposed image's pixels -> the image's


def _box_along(box_px: Sequence[float], across: bool) -> tuple[float, ...]:
    """A target's box (x, y, w, h, upright card pixels) in the card as its streaks are
    measured: transposed where they run across it (:func:`_with_streaks`)."""
    x, y, w, h = box_px[:4]
    return (y, x, h, w) if across else (x, y, w, h)


def _through_streaks(scanned: TargetReading, painted: TargetReading, crossed_by: list[tuple[int, int]],
                     lines: dict[tuple[int, int], StreakLine], thresholds: Thresholds, *, across: bool = False) -> TargetReading:
    """A target's reading on a streaked card, given its reading as ``scanned`` and with the
    streaks ``painted`` over: the painted one where no streak crosses it; where streaks cross
    it (``crossed_by``), the painted one only as a vote (the voter's ink reaches beyond the
    line) or as no vote where every crossing line shows nothing under it, and only where the
    painted band is STREAK_PAINT_MAX_SHARE of the target's width or less; else the scanned
    one damaged (damage score 1: for a person, under any thresholds)."""
    if not crossed_by:
        return painted
    width = _box_along(scanned.score.box_px, across)[2]  # across the streaks
    narrow = all(c1 - c0 + 1 + 2 * PAINT_BESIDE <= STREAK_PAINT_MAX_SHARE * width for c0, c1 in crossed_by)
    if narrow and (painted.status is MarkStatus.YES or (painted.status is MarkStatus.NO and all(
            nothing_under(lines[c], _box_along(painted.score.box_px, across)) for c in crossed_by))):
        return painted
    return classify_target(replace(scanned.score, damage_score=1.0, damage_cause=DamageCause.STREAK), thresholds)


def _marginal(reading: TargetReading, *, streaked: bool) -> bool:
    """Whether a reading is a mark for a person to read (``marginal_mark``): unknown, not a
    write-in, and (on a card with a scanner streak) not a target the streak crossed, which
    ``scanner_streak`` already gives a person."""
    return (reading.status is MarkStatus.UNKNOWN and not is_write_in_flag(reading)
            and not (streaked and reading.score.damage_score >= 1.0))


def _qr_when_unread(context: InterpretContext, hints: CardHints) -> bool:
    """Whether the whole page may be searched for a QR symbol only if the page is not read as
    a ballot: in an election whose layouts print no card code and whose pages are told by
    their blanks (the vendor's ballots), a page that is one of the blanks carries no QR symbol
    of ours, and the whole search (the most costly of the codes) is
    needed only for a page that is none of them. A machine-printed record mostly shows its
    code to the quick look at half size (:func:`~scanpipe.imaging.codes.shows_qr`) and is then
    searched at once, as before: it does not first pay a failed search for its style, many
    times the search saved. Not where a batch states its style (``--style``: any page would
    be taken as that style)."""
    return not context.qr_boxes and len(context.index) > 0 and hints.style is None


def _stated_label(codes: PageCodes, hints: CardHints) -> PageCodes:
    """The batch's stated serial (``--serial``) where the page shows no label of its own."""
    if codes.label is None and codes.label_problem is None and hints.serial and hints.kind in (CardKind.DUPLICATE, CardKind.ORIGINAL):
        return replace(codes, label=parse_pairing_label(f"{'DUP' if hints.kind is CardKind.DUPLICATE else 'ORG'}-{hints.serial}"))
    return codes


def _kind_of(codes: PageCodes, hints: CardHints) -> tuple[CardKind, tuple[Reason, ...]]:
    """The card's kind: its label, else the batch's ``--kind``, else a regular ballot."""
    if codes.label_problem is not None:
        reason = Reason.LABEL_CONFLICT if codes.label_problem.startswith("two different") else Reason.LABEL_UNREADABLE
        return (hints.kind or CardKind.UNKNOWN), (reason,)
    if codes.label is not None:
        if hints.kind in (CardKind.DUPLICATE, CardKind.ORIGINAL) and hints.kind != codes.label.kind:
            return CardKind.UNKNOWN, (Reason.KIND_UNKNOWN,)
        return codes.label.kind, ()
    if hints.kind is CardKind.UNKNOWN:
        return CardKind.UNKNOWN, (Reason.KIND_UNKNOWN,)
    if hints.kind in (CardKind.DUPLICATE, CardKind.ORIGINAL):
        return hints.kind, (Reason.NO_SERIAL,)  # pairing needs its serial: a person states it
    return hints.kind or CardKind.BALLOT, ()


@dataclass(frozen=True)
class _Style:
    """Which style and page a card is, how that was told, and (told from the blanks) the
    coarse alignment already found."""

    style: str
    page: int
    source: str  # "code" | "hint" | "reference"
    reasons: tuple[Reason, ...] = ()
    match: StyleMatch | None = None


def _interpret_content(gray: np.ndarray, page: DecodedPage, codes: PageCodes, context: InterpretContext, hints: CardHints,
                       unseen: Sequence[tuple[int, int]] = ()) -> ReadCard | MachinePrintedCard | UnreadableCard:
    """One page's reading from its codes and its image; ``unseen``: columns of ``gray`` that
    show nothing of the card (a light streak, painted over), where the style's glyphs are not judged."""
    election = context.election
    if codes.machine_record is not None and codes.card_code is None:
        from scanpipe.imaging.printed import with_printed_check

        return with_printed_check(gray, read_machine_record(codes.machine_record, context), election, dpi=page.dpi)
    if codes.card_code is not None and codes.card_code.election != election.id:
        return UnreadableCard(Reason.WRONG_ELECTION, f"the card code names election '{codes.card_code.election}', not '{election.id}'")
    found = _find_style(gray, page, codes, context, hints, unseen)
    if isinstance(found, UnreadableCard):
        return found
    style = election.style(found.style)
    layout_page = _layout_page(context, found.style, found.page)
    model = context.index.get(found.style, found.page)
    start, precise, measured = None, False, None
    if found.match is not None and found.match.model is model:
        start, precise = (found.match.to_model, found.match.alignment.turned), found.match.alignment.precise
        measured = found.match.refined
    registered = register_card(gray, layout_page, model=model, code=codes.card_code_symbol, dpi_hint=page.dpi,
                               start=start, precise=precise, measured=measured)
    if isinstance(registered, RegistrationFailure):
        return UnreadableCard(registered.reason, registered.detail)
    upright, registration = registered
    style_source = found.source
    if hints.style_is_hypothesis and style_source == "hint":
        from scanpipe.imaging.registration import layout_fit_score

        fit = layout_fit_score(upright, registration, layout_page) if registration.method in ("fiducials", "fiducial corners") else 1.0
        if fit < HYPOTHESIS_MIN_FIT:
            return UnreadableCard(Reason.UNKNOWN_STYLE, f"no readable card code, and the duplicate's style {found.style} does not fit this card ({fit:.0%} of its targets found)")
        style_source = "duplicate_style"
    blank = model.image if model is not None else None
    scores = score_targets(upright, registration, layout_page, reference=blank,
                           reference_dpi=model.dpi if model is not None else layout_page.reference_dpi,
                           reference_memo=model.memo if model is not None else None)
    readings = _settled(election, [classify_target(s, context.thresholds) for s in scores], context.thresholds)
    contests = _contest_readings(election, layout_page, readings)
    precinct, precinct_reasons = _precinct_of(style.precincts, codes.card_code, hints)
    reasons = list(found.reasons) + list(precinct_reasons)
    if any(r.status is MarkStatus.UNKNOWN and not is_write_in_flag(r) for r in readings):
        reasons.append(Reason.MARGINAL_MARK)
    if any(is_write_in_flag(r) for r in readings):
        reasons.append(Reason.WRITE_IN)
    return ReadCard(found.style, found.page, precinct, registration, readings, contests, tuple(reasons), style_source)


def _find_style(gray: np.ndarray, page: DecodedPage, codes: PageCodes, context: InterpretContext, hints: CardHints,
                unseen: Sequence[tuple[int, int]] = ()) -> _Style | UnreadableCard:
    """Style and page from the card code, the batch's ``--style``, or the blanks."""
    election = context.election
    code = codes.card_code
    if code is not None:
        if not election.has_style(code.style):
            return UnreadableCard(Reason.UNKNOWN_STYLE, f"the card code names style '{code.style}', which election '{election.id}' does not define")
        if code.page not in {p.page for p in election.style(code.style).layout.pages}:
            return UnreadableCard(Reason.UNKNOWN_PAGE, f"the card code names page {code.page}, which style '{code.style}' does not have")
        conflict = (Reason.STYLE_CONFLICT,) if hints.style is not None and hints.style != code.style else ()
        return _Style(code.style, code.page, "code", conflict)
    if hints.style is not None:
        if not election.has_style(hints.style):
            return UnreadableCard(Reason.UNKNOWN_STYLE, f"--style '{hints.style}' is not a style of election '{election.id}'")
        pages = election.style(hints.style).layout.pages
        if hints.page is not None:
            if hints.page not in {p.page for p in pages}:
                return UnreadableCard(Reason.UNKNOWN_PAGE, f"page {hints.page} is not a page of style '{hints.style}'")
            return _Style(hints.style, hints.page, "hint")
        if len(pages) == 1:
            return _Style(hints.style, pages[0].page, "hint")
        return _match_by_reference(gray, page, context, only_style=hints.style, unseen=unseen)
    return _match_by_reference(gray, page, context, only_style=None, unseen=unseen)


def _has_our_fiducials(gray: np.ndarray, election: Election) -> bool:
    """Whether the card carries the corner fiducials of one of the election's layouts."""
    from scanpipe.imaging.registration import register_by_fiducials

    pages = [p for s in election.ballot_styles for p in s.layout.pages if p.fiducials_in]
    return bool(pages) and not isinstance(register_by_fiducials(gray, pages[0]), RegistrationFailure)


def _match_by_reference(gray: np.ndarray, page: DecodedPage, context: InterpretContext, *, only_style: str | None,
                        unseen: Sequence[tuple[int, int]] = ()) -> _Style | UnreadableCard:
    election = context.election
    ours = _has_our_fiducials(gray, election)
    with_fiducials = {(s.id, p.page) for s in election.ballot_styles for p in s.layout.pages if p.fiducials_in}

    def accept(model: PageModel) -> bool:
        return (only_style is None or model.style == only_style) and (not ours or model.key in with_fiducials)

    if not any(accept(m) for m in context.index):
        what = (f"style '{only_style}' has several pages and no reference scans to tell them" if only_style
                else "no card code was found (the card has our fiducials, so its code is missing or unreadable); state its style with identify"
                if ours else "no card code was found and no layout has a reference scan to match")
        return UnreadableCard(Reason.UNKNOWN_STYLE, what)
    result = identify_style(gray, context.index.groups, dpi_hint=page.dpi, accept=accept, unseen=unseen)
    if isinstance(result, StyleUnknown):
        sideways = ("; the page stands a quarter turn from every blank (its long side across): the card was fed "
                    "sideways, rescan it upright" if _sideways(gray.shape, [m.size_in for m in context.index if accept(m)]) else "")
        return UnreadableCard(Reason.UNKNOWN_STYLE, f"no card code, and the card matches no layout's blank: {result.detail}{sideways}")
    if isinstance(result, StyleAmbiguous):
        a, b = result.first, result.second
        return UnreadableCard(Reason.AMBIGUOUS_STYLE, f"no card code; the card fits {a.style} page {a.page} and {b.style} page {b.page} "
                                                      f"about equally (margin {result.margin:.2f}): a person states its style")
    return _Style(result.model.style, result.model.page, "reference", match=result)


SIDEWAYS_FITS = 0.04  # a page within this share of a blank's shape turned a quarter ...
SIDEWAYS_MISSES = 0.1  # ... and further than this from every blank's shape as it stands was fed sideways


def _sideways(shape: tuple[int, ...], sizes_in: Sequence[tuple[float, float]]) -> bool:
    """Whether a page of ``shape`` (rows, columns) has the proportions of one of the blanks
    (``sizes_in``: width, height) turned a quarter, and of none as it stands (a scanner cuts a
    margin or stretches a feed by a few percent, never by a tenth)."""
    if not sizes_in:
        return False
    aspect = shape[0] / shape[1]
    stands = min(abs(aspect / (h / w) - 1.0) for w, h in sizes_in)
    turned = min(abs(aspect / (w / h) - 1.0) for w, h in sizes_in)
    return turned <= SIDEWAYS_FITS and stands > SIDEWAYS_MISSES


def _precinct_of(style_precincts: Sequence[str], code: CardCode | None, hints: CardHints) -> tuple[str | None, tuple[Reason, ...]]:
    if code is not None and code.precinct:
        return code.precinct, ()
    if len(style_precincts) == 1:
        return style_precincts[0], ()
    if hints.precinct is not None and hints.precinct in style_precincts:
        return hints.precinct, ()
    return None, (Reason.NO_PRECINCT,)


def reclassify(card: InterpretedCard, election: Election, thresholds: Thresholds) -> InterpretedCard | None:
    """The card read again from its stored raw scores under other thresholds (no rescan):
    statuses, contest readings and the mark reasons; None when nothing changes."""
    result = card.interpretation
    if not isinstance(result, ReadCard):
        return None
    readings = _settled(election, [classify_target(r.score, thresholds) for r in result.targets], thresholds)
    if [r.status for r in readings] == [r.status for r in result.targets]:
        return None
    page = next(p for p in election.style(result.style).layout.pages if p.page == result.page)
    kept: list[Reason] = [r for r in result.reasons if r not in (Reason.MARGINAL_MARK, Reason.WRITE_IN)]
    if any(_marginal(r, streaked=Reason.SCANNER_STREAK in result.reasons) for r in readings):
        kept.append(Reason.MARGINAL_MARK)
    if any(is_write_in_flag(r) for r in readings):
        kept.append(Reason.WRITE_IN)
    new = replace(result, targets=readings, contests=_contest_readings(election, page, readings), reasons=tuple(kept))
    return replace(card, interpretation=new)


def _settled(election: Election, readings: Sequence[TargetReading], thresholds: Thresholds) -> tuple[TargetReading, ...]:
    """A page's readings, classified one by one, settled by the page
    (:func:`~scanpipe.classify.settle_page`: the voter's own light marks, hesitation dots)."""
    vote_for = {cid: election.contest(cid).vote_for for cid in {r.score.contest for r in readings}}
    return settle_page(readings, vote_for, thresholds)


def _contest_readings(election: Election, page: LayoutPage, readings: Sequence[TargetReading]) -> tuple[ContestReading, ...]:
    by_contest: dict[str, list[TargetReading]] = {}
    for reading in readings:
        by_contest.setdefault(reading.score.contest, []).append(reading)
    return tuple(classify_contest(election.contest(cid), rs) for cid, rs in by_contest.items())


def read_machine_record(record: MachineRecord, context: InterpretContext) -> MachinePrintedCard | UnreadableCard:
    """Selections of a BMD summary card / VVPAT record from its SPV1 code."""
    election = context.election
    if record.election != election.id:
        return UnreadableCard(Reason.WRONG_ELECTION, f"the record's code names election '{record.election}', not '{election.id}'")
    if not election.has_style(record.style):
        return UnreadableCard(Reason.UNKNOWN_STYLE, f"the record's code names style '{record.style}', which election '{election.id}' does not define")
    style = election.style(record.style)
    selections = dict(record.selections)
    contests = []
    reasons: list[Reason] = []
    for cid in style.contests:
        contest = election.contest(cid)
        chosen = selections.get(cid, ())
        valid = {o.id for o in contest.options}
        if any(o not in valid for o in chosen):
            contests.append(ContestReading(cid, (), ContestOutcome.PENDING, 0, tuple(o for o in chosen if o not in valid)))
            reasons.append(Reason.MARGINAL_MARK)
        elif len(chosen) > contest.vote_for:
            contests.append(ContestReading(cid, (), ContestOutcome.OVERVOTE, 0))
        else:
            votes = tuple(o.id for o in contest.options if o.id in chosen)
            contests.append(ContestReading(cid, votes, ContestOutcome.COUNTED, contest.vote_for - len(votes)))
    precinct = record.precinct if record.precinct else (style.precincts[0] if len(style.precincts) == 1 else None)
    if precinct is None:
        reasons.append(Reason.NO_PRECINCT)
    return MachinePrintedCard(replace(record, precinct=precinct), tuple(contests), tuple(dict.fromkeys(reasons)))
