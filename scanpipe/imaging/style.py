"""Which style (and page) is this card? Told from what the vendor prints, learned from the blanks.

Styles of one election often share everything but a contest, a party line, a precinct name
or the few timing marks that encode the style. No layout field says where they differ: the
reader learns it from the blanks themselves.

At index time (:func:`build_style_groups`) the blanks are grouped by frame: a blank joins a
group when it aligns with the group's *anchor* blank (same sheet, same timing marks; the
alignment is refined locally, so members' frames agree within a few thousandths of an inch).
Every member's ink is warped into the anchor's frame at
:data:`~scanpipe.imaging.reference.FRAME_DPI`, outside the targets and write-in areas
(where voters write).

A card (:func:`identify_style`) is aligned once to the anchor of each group: by the vendor's
timing marks where the anchor has them (:func:`~scanpipe.imaging.align.align_by_marks`; once
one frame's marks fit the card, frames without marks or whose marks miss it are not
considered; frames whose marks the card does not show at all only when no other blank
fits), else densely; then refined locally. Its ink, warped into the anchor frame, ranks
every member by how well it explains the card (the share of the member's print the card
shows, plus the share of the card's print the member lacks). The leaders are then compared
pairwise on the pixels printed solidly by one and not at all by the other: the share of the first set the card shows
minus the share of the second (``+1``: the card has exactly what the first prints). A pair
with too few such pixels (one name set in place of another in the same place) is compared in
detail instead, at the blanks' own resolution where their inks differ (:func:`_detail_margin`).
Where layouts give ``distinguish`` boxes, pairs that differ inside them are compared there only.
A candidate's standing is its worst margin against another leader. The best must lead by
:data:`MIN_MARGIN` on enough differing pixels, and it must itself be on the card: a
candidate whose print is missing from the card in a square inch where the card prints
something else (another election, a style the election lacks) is refused, and so is one
that does not print, on the card, its own lines of text where it differs from the runner-up
(and from a look-alike told apart in detail): the nearest style of one the election lacks
(:func:`_line_missing`). The winner must also print its own lines of text everywhere (one glyph
deciding where it is the only blank of its page, else whole lines: :func:`_own_line_missing`),
and the card's edge rows of timing marks must carry the winner's code
(:func:`~scanpipe.imaging.mark_code.code_mismatch`): a style the election lacks may differ from
the winner where the winner and its rivals print alike, or only in the code.

Pure: arrays and values in, values out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Protocol

import cv2
import numpy as np

from scanpipe.imaging import marks_across
from scanpipe.imaging.align import (
    DENSE_SETTLED_CC,
    MARK_SURE_CC,
    Alignment,
    AlignmentFailure,
    CardView,
    Refined,
    align_by_marks,
    align_densely,
    align_to_page,
    found_all_over,
    mark_votes,
    refine,
    surer_of,
)
from scanpipe.imaging.glyph_text import read_apart_in_places, read_glyphs, unconfirmed_in_places
from scanpipe.imaging.mark_code import code_mismatch
from scanpipe.imaging.reference import FRAME_DPI, PageModel, ink_of, largest_hole, paper_level, reduce_to, warp_in_tiles
from scanpipe.types import Box

INK_LEVEL = 0.3  # blurred ink at FRAME_DPI counted as printed
SOLID_LEVEL = 0.5  # where blanks differ: solidly printed on one ...
PAPER_LEVEL = 0.15  # ... and (within a pixel) paper on the other; shading between is neither
GROUP_MIN_CC = 0.6  # a blank joins a group when it aligns with the anchor at least this well
EXCLUDE_GROW_IN = 0.1  # targets and write-in areas grown by this are left out
TIMING_GROW_IN = 0.1
ONLY_MARKS_GROW_IN = 0.03  # print of one blank this near a timing mark of another is that mark's, a pixel apart (:meth:`StyleGroup.only_in`)
MIN_PAIR_PX = 12  # fewer differing pixels than this: the two blanks cannot be told apart
SHOWN_MOST = 0.5  # a pair's side of MIN_PAIR_PX pixels or more the card shows this much of outweighs a side of fewer
MIN_MARGIN = 0.35  # the winner's worst pairwise margin
UNEXPLAINED_SAMPLE = 4  # every 4th pixel is enough to rank (the pairwise comparison uses all)
PAPER_BLOCKS = 8  # the card's paper mapped in blocks: this many on its short side (about an inch each) ...
PAPER_BLOCK_PCT = 90  # ... each block's paper this percentile of it (print covers less of a block) ...
PAPER_STEP = 4  # ... of every this-many-th pixel both ways
SHADED_PAPER = 0.96  # ... a window of print compared in detail where the map lies under this share of the paper's level: in a shadow ...
SHADED_FLOOR = 0.6  # ... measured against the map there, down to this share of the level
LEADERS = 5  # candidates compared pairwise (after ranking all by how well each explains the card)
BLOCK_IN = 1.0  # presence check: per square of this side ...
BLOCK_MIN_PX = 25  # ... holding at least this many printed pixels of the candidate ...
BLOCK_MIN_PRESENT = 0.6  # ... at least this share must be on the card, unless ...
EDGE_IN = 0.5  # ... away from the page's edges (timing marks a scanner may cut or shift) ...
STRUCTURE_PX = 12  # ... in connected pieces of at least this many pixels (text, rules; not dither)
BLOCK_MIN_EXTRA = 0.3  # ... the card prints less than this much (share of it) elsewhere in the square
LOOP_ROUND_MIN_IN = 0.1  # of that, a voter's loop round the blank's print is none: a closed piece this wide and tall at least ...
LOOP_ROUND_HOLE = 0.3  # ... whose hole fills this share of its box at least ...
LOOP_ROUND_PRINT = 0.03  # ... and holds the blank's print on this share of it at least
# Look-alike blanks whose print differs only where both print (one precinct name or number
# set in place of another): at FRAME_DPI no pixel is solid on one and paper on the other, so
# such a pair is compared in detail, at the blanks' own resolution (:func:`_detail_margin`)
DETAIL_DIFF = 0.5  # ink differing this much between the two blanks (blurred DETAIL_BLUR_PX) ...
DETAIL_MIN_PX = 40  # ... on at least this many pixels (fewer: the two cannot be told apart) ...
DETAIL_GROW_PX = 2  # ... widened this much, is where they are compared
DETAIL_BLUR_PX = 1.5
DETAIL_SHIFT_PX = 2  # the card's window is searched this far either way for each blank (registration's residual)
LINE_FIT_CORR = 0.8  # a line fitting at that search's edge, or correlating under this at its fit (a sheet not flat, a
LOCAL_REACH_IN = 0.04  # slipping feed), is searched again round where its shared print lies, looked for this far (in)
PIECE_IN = 0.25  # a glyph unlike the blank's at its line's fit is looked at again laid with this much print either side
PX_SET_AT_DPI = 200  # the pixel sizes of the card's search and of a glyph's pad were set on blanks of this resolution;
# a finer blank's detail searches as far in inches (:func:`_at_blank_px`)
DETAIL_BOX_GAP_IN = 0.1  # differing pixels this close share one box
# A digit set in place of another in a thin or serif type ("0601" and "0602") differs by less
# than DETAIL_DIFF once blurred, its strokes overlapping the other's: where the blurred inks
# differ on fewer than DETAIL_MIN_PX, the blanks' glyphs are compared one by one instead, and
# those that differ are where the pair differs
DETAIL_GLYPH_CORR = 0.75  # a glyph (with LINE_PAD_PX round it) correlating under this with the other blank's print there ...
DETAIL_GLYPH_SHIFT_PX = 1  # ... at its best shift within this (two scans of one glyph: 0.9 and more) ...
DETAIL_GLYPH_DIFF = 0.3  # ... differs where the two inks differ this much or more in its box
# ... and the winner of such a pair must print, on the card, the whole line of print holding
# those differences (the printed precinct line: a card of a precinct the election lacks differs
# from the nearest blank in a digit the pair shares): every glyph of the winner's line (a piece
# of LINE_GLYPH_IN2 or more, with LINE_PAD_PX around it) that the card prints something over
# (LINE_GLYPH_MASS of its ink or more: a torn, cut or faded glyph is no other style) must
# correlate with the card there by LINE_GLYPH_CORR (two scans of one glyph: 0.88 and more on the
# second vendor renderer's cards; a 7 printed for a 1: 0.3, a 1 for a 0: below 0)
LINE_GAP_IN = 0.3  # a line of print: pieces of the union of both blanks' print no further apart than this
LINE_GLYPH_IN2 = 0.0006  # about a 3-point stroke's dot (about 24 px at 200 dpi)
LINE_GLYPH_MIN_H_IN = 0.06  # smaller print (a 5-point footer) two scans do not render alike enough
LINE_GLYPH_MAX_IN = 0.35  # taller: a rule, a border, a box, not a glyph
LINE_STROKE_MIN_IN = 0.02  # narrower: a rule (its correlation is all registration)
LINE_PAD_PX = 2
UNSEEN_PAD_PX = 2  # a glyph this near a column the scan does not show (a light streak: its blur, a painted edge) is not judged
LINE_MAX = 8  # a runner-up that differs in many lines: these many, those holding the most differences, are compared
DETAIL_MEMO_PAIRS = 256  # pairs of blanks whose differences a worker keeps
LINE_GLYPH_MASS = 0.3
LINE_GLYPH_CORR = 0.6
LINE_GLYPH_COVERED = 0.95  # blanks that differ more: a glyph whose solid print the card shows this much of is there, ink over it or not
LINE_WRONG_MIN = 3  # blanks that differ more (not look-alikes): a line counts when this many of its glyphs ...
LINE_WRONG_SHARE = 0.5  # ... and this share of those the card prints something over do not match
# A frame whose page has one blank (no other style's blank of that page) has no runner-up to
# say where styles differ: the card must print every glyph of that blank's own lines of text
# (outside targets, write-in areas, timing marks and EDGE_IN of the page's edges), each laid
# on the card at its best shift within OWN_GLYPH_SHIFT_PX of its line's (:func:`_own_line_missing`).
# Levels set with `scripts/bench_real.py --alone` (every real card against its own blank alone:
# none queued; against every other style alone: all queued, Cedar's "TIPTON 2" and "TIPTON 3"
# among them) and on the synthetic decks
OWN_GLYPH_SHIFT_PX = 2
OWN_GLYPH_CORR = 0.75  # a glyph correlating under this with the card ...
OWN_GLYPH_COVERED = 0.9  # ... is missing unless the card shows this share of its solid print (ink over a name leaves it there)
OWN_NARROW = 0.5  # a glyph narrower than this share of its height (a "1": most digits cover its print) ...
OWN_NARROW_MASS = 1.5  # ... printed over no more heavily than this times its own ink ...
OWN_NARROW_CORR = 0.6  # ... is missing below this correlation alone
OWN_OVER_MASS = 1.5  # own lines of a winner with rivals: a glyph under this much more ink than its own is compared (more: printed over)
LINE_OTHER_MIN = 2  # ... and a line decides where this many such glyphs' own print is gone too (another word: one letter or digit of it differs from the winner's, the next one often as well)
OWN_UNLIKE_CORR = 0.3  # any glyph below this is missing, however much the card prints over it (other print in a larger type)
OWN_PRINT_SHARE = 0.5  # solid print counts as shown where the card is this share of its line's print darkness ...
OWN_PRINT_PCT = 99  # ... (this percentile of the card's ink in the line; INK_LEVEL at most, PAPER_LEVEL at least)
ACROSS_NEAR_IN = 0.02  # a glyph's print this near a stamp's ink lies under it (:class:`InkAcross`) ...
ACROSS_BARE_MIN = 0.3  # ... and is judged by the print left bare, where this share of its solid print is (less: as any glyph)
PRINT_SHOWN_PCT = 25  # ... shown as the card shows print: OWN_GLYPH_COVERED of this percentile of the share of their solid
PRINT_SHOWN_GLYPHS = 200  # print shown by glyphs printed alike (this many at most) ...
PRINT_SHOWN_MIN = 20  # ... measured over this many at least (fewer: all of it)
TINT_LEVEL = 0.15  # a glyph printed on a tint: the blank's darkness round it this much or more (bare paper: next to none) ...
TINT_BLACK_SHARE = 0.97  # ... under solid ink over this share of its place on the card is blacked out (:func:`_blacked_out`)
OWN_HEAVY_PRINT = 1.3  # a card whose glyphs printed alike carry this much ink over the blank's or more prints heavily ...
OWN_WEIGHT_GLYPHS = 20  # ... measured over this many such glyphs at least
OWN_BAND_PX = 6  # each line is kept with this much of the blank around it (its glyphs' search stays inside)
# ... and where a lone blank's glyph correlates under OWN_READ_CORR with the card (a bold B over
# a bold A: 0.72-0.83; two scans of one glyph mostly 0.9 and more) without being printed over
# (OWN_READ_MASS times its ink at most: a bold B over a bold A carries 1.4-1.5 times the A's,
# 1.51 thresholded dark on the sixth renderer's seed 3535; a stamp or a fill over a glyph far
# more), the OWN_READ_MAX worst such glyphs are read on both, blank and card, by
# the OCR extra (:mod:`~scanpipe.imaging.glyph_text`): read surely and differently, the card
# prints another glyph there. Not a solid block (a corner mark: OWN_READ_SOLID of its box solid)
OWN_READ_CORR = 0.85
OWN_READ_MASS = 1.75
OWN_READ_MAX = 3
OWN_READ_SOLID = 0.6
OWN_READ_PAPER_PX = 4  # paper round each crop read
ACROSS_GROUPS_MARGIN = 0.1  # a card fitting blanks of several frames: the clearly (this much) better alignment wins


class DetailKeeper(Protocol):
    """Where what a :class:`StyleGroup` learns of its pairs of blanks (:func:`_pair_detail`,
    :func:`_own_lines`) is kept between runs (:mod:`scanpipe.learned_cache`): ``name`` names
    the pair and what was learned of it within one election's blanks."""

    def load(self, name: str) -> tuple[bool, _Detail | None]:
        """``(True, detail)`` when kept (None: the pair prints alike), else ``(False, None)``."""
        ...

    def save(self, name: str, detail: _Detail | None) -> None: ...


@dataclass(frozen=True, eq=False)
class StyleGroup:
    """Blanks sharing one frame, compared in the frame of ``anchor`` (read-only arrays)."""

    anchor: PageModel
    members: tuple[PageModel, ...]
    to_anchor: tuple[np.ndarray, ...]  # per member: 3x3 member blank px -> anchor blank px
    ink: tuple[np.ndarray, ...]  # per member: bool printed ink, anchor frame, FRAME_DPI
    solid: tuple[np.ndarray, ...]  # per member: flat indices of its solid print, outside targets
    near: tuple[np.ndarray, ...]  # per member: bool, its print widened a pixel (faint print included)
    focus: tuple[np.ndarray | None, ...]  # per member: bool, its distinguish boxes (None: none given)
    keep: np.ndarray  # bool: outside every member's targets and write-in areas (grown)
    timing: np.ndarray  # bool: the members' timing marks (grown): a scanner may cut or shift them
    only: dict[tuple[int, int], np.ndarray] = field(default_factory=dict, repr=False)  # memo of :meth:`only_in`
    details: dict[tuple[int, int], _Detail | None] = field(default_factory=dict, repr=False)  # memo of :meth:`detail_of`
    rival_lines: dict[tuple[int, int], _Detail | None] = field(default_factory=dict, repr=False)  # memo of :meth:`lines_of`
    keeper: DetailKeeper | None = field(default=None, repr=False)  # what is learned of pairs, kept between runs

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled (to every worker) with its masks packed eight to a byte; the memo is not sent."""
        masks = tuple(tuple(packed_mask(a) for a in getattr(self, name)) for name in ("ink", "near"))
        focus = tuple(None if f is None else packed_mask(f) for f in self.focus)
        return (_unpacked_group, (self.anchor, self.members, self.to_anchor, masks, self.solid, focus,
                                  packed_mask(self.keep), packed_mask(self.timing), self.keep.shape, self.keeper))

    def only_in(self, i: int, j: int) -> np.ndarray:
        """Member ``i``'s solid print where member ``j`` prints nothing (flat indices, in
        order): computed the first time a card needs the pair (pairs of leaders recur; all
        pairs of a county's hundreds of styles would not fit in memory)."""
        found = self.only.get((i, j))
        if found is None:
            found = self.solid[i][~self.near[j].ravel()[self.solid[i]]]
            marks = self._marks_of(j)
            if marks is not None:
                found = found[~marks.ravel()[found]]
            found.setflags(write=False)
            self.only[(i, j)] = found
        return found

    def _marks_of(self, j: int) -> np.ndarray | None:
        """Member ``j``'s timing marks grown ONLY_MARKS_GROW_IN in the anchor's frame (None: it
        prints none): two blanks of one frame print the same marks a pixel apart as scanned, and
        a card shows its marks whatever its style; a mark one prints and the other does not
        (a code in the marks) stays the first's own."""
        model = self.members[j]
        if model.mark_size_in is None:
            return None
        shape = self.keep.shape
        to_frame = _blank_to_frame(self.anchor) @ self.to_anchor[j]
        mw, mh = model.mark_size_in
        marks = np.zeros(shape, bool)
        for x, y in model.marks_in:
            marks |= _box_mask(shape, to_frame, (x - mw / 2, y - mh / 2, mw, mh), model.dpi, ONLY_MARKS_GROW_IN)
        return marks

    def detail_of(self, i: int, j: int) -> _Detail | None:
        """Where members ``i`` and ``j`` differ in detail (:func:`_pair_detail`), learned the
        first time a card needs the pair; None where they do not."""
        known = self.details.get((i, j), _UNKNOWN)  # one lookup: another thread may drop the pair meanwhile
        if known is not _UNKNOWN:
            return known  # type: ignore[return-value]
        found = self._learned("detail", i, j, lambda: _pair_detail(self, i, j))
        _bounded(self.details)[(i, j)] = found
        return found

    def lines_of(self, i: int, j: int) -> _Detail | None:
        """Only the lines of print where members ``i`` and ``j`` differ (:func:`_pair_detail`
        with ``lines_only``: no boxes to compare in detail; at most LINE_MAX lines), learned the
        first time a card needs the pair."""
        for memo in (self.details, self.rival_lines):
            known = memo.get((i, j), _UNKNOWN)
            if known is not _UNKNOWN:
                return known  # type: ignore[return-value]
        found = self._learned("lines", i, j, lambda: _pair_detail(self, i, j, lines_only=True))
        _bounded(self.rival_lines)[(i, j)] = found
        return found

    def own_lines_of(self, i: int) -> _Detail | None:
        """Every line of text member ``i`` prints outside its targets, write-in areas and
        timing marks (:func:`_own_lines`), learned the first time a card needs it: what a
        card must print when the frame offers no second blank to say where styles differ."""
        known = self.rival_lines.get((i, i), _UNKNOWN)  # (i, i): no pair of two members is keyed so
        if known is not _UNKNOWN:
            return known  # type: ignore[return-value]
        found = self._learned("own", i, i, lambda: _own_lines(self, i))
        _bounded(self.rival_lines)[(i, i)] = found
        return found

    def _learned(self, kind: str, i: int, j: int, learn: Callable[[], _Detail | None]) -> _Detail | None:
        """What ``learn`` gives, kept by the keeper (a pair learned by an earlier run, or by
        another worker of this one, is loaded, not learned again)."""
        if self.keeper is None:
            return learn()
        if i > j:  # the pair (j, i), seen from the other side
            found = (self.detail_of if kind == "detail" else self.lines_of)(j, i)
            return None if found is None else found.swapped()
        name = json.dumps([kind, list(self.anchor.key), list(self.members[i].key), list(self.members[j].key)])
        kept, found = self.keeper.load(name)
        if kept:
            return found
        found = learn()
        self.keeper.save(name, found)
        return found


_UNKNOWN = object()  # a pair not yet learned (None is a pair that prints alike)


def _bounded(memo: dict[tuple[int, int], _Detail | None]) -> dict[tuple[int, int], _Detail | None]:
    """``memo`` with its oldest entries dropped to leave room for one (a county's hundreds of
    styles make more pairs than memory should hold; the pairs of leaders recur)."""
    while len(memo) >= DETAIL_MEMO_PAIRS:
        memo.pop(next(iter(memo)), None)
    return memo


@dataclass(frozen=True)
class _Detail:
    """Where two look-alike blanks differ, in boxes of the anchor blank (pixels, read-only)."""

    boxes: tuple[tuple[int, int, int, int], ...]  # x, y, w, h
    first: tuple[np.ndarray, ...]  # per box: the first blank's ink (float32, blurred)
    second: tuple[np.ndarray, ...]  # the second's
    where: tuple[np.ndarray, ...]  # bool: where the two differ (widened)
    lines: tuple[tuple[int, int, int, int], ...] = ()  # x, y, w, h: the lines of print holding the differences
    line_first: tuple[np.ndarray, ...] = ()  # per line: the first blank's ink (blurred; uint8, 255 solid)
    line_second: tuple[np.ndarray, ...] = ()
    # the glyphs of the lines (:meth:`line_blanks`) and the swapped detail: found once, for every card
    memo: dict[object, object] = field(default_factory=dict, compare=False, repr=False)

    def swapped(self) -> _Detail:
        """The same, seen from the second blank (made once)."""
        if "swapped" not in self.memo:
            other = _Detail(self.boxes, self.second, self.first, self.where, self.lines, self.line_second, self.line_first)
            other.memo["swapped"], self.memo["swapped"] = self, other
        return self.memo["swapped"]  # type: ignore[return-value]

    def line_blanks(self, dpi: float) -> tuple[_LineBlanks, ...]:
        """Per line, the glyphs :func:`_line_missing` and :func:`_own_line_missing` judge
        (``dpi``: the anchor blank's)."""
        key = ("line blanks", dpi)
        if key not in self.memo:
            self.memo[key] = tuple(_LineBlanks.of(f, s, dpi) for f, s in zip(self.line_first, self.line_second, strict=True))
        return self.memo[key]  # type: ignore[return-value]


@dataclass(frozen=True)
class _LineBlanks:
    """The glyphs (:func:`_glyphs_of`) of one line of a :class:`_Detail` as each blank prints
    it (kept per detail: small, where the lines' images and integrals are not)."""

    first: tuple[tuple[int, int, int, int], ...]
    second: tuple[tuple[int, int, int, int], ...]

    @classmethod
    def of(cls, first_bytes: np.ndarray, second_bytes: np.ndarray, dpi: float) -> _LineBlanks:
        return cls(tuple(_glyphs_of(first_bytes.astype(np.float32) / 255.0, dpi)),
                   tuple(_glyphs_of(second_bytes.astype(np.float32) / 255.0, dpi)))


def packed_mask(mask: np.ndarray) -> np.ndarray:
    """A bool mask packed eight pixels to a byte (:func:`unpacked_mask` undoes it)."""
    return np.packbits(mask.ravel())


def unpacked_mask(packed: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The read-only bool mask of ``shape`` that :func:`packed_mask` packed."""
    mask = np.unpackbits(packed, count=shape[0] * shape[1]).astype(bool).reshape(shape)
    mask.setflags(write=False)
    return mask


def _unpacked_group(anchor: PageModel, members: tuple[PageModel, ...], to_anchor: tuple[np.ndarray, ...],
                    masks: tuple[tuple[np.ndarray, ...], ...], solid: tuple[np.ndarray, ...], focus: tuple[np.ndarray | None, ...],
                    keep: np.ndarray, timing: np.ndarray, shape: tuple[int, int], keeper: DetailKeeper | None = None) -> StyleGroup:
    for a in solid:
        a.setflags(write=False)
    ink, near = (tuple(unpacked_mask(p, shape) for p in packed) for packed in masks)
    return StyleGroup(anchor, members, to_anchor, ink, solid, near, tuple(None if f is None else unpacked_mask(f, shape) for f in focus),
                      unpacked_mask(keep, shape), unpacked_mask(timing, shape), keeper=keeper)


@dataclass(frozen=True)
class StyleMatch:
    model: PageModel
    group: StyleGroup
    alignment: Alignment  # anchor blank px -> upright card px
    to_model: np.ndarray  # model blank px -> upright card px (coarse)
    margin: float  # worst pairwise margin (1.0 with a single candidate)
    refined: Refined | None = None  # the local refinement measured against the model itself (the frame's anchor)


@dataclass(frozen=True)
class StyleUnknown:
    detail: str


@dataclass(frozen=True)
class StyleAmbiguous:
    first: PageModel
    second: PageModel
    margin: float


StyleResult = StyleMatch | StyleUnknown | StyleAmbiguous


# --------------------------------------------------------------------------------------
# Index time


def build_style_groups(models: Sequence[PageModel], boxes: dict[tuple[str, int], tuple[Box, ...]],
                       distinguish: dict[tuple[str, int], tuple[Box, ...]], *,
                       keeper: DetailKeeper | None = None) -> tuple[StyleGroup, ...]:
    """Group the blanks by frame and learn where the members of each group differ; what the
    groups learn later of their pairs is kept by ``keeper``."""
    return tuple(replace(_group(anchor, members, boxes, distinguish), keeper=keeper) for anchor, members in group_by_frame(models))


def group_by_frame(models: Sequence[PageModel]) -> list[tuple[PageModel, list[tuple[PageModel, np.ndarray]]]]:
    """The blanks grouped by frame: per group its anchor and, per member (the anchor first),
    the 3x3 map of member blank px -> anchor blank px."""
    grouped: list[tuple[PageModel, list[tuple[PageModel, np.ndarray]]]] = []
    for model in models:
        for anchor, members in grouped:
            if not _same_sheet(model, anchor):
                continue  # a legal sheet whose top prints a letter sheet's frame is another frame
            found = align_to_page(model.image, anchor, dpi_hint=model.dpi, turned=False)
            if isinstance(found, Alignment) and found.score >= GROUP_MIN_CC:
                refined = refine(model.image, anchor, found.matrix)
                matrix = refined.matrix if isinstance(refined, Refined) else found.matrix
                members.append((model, np.linalg.inv(matrix)))
                break
        else:
            grouped.append((model, [(model, np.eye(3))]))
    return grouped


SAME_SHEET = 0.05  # blanks of one frame: sheets whose sides agree within this share (a scan crops a margin; letter and legal differ by a quarter)


def _same_sheet(a: PageModel, b: PageModel) -> bool:
    """Whether two blanks are printed on one size of sheet (the layouts' ``size``): a frame is
    a sheet's, and a longer sheet printing a shorter one's frame at its top (the same vendor's
    letter and legal ballots) aligns with it there as well as a member does."""
    return all(abs(x / y - 1.0) <= SAME_SHEET for x, y in zip(a.size_in, b.size_in, strict=True))


def _group(anchor: PageModel, members: list[tuple[PageModel, np.ndarray]], boxes: dict[tuple[str, int], tuple[Box, ...]],
           distinguish: dict[tuple[str, int], tuple[Box, ...]]) -> StyleGroup:
    shape = anchor.frame_shape
    to_frame = _blank_to_frame(anchor)
    keep = np.ones(shape, bool)
    inks, focus = [], []
    timing = np.zeros(shape, bool)
    for model, to_anchor in members:
        warp = to_frame @ to_anchor @ np.linalg.inv(_blank_to_frame(model))  # member frame -> anchor frame
        if model.mark_size_in is not None:
            mw, mh = model.mark_size_in
            for x, y in model.marks_in:
                timing |= _box_mask(shape, to_frame @ to_anchor, (x - mw / 2, y - mh / 2, mw, mh), model.dpi, TIMING_GROW_IN)
        inks.append(cv2.warpPerspective(model.frame_ink(), warp, (shape[1], shape[0]), flags=cv2.INTER_LINEAR))
        for box in boxes.get(model.key, ()):
            keep &= ~_box_mask(shape, to_frame @ to_anchor, box, model.dpi, EXCLUDE_GROW_IN)
        focus.append([_box_mask(shape, to_frame @ to_anchor, b, model.dpi, 0.0) for b in distinguish.get(model.key, ())])
    printed = tuple(i >= INK_LEVEL for i in inks)
    solid = tuple(np.flatnonzero((i >= SOLID_LEVEL) & keep).astype(np.int32) for i in inks)
    near = tuple(cv2.dilate(i, np.ones((3, 3), np.uint8)) >= PAPER_LEVEL for i in inks)
    boxes_of = tuple(np.logical_or.reduce(f) if f else None for f in focus)
    for a in (*printed, *solid, *near, *(b for b in boxes_of if b is not None), keep, timing):
        a.setflags(write=False)
    return StyleGroup(anchor, tuple(m for m, _ in members), tuple(t for _, t in members), printed, solid, near,
                      boxes_of, keep, timing)


def _blank_to_frame(model: PageModel) -> np.ndarray:
    f = model.image.shape[1] / model.frame_shape[1]
    return np.array([[1 / f, 0, 0.5 / f - 0.5], [0, 1 / f, 0.5 / f - 0.5], [0, 0, 1]])


def _box_mask(shape: tuple[int, ...], blank_to_frame: np.ndarray, box: Box, dpi: float, grow_in: float) -> np.ndarray:
    x, y, w, h = box
    x, y, w, h = x - grow_in, y - grow_in, w + 2 * grow_in, h + 2 * grow_in
    corners = np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float64) * dpi
    pts = cv2.perspectiveTransform(corners.reshape(-1, 1, 2), blank_to_frame).reshape(-1, 2)
    mask = np.zeros(shape, np.uint8)
    cv2.fillConvexPoly(mask, np.round(pts).astype(np.int32), 1)
    return mask.astype(bool)


# --------------------------------------------------------------------------------------
# Card time


def identify_style(gray: np.ndarray, groups: Sequence[StyleGroup], *, dpi_hint: float | None = None,
                   accept: Callable[[PageModel], bool] = lambda model: True, unseen: Sequence[tuple[int, int]] = ()) -> StyleResult:
    """The style and page whose blank this card is, or why that cannot be said; only pages
    ``accept`` admits are candidates (``--style``, a card bearing our fiducials); ``unseen``:
    columns of ``gray`` (first, last) that show nothing of the card (a scanner's light streak
    cuts the print there), where no glyph is judged."""
    best_failure = "no layout has a blank reference scan of this kind of page"
    told: tuple[float, str] | None = None  # the reason given by the frame the card fitted best, with that fit's score
    results: list[StyleMatch | StyleAmbiguous] = []
    view = CardView(gray, unseen)
    # the frames' marks voted for first (cheap), then fitted in order of the votes: the frame
    # whose marks the card shows is mostly fitted first, and a frame told apart from it by the
    # marks alone is not fitted at all (:func:`frames_apart`): the outcome is the same in any order
    voted = [(group, members, mark_votes(view, group.anchor, dpi_hint=dpi_hint))
             for group in groups if (members := [k for k, m in enumerate(group.members) if accept(m)])]
    by_marks_of: dict[int, Alignment | AlignmentFailure | None] = {}
    for k in sorted(range(len(voted)), key=lambda k: -(votes.share if (votes := voted[k][2]) is not None else 0.0)):
        group, _members, votes = voted[k]
        sure = next((voted[j][0].anchor for j, a in by_marks_of.items() if isinstance(a, Alignment) and a.score >= MARK_SURE_CC
                     and frames_apart(voted[j][0].anchor, group.anchor)), None)
        if sure is not None:
            # another frame's timing marks fit the card surely, and this frame's marks fit
            # neither that frame's blank nor the other way round: they cannot fit the card
            by_marks_of[k] = AlignmentFailure(f"the card shows the timing marks of another frame (that of {sure.style} page {sure.page})")
        else:
            by_marks_of[k] = None if votes is None else align_by_marks(view, group.anchor, dpi_hint=dpi_hint, votes=votes)
    tried = [(group, members, by_marks_of[k]) for k, (group, members, _votes) in enumerate(voted)]  # the index's order
    framed = any(isinstance(by_marks, Alignment) for _g, _m, by_marks in tried)
    first: list[tuple[StyleGroup, list[int], Alignment | None]] = []  # None: to align densely
    later: list[tuple[StyleGroup, list[int], Alignment | None]] = []
    for group, members, by_marks in tried:
        if isinstance(by_marks, Alignment):
            first.append((group, members, by_marks))
        elif framed:
            # the card shows another blank's frame of timing marks with its print: a blank
            # without timing marks cannot be it, nor one whose marks do not fit the card or fit
            # it with a print that does not match
            best_failure = by_marks.detail if by_marks is not None else best_failure
        elif by_marks is None and group.anchor.has_timing_marks:
            # the card shows no rows of this blank's timing marks: only if no other blank fits
            later.append((group, members, None))
        else:
            first.append((group, members, None))
    for batch in (first, later):  # the blanks whose marks the card does not show only if no other fits
        if batch is later and not results and told is not None and told[0] >= DENSE_SETTLED_CC:
            # a blank's print fitted the card closely, and its frame's blanks refused it for print
            # it lacks (a style the election lacks, a stamp over a line): a frame whose timing
            # marks the card does not show fits it no better (searching each such frame twice,
            # as fed and turned, cost a stamped card seconds and found nothing)
            break
        # quickly first; only a card no blank matched so is aligned again, searching harder
        # (:func:`~scanpipe.imaging.align.align_densely`'s ``thorough``): a card that reads pays
        # nothing for the search that a hard one needs
        quick: list[StyleMatch | StyleAmbiguous] = []
        told = _better(told, _compare(view, batch, quick, dpi_hint, thorough=False))
        if not any(isinstance(r, StyleMatch) for r in quick):
            searched: list[StyleMatch | StyleAmbiguous] = []
            told = _better(told, _compare(view, batch, searched, dpi_hint, thorough=True))
            quick = searched or quick
        results.extend(quick)
        if any(isinstance(r, StyleMatch) for r in results):
            break
    if not results:
        return StyleUnknown(told[1] if told is not None else best_failure)
    matches = [r for r in results if isinstance(r, StyleMatch)]
    if len(results) > 1 or not matches:
        return results[0] if len(results) == 1 else _across_groups(results)
    return matches[0]


def frames_apart(a: PageModel, b: PageModel) -> bool:
    """Whether two frames' timing marks are told apart by the marks alone: neither blank's
    marks fit the other blank (either way up). A card that one of them fits surely (the
    print correlating MARK_SURE_CC or better) is then not aligned to the other at all: it
    would fail there, and fitting marks that do not fit costs more than fitting those that
    do. Frames one of whose marks fit the other's blank (a frame whose marks are a subset of
    the other's, the same frame printed with another content) are always both tried.
    Learned once per pair of blanks (deterministic: a memo of the blanks' page models)."""
    if a is b or a.mark_size_in is None or b.mark_size_in is None:
        return False
    key = ("frames apart", b.key)
    if key not in a.memo:
        apart = not any(isinstance(align_by_marks(CardView(x.image), y, dpi_hint=x.dpi), Alignment) for x, y in ((a, b), (b, a)))
        a.memo[key] = b.memo[("frames apart", a.key)] = apart
    return bool(a.memo[key])


def _better(told: tuple[float, str] | None, other: tuple[float, str] | None) -> tuple[float, str] | None:
    """Of two reasons a card was not read, the one from the frame it fitted better (a frame
    whose print the card matched, refused for a glyph, says more than one it did not fit)."""
    return other if told is None or (other is not None and other[0] > told[0]) else told


def _compare(view: CardView, batch: list[tuple[StyleGroup, list[int], Alignment | None]],
             results: list[StyleMatch | StyleAmbiguous], dpi_hint: float | None, *,
             thorough: bool = True) -> tuple[float, str] | None:
    """Align the card to each frame of ``batch`` not yet aligned (None), then refine and
    compare it with the members, best-aligned frame first, appending to ``results``; the
    reason the best-fitting frame that did not match gave, with its fit's score (a frame
    not fitted at all: -1), if any. Once a style matched, a frame aligned
    ACROSS_GROUPS_MARGIN worse cannot win (:func:`_across_groups`): it is not refined or
    compared at all."""
    failure: tuple[float, str] | None = None
    # ..., aligned by the timing marks, why the print's correlation fell short (a dense fit under the gate)
    candidates: list[tuple[StyleGroup, list[int], Alignment, bool, str | None]] = []
    for group, members, found in batch:
        aligned = (align_densely(view, group.anchor, dpi_hint=dpi_hint, thorough=thorough) if found is None
                   else surer_of(found, view, group.anchor, dpi_hint=dpi_hint))
        if isinstance(aligned, AlignmentFailure):
            failure = _better(failure, (-1.0 if aligned.fit is None else aligned.fit.score, aligned.detail))
            if aligned.fit is not None:  # a stamp or heavy ink over empty parts lowers the correlation of a right fit
                candidates.append((group, members, aligned.fit, False, aligned.detail))
            continue
        candidates.append((group, members, aligned, aligned is found, None))
    candidates.sort(key=lambda c: -c[2].score)
    for group, members, aligned, by_marks, short in candidates:
        matched = [r.alignment.score for r in results if isinstance(r, StyleMatch)]
        if matched and max(matched) - aligned.score >= ACROSS_GROUPS_MARGIN:
            break
        refined = _refined(view, aligned.turned, group.anchor, aligned.matrix, close=by_marks)
        result: StyleMatch | StyleAmbiguous | StyleUnknown | None = None
        if isinstance(refined, Refined) or len(members) == 1:
            result = _settle(view, group, members, aligned, refined, group.anchor, short)
        if not isinstance(result, StyleMatch | StyleAmbiguous) and len(members) > 1:
            # the anchor's places are the frame's and its own print: a member that prints other
            # contests (another party's ballot in the same frame) shows few of them, or those
            # it shows (the header, the frame) leave the fit off where it prints its own
            # contests, so that its print seems missing there
            for own, refined_by, aligned_by, short_by in _member_refinements(view, group, aligned, short, members, by_marks, dpi_hint,
                                                                             thorough):
                again = _settle(view, group, members, aligned_by, refined_by, own, short_by)
                if result is None or not isinstance(again, StyleUnknown):
                    result = again
                if not isinstance(again, StyleUnknown):
                    break
            if result is None:
                result = _settle(view, group, members, aligned, refined, group.anchor, short)
        if isinstance(result, StyleUnknown):
            failure = _better(failure, (aligned.score, result.detail))
            continue
        assert result is not None
        results.append(result)
    return failure


def _settle(view: CardView, group: StyleGroup, members: list[int], aligned: Alignment, refined: Refined | AlignmentFailure,
            own: PageModel, short: str | None) -> StyleMatch | StyleAmbiguous | StyleUnknown:
    """The style a card aligned to a group is (:func:`_choose`), given the local refinement
    against blank ``own`` (a member; its pixels): a fit whose print correlated short of the
    gate (``short``: why) stands only where the refinement finds the blank all over the card."""
    if short is not None and not (isinstance(refined, Refined) and found_all_over(refined, own)):
        return StyleUnknown(short)
    if isinstance(refined, Refined):
        k = group.members.index(own)
        aligned = replace(aligned, matrix=refined.matrix @ np.linalg.inv(group.to_anchor[k]), precise=True)
    measured = refined if isinstance(refined, Refined) and own is group.anchor else None
    upright = view.upright(aligned.turned)

    def choose() -> StyleMatch | StyleAmbiguous | StyleUnknown:
        card, inside, faint = _card_in_frame(upright, aligned, group.anchor)
        return _choose(card, inside, group, aligned, members, measured, upright, faint, view.unseen_upright(aligned.turned))

    # the same fit compared again (the quick pass's, searching harder) is settled once
    return view.once(("settle", id(group), tuple(members), _fit_key(aligned), None if measured is None else _fit_key(measured)), choose)


def _fit_key(fit: Alignment | Refined) -> tuple[object, ...]:
    """A fit as a memo's key: every field, an array by its bytes."""
    return tuple(value.tobytes() if isinstance(value, np.ndarray) else value
                 for value in (getattr(fit, f.name) for f in fields(fit)))


def _refined(view: CardView, turned: bool, model: PageModel, matrix: np.ndarray, *, close: bool = False) -> Refined | AlignmentFailure:
    """:func:`~scanpipe.imaging.align.refine` of the card (``turned``: upside down) to
    ``model`` from ``matrix``, once per card for the same start (the quick pass's, searching harder)."""
    return view.once(("refine", id(model), turned, matrix.tobytes(), close),
                     lambda: refine(view.upright(turned), model, matrix, close=close))


def _member_refinements(view: CardView, group: StyleGroup, aligned: Alignment, short: str | None, members: list[int],
                        close: bool, dpi_hint: float | None, thorough: bool) -> Iterator[tuple[PageModel, Refined, Alignment, str | None]]:
    """Local refinements against the group's members other than its anchor, for a card the
    anchor's places did not settle: the LEADERS members that explain the card best under the
    anchor's fit, best first, refined from that fit; then the same members aligned to the
    card directly (densely) and refined from there: a member whose print differs from the
    anchor's in most of the page (another party's contests in two columns where the anchor
    prints three) shares only the frame with it, and a frame of few marks (one row) leaves
    the anchor's dense fit to that print, off by a stretch the member's own print does not
    show. Each: the blank, the refinement (in that blank's pixels), the alignment (the
    anchor's, or the member's direct one carried into the anchor's frame) and why its print
    correlated short of the gate, if it did (``short``: the anchor's fit's); lazily, the
    caller taking the first that settles the card's style."""
    upright = view.upright(aligned.turned)
    card, inside, _faint = _card_in_frame(upright, aligned, group.anchor)
    others = [i for i in members if group.members[i] is not group.anchor]
    distance = _distances(card, inside, group, others)
    leading = sorted(others, key=lambda i: distance[i])[:LEADERS]
    for i in leading:
        refined = _refined(view, aligned.turned, group.members[i], aligned.matrix @ group.to_anchor[i], close=close)
        if isinstance(refined, Refined):
            yield group.members[i], refined, aligned, short
    for i in leading:
        model = group.members[i]
        direct = align_densely(view, model, dpi_hint=dpi_hint, thorough=thorough)
        fit, why = (direct.fit, direct.detail) if isinstance(direct, AlignmentFailure) else (direct, None)
        if fit is None:
            continue
        refined = _refined(view, fit.turned, model, fit.matrix)
        if isinstance(refined, Refined):
            carried = fit.matrix @ np.linalg.inv(group.to_anchor[i])  # anchor blank px -> card px
            yield model, refined, replace(fit, matrix=carried, score=max(fit.score, aligned.score)), why


def _distances(card: np.ndarray, inside: np.ndarray, group: StyleGroup, members: Sequence[int]) -> dict[int, float]:
    """How badly each member explains the card in the frame (:func:`_choose`'s ranking): the
    share of its solid print the card lacks plus the share of the card's print it lacks, on
    every UNEXPLAINED_SAMPLE-th pixel (the pairwise comparison uses all). The card's side is
    measured once for all the members."""
    flat, seen = card.ravel(), inside.ravel()
    raw = cv2.erode(card.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)  # undo the dilation
    card_px = np.flatnonzero(raw & group.keep & inside)[::UNEXPLAINED_SAMPLE]
    out = {}
    for i in members:
        sample = group.solid[i][::UNEXPLAINED_SAMPLE]
        sample = sample[seen[sample]]  # the member's solid print where the card has pixels
        shown = int(np.count_nonzero(flat[sample])) / sample.size if sample.size else 0.0  # a mean, to the last bit
        unexplained = (card_px.size - int(np.count_nonzero(group.near[i].ravel()[card_px]))) / card_px.size if card_px.size else 0.0
        out[i] = (1.0 - shown) + unexplained
    return out


def _across_groups(results: list[StyleMatch | StyleAmbiguous]) -> StyleResult:
    """The card fitted blanks of several frames: the clearly better alignment wins."""
    ranked = sorted(results, key=lambda r: -(r.alignment.score if isinstance(r, StyleMatch) else 0.0))
    first, second = ranked[0], ranked[1]
    if isinstance(first, StyleMatch) and isinstance(second, StyleMatch) and first.alignment.score - second.alignment.score < ACROSS_GROUPS_MARGIN:
        return StyleAmbiguous(first.model, second.model, first.alignment.score - second.alignment.score)
    return first


def _card_in_frame(upright: np.ndarray, aligned: Alignment, anchor: PageModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The card's printed ink (bool, dilated one pixel) warped into the anchor's frame, where
    the card has pixels at all (a scanner that cut a margin cut the blank's print there), and
    where it shows ink at all (PAPER_LEVEL, dilated one pixel: a thin rule in a second ink on
    coloured stock, a pixel wide at FRAME_DPI, may fall under INK_LEVEL where the blank's
    does not); ``upright``: the card turned as ``aligned`` says."""
    scale = float(np.sqrt(abs(np.linalg.det(aligned.matrix[:2, :2]))))  # card px per blank px
    f = anchor.image.shape[1] / anchor.frame_shape[1]
    small = reduce_to(upright, scale * f, 1.0)
    factor = upright.shape[1] / small.shape[1]
    to_small = np.array([[1 / factor, 0, 0.5 / factor - 0.5], [0, 1 / factor, 0.5 / factor - 0.5], [0, 0, 1]])
    frame_to_small = to_small @ aligned.matrix @ np.linalg.inv(_blank_to_frame(anchor))
    shape = (anchor.frame_shape[1], anchor.frame_shape[0])
    darkness = warp_in_tiles(ink_of(small), frame_to_small, shape)
    ink = darkness >= INK_LEVEL
    h, w = small.shape
    corners = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float64).reshape(-1, 1, 2)
    outline = cv2.perspectiveTransform(corners, np.linalg.inv(frame_to_small)).reshape(-1, 2)
    inside = np.zeros((shape[1], shape[0]), np.uint8)
    cv2.fillConvexPoly(inside, np.round(outline).astype(np.int32), 1)
    inside = cv2.erode(inside, np.ones((5, 5), np.uint8)).astype(bool)
    grow = np.ones((3, 3), np.uint8)
    return (cv2.dilate(ink.astype(np.uint8), grow).astype(bool), inside,
            cv2.dilate((darkness >= PAPER_LEVEL).astype(np.uint8), grow).astype(bool))


def _choose(card: np.ndarray, inside: np.ndarray, group: StyleGroup, aligned: Alignment,
            members: list[int], refined: Refined | None = None, upright: np.ndarray | None = None,
            faint: np.ndarray | None = None, unseen: Sequence[tuple[int, int]] = ()) -> StyleMatch | StyleAmbiguous | StyleUnknown:
    """Rank the candidates by how well each explains the card, then compare the leaders
    pairwise on the pixels where their blanks differ. ``refined``: the local refinement
    against the anchor, passed on when the anchor wins (registration need not measure it again);
    ``upright``: the card turned as ``aligned`` says, for pairs compared in detail; ``unseen``:
    its columns that show nothing of it, where no glyph is judged."""
    flat, seen = card.ravel(), inside.ravel()
    distance = _distances(card, inside, group, members)
    leaders = sorted(members, key=lambda k: distance[k])[:LEADERS]
    margins: dict[tuple[int, int], float] = {}
    details: dict[tuple[int, int], _Detail] = {}  # the pairs compared in detail
    paper: CardPaper | None = None  # the card's paper, measured once where print is compared in detail
    for a, i in enumerate(leaders):  # a margin is antisymmetric: each pair measured once
        for j in leaders[a + 1:]:
            margin = _margin(group, i, j, flat, seen)
            if margin is None:  # too few pixels solid on one and paper on the other
                detail = group.detail_of(i, j) if upright is not None else None
                if detail is not None and paper is None:
                    paper = card_paper(upright)  # type: ignore[arg-type]
                margin = 0.0 if detail is None else _detail_margin(detail, upright, aligned.matrix, paper,  # type: ignore[arg-type]
                                                                       group.anchor.dpi)
                if detail is not None:
                    details[(i, j)], details[(j, i)] = detail, detail.swapped()
            margins[(i, j)] = margin
            margins[(j, i)] = -margins[(i, j)]
    standing = {i: min((margins[(i, j)] for j in leaders if j != i), default=1.0) for i in leaders}
    order = sorted(leaders, key=lambda k: -standing[k])
    best = order[0]
    model = group.members[best]
    missing = _missing_block(card, group.ink[best], group.keep & inside & ~group.timing, shown=faint)
    if missing is not None:
        return StyleUnknown(f"the card does not show the print of the closest blank ({model.style} page {model.page}): {missing}")
    if standing[best] < MIN_MARGIN and len(order) > 1:
        return StyleAmbiguous(model, group.members[order[1]], standing[best])
    # where the winner differs from the runner-up (and from every look-alike compared in
    # detail), the card must print what the winner prints: it fits the winner best, yet may be
    # neither (a style or precinct the election lacks)
    rivals = ({j for i, j in details if i == best} | ({order[1]} if len(order) > 1 else set())) if upright is not None else set()
    if paper is None and upright is not None and rivals:
        paper = card_paper(upright)
    # a rubber stamp across the print makes the glyphs it covers unlike the blank's: those are
    # judged by their print the stamp leaves bare
    across = None if upright is None else InkAcross(upright, model, aligned.matrix @ group.to_anchor[best], group.to_anchor[best])
    for j in sorted(rivals):
        look_alike = (best, j) in details  # told apart in detail: one glyph decides; else most of a line must
        detail = details.get((best, j)) or group.lines_of(best, j)
        where = None if detail is None or upright is None else _line_missing(detail, upright, aligned.matrix, group.anchor.dpi,
                                                                             whole_line=not look_alike, paper=paper, across=across,
                                                                             unseen=unseen)
        if where is not None:
            return StyleUnknown(f"the card does not print what {model.style} page {model.page} prints where it differs from "
                                f"{group.members[j].style} page {group.members[j].page}: something else is printed near {where}")
    if upright is not None:
        # every line of the winner's own text: where no other style's blank of this page is in
        # the frame, one glyph decides (nothing else says where styles differ); else a line
        # must be mostly other print (a style the election lacks may differ from the winner
        # where the winner and its rivals print alike: another precinct's name)
        lone = not any(group.members[j].page == model.page for j in order[1:])
        paper = paper if paper is not None else card_paper(upright)  # once for the checks below
        own = group.own_lines_of(best)
        where = None if own is None else _own_line_missing(own, upright, aligned.matrix, group.anchor.dpi, paper,
                                                            whole_line=not lone, across=across, unseen=unseen)
        if where is not None:
            alone = ", the only blank of its frame," if lone else ""
            return StyleUnknown(f"the card does not print what {model.style} page {model.page}{alone} "
                                f"prints: something else is printed near {where}")
    to_model = aligned.matrix @ group.to_anchor[best]
    if upright is not None and model.has_timing_marks:
        # the code the vendor's timing marks carry (another precinct's card may print alike)
        differs = code_mismatch(model, upright, to_model, card_paper=None if paper is None else paper.level)
        if differs is not None:
            return StyleUnknown(f"the card's timing marks do not carry the code of {model.style} page {model.page}, "
                                f"the closest blank: in {differs}")
    measured = refined if group.members[best] is group.anchor else None
    return StyleMatch(model, group, aligned, to_model, standing[best], measured)


def _margin(group: StyleGroup, i: int, j: int, card: np.ndarray, seen: np.ndarray) -> float | None:
    """How much more of what only blank ``i`` prints the card shows than of what only ``j``
    prints (in [-1, 1]), where the card has pixels (``seen``, flat); None when too few
    pixels are printed solidly by one and not at all by the other."""
    only_i, only_j = group.only_in(i, j), group.only_in(j, i)
    only_i, only_j = only_i[seen[only_i]], only_j[seen[only_j]]
    focus = [f for f in (group.focus[i], group.focus[j]) if f is not None]
    if focus:
        boxes = np.logical_or.reduce(focus).ravel()
        fi, fj = only_i[boxes[only_i]], only_j[boxes[only_j]]
        if fi.size + fj.size >= MIN_PAIR_PX:
            only_i, only_j = fi, fj
    if only_i.size + only_j.size < MIN_PAIR_PX:
        return None
    shown_i = int(np.count_nonzero(card[only_i])) / only_i.size if only_i.size else 0.0  # means, to the last bit
    shown_j = int(np.count_nonzero(card[only_j])) / only_j.size if only_j.size else 0.0
    # a side of fewer than MIN_PAIR_PX pixels, where the other side has that many or more and
    # the card shows most of them (what only that blank prints), is taken as not seen (as a side
    # cut off wholly is): its few pixels lie next to print both blanks share, which the card's
    # ink, widened a pixel, covers anyway (vendor seed 363636, 0142.tif, a scan cut off where
    # only the runner-up prints its own: 200 of 200 of the winner's shown, 2 of the other's
    # last 3, a margin of 0.33)
    if 0 < only_j.size < MIN_PAIR_PX <= only_i.size and shown_i >= SHOWN_MOST:
        return shown_i
    if 0 < only_i.size < MIN_PAIR_PX <= only_j.size and shown_j >= SHOWN_MOST:
        return -shown_j
    return shown_i - shown_j


def _pair_detail(group: StyleGroup, i: int, j: int, *, lines_only: bool = False) -> _Detail | None:
    """Where members ``i`` and ``j`` print differently, at the anchor blank's resolution: both
    blanks warped into the anchor's pixels, their inks (blurred DETAIL_BLUR_PX) differing by
    DETAIL_DIFF or more outside the targets, write-in areas and timing marks, opened a pixel
    (two scans of one print differ along its edges only), at least DETAIL_MIN_PX of them;
    widened DETAIL_GROW_PX and cut into boxes around the differing pieces. None: the two
    blanks print alike everywhere (two scans of one blank: never told apart). ``lines_only``:
    no boxes (their crops), and only the LINE_MAX lines holding the most differing pixels."""
    if i > j:
        found = group.lines_of(j, i) if lines_only else group.detail_of(j, i)
        return None if found is None else found.swapped()
    h, w = group.anchor.image.shape
    inks = []
    for k in (i, j):
        member = group.members[k]
        ink = _blurred_ink(member.image, paper_level(member.image))
        inks.append(cv2.warpPerspective(ink, group.to_anchor[k], (w, h), flags=cv2.INTER_LINEAR, borderValue=-1.0))
    judged = cv2.resize((group.keep & ~group.timing).astype(np.uint8), (w, h), interpolation=cv2.INTER_NEAREST).astype(bool)
    judged &= (inks[0] >= 0) & (inks[1] >= 0)
    differ = ((np.abs(inks[0] - inks[1]) >= DETAIL_DIFF) & judged).astype(np.uint8)
    differ = cv2.morphologyEx(differ, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    if int(differ.sum()) < DETAIL_MIN_PX:
        differ = _glyphs_differ(inks[0], inks[1], judged, group.anchor.dpi)
        if int(differ.sum()) < MIN_PAIR_PX:
            return None
    where = cv2.dilate(differ, np.ones((2 * DETAIL_GROW_PX + 1,) * 2, np.uint8)).astype(bool)
    dpi = group.anchor.dpi
    gap = max(3, int(round(DETAIL_BOX_GAP_IN * dpi)) | 1)
    count, _labels, stats, _ = cv2.connectedComponentsWithStats(cv2.dilate(differ, np.ones((gap, gap), np.uint8)), connectivity=8)
    boxes: list[tuple[int, int, int, int]] = []
    first: list[np.ndarray] = []
    second: list[np.ndarray] = []
    near: list[np.ndarray] = []
    for x, y, bw, bh, _area in stats[1:count]:
        box = (int(x), int(y), int(bw), int(bh))
        boxes.append(box)
        if lines_only:
            continue
        for out, a in ((first, inks[0]), (second, inks[1]), (near, where)):
            crop = np.ascontiguousarray(a[y: y + bh, x: x + bw])
            crop.setflags(write=False)
            out.append(crop)
    lines = _line_boxes((inks[0] >= SOLID_LEVEL) | (inks[1] >= SOLID_LEVEL), judged, boxes, dpi)
    if lines_only:
        lines = tuple(sorted(lines, key=lambda b: -int(differ[b[1]: b[1] + b[3], b[0]: b[0] + b[2]].sum()))[:LINE_MAX])
        boxes = []
    # the lines' inks as bytes (a quarter of the memory; 1/255 is far below what is compared)
    line_first, line_second = (tuple(_read_only(np.round(np.where(judged, ink, 0.0)[y: y + bh, x: x + bw] * 255).astype(np.uint8))
                                     for x, y, bw, bh in lines) for ink in inks)
    return _Detail(tuple(boxes), tuple(first), tuple(second), tuple(near), lines, line_first, line_second)


def _glyphs_differ(first: np.ndarray, second: np.ndarray, judged: np.ndarray, dpi: float) -> np.ndarray:
    """Where two blanks' inks (blurred, in one blank's pixels) print different glyphs: each
    glyph-like piece of either's solid print (:func:`_glyph_like`) within ``judged``, with
    LINE_PAD_PX round it, correlating under DETAIL_GLYPH_CORR with the other's print at its best
    shift within DETAIL_GLYPH_SHIFT_PX; there, the pixels where the inks differ by
    DETAIL_GLYPH_DIFF (uint8 mask). Two scans of one print differ in none."""
    out = np.zeros(first.shape, np.uint8)
    h, w = first.shape
    pad, shift = LINE_PAD_PX, DETAIL_GLYPH_SHIFT_PX
    apart = (np.abs(first - second) >= DETAIL_GLYPH_DIFF).astype(np.uint8)
    for one, other in ((first, second), (second, first)):
        count, _labels, stats, _ = cv2.connectedComponentsWithStats(((one >= SOLID_LEVEL) & judged).astype(np.uint8), connectivity=8)
        for x, y, gw, gh, _area in stats[_glyph_like(stats, dpi)]:
            r0, r1, c0, c1 = y - pad, y + gh + pad, x - pad, x + gw + pad
            if r0 < shift or c0 < shift or r1 + shift > h or c1 + shift > w or not judged[r0:r1, c0:c1].all():
                continue  # at the edge of what both blanks show
            glyph = np.ascontiguousarray(one[r0:r1, c0:c1])
            around = np.ascontiguousarray(other[r0 - shift: r1 + shift, c0 - shift: c1 + shift])
            alike = float(around.std()) > 1e-3 and float(cv2.matchTemplate(around, glyph, cv2.TM_CCOEFF_NORMED).max()) >= DETAIL_GLYPH_CORR
            if not alike:
                out[r0:r1, c0:c1] |= apart[r0:r1, c0:c1]
    return out


def _own_lines(group: StyleGroup, i: int) -> _Detail | None:
    """Member ``i``'s own lines of text (:func:`_line_boxes` of every glyph it prints outside
    the targets, write-in areas and timing marks, at the anchor blank's resolution) as a
    :class:`_Detail` whose second blank prints nothing; None when it prints no text there."""
    member = group.members[i]
    h, w = group.anchor.image.shape
    ink = cv2.warpPerspective(_blurred_ink(member.image, paper_level(member.image)), group.to_anchor[i], (w, h),
                              flags=cv2.INTER_LINEAR, borderValue=-1.0)
    judged = cv2.resize((group.keep & ~group.timing).astype(np.uint8), (w, h), interpolation=cv2.INTER_NEAREST).astype(bool)
    judged &= ink >= 0
    # a piece of print the judged area cuts (a name running into a target's margin) is no glyph
    # to compare: only its cut half would be
    count, labels = cv2.connectedComponents((ink >= SOLID_LEVEL).astype(np.uint8), connectivity=8)
    cut = np.zeros(count, bool)
    cut[np.unique(labels[~judged])] = True
    cut[0] = False
    kept = judged & ~cv2.dilate(cut[labels].astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
    edge = int(round(EDGE_IN * group.anchor.dpi))  # a scanner may cut or shift the page's edges
    kept[:edge], kept[-edge:], kept[:, :edge], kept[:, -edge:] = False, False, False, False
    ink = np.where(kept, ink, 0.0).astype(np.float32)
    glyphs = _glyphs_of(ink, group.anchor.dpi)
    if not glyphs:
        return None
    b = OWN_BAND_PX  # each line with a band of the blank around it: a glyph is searched for within what the blank is known to print
    lines = tuple((x - b, y - b, bw + 2 * b, bh + 2 * b) for x, y, bw, bh in _line_boxes(ink >= SOLID_LEVEL, kept, glyphs, group.anchor.dpi)
                  if x >= b and y >= b and x + bw + b <= w and y + bh + b <= h)
    line_first = tuple(_read_only(np.round(ink[y: y + bh, x: x + bw] * 255).astype(np.uint8)) for x, y, bw, bh in lines)
    line_second = tuple(_read_only(np.zeros_like(a)) for a in line_first)
    return _Detail((), (), (), (), lines, line_first, line_second)


def _read_only(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _line_boxes(printed: np.ndarray, judged: np.ndarray, boxes: list[tuple[int, int, int, int]],
                dpi: float) -> tuple[tuple[int, int, int, int], ...]:
    """The lines of print (``printed``: either blank's, within ``judged``) that hold the
    differing ``boxes``: the pieces of print touching a box, then every piece in its rows
    reached through gaps under LINE_GAP_IN; overlapping lines merged."""
    printed = (printed & judged).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(printed, connectivity=8)
    if count <= 1:
        return ()
    x0s, y0s = stats[:, cv2.CC_STAT_LEFT], stats[:, cv2.CC_STAT_TOP]
    x1s, y1s = x0s + stats[:, cv2.CC_STAT_WIDTH], y0s + stats[:, cv2.CC_STAT_HEIGHT]
    glyph_like = _glyph_like(stats, dpi)  # rules, borders and specks make no line
    gap = LINE_GAP_IN * dpi
    lines: list[list[int]] = []
    for bx, by, bw, bh in boxes:
        touching = np.unique(labels[by: by + bh, bx: bx + bw])
        touching = touching[glyph_like[touching]]
        if touching.size == 0:
            continue
        x0, y0 = int(x0s[touching].min()), int(y0s[touching].min())
        x1, y1 = int(x1s[touching].max()), int(y1s[touching].max())
        grown = True
        while grown:  # take in the pieces of these rows within a gap of the line, left and right
            mid = (y0 + y1) / 2
            rows = (y0s < y1) & (y1s > y0) & (y0s <= mid) & (y1s >= mid)
            near = rows & (x0s < x1 + gap) & (x1s > x0 - gap) & glyph_like
            nx0, nx1 = min(x0, int(x0s[near].min(initial=x0))), max(x1, int(x1s[near].max(initial=x1)))
            ny0, ny1 = min(y0, int(y0s[near].min(initial=y0))), max(y1, int(y1s[near].max(initial=y1)))
            grown = (nx0, ny0, nx1, ny1) != (x0, y0, x1, y1)
            x0, y0, x1, y1 = nx0, ny0, nx1, ny1
        lines.append([x0, y0, x1, y1])
    merged: list[list[int]] = []
    for line in sorted(lines):
        if merged and line[0] <= merged[-1][2] and line[1] < merged[-1][3] and line[3] > merged[-1][1]:
            last = merged[-1]
            merged[-1] = [min(last[0], line[0]), min(last[1], line[1]), max(last[2], line[2]), max(last[3], line[3])]
        else:
            merged.append(line)
    return tuple((x0, y0, x1 - x0, y1 - y0) for x0, y0, x1, y1 in merged)


def _glyph_like(stats: np.ndarray, dpi: float) -> np.ndarray:
    """Per connected piece (``stats`` of cv2.connectedComponentsWithStats, the background
    first): whether it is the size of a glyph of text (LINE_GLYPH_IN2 or more, between
    LINE_GLYPH_MIN_H_IN and LINE_GLYPH_MAX_IN tall, no side under LINE_STROKE_MIN_IN): not a
    rule, a border or print too small for two scans to agree on."""
    w, h = stats[:, cv2.CC_STAT_WIDTH] / dpi, stats[:, cv2.CC_STAT_HEIGHT] / dpi
    like = ((stats[:, cv2.CC_STAT_AREA] >= LINE_GLYPH_IN2 * dpi * dpi) & (h >= LINE_GLYPH_MIN_H_IN) & (h <= LINE_GLYPH_MAX_IN)
            & (np.minimum(w, h) >= LINE_STROKE_MIN_IN))
    like[0] = False
    return like


def _line_missing(detail: _Detail, upright: np.ndarray, anchor_to_card: np.ndarray, dpi: float, *,
                  whole_line: bool = False, paper: CardPaper | None = None, across: InkAcross | None = None,
                  unseen: Sequence[tuple[int, int]] = ()) -> str | None:
    """Where the card does not print what the first blank prints in the lines of print that
    hold the pair's differences (:func:`_line_boxes`), else None: per glyph of either blank
    there, the card printing something (LINE_GLYPH_MASS of the glyph's ink or more; less is
    paper, torn, cut or faded: no other print) where the first blank prints nothing, or what
    does not correlate with the first blank's print there by LINE_GLYPH_CORR (another precinct's
    number in its place). One such glyph decides; with ``whole_line`` (blanks that differ more
    than look-alikes, where ink over a name is likelier than another name) a glyph whose solid
    print the card shows LINE_GLYPH_COVERED of is there whatever its correlation (a signature
    across it), and a line decides only with LINE_WRONG_MIN glyphs and LINE_WRONG_SHARE of
    those judged. The card's window (blank resolution) is laid on each line at the shift,
    within DETAIL_SHIFT_PX, that fits it best; ``paper``: the card's paper, if known. A glyph
    unlike the first blank's under a rubber stamp (``across``) is judged by the first blank's
    print where the stamp leaves it bare (:meth:`InkAcross.bare_shown`). A glyph on the card's
    ``unseen`` columns (:func:`_scanned_mask`) is not judged. The search and the glyphs' pad are
    as far in inches on a finer blank (``dpi``, :func:`_at_blank_px`)."""
    s, pad = _at_blank_px(DETAIL_SHIFT_PX, dpi), _at_blank_px(LINE_PAD_PX, dpi)
    paper = card_paper(upright) if paper is None else paper
    scanned: np.ndarray | None = None  # the card's pixels that show it, made once if an unseen column crosses a line
    for line, ((x, y, bw, bh), first_bytes, second_bytes, glyphs_of) in enumerate(zip(detail.lines, detail.line_first, detail.line_second,
                                                                                       detail.line_blanks(dpi), strict=True)):
        first, second = first_bytes.astype(np.float32) / 255.0, second_bytes.astype(np.float32) / 255.0
        to_card, ink, dx, dy = _line_on_card(upright, anchor_to_card, paper, (x, y, bw, bh), first, s, (0, 0))
        if (_off_fit(ink[dy: dy + bh, dx: dx + bw], first, dx - s, dy - s, s)
                and (centre := _shared_shift(detail, line, upright, anchor_to_card, paper, dpi)) != (0, 0)):
            # the line fits best at the search's edge, or poorly: it may lie further off here (a sheet
            # not flat, a slipping feed); laid again round where its shared print lies, taken where
            # the line fits better there
            again = _line_on_card(upright, anchor_to_card, paper, (x, y, bw, bh), first, s, centre)
            if _corr(again[1][again[3]: again[3] + bh, again[2]: again[2] + bw], first) > _corr(ink[dy: dy + bh, dx: dx + bw], first):
                to_card, ink, dx, dy = again
        card = np.ascontiguousarray(ink[dy: dy + bh, dx: dx + bw])
        unseen_px = None
        if _crossed(unseen, _window_corners(to_card, (bw + 2 * s, bh + 2 * s))):
            scanned = _scanned_mask(upright.shape, unseen) if scanned is None else scanned
            unseen_px = _off_scan(scanned, to_card, (bw + 2 * s, bh + 2 * s))
        # per-box sums from integral images: each glyph's statistics at a constant cost
        sum_c, sq_c = cv2.integral2(card, sdepth=cv2.CV_64F)
        sum_f, sq_f = cv2.integral2(first, sdepth=cv2.CV_64F)
        sum_s = cv2.integral(second, sdepth=cv2.CV_64F)
        sum_cf = cv2.integral(card * first, sdepth=cv2.CV_64F)
        solid_f = (first >= SOLID_LEVEL).astype(np.uint8)
        sum_solid, sum_hit = cv2.integral(solid_f), cv2.integral(solid_f & (card >= INK_LEVEL))
        judged, wrong, at = 0, 0, None
        for blank_sums, glyphs in ((sum_f, glyphs_of.first), (sum_s, glyphs_of.second)):
            for gx, gy, gw, gh in glyphs:
                r0, c0 = max(0, gy - pad), max(0, gx - pad)
                r1, c1 = min(bh, gy + gh + pad), min(bw, gx + gw + pad)
                if unseen_px is not None and _box_sum(unseen_px, int(dy) + r0, int(dy) + r1, int(dx) + c0, int(dx) + c1) > 0:
                    continue  # on a column the scan does not show
                n = (r1 - r0) * (c1 - c0)
                c, cc = _box_sum(sum_c, r0, r1, c0, c1), _box_sum(sq_c, r0, r1, c0, c1)
                var_c = cc / n - (c / n) ** 2
                if c < LINE_GLYPH_MASS * _box_sum(blank_sums, r0, r1, c0, c1) or var_c < 1e-6:
                    continue  # paper on the card
                judged += 1
                f, ff, cf = _box_sum(sum_f, r0, r1, c0, c1), _box_sum(sq_f, r0, r1, c0, c1), _box_sum(sum_cf, r0, r1, c0, c1)
                var_f = ff / n - (f / n) ** 2
                unlike = var_f < 1e-6 or (cf / n - (c / n) * (f / n)) / np.sqrt(var_c * var_f) < LINE_GLYPH_CORR
                if unlike and var_f >= 1e-6:
                    # a second look where the line drifts (a slipping feed stretches it along the card):
                    # the glyph laid with the print round it (PIECE_IN either way), not the line's fit
                    unlike = _piece_corr(ink, first, (r0, r1, c0, c1), dx, dy, s, int(round(PIECE_IN * dpi))) < LINE_GLYPH_CORR
                if whole_line and unlike:  # unless the winner's print is all there (a signature across it)
                    solid = _box_sum(sum_solid, r0, r1, c0, c1)
                    unlike = solid == 0 or _box_sum(sum_hit, r0, r1, c0, c1) < LINE_GLYPH_COVERED * solid
                if unlike and across is not None and across.covers((x + c0, y + r0, c1 - c0, r1 - r0)):
                    # under a stamp: judged by the winner's print where the stamp leaves it bare
                    bare = across.bare_shown((x + c0, y + r0, c1 - c0, r1 - r0), first[r0:r1, c0:c1] >= SOLID_LEVEL,
                                             (card[r0:r1, c0:c1],), INK_LEVEL, LINE_GLYPH_COVERED)
                    if bare:
                        judged -= 1
                        continue  # its print shown where the stamp leaves it bare
                if unlike:
                    wrong += 1
                    at = at or f"({(x + gx) / dpi:.2f} in, {(y + gy) / dpi:.2f} in)"
                    if not whole_line:
                        return at
        if whole_line and wrong >= LINE_WRONG_MIN and wrong >= LINE_WRONG_SHARE * judged:
            return at
    return None


def _line_on_card(upright: np.ndarray, anchor_to_card: np.ndarray, paper: CardPaper, box: tuple[int, int, int, int],
                  first: np.ndarray, s: int, centre: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, int, int]:
    """The card's window round line ``box`` (blank px) with ``s`` about it, shifted by
    ``centre``: its map from the window to the card, its blurred ink, and the offset in it
    (0..2s each way) where ``first`` fits best (least squared difference; of equal fits the first)."""
    to_card, _window, _paper, ink = _card_window(upright, anchor_to_card, paper, box, s, centre)
    misfit = cv2.matchTemplate(ink, first, cv2.TM_SQDIFF)  # (2s+1)^2 shifts
    dy, dx = np.unravel_index(int(np.argmin(misfit)), misfit.shape)
    return to_card, ink, int(dx), int(dy)


def _card_window(upright: np.ndarray, anchor_to_card: np.ndarray, paper: CardPaper, box: tuple[int, int, int, int], margin: int,
                 centre: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """The card's window round ``box`` (blank px) with ``margin`` about it, shifted by ``centre``:
    its map from the window to the card, the window as scanned, its paper and its blurred ink."""
    x, y, bw, bh = box
    cx, cy = centre
    size = (bw + 2 * margin, bh + 2 * margin)
    to_card = anchor_to_card @ np.array([[1.0, 0.0, x + cx - margin], [0.0, 1.0, y + cy - margin], [0.0, 0.0, 1.0]])
    window = cv2.warpPerspective(upright, to_card, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
    window_paper = paper.under(to_card, size)
    return to_card, window, window_paper, _blurred_ink(window, window_paper)


def _own_line_on_card(upright: np.ndarray, anchor_to_card: np.ndarray, paper: CardPaper, box: tuple[int, int, int, int],
                      first: np.ndarray, s: int, g: int, centre: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, float, np.ndarray, int, int]:
    """:func:`_line_on_card` for a line of the blank's own text, whose window keeps ``g`` more
    round it for its glyphs' own search: the map, the window as scanned, its paper, its blurred
    ink, and the offset (0..2s each way, past the ``g`` margin) where ``first`` fits best."""
    _x, _y, bw, bh = box
    to_card, window, window_paper, ink = _card_window(upright, anchor_to_card, paper, box, s + g, centre)
    misfit = cv2.matchTemplate(ink[g: g + bh + 2 * s, g: g + bw + 2 * s], first, cv2.TM_SQDIFF)
    dy, dx = np.unravel_index(int(np.argmin(misfit)), misfit.shape)
    return to_card, window, window_paper, ink, int(dx), int(dy)


def _own_line_missing(detail: _Detail, upright: np.ndarray, anchor_to_card: np.ndarray, dpi: float, paper: CardPaper, *,
                      whole_line: bool = False, across: InkAcross | None = None, unseen: Sequence[tuple[int, int]] = ()) -> str | None:
    """Where the card does not print a glyph of the blank's own lines of text
    (:func:`_own_lines`: each line with OWN_BAND_PX of the blank around it), else None.

    Each line is laid on the card at the shift within DETAIL_SHIFT_PX that fits it best, then
    each glyph (with LINE_PAD_PX around it) at the shift within OWN_GLYPH_SHIFT_PX more that
    correlates best (a page's hundreds of glyphs include some a line's one shift misses by a
    pixel or two). A glyph is not judged where the card shows no pixels (a cut margin; its
    ``unseen`` columns: a scanner's light streak), where it prints little there
    (LINE_GLYPH_MASS of the glyph's ink: torn, cut or faded), or where
    the blank prints it on a tint that the card shows solid black (:func:`_blacked_out`), or where
    a rubber stamp lies over it (``across``) and the card shows its print where the stamp leaves
    it bare (:meth:`InkAcross.bare_share`: a stamp's letter over a name's glyph makes it unlike
    the blank's, yet says nothing of the card's style), OWN_GLYPH_COVERED of it, or of the share
    the card shows of the glyphs it prints alike (:func:`_print_shown`: a 150-dpi card blown up
    to its blank's 200 dpi shows 75-90% of any glyph's solid print), or where the stamp leaves
    too little of it bare (:meth:`InkAcross.hides`) and the card shows OWN_GLYPH_COVERED of its
    print (under the stamp's ink: nothing else to see). A judged
    glyph is missing when it correlates under OWN_GLYPH_CORR and the card shows under
    OWN_GLYPH_COVERED of its solid print (at the best shift or the line's); or, narrower than
    OWN_NARROW of its height and printed over no more heavily than OWN_NARROW_MASS times its
    own ink (a "3" where a "1" was covers the 1's stroke too), when it correlates under
    OWN_NARROW_CORR; and any glyph correlating under OWN_UNLIKE_CORR (a precinct's name set in
    a larger type covers the smaller one's print).

    ``whole_line`` (a winner that has other blanks of its page to tell it apart, whose own
    lines are all compared as well: ink over a name is likelier than another name there): a
    glyph is missing when it correlates under OWN_GLYPH_CORR with the card printing no more
    than OWN_OVER_MASS times its ink there, times the card's own print weight where it prints
    heavily (a stamp or a loop across a name adds far more; another name in the same type
    about as much; :func:`_other_line` judges the lines once all are looked at), and a line decides where one glyph is
    missing so and, counting its glyphs the card shows paper over with them, LINE_WRONG_MIN
    and LINE_WRONG_SHARE of the line's are (another precinct's name, shorter or longer; not
    one glyph under a voter's loop), or where
    LINE_OTHER_MIN of its glyphs are missing so with their own print gone as well (under
    OWN_GLYPH_COVERED of it shown: another word or number where one letter or digit of it
    differs, "02 SOUTH" for "01 NORTH"; ink over a glyph leaves its print, and a fold or a
    stain that fades one glyph seldom fades another of the line as well)."""
    s, g, band = _at_blank_px(DETAIL_SHIFT_PX, dpi), _at_blank_px(OWN_GLYPH_SHIFT_PX, dpi), OWN_BAND_PX
    pad = _at_blank_px(LINE_PAD_PX, dpi)  # searches and pads as far in inches on a finer blank
    screen = OWN_GLYPH_CORR if whole_line else max(OWN_GLYPH_CORR, OWN_READ_CORR)  # lone: glyphs to read searched too
    suspects: list[tuple[float, np.ndarray, np.ndarray, np.ndarray, str]] = []  # correlation, the blank's glyph, the card's (as scanned, blurred), where
    weights: list[float] = []  # the card's ink over the blank's, per glyph it prints alike
    lines_unlike: list[tuple[int, int, list[tuple[float, str, float]]]] = []  # whole lines: judged, absent, unlike glyphs
    alike: list[tuple[np.ndarray, np.ndarray, int, int, int, int]] = []  # glyphs printed alike: the card's line, the blank's, box
    stamped: list[_Stamped] = []  # glyphs under a stamp judged once the card's print shown is known
    scanned: np.ndarray | None = None  # where the card has pixels, made once if a line runs off it
    card_h, card_w = upright.shape[:2]
    for line, ((x, y, bw, bh), first_bytes, glyphs_of) in enumerate(zip(detail.lines, detail.line_first, detail.line_blanks(dpi),
                                                                       strict=True)):
        first = first_bytes.astype(np.float32) / 255.0
        size = (bw + 2 * (s + g), bh + 2 * (s + g))
        to_card, window, window_paper, ink, dx, dy = _own_line_on_card(upright, anchor_to_card, paper, (x, y, bw, bh), first, s, g, (0, 0))
        if (_off_fit(ink[g + dy: g + dy + bh, g + dx: g + dx + bw], first, dx - s, dy - s, s)
                and (centre := _shared_shift(detail, line, upright, anchor_to_card, paper, dpi)) != (0, 0)):
            # the line fits best at the search's edge, or poorly: it may lie further off here (a sheet
            # not flat, a slipping feed); laid again round where its print lies, taken where the line
            # fits better there
            again = _own_line_on_card(upright, anchor_to_card, paper, (x, y, bw, bh), first, s, g, centre)
            ay, ax = g + again[5], g + again[4]
            if _corr(again[3][ay: ay + bh, ax: ax + bw], first) > _corr(ink[g + dy: g + dy + bh, g + dx: g + dx + bw], first):
                to_card, window, window_paper, ink, dx, dy = again
        corners = _window_corners(to_card, size)
        if ((corners >= 0.0).all() and (corners[:, 0] <= card_w - 1.0).all() and (corners[:, 1] <= card_h - 1.0).all()
                and not _crossed(unseen, corners)):
            missing_px = None  # the whole window on the card (a convex window's corners say so)
        else:
            scanned = _scanned_mask(upright.shape, unseen) if scanned is None else scanned
            missing_px = _off_scan(scanned, to_card, size)
        oy, ox = g + dy, g + dx  # the line's origin in the window
        printed = first >= SOLID_LEVEL
        if not printed.any():
            continue
        card = np.ascontiguousarray(ink[oy: oy + bh, ox: ox + bw])  # the card at the line's shift
        level: float | None = None  # measured when a glyph is first searched (most lines need none)
        # per-box sums from integral images: most glyphs correlate well at the line's shift and
        # are done at a constant cost; only the others are searched
        sum_c, sq_c = cv2.integral2(card, sdepth=cv2.CV_64F)
        sum_f, sq_f = cv2.integral2(first, sdepth=cv2.CV_64F)
        sum_cf = cv2.integral(card * first, sdepth=cv2.CV_64F)
        judged, absent = 0, 0
        unlike: list[tuple[float, str, float]] = []  # whole lines: per glyph unlike the blank's, its ink over the blank's, where, shown
        for gx, gy, gw, gh in glyphs_of.first:
            if gx < band or gy < band or gx + gw > bw - band or gy + gh > bh - band:
                continue  # a neighbouring line's glyph, cut by this one's band
            r0, r1, c0, c1 = gy - pad, gy + gh + pad, gx - pad, gx + gw + pad
            if missing_px is not None and _box_sum(missing_px, oy + r0 - g, oy + r1 + g, ox + c0 - g, ox + c1 + g) > 0:
                continue  # off the scanned image, wholly or in part
            n = (r1 - r0) * (c1 - c0)
            c, f = _box_sum(sum_c, r0, r1, c0, c1), _box_sum(sum_f, r0, r1, c0, c1)
            var_c = _box_sum(sq_c, r0, r1, c0, c1) / n - (c / n) ** 2
            var_f = _box_sum(sq_f, r0, r1, c0, c1) / n - (f / n) ** 2
            if c < LINE_GLYPH_MASS * f or var_c < 1e-6 or var_f < 1e-6:
                absent += 1
                continue  # paper on the card (torn, cut, faded): no other print
            judged += 1
            if (_box_sum(sum_cf, r0, r1, c0, c1) / n - (c / n) * (f / n)) / np.sqrt(var_c * var_f) >= screen:
                weights.append(c / f)
                alike.append((card, first, r0, r1, c0, c1))
                continue  # at the line's shift already (the search below only finds better)
            glyph = first[r0:r1, c0:c1]
            here = card[r0:r1, c0:c1]
            around = ink[oy + r0 - g: oy + r1 + g, ox + c0 - g: ox + c1 + g]  # the glyph's place on the card, +-g
            fit = cv2.matchTemplate(around, glyph, cv2.TM_CCOEFF_NORMED)
            by, bx = np.unravel_index(int(np.argmax(fit)), fit.shape)
            corr = float(fit[by, bx])
            if corr >= screen:
                weights.append(c / f)
                alike.append((card, first, r0, r1, c0, c1))
                continue
            solid = glyph >= SOLID_LEVEL
            if not solid.any():
                continue
            if _blacked_out(glyph, solid, here):
                judged -= 1  # not judged: neither there nor paper
                continue  # printed on a tint that the scan's threshold turned black: it can show nothing
            where = f"({(x + gx) / dpi:.2f} in, {(y + gy) / dpi:.2f} in)"
            place = (x + c0, y + r0, c1 - c0, r1 - r0)  # the glyph's place in the blank's pixels
            if level is None:
                # the card's own print in the line (its darkest, whatever it prints there): a faint
                # scan's text is judged by its own darkness, never below the paper's noise
                level = max(PAPER_LEVEL, min(INK_LEVEL, OWN_PRINT_SHARE * float(np.percentile(card, OWN_PRINT_PCT))))
            best_here = around[by: by + r1 - r0, bx: bx + c1 - c0]
            covered = across is not None and across.covers(place)
            bare = across.bare_share(place, solid, (best_here, here), level) if across is not None and covered else None
            if bare is not None and bare >= OWN_GLYPH_COVERED:
                judged -= 1  # not judged: neither there nor paper
                continue  # under a stamp, its print shown where the stamp leaves it bare
            # under a stamp with less of its bare print shown: judged by the end against what the
            # card shows of the print it prints alike (a 150-dpi scan shows less of any glyph)
            held = None if bare is None else _Stamped(bare, level, len(lines_unlike))
            if not whole_line and c <= OWN_READ_MASS * f and np.count_nonzero(solid) < OWN_READ_SOLID * solid.size:
                sharp = window[oy + r0 - g + by: oy + r1 - g + by, ox + c0 - g + bx: ox + c1 - g + bx]  # the card unblurred
                suspect = (corr, glyph, np.clip(1.0 - sharp.astype(np.float32) / np.float32(window_paper), 0.0, 1.0),
                           best_here, where)
                (suspects if held is None else held.suspects).append(suspect)
            if corr >= OWN_GLYPH_CORR:
                if held is not None and held.suspects:
                    stamped.append(held)
                continue  # only to be read
            shown = max(float((best_here[solid] >= level).mean()), float((here[solid] >= level).mean()))
            if bare is None and covered and shown >= OWN_GLYPH_COVERED and across is not None and across.hides(place, solid):
                judged -= 1  # not judged: its print all there under a stamp that leaves too little of it bare
                continue
            if whole_line:  # judged once the card's print weight is known (:func:`_other_line`)
                if held is not None:
                    judged -= 1  # counted if judged after all
                    held.unlike.append((c / f, where, shown))
                    stamped.append(held)
                else:
                    unlike.append((c / f, where, shown))
                continue
            narrow = gw < OWN_NARROW * gh and c <= OWN_NARROW_MASS * f
            if shown < OWN_GLYPH_COVERED or (narrow and corr < OWN_NARROW_CORR) or corr < OWN_UNLIKE_CORR:
                if held is None:
                    return where
                held.missing = where
                stamped.append(held)
        if whole_line:
            lines_unlike.append((judged, absent, unlike))
    for held in stamped:
        if held.bare >= OWN_GLYPH_COVERED * _print_shown(alike, held.level):
            continue  # its bare print shown as the card shows print it prints alike
        if held.missing is not None:
            return held.missing
        suspects.extend(held.suspects)
        if held.unlike:
            line_judged, line_absent, line_unlike = lines_unlike[held.line]
            lines_unlike[held.line] = (line_judged + 1, line_absent, line_unlike + held.unlike)
    if whole_line:
        heavy = float(np.median(weights)) if len(weights) >= OWN_WEIGHT_GLYPHS else 1.0
        for judged, absent, unlike in lines_unlike:
            other = _other_line(judged, absent, unlike, heavy if heavy >= OWN_HEAVY_PRINT else 1.0)
            if other is not None:
                return other
    return _read_apart(suspects)


@dataclass
class _Stamped:
    """A glyph of :func:`_own_line_missing` under a stamp whose print the stamp leaves bare the
    card shows under OWN_GLYPH_COVERED of (``bare``, at ``level``): judged once the card's print
    shown is known (:func:`_print_shown`). What it would say if judged: ``missing`` (where, one
    glyph deciding), ``unlike`` (its line's entry, the ``line``-th), ``suspects`` (to be read)."""

    bare: float
    level: float
    line: int
    missing: str | None = None
    unlike: list[tuple[float, str, float]] = field(default_factory=list)
    suspects: list[tuple[float, np.ndarray, np.ndarray, np.ndarray, str]] = field(default_factory=list)


def _print_shown(alike: Sequence[tuple[np.ndarray, np.ndarray, int, int, int, int]], level: float) -> float:
    """What share of a glyph's solid print the card shows at ``level`` or darker where it prints
    the glyph alike (``alike``: the card's line, the blank's line, the glyph's box): the
    PRINT_SHOWN_PCT percentile over PRINT_SHOWN_GLYPHS of them at most, evenly spaced; 1.0 with
    fewer than PRINT_SHOWN_MIN. A 200-dpi scan shows all of it, a 150-dpi scan blown up to its
    blank's 200 dpi three quarters to nine tenths (the vendor profile's seed 323232)."""
    if len(alike) < PRINT_SHOWN_MIN:
        return 1.0
    step = max(1, len(alike) // PRINT_SHOWN_GLYPHS)
    shares = []
    for card, first, r0, r1, c0, c1 in alike[::step]:
        solid = first[r0:r1, c0:c1] >= SOLID_LEVEL
        if solid.any():
            shares.append(float((card[r0:r1, c0:c1][solid] >= level).mean()))
    return min(1.0, float(np.percentile(shares, PRINT_SHOWN_PCT))) if len(shares) >= PRINT_SHOWN_MIN else 1.0


def _window_corners(to_card: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The four corners (x, y; card px) of a window of ``size`` (w, h) that ``to_card`` maps on to the card."""
    w, h = size
    return cv2.perspectiveTransform(np.array([[[0.0, 0.0], [w - 1.0, 0.0], [w - 1.0, h - 1.0], [0.0, h - 1.0]]]), to_card)[0]


def _crossed(unseen: Sequence[tuple[int, int]], corners: np.ndarray) -> bool:
    """Whether an ``unseen`` column (UNSEEN_PAD_PX either side) crosses the window whose card ``corners`` these are."""
    xs = corners[:, 0]
    return any(c0 - UNSEEN_PAD_PX <= float(xs.max()) and c1 + UNSEEN_PAD_PX >= float(xs.min()) for c0, c1 in unseen)


def _scanned_mask(shape: tuple[int, ...], unseen: Sequence[tuple[int, int]]) -> np.ndarray:
    """1 where the card (``shape``) shows itself, 0 on its ``unseen`` columns (UNSEEN_PAD_PX either side)."""
    scanned = np.ones(shape[:2], np.uint8)
    for c0, c1 in unseen:
        scanned[:, max(0, c0 - UNSEEN_PAD_PX): c1 + UNSEEN_PAD_PX + 1] = 0
    return scanned


def _off_scan(scanned: np.ndarray, to_card: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The integral image of a window's pixels (``to_card``: window px -> card px) off the card
    or where ``scanned`` (:func:`_scanned_mask`) says the card does not show itself."""
    on_card = cv2.warpPerspective(scanned, to_card, size, flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP, borderValue=0)
    return cv2.integral((on_card == 0).astype(np.uint8))


def _other_line(judged: int, absent: int, unlike: list[tuple[float, str, float]], weight: float) -> str | None:
    """Where a line of a winner with rivals prints other print, else None (:func:`_own_line_missing`'s
    whole-line judgement): of its ``judged`` glyphs and ``absent`` ones (paper on the card),
    those ``unlike`` the blank's (each: the card's ink over the blank's there, where, the share
    of its solid print shown) and not printed over (ink over a glyph beyond OWN_OVER_MASS
    times its own, times ``weight``: the card's print weight, the median of that ratio over the
    glyphs it prints alike, where heavier than OWN_HEAVY_PRINT: a bilevel scan thresholded dark
    prints every glyph twice as heavy as its blank, the glyphs of another name too) count:
    LINE_OTHER_MIN of them with their own print gone as well (shown under OWN_GLYPH_COVERED:
    another word where one letter or digit differs), or LINE_WRONG_MIN and LINE_WRONG_SHARE
    of the line's glyphs, counting those that show paper (a shorter name in place of a longer
    one)."""
    wrong, other, at, other_at = 0, 0, None, None
    for ratio, where, shown in unlike:
        if ratio > OWN_OVER_MASS * weight:
            continue  # printed over (a stamp, a loop: far more ink than the glyph's)
        wrong += 1
        at = at or where
        if shown < OWN_GLYPH_COVERED:  # its print gone too: another glyph in its place (ink over a glyph leaves its print)
            other += 1
            if other >= LINE_OTHER_MIN:
                return other_at or where
            other_at = other_at or where
    if wrong and wrong + absent >= LINE_WRONG_MIN and wrong + absent >= LINE_WRONG_SHARE * (judged + absent):
        return at
    return None


def _blacked_out(glyph: np.ndarray, solid: np.ndarray, card: np.ndarray) -> bool:
    """Whether a glyph of the blank (``glyph``: its blurred ink with LINE_PAD_PX round it;
    ``solid``: where that is solid print) printed on a tint lies under solid ink on the card
    (``card``: the card's blurred ink at the same place): the blank's darkness round the
    glyph's solid print is TINT_LEVEL or more over three quarters of it (a contest's shaded
    header; bare paper round a glyph is far lighter), and the card is INK_LEVEL or darker over
    TINT_BLACK_SHARE of the place. A bilevel scan whose threshold lies above the tint's level
    turns the whole band black, its text with it: the glyph can be neither seen nor missed there
    (the fourth renderer's seed 2828: three cards of a style the election holds, on coloured
    stock, refused for their headers' glyphs)."""
    around = glyph[~solid]
    return (around.size > 0 and float(np.percentile(around, 25)) >= TINT_LEVEL
            and float(np.count_nonzero(card >= INK_LEVEL)) >= TINT_BLACK_SHARE * card.size)


def _read_apart(suspects: list[tuple[float, np.ndarray, np.ndarray, np.ndarray, str]]) -> str | None:
    """Where the OCR extra reads one of the OWN_READ_MAX worst-correlating ``suspects``
    (correlation, the blank's glyph blurred, the card's there as scanned and blurred, where)
    differently on blank and card (the card's either way: a thresholded scan reads better as
    scanned, a dithered one blurred), with what each reads; or, none surely so, several of
    them read as one other glyph (:func:`~scanpipe.imaging.glyph_text.read_apart_in_places`:
    a line the blank prints twice); or, where one glyph the blank prints in several places is
    read as itself on the card in none of them
    (:func:`~scanpipe.imaging.glyph_text.unconfirmed_in_places`: a dithered 150-dpi "B" over
    the blank's "A" read as nothing surely), those places; None where none differs or the
    extra is not installed."""
    worst = sorted(suspects, key=lambda t: t[0])[:OWN_READ_MAX]
    if not worst:
        return None
    e = OWN_READ_PAPER_PX
    crops = []
    for _corr, *inks, _where in worst:
        for ink in inks:
            crop = np.zeros((ink.shape[0] + 2 * e, ink.shape[1] + 2 * e), np.float32)
            crop[e:-e, e:-e] = ink / max(float(ink.max()), INK_LEVEL)  # its darkest black: a grey scan's print reads as well
            crops.append(crop)
    read = read_glyphs(crops)
    if read is None:
        return None
    places = [(read[3 * k], read[3 * k + 1: 3 * k + 3]) for k in range(len(worst))]
    for k, (*_glyph, where) in enumerate(worst):
        apart = read_apart_in_places([places[k]])
        if apart is not None:
            return f"{where} (it reads {apart[1]!r} where the blank reads {apart[0]!r})"
    at = ", ".join(where for *_g, where in worst)
    apart = read_apart_in_places(places)  # one glyph misread alike in several places
    if apart is not None:
        return f"{at} (it reads {apart[1]!r} in several places where the blank reads {apart[0]!r})"
    unread = unconfirmed_in_places(places)  # nor is the blank's own glyph read there, in several places
    if unread is not None:
        return f"{at} (where the blank prints {unread!r} in several places, the card's glyph is unlike it and not read as it)"
    return None


def _glyphs_of(ink: np.ndarray, dpi: float) -> list[tuple[int, int, int, int]]:
    """The glyph-like pieces (:func:`_glyph_like`) of a blank's solid print: x, y, w, h."""
    count, _labels, stats, _ = cv2.connectedComponentsWithStats((ink >= SOLID_LEVEL).astype(np.uint8), connectivity=8)
    like = _glyph_like(stats, dpi)
    return [(int(x), int(y), int(w), int(h)) for x, y, w, h, _a in stats[like]]


def _box_sum(integral: np.ndarray, r0: int, r1: int, c0: int, c1: int) -> float:
    return float(integral[r1, c1] - integral[r0, c1] - integral[r1, c0] + integral[r0, c0])


class InkAcross:
    """A rubber stamp across a card fitted to a blank (its letters and frame:
    :func:`~scanpipe.imaging.marks_across.stamp_of` the ink across the card,
    :func:`~scanpipe.imaging.marks_across.ink_across`, the blank's targets not known here),
    measured the first time a glyph asks (most cards never do) in the blank's frame at FIT_PPI.
    ``to_card``: the blank's pixels -> the upright card's; ``to_anchor``: the blank's pixels ->
    the pixels glyphs are given in (its frame's anchor's). Found against the blank, another
    style's print is ink across the card too; only broad strokes make a stamp, and a glyph
    under one is still judged where the stamp leaves it bare (skipping it outright read a
    stamped card of a style the election lacked as its neighbour: the vendor profile's seed
    282828, ``0166.tif``, whose party line differs under the stamp's first letter)."""

    def __init__(self, upright: np.ndarray, model: PageModel, to_card: np.ndarray, to_anchor: np.ndarray) -> None:
        self._upright, self._model, self._to_card = upright, model, to_card
        self._from_anchor = np.linalg.inv(to_anchor)
        self._mask: np.ndarray | None = None
        self._dilated: np.ndarray | None = None
        self._measured = False

    def covers(self, place: tuple[int, int, int, int]) -> bool:
        """Whether the stamp lies within ACROSS_NEAR_IN of ``place`` (x, y, w, h in the anchor's
        pixels)."""
        mask = self._stamp()
        if mask is None:
            return False
        x, y, w, h = place
        corners = np.array([[[x, y], [x + w, y], [x, y + h], [x + w, y + h]]], np.float64)
        at = cv2.perspectiveTransform(corners, self._from_anchor)[0] * (marks_across.FIT_PPI / self._model.dpi)
        grow = ACROSS_NEAR_IN * marks_across.FIT_PPI
        rows, cols = mask.shape
        c0, r0 = max(0, int(np.floor(at[:, 0].min() - grow))), max(0, int(np.floor(at[:, 1].min() - grow)))
        c1, r1 = min(cols, int(np.ceil(at[:, 0].max() + grow)) + 1), min(rows, int(np.ceil(at[:, 1].max() + grow)) + 1)
        return bool(c1 > c0 and r1 > r0 and mask[r0:r1, c0:c1].any())

    def bare_shown(self, place: tuple[int, int, int, int], solid: np.ndarray, views: Sequence[np.ndarray], level: float,
                   share: float) -> bool:
        """Whether the card shows the blank's solid print of a glyph (``solid``: at ``place``,
        x, y, w, h in the anchor's pixels) where the stamp leaves it bare: ``share`` of those
        pixels at ``level`` or darker in one of ``views`` (the card's ink there, each the shape
        of ``solid``); False where no stamp lies there or under ACROSS_BARE_MIN of its solid
        print is bare (nothing to judge it by: the glyph is judged as any other). Another style's
        glyph under a stamp still shows unlike the blank's where the stamp leaves it bare."""
        shown = self.bare_share(place, solid, views, level)
        return shown is not None and shown >= share

    def bare_share(self, place: tuple[int, int, int, int], solid: np.ndarray, views: Sequence[np.ndarray],
                   level: float) -> float | None:
        """:meth:`bare_shown`'s measure: the largest share, over ``views``, of the glyph's solid
        print the stamp leaves bare that the card shows at ``level`` or darker; None where no
        stamp lies there or under ACROSS_BARE_MIN of its solid print is bare."""
        bare = self._bare(place, solid)
        if bare is None or np.count_nonzero(bare) < ACROSS_BARE_MIN * np.count_nonzero(solid):
            return None
        return max(float((view[bare] >= level).mean()) for view in views)

    def hides(self, place: tuple[int, int, int, int], solid: np.ndarray) -> bool:
        """Whether the stamp lies over so much of a glyph's solid print that under ACROSS_BARE_MIN
        of it is bare (nothing left to judge the glyph by)."""
        bare = self._bare(place, solid)
        return bare is not None and bool(np.count_nonzero(bare) < ACROSS_BARE_MIN * np.count_nonzero(solid))

    def _bare(self, place: tuple[int, int, int, int], solid: np.ndarray) -> np.ndarray | None:
        """The glyph's solid print (``solid`` at ``place``, x, y, w, h in the anchor's pixels)
        the stamp leaves bare; None where there is no stamp or no solid print."""
        if self._stamp() is None or not solid.any():
            return None
        x, y, _w, _h = place
        to_mask = (np.diag([marks_across.FIT_PPI / self._model.dpi] * 2 + [1.0]) @ self._from_anchor
                   @ np.array([[1.0, 0.0, x], [0.0, 1.0, y], [0.0, 0.0, 1.0]]))
        under = cv2.warpPerspective(self._grown(), to_mask, (solid.shape[1], solid.shape[0]),
                                    flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP, borderValue=0) > 0
        return solid & ~under

    def _stamp(self) -> np.ndarray | None:
        """The stamp's ink in the blank's frame at FIT_PPI (None: no stamp), measured once."""
        if not self._measured:
            self._mask, self._measured = self._measure(), True
        return self._mask

    def _grown(self) -> np.ndarray:
        """The stamp's ink grown ACROSS_NEAR_IN (uint8), made once."""
        if self._dilated is None:
            mask = self._stamp()
            assert mask is not None
            r = max(1, int(round(ACROSS_NEAR_IN * marks_across.FIT_PPI)))
            self._dilated = cv2.dilate(mask.astype(np.uint8), np.ones((2 * r + 1, 2 * r + 1), np.uint8))
        return self._dilated

    def _measure(self) -> np.ndarray | None:
        model = self._model
        key = ("style: blank print in the frame",)  # the blank alone: once per blank
        if key not in model.memo:
            dark = marks_across.darkness_in_frame(model.image, np.diag([model.dpi, model.dpi, 1.0]),
                                                  (paper_level(model.image), 0.0, 0.0), model.size_in)
            model.memo[key] = np.round(marks_across.blank_print(dark) * 255.0).astype(np.uint8)
        near = model.memo[key].astype(np.float32) / 255.0  # type: ignore[attr-defined]  # what this method put there
        to_card = self._to_card @ np.diag([model.dpi, model.dpi, 1.0])  # blank inches -> card px
        card = marks_across.darkness_in_frame(self._upright, to_card, (paper_level(self._upright), 0.0, 0.0), model.size_in)
        across = marks_across.ink_across(marks_across.added_ink(card, near), near, (), ())
        return None if across is None else marks_across.stamp_of(across)


@dataclass(frozen=True, slots=True)
class CardPaper:
    """The card's paper as its print is compared in detail: its level (``paper_level``) and a
    coarse map of it, block by block (PAPER_BLOCKS on the card's short side; each block's
    PAPER_BLOCK_PCT percentile, the median of it and its eight neighbours: a block that is
    mostly print, a stamp's or a signature's few blocks do not move it, a lamp's fall-off or a
    curled edge's shadow across the card does). A window is measured against the level, unless
    the map there lies under SHADED_PAPER of it: then against the map, down to SHADED_FLOOR of
    the level. On evenly lit paper, the level exactly."""

    level: float
    blocks: np.ndarray  # the map (rows, columns of blocks), float32
    block_px: float  # a block's side in the card's pixels

    def under(self, to_card: np.ndarray, size: tuple[int, int]) -> float:
        """The paper level of the window ``size`` (w, h) that ``to_card`` maps on to the card."""
        x, y, w = to_card @ np.array([size[0] / 2.0, size[1] / 2.0, 1.0])
        rows, cols = self.blocks.shape
        r = min(rows - 1, max(0, int(y / w / self.block_px)))
        c = min(cols - 1, max(0, int(x / w / self.block_px)))
        local = float(self.blocks[r, c])
        return max(local, SHADED_FLOOR * self.level) if local < SHADED_PAPER * self.level else self.level


def card_paper(upright: np.ndarray) -> CardPaper:
    """The card's :class:`CardPaper` (``upright``: the card turned as its alignment says),
    from every PAPER_STEP-th pixel both ways."""
    sample = upright[::PAPER_STEP, ::PAPER_STEP]
    b = max(1, int(min(sample.shape[:2]) / PAPER_BLOCKS))
    rows, cols = max(1, sample.shape[0] // b), max(1, sample.shape[1] // b)
    tiles = sample[: rows * b, : cols * b].reshape(rows, b, cols, b).swapaxes(1, 2).reshape(rows, cols, b * b)
    k = min(b * b - 1, int(PAPER_BLOCK_PCT / 100.0 * b * b))
    levels = np.partition(tiles, k, axis=2)[:, :, k].astype(np.float32)
    padded = np.pad(levels, 1, mode="edge")
    around = np.stack([padded[dr: dr + rows, dc: dc + cols] for dr in range(3) for dc in range(3)])
    return CardPaper(paper_level(upright), np.median(around, axis=0).astype(np.float32), float(b * PAPER_STEP))


def _blurred_ink(gray: np.ndarray, paper: float) -> np.ndarray:
    ink = np.clip(1.0 - gray.astype(np.float32) / np.float32(paper), 0.0, 1.0)
    return cv2.GaussianBlur(ink, (0, 0), DETAIL_BLUR_PX)


def _at_blank_px(px: int, dpi: float) -> int:
    """A search or a pad set at PX_SET_AT_DPI, in the pixels of a blank of ``dpi``: as far in
    inches on a finer blank (a 300-dpi blank's residual of registration is 1.5 times the pixels),
    never less than set (a coarser blank keeps its pixels)."""
    return max(px, int(round(px * dpi / PX_SET_AT_DPI)))


def _shared_shift(detail: _Detail, k: int, upright: np.ndarray, anchor_to_card: np.ndarray, paper: CardPaper,
                  dpi: float) -> tuple[int, int]:
    """The shift (blank px, within LOCAL_REACH_IN) that lays the print both blanks share in the
    ``k``-th line of ``detail`` (a line of one blank's own text: all its print) best on the card
    (normalised correlation): where a card is not flat to the glass or its feed slipped, a
    homography leaves the print a few hundredths of an inch off in places, beyond what a
    glyph's search reaches; the line's shared print (its other words) says where it lies,
    whichever of the two blanks the card is. (0, 0) where the line shares too little print to tell."""
    x, y, bw, bh = detail.lines[k]
    first, second = detail.line_first[k], detail.line_second[k]
    shared = (np.minimum(first, second) if second.any() else first).astype(np.float32) / 255.0  # own lines: no second blank
    reach = max(1, int(round(LOCAL_REACH_IN * dpi)))
    out = (0, 0)
    if float(shared.std()) > 1e-3 and int((shared >= SOLID_LEVEL).sum()) >= DETAIL_MIN_PX:
        fit = cv2.matchTemplate(_card_window(upright, anchor_to_card, paper, (x, y, bw, bh), reach, (0, 0))[3], shared, cv2.TM_CCOEFF_NORMED)
        dy, dx = np.unravel_index(int(np.argmax(fit)), fit.shape)
        out = (int(dx) - reach, int(dy) - reach)
    return out


def _piece_corr(ink: np.ndarray, first: np.ndarray, glyph: tuple[int, int, int, int], dx: int, dy: int, s: int, piece: int) -> float:
    """The correlation of a glyph's box (``glyph``: rows and columns in the line) of ``first``
    with the card's window ``ink`` where the print round it, ``piece`` px either way along the
    line, fits best (least squared difference, within ``s`` of the line's fit ``dx``, ``dy``, as
    far as the window reaches): its neighbours decide where it lies, never the glyph alone."""
    r0, r1, c0, c1 = glyph
    bh, bw = first.shape
    p0, p1 = max(0, c0 - piece), min(bw, c1 + piece)
    lo_x, lo_y = max(0, dx - s), max(0, dy - s)
    hi_x, hi_y = min(ink.shape[1] - bw, dx + s), min(ink.shape[0] - bh, dy + s)
    region = ink[lo_y: hi_y + bh, lo_x + p0: hi_x + p1]
    misfit = cv2.matchTemplate(np.ascontiguousarray(region), np.ascontiguousarray(first[:, p0:p1]), cv2.TM_SQDIFF)
    py, px = np.unravel_index(int(np.argmin(misfit)), misfit.shape)
    oy, ox = lo_y + int(py), lo_x + int(px)
    return _corr(ink[oy + r0: oy + r1, ox + c0: ox + c1], first[r0:r1, c0:c1])


def _off_fit(card: np.ndarray, first: np.ndarray, dx: int, dy: int, s: int) -> bool:
    """Whether a line laid on the card at its best shift (``dx``, ``dy`` within ``s``) may lie
    further off: that shift is at the search's edge, or the card there correlates with the
    blank's line under LINE_FIT_CORR (a local minimum a few pixels from where it lies; or
    another line: searching round its shared print then changes nothing)."""
    return abs(dx) == s or abs(dy) == s or _corr(card, first) < LINE_FIT_CORR


def _corr(a: np.ndarray, b: np.ndarray) -> float:
    """The normalised correlation of two images of one size (0.0 where either is flat)."""
    a, b = a - a.mean(), b - b.mean()
    norm = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return float((a * b).sum()) / norm if norm > 0 else 0.0


def _line_of(detail: _Detail, box: tuple[int, int, int, int]) -> int | None:
    """The index of the line of ``detail`` that holds the centre of ``box``, if any."""
    cx, cy = box[0] + box[2] / 2, box[1] + box[3] / 2
    return next((k for k, (x, y, w, h) in enumerate(detail.lines) if x <= cx <= x + w and y <= cy <= y + h), None)


def _box_fits(upright: np.ndarray, anchor_to_card: np.ndarray, paper: CardPaper, box: tuple[int, int, int, int],
              blanks: tuple[np.ndarray, ...], where: np.ndarray, s: int, centre: tuple[int, int]) -> list[tuple[float, int, int]]:
    """Per blank of ``blanks`` (inks of ``box``), the least mean ink difference over ``where``
    with the card's window laid at a shift within ``s`` of ``centre``, and that shift (relative
    to ``centre``)."""
    _x, _y, bw, bh = box
    ink = _card_window(upright, anchor_to_card, paper, box, s, centre)[3]
    return [min((float(np.abs(ink[s + dy: s + dy + bh, s + dx: s + dx + bw] - blank)[where].mean()), dx, dy)
                for dy in range(-s, s + 1) for dx in range(-s, s + 1)) for blank in blanks]


def _detail_margin(detail: _Detail, upright: np.ndarray, anchor_to_card: np.ndarray, paper: CardPaper | None = None,
                   dpi: float = PX_SET_AT_DPI) -> float:
    """How much closer the card is to the first blank than to the second where the two differ
    in detail (:func:`_pair_detail`): per box, the card's window (blank resolution, through
    ``anchor_to_card``) is laid on each blank at the shift, within DETAIL_SHIFT_PX, that fits
    it best; the mean ink differences d1, d2 over the differing pixels give (d2 - d1) / (d1 + d2)
    in [-1, 1]: +1 the card prints exactly what the first does there; ``paper``: the card's
    paper, if known; ``dpi``: the blanks' resolution (:func:`_at_blank_px`)."""
    s = _at_blank_px(DETAIL_SHIFT_PX, dpi)
    paper = card_paper(upright) if paper is None else paper
    total = np.zeros(2)
    for (x, y, bw, bh), first, second, where in zip(detail.boxes, detail.first, detail.second, detail.where, strict=True):
        fits = _box_fits(upright, anchor_to_card, paper, (x, y, bw, bh), (first, second), where, s, (0, 0))
        if any(abs(dx) == s or abs(dy) == s for _d, dx, dy in fits) and (line := _line_of(detail, (x, y, bw, bh))) is not None:
            # a fit at the search's edge: the print may lie further off here (a sheet not flat, a
            # slipping feed); searched again round where the line's shared print lies, and taken
            # where the blank the card is closer to fits it better there (a blank's fit also slides
            # to its edge to match what it does not print, and a short line's shared print can
            # correlate best a few pixels off)
            centre = _shared_shift(detail, line, upright, anchor_to_card, paper, dpi)
            if centre != (0, 0):
                again = _box_fits(upright, anchor_to_card, paper, (x, y, bw, bh), (first, second), where, s, centre)
                fits = again if min(again)[0] < min(fits)[0] else fits
        n = max(1, int(where.sum()))
        for k, (d, _dx, _dy) in enumerate(fits):
            total[k] += n * d
    d1, d2 = total
    return float((d2 - d1) / (d1 + d2)) if d1 + d2 > 0 else 0.0


def _missing_block(card: np.ndarray, blank: np.ndarray, judged: np.ndarray, *, shown: np.ndarray | None = None) -> str | None:
    """Where, within ``judged``, a square inch of the blank's print is mostly missing from the
    card *and* the card prints something else there (other text: another style or election).
    ``shown``: where the card shows any ink (the blank's print counts as there where it does;
    default ``card``).

    Missing print alone is not enough: a blank may carry a "SAMPLE" overprint the ballots
    lack, and a torn corner loses print; neither makes the card another style.
    """
    side = max(4, int(round(BLOCK_IN * FRAME_DPI)))
    edge = int(round(EDGE_IN * FRAME_DPI))
    judged = judged.copy()
    judged[:edge], judged[-edge:], judged[:, :edge], judged[:, -edge:] = False, False, False, False
    printed = blank & judged
    n = _block_sums(printed, side)
    present = _block_sums((card if shown is None else shown) & printed, side) / np.maximum(n, 1)
    lacking = (n >= BLOCK_MIN_PX) & (present < BLOCK_MIN_PRESENT)
    if not lacking.any():  # the card shows the blank's print everywhere: what else it prints cannot matter
        return None
    near_print = cv2.dilate(blank.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
    card_ink = cv2.erode(card.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool) & judged  # undo the dilation
    other = _structured(card_ink & ~near_print)
    bad = lacking & (_block_sums(other, side) >= BLOCK_MIN_EXTRA * n)
    if bad.any():  # a voter's loop round a name is no other print (a light print's scan may show little of the name)
        bad = lacking & (_block_sums(other & ~_loops_round(other, blank), side) >= BLOCK_MIN_EXTRA * n)
    if not bad.any():
        return None
    r, c = np.unravel_index(int(np.argmin(np.where(bad, present, 2.0))), bad.shape)
    return (f"only {present[r, c]:.0%} of its print near ({c * side / FRAME_DPI:.1f} in, {r * side / FRAME_DPI:.1f} in) "
            "is on the card, which prints something else there")


def _loops_round(mask: np.ndarray, blank: np.ndarray) -> np.ndarray:
    """The pieces of ``mask`` (the card's ink beside the blank's print, in the frame) that are
    closed loops round the blank's print: a piece LOOP_ROUND_MIN_IN across each way at least
    whose largest hole (what it cuts off from its box's edge) fills LOOP_ROUND_HOLE of its box
    and holds the blank's print (LOOP_ROUND_PRINT of the hole at least). A voter who circles a
    name draws one; another style's print seldom is one (its text, its rules are not)."""
    out = np.zeros(mask.shape, bool)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    least = LOOP_ROUND_MIN_IN * FRAME_DPI
    for k in range(1, count):
        x, y, w, h, _area = (int(v) for v in stats[k])
        if w < least or h < least:
            continue
        own = labels[y: y + h, x: x + w] == k
        hole = largest_hole(own)
        if (hole is not None and np.count_nonzero(hole) >= LOOP_ROUND_HOLE * w * h
                and float(blank[y: y + h, x: x + w][hole].mean()) >= LOOP_ROUND_PRINT):
            out[y: y + h, x: x + w] |= own
    return out


def _structured(mask: np.ndarray) -> np.ndarray:
    """The pixels of ``mask`` in connected pieces of at least STRUCTURE_PX (a stroke of text, a
    rule), not the scattered dots where two bilevel scans dither one shading differently."""
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    big = stats[:, cv2.CC_STAT_AREA] >= STRUCTURE_PX
    big[0] = False
    return big[labels]


def _block_sums(mask: np.ndarray, side: int) -> np.ndarray:
    """Counts of true pixels per ``side`` x ``side`` block (the last blocks padded)."""
    rows, cols = -(-mask.shape[0] // side), -(-mask.shape[1] // side)
    padded = np.zeros((rows * side, cols * side), np.int32)
    padded[: mask.shape[0], : mask.shape[1]] = mask
    return padded.reshape(rows, side, cols, side).sum(axis=(1, 3))
