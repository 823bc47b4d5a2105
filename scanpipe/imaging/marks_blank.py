"""Score targets against the page's blank scan: what the voter added, never what was printed.

A vendor's targets are its own (ovals of its shape, boxes, arrows to complete) and its page
may print more inside and around them (shading, a "SAMPLE" stamp, names close by). So the
empty target is not drawn from a model: it is the blank reference scan itself, resampled at
the same canonical windows as the card (:mod:`scanpipe.imaging.marks` step 1).

Per target:

1. **Local alignment** of the card's window to the blank's (normalised correlation of the
   zero-mean blank over +-``SEARCH_PX``, biased towards no shift; of shifts within
   ``SHIFT_TIE`` of the best, the smallest).
2. **Ink** = the card's darkness minus the blank's print (dilated a pixel; the blank's paper
   noise is not subtracted): printed ink inside a target is never a mark.
3. **Interior** as :mod:`scanpipe.imaging.marks` measures it (fill, level, cover), on ink;
   plus *residue*, the median ink where the blank shows bare paper inside the target (an
   erasure's even residue, which a vendor's thick outline can hide from the level), and
   *even*, the ink 80% of that paper reaches (a light pencil fill; where a thick outline
   leaves only a small middle it counts only if the fill reaches the outline's inner rim).
   Where the inside is no darker than the paper round the target with its lines lifted off,
   and not evenly so all over, that paper's tone (a stain's) is taken off the level, the
   residue and the even fill (:func:`_paper_tone`). A long span with almost no ink inside (a
   crease, a line across) is for a person. A target whose interior the blank prints over (a
   stamp across it) is ``obscured``: damage, for a person, unless the voter's mark shows on
   the part the print leaves bare (SHOWN_FOR_A_VOTE of the inside or more), scoring a vote
   there as on any target.
4. Span, ring and name ring as :mod:`scanpipe.imaging.marks` measures them, on ink; the
   damage score is the strongest of a stain (the card's paper darker than the blank's around
   the target), a fold (a light line through both strips beside it, in ink; on a card that
   prints the blank's light print black, only where the blank shows paper; on a speckled card,
   not its specks; beside a filled target, not where a pen's stroke, its overflow, crosses a
   strip), a stroke crossing it from elsewhere (a stamp's letter, a signature; beside a filled
   target, not the name written in its own write-in area),
   a tear (printed outline missing from the card) and the obscured share. Between the levels,
   two fine strokes meeting in it (an X, a check a thresholded scan leaves a pixel wide) are a
   vote.

The score maps level, cover and span with the same knots as our own cards (the mark
catalogue), so one set of thresholds serves both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import cv2
import numpy as np

from scanpipe.imaging.marks import (
    BLUR_SIGMA_PX,
    CANON_PPI,
    COVER_KNOTS,
    DARK,
    HIGH_ANCHOR,
    LEVEL_KNOTS,
    LEVEL_SHARE,
    LIGHT_PRINT,
    LOW_ANCHOR,
    MARGIN_IN,
    RING_NEED_PX,
    RING_STROKE,
    SEARCH_PX,
    SHIFT_PRIOR,
    SIDE_PPI,
    SPAN_KNOTS,
    SPAN_MIN_SHARE,
    _boxes_px,
    _extent_share,
    _fold,
    _Geometry,
    _jacobians,
    _knots,
    _paper,
    _span,
    _stain,
    _windows,
    _write_in_score,
    damage_causes,
    name_band,
    paper_shade,
    shade_at,
    small_pieces,
    speckled,
)
from scanpipe.imaging.marks_across import ZONE_MIN_IN, target_zone
from scanpipe.types import Box, DamageCause, TargetDef, TargetScore

PRINTED = 0.3  # blank darkness that counts as print inside a target
BOXED_FILL = 0.9  # a target whose printed outline encloses this share of its own bounding box is a box (an oval: pi/4)
BOX_SPAN_MIN = 0.7  # ... where a stroke's reach measured inside the box counts when it crosses this share of it
BLANK_NOISE = 0.12  # blank darkness below this is the blank scan's noise, not print
SHIFT_TIE = 0.002  # local alignment: shifts this close (share of the best correlation) to the best are a tie
MIN_VISIBLE = 0.5  # a target whose interior is printed over beyond this is obscured ...
SHOWN_FOR_A_VOTE = 0.1  # ... but where this share of its interior at least shows paper and a vote's mark on it
OVERPRINT_CLEAN = 0.05  # ... unless the card lacks that overprint: its box is then taken from the siblings
OVERPRINT_SIBLINGS = 4  # printed over this little or less, at least this many of them, ...
THINNER_SIBLINGS = 4  # the blank's print the card does not show: judged on a group of at least this many targets
DROPPED_MOST = 0.3  # ... where it lacks this share of the blank's print round its targets (a drop-out ink: 0.53-0.67 on
# the seventh renderer's thresholded scans; a card printing the blank's outlines thinner: 0.11 at most on the first twelve
# cards of five decks; a threshold that loses the blank's light print: 0.68-0.96 on three sixth-renderer cards, under it too)
OVERPRINT_SIZE_IN = 0.012  # ... of the targets on the page this close to its width and height, ...
OVERPRINT_AGREE = 0.06  # ... whose boxes differ from their median by at most this (mean darkness)
OVERPRINT_BOX_GROW_PX = 2  # the box taken, grown by this (canonical px)
OVERPRINT_MIN_PX = 150  # the blank's print around the box the card shows as paper: at least this many px ...
OVERPRINT_MISSING = 0.3  # ... and this share of the blank's print there
SOLID_PRINT = 0.5  # tear: the blank's solid print ...
TORN_PAPER = 0.12  # ... that the card shows as bare paper
TEAR_FLOOR = 0.25  # share of missing outline a good scan shows (dither, a pixel of error)
TEAR_SPAN = 0.5
# Residue: the median ink where the blank shows bare paper inside the target. A vendor's thick
# outline leaves little such paper, and the catalogue's level (over the whole interior) then
# misses an erasure's even residue; residue alone can send a target to a person (up to just
# under HIGH_ANCHOR), never make it a vote.
# Even: the ink EVEN_SHARE of that bare paper reaches: a fill as even as a pencil's over the
# whole visible inside. It counts as the catalogue's level where the bare paper is most of the
# inside (OPEN_PAPER_SHARE); where a thick outline leaves only a small middle, a small partial
# mark can fill that too, so there the fill counts only as far as it also covers the paper
# along the outline's inner rim, all round, and darkens the outline's own print a little
# (BEYOND_MIDDLE_LEVEL; else, like residue, it sends the target to a person). Its residue
# counts as a level (a vote from about 0.28 up) where the ink covers most of the outline's
# print too (OVER_PRINT_LEVEL: a fill over the whole inside, lighter along the middle's rim or
# with a hole there), or where it is a pencil's light fill: even up to the middle's rim all
# round (PENCIL_RIM), past an erasure's residue (PENCIL_RESIDUE) and nowhere darker than
# PENCIL_MAX (a small mark in the middle is then a pen's: a dot, a partial's stroke). The trade:
# a pencil's small mark that covers the whole visible middle of a black outline reads as that
# fill does (nothing over the print tells them apart). The figures in brackets are from a probe
# of the scoring's inner values on the vendor profile's seeds 121212 and 828282, not a benchmark.
EVEN_SHARE = 0.8
BEYOND_MIDDLE_LEVEL = 0.03  # level a fill of a small middle shows over the outline's print (a mark in the middle: none)
OVER_PRINT_LEVEL = 0.1  # (level of a small partial in a thick outline: 0 at the 90th percentile; of a full fill 0.11 or more)
PENCIL_RIM = 0.12  # (a light pencil's even fill up to the rim: 0.12-0.52; a hesitation dot's under 0.05)
PENCIL_RESIDUE = 0.3  # (the catalogue's erasure residue 0.09-0.22, pencil 0.33 or more)
PENCIL_MAX = 0.6  # (the inside's STAIN_TONE_INK_Q quantile of ink: a light pencil's 0.41-0.55, a pen's small partial 0.69 or more)
MIN_PAPER_SHARE = 0.25
OPEN_PAPER_SHARE = 0.75
THIN_FILL = 0.08  # fill under this with a long span: a line across, not a mark
BESIDE_INSIDE_MAX = 0.5  # ink inside reaching at most this share across the interior, either way ...
BESIDE_ARC_DEG = 90.0  # ... with the band's ink round it within this arc: ink beside the target, not across it
# Two strokes: a check or an X a fine pen draws over a target with a number printed inside (a
# ballot position) or a thin outline fills under THIN_FILL of the interior, as a crease or a
# stray line does. Two straight strokes that meet or cross in it are neither: among the pen's
# strokes in and round the target (:func:`fine_strokes`, at FINE_PPI; a blot, a stain's dots
# and a speck are none), two straight pieces (an arc's piece bends out of line by more than
# TWO_STROKES_STRAIGHT_PX) TWO_STROKES_DEG or more apart in direction whose lines cross in the
# span zone, each running on to the crossing over ink or the target's own print (a number
# printed inside hides a stroke), TWO_STROKES_PASS of the way at least; the strokes so drawn
# (with the pieces on their lines, either side of the crossing) TWO_STROKES_LONG and
# TWO_STROKES_SHORT of the oval's width long. Ink inside at least STROKES_MIN_FILL (a loop
# round the oval leaves none).
TWO_STROKES_LONG = 0.7
TWO_STROKES_SHORT = 0.25  # a check's short arm: a third to a half of its long one (0.3 missed a drawn check's by a pixel or two)
TWO_STROKES_DEG = 45.0
TWO_STROKES_PASS = 0.85
TWO_STROKES_ALIGN_DEG = 10.0  # pieces on one stroke: this close in direction ...
TWO_STROKES_ALIGN_PX = 3.0  # ... and their lines passing this close to the crossing (FINE_PPI px)
TWO_STROKES_STRAIGHT_PX = 2.0  # FINE_PPI px: a straight piece's spread across its axis (a 4-px stroke's: 1.2)
STROKES_MIN_FILL = 0.03
STUBS_CENTRE_PX = 2 * TWO_STROKES_ALIGN_PX  # an X's arms seen as stubs past the print: a pair's midpoint this close to the centre ...
STUBS_DEG = 30.0  # ... each stub this close in direction to the line joining it to the other (an arm bowed along the outline) ...
STUBS_AIM = 0.25  # ... and its own line passing this share of the oval's width or nearer the centre (one flat X of the sixth renderer's, measured: 0.13)
STUB_PX = 6  # FINE_PPI px: two strokes are looked for among pieces this short too (a pen's stub between printed lines) ...
STUB_ELONGATION = 2.0  # ... and this elongated (its length squared over its area) ...
STUB_DARK = 0.25  # ... at FINE_DARK, else this dark (a pencil's or a blue ballpoint's strokes on a gray scan)
# The dark ink a stroke needs (SPAN_MIN_SHARE) is a share of the inside that shows added ink at
# all: where the blank prints in the target (a ballot number inside the oval, a thick outline),
# a pen's check shows only over the paper. Counted as SHOWING_MIN of the inside at least (a
# target printed over more is obscured, for a person). THIN_FILL stays a share of the whole
# inside: a stamp's light letter across an empty oval fills as little as such a check, and
# both go to a person.
SHOWING_MIN = 0.25
RING_MIN_OPEN = 8  # sectors of the ring (of 16) that must be paper on the blank to judge a loop
RESIDUE_KNOTS = ((0.0, 0.0), (0.06, LOW_ANCHOR), (0.3, HIGH_ANCHOR - 0.02), (1.0, HIGH_ANCHOR - 0.02))
# Crossing (a stamp's letter, a signature, a line across the card over a target): one stroke
# of added ink (CROSS_DARK or darker: a stamp's ink is often light) touching the box (at least
# CROSS_TOUCH_PX, the blank's print within CROSS_BRIDGE_PX of added ink joined to it) and
# running on CROSS_REACH_IN or more beyond the box with CROSS_AREA_IN2 of ink there, or there
# on two sides (or, in pieces on one line through the box, CROSS_OPPOSITE_IN past it on
# opposite sides); on a window of CROSS_MARGIN_IN around the box at CROSS_PPI.
CROSS_PPI = 80.0
CROSS_SOURCE_PPI = 1.2 * CROSS_PPI  # the crossing check samples its windows from the card reduced to no less than this
CROSS_MARGIN_IN = 0.45
CROSS_TOUCH_PX = 3
CROSS_DARK = 0.2
CROSS_REACH_IN = 0.25
CROSS_OPPOSITE_IN = 0.15
CROSS_AREA_IN2 = 0.006
CROSS_BRIDGE_PX = 6
CROSS_AREA_GROW_IN = 0.05  # a filled target's own write-in area, grown by this, holds no crossing ink (a name written there)
FILLED_OWN_INK = 0.5  # a target filled this much (mean ink inside): ink running out of it beside it is its own overflow
CROSS_PRINT_GROW_PX = 3  # 0.04 in: beyond a registration's residual and a thresholded scan's thicker print
CROSS_BAND_MIN_IN = 0.12  # a straight piece of a band at least this long (a stamp letter's stroke, a line drawn across) ...
CROSS_BAND_ELONGATION = 2.0  # ... and this many times as long as it is wide (a broad stamp stroke between print shows pieces 2.2 times as long) ...
CROSS_BAND_HIDDEN = 0.9  # ... its way on to the box over print or ink (hidden, not ended) ...
CROSS_BAND_DEG = 12.0  # ... and another on the far side of the box, this close in direction, on one line through the box
# A band leaving the box on one side whose far side the print hides (a stamp letter's stroke
# running on under a tint or a name): a straight piece of added ink touching the box, running
# CROSS_OUT_IN or more out of it, CROSS_BAND_ELONGATION times as long as it is broad, lying out
# along its own line (a sliver along the box's edge does not), that line through the box; past
# the box's other side the line runs over print or ink (hidden, CROSS_BAND_HIDDEN of it) for
# CROSS_OUT_IN too. A voter's check leaves the box on one side for less, and its other side is
# the paper round the oval.
CROSS_OUT_IN = 0.15
CROSS_OUT_MIN_PX = 2.0  # (CROSS_PPI) a sliver along the outline a pixel wide is a scan's edge, no stroke
# A band running on along one straight line (a stamp letter's broad stroke, a stamp's frame, a
# line drawn across the card), whichever pieces the print round the target cuts it into: a
# line through the target (every CROSS_RUN_STEP_DEG, a pixel apart) that runs on past the box
# for CROSS_RUN_IN or more over added ink or print and never over paper, the ink CROSS_RUN_INK
# of it, and that on the finer canonical window holds added ink wherever the blank leaves the
# target's inside bare (CROSS_RUN_INSIDE_PAPER of it paper at most: a band over the target, not
# beside it) and meets CROSS_RUN_GAP_PX of paper at most on its way out (a fill beside a band
# beyond other print is no crossing). A voter's fill stays in its target; an X's or a check's
# arm ends on paper well before.
CROSS_RUN_IN = 0.35
CROSS_RUN_INK = 0.5
CROSS_RUN_INSIDE_PAPER = 0.15  # at most this share of the line inside the box on paper
CROSS_RUN_STEP_DEG = 5.0
CROSS_RUN_GAP_PX = 1  # (CANON_PPI) paper the way out of the box may cross near it: a scan's noise, not a gap
# A lone dot (a pen rested on the target, a hesitation mark): the one piece of added ink
# (DARK or darker) in the box grown by DOT_AROUND_IN, not touching that grown box's edge (ink
# running on out of it is a stroke), with at most DOT_OTHER_PX of lighter added ink (DOT_FAINT
# or darker) away from it (a dot, not the darkest spot of a light fill). Stored as its extent
# (in): whether a dot that size is a hesitation is the thresholds' (hesitation_dot_in) and
# the contest's (its votes read elsewhere), classify.settle_hesitation_dots.
DOT_AROUND_IN = 0.03
DOT_FAINT = 0.15
DOT_OTHER_PX = 3
# An X the scan took away but for its crossing and its arms' ends (a light pen on a scan
# thresholded dark: the crossing shows where it thickens the number printed in the middle, the
# arms where they cross the outline): a quiet target whose added ink (X_INK or darker, on the
# blank's print or paper, within X_REACH of the oval's half-axes) holds a pen's dark piece
# (DARK) at the centre (within X_CENTRE of them) and pieces out past X_OUT in all four
# quadrants, each two in opposite quadrants on one line through the centre (their directions
# from it within X_DEG of opposite), with little ink elsewhere (X_SPARSE), is never a clear no
# vote: for a person (looked at last, on targets the finer stroke checks left quiet). A dot is
# only the centre; a smear lies on one side; a stain's tone is light and all over.
X_INK = 0.15
X_CENTRE = 0.3
X_OUT = 0.5
X_REACH = 1.4  # ... and within this of them (the arms cross the outline; the span zone leaves the outline out)
X_DEG = 25.0
X_SPARSE = 0.15  # ... the ink covering at most this share of that reach (the X taken away on the sixth renderer's seed 1515, probed: 0.077) ...
X_MIN_PX = 2  # canonical px of ink a quadrant's arm end needs (120 ppi)
# A line the scan took away but for its pieces (a light pen's check on a scan thresholded dark,
# its long arm cut where it crosses the number printed inside the oval and its outline): a
# quiet target whose added ink (X_INK or darker, on print or paper, within X_REACH) lies along
# one straight line (LINE_SPREAD_PX from it: a standard deviation, canonical px) as long as
# LINE_LONG of the oval's height or more, through the oval (its middle within LINE_THROUGH of
# the half-axes) and out past the outline, a pen's darkness (LINE_PEN) somewhere along it, with
# little ink else (X_SPARSE), is never a clear no vote: for a person (looked at last, as the X
# above). A dot is short; a smear, a blot and a stain's tone are broad; a ring stain's arc
# through an empty oval is as thin and straight there, but light (probed on the sixth
# renderer's seed 1818: 0.24 at most; the check's arm 0.37).
LINE_SPREAD_PX = 2.0
LINE_PEN = 0.3
LINE_LONG = 1.0
LINE_THROUGH = 0.7
# A stroke leaving the target's outline: dark added ink joined to the print inside the box grown
# by LEAVE_BOX_GROW_PX, LEAVE_MIN_PX of it LEAVE_AWAY_PX or more from any print, keeps the
# score at least LEAVES_OUTLINE_SCORE (between the anchors: for a person, unless it is a vote).
LEAVE_BOX_GROW_PX = 2
LEAVE_AWAY_PX = 4  # canonical px (0.033 in): past the fringe a thicker scan of the print leaves
LEAVE_MIN_PX = 8
LEAVES_OUTLINE_SCORE = (LOW_ANCHOR + HIGH_ANCHOR) / 2
# A pen's fine line (a pixel wide at 200 dpi; a blue ballpoint a thresholded scan breaks up)
# blurs under DARK in the canonical windows: such strokes are looked for unblurred at FINE_PPI
# (:func:`_fine_stroke_reach`); reaching FINE_REACH of the oval's width, they keep a target
# that would read no vote at FINE_STROKE_SCORE (for a person).
FINE_PPI = 2 * CANON_PPI
FINE_DARK = DARK
FINE_PRINT_GROW_PX = 3  # FINE_PPI px: a registration's residual and a thicker scan of the print
FINE_PIECE_PX = 6  # FINE_PPI px (0.025 in): a stroke's piece at least this long
FINE_ELONGATION = 4.0  # a piece's length squared over its area (a line w px wide: its length / w; a round dot: 1.3)
FINE_LONG_PIECE_PX = 12  # a piece this long (0.05 in) ...
FINE_LONG_ELONGATION = 3.0  # ... needs only this (a ballpoint's 4-px stroke cut short by the print; a speck is shorter)
FINE_REACH = 0.5
FAINT_STROKE_DARK = 0.2  # a stroke this light reaching as far is for a person too (a hard pencil's check, light on the scan) ...
LINE_PX = 9  # FINE_PPI px (0.0375 in): ... a line narrower than this, above the tone round it (not a stain's edge)
FINE_SQUARE_DEG = 12.0  # a piece outside the oval within this of level or upright is no stroke (a rule's edge)
FINE_BAND_IN = 0.05  # strokes counted this far beyond the span zone too (a check's tail past the outline)
FINE_STROKE_SCORE = LEAVES_OUTLINE_SCORE
CROSSED_REACH_IN = 0.025  # a fill's strokes reaching this far past its box ...
CROSSED_EXITS = 3  # ... this many apart, on opposite sides, cross it out (:func:`_crossed_out`; a slash leaves it once a side, an X twice)
# Fold baseline: in a group of at least FOLD_BASELINE_MIN targets, the fold measure less its
# FOLD_BASELINE_Q quantile (a crease crosses a few targets; the print's stroke width in a
# thresholded scan shows beside every one).
FOLD_BASELINE_MIN = 6
FOLD_BASELINE_Q = 0.25
FOLD_BASELINE_Q_SPECKLED = 0.5  # ... the median on a speckled card (specks beside every target, some by chance in a line)
# Specks: where most targets of a group show pieces of faint added ink (BLANK_NOISE or darker)
# of FOLD_SPECK_PX canonical px or fewer on the bare paper beside them, SPECK_AWAY_PX or more
# from the blank's print (a bilevel scan of coloured stock thresholded near its paper), the
# card is speckled: the fold is looked for without such pieces (and their blur), and the
# write-in areas without their specks (marks.WRITE_IN_SPECK_PX).
FOLD_SPECK_PX = 20  # 0.04 in across
SPECK_AWAY_PX = 3  # judged by the pieces this far (canonical px) or farther from the blank's print
RULED_SHARE = 0.6  # a row of the name's window dark across this share of its width, on the blank's light print, is a rule
STAIN_SIDES = 2  # a stain darkens the paper on two sides of the target at least; a scribble's
# overflow darkens one (real pencil scribbles overflow far more than our synthetic fills)
# The paper's tone round a target: a stain's wash or the rim of its ring that runs through the
# oval runs on over the paper beside it; a voter's ink stays inside, or is darker than what lies
# round it, or is a line. Where nothing inside or round the box is darker than STAIN_TONE_MAX
# and the inside is no darker than the paper round it with its lines lifted off, and not
# evenly so all over (a fill is), the paper's tone is taken off the level, the residue and the
# even fill (never off the cover or a stroke's span): a light tone alone under a stain is the
# paper's, not a mark (:func:`_paper_tone`).
STAIN_TONE_Q = 0.9
STAIN_TONE_TOP_Q = 0.99
STAIN_TONE_INK_Q = 0.95
STAIN_UNEVEN = 0.8  # the inside's even fill under this share of its residue: not as dark all over (a fill is)
STAIN_LIFT_PX = 5  # canonical px (0.04 in): the paper round the box with lines this narrow lifted off (a stroke is no stain)
STAIN_TONE_MAX = 0.25  # the sixth renderer's stains (seeds 9393, 7575, measured): 0.22 at most round a target


def score_group_against_blank(gray: np.ndarray, hom: np.ndarray, targets: list[TargetDef], geo: _Geometry,
                              plane: tuple[float, float, float], reference: np.ndarray, ref_dpi: float,
                              ref_plane: tuple[float, float, float], memo: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
                              page_boxes: Sequence[Box] = (), blank_memo: dict[tuple[object, ...], object] | None = None,
                              tints_black: bool = False, page_size: tuple[float, float] | None = None,
                              nameless_right: np.ndarray | None = None) -> list[TargetScore]:
    """Scores of same-sized targets on the upright card ``gray`` against the blank ``reference``;
    ``memo`` (one per page, shared by its groups) keeps what every group would compute again;
    ``page_boxes``: every target box of the page (an overprinted target's empty look is
    taken from those about its size); ``blank_memo`` (kept with the blank, for every card)
    what is measured of the blank alone; ``tints_black``: the card prints the blank's light
    print black (:func:`~scanpipe.imaging.marks.tints_printed_black`); ``page_size`` (in): the
    sheet's, where a stain is measured against the paper's shade along its edges
    (:func:`~scanpipe.imaging.marks.paper_shade`; with ``memo``, once per page); ``nameless_right``
    (per target): no name of its own stands right of it (no ring is looked for there)."""
    n = len(targets)
    boxes = np.array([t.box_in for t in targets], np.float64)
    origins = boxes[:, :2] - MARGIN_IN
    sizes = np.repeat([[geo.shape[1] / CANON_PPI, geo.shape[0] / CANON_PPI]], n, axis=0)
    ref_hom = np.diag([ref_dpi, ref_dpi, 1.0])
    card_win, jac = _windows(gray, hom, origins, sizes, geo.shape, CANON_PPI)
    card_win, card_dark = _darkness(card_win, geo)
    side = _blank_side(reference, ref_dpi, boxes, geo, page_boxes, ref_plane, {} if blank_memo is None else blank_memo)
    ref_dark = side.dark
    if side.like_dark is not None:
        ref_dark = _without_overprint(card_dark, ref_dark, side.like_dark, geo)
    dx, dy = _best_shifts(card_dark, ref_dark, geo)
    ch, cw = geo.crop
    s = SEARCH_PX
    aligned = np.stack([card_dark[k, s + dy[k]: s + dy[k] + ch, s + dx[k]: s + dx[k] + cw] for k in range(n)])
    gray_aligned = np.stack([card_win[k, s + dy[k]: s + dy[k] + ch, s + dx[k]: s + dx[k] + cw] for k in range(n)])
    blank = ref_dark[:, s: s + ch, s: s + cw]
    blank_near = cv2.dilate(blank.reshape(n * ch, cw), np.ones((3, 3), np.uint8)).reshape(blank.shape)
    # the thin-fill cap below is judged against the blank as it prints (the lesser fill): what
    # the card's lighter print lets show counts for a mark, never to lift that cap (a stamp's
    # broad dithered band down half an empty oval, vendor seed 141414: 0.064 against the blank)
    fill_as_printed = _ink_over(aligned, blank_near).reshape(n, -1)[:, geo.interior].mean(axis=1)
    # the blank's print no darker than the card's own targets show it (a thresholded blank's
    # outlines print blacker and thicker than a gray card's)
    as_printed = blank_near >= BLANK_NOISE
    blank_near = _as_the_card_prints(blank_near, aligned)
    printed = blank_near >= BLANK_NOISE  # the blank's paper noise is not print
    ink = _ink_over(aligned, blank_near)
    flat = ink.reshape(n, -1)
    inner = flat[:, geo.interior]
    fill = inner.mean(axis=1)
    k = int((1 - LEVEL_SHARE) * (inner.shape[1] - 1))
    level = np.partition(inner, k, axis=1)[:, k]
    cover = (inner >= DARK).mean(axis=1)
    paper = ~printed.reshape(n, -1)[:, geo.interior]  # where the blank shows bare paper inside
    residue = _quantile_where(inner, paper, 0.5)
    share = paper.mean(axis=1)
    # the fill stored (fill_score): the mean over the inside the blank leaves bare, where that is
    # MIN_PAPER_SHARE of it or more (a full fill of an oval with its number printed inside is
    # full; over the whole inside, the number's share would count as paper)
    bare_fill = np.where(share >= MIN_PAPER_SHARE, (inner * paper).sum(axis=1) / np.maximum(paper.sum(axis=1), 1), fill)
    even = np.where(share >= MIN_PAPER_SHARE, _quantile_where(inner, paper, 1.0 - EVEN_SHARE), 0.0)
    edge = _paper_edge(printed, paper, geo)  # the bare paper next to the printed outline
    to_edges = np.minimum(residue, _quantile_where(inner, edge, 1.0 - EVEN_SHARE))
    k95 = int(STAIN_TONE_INK_Q * (inner.shape[1] - 1))
    darkest = np.partition(inner, k95, axis=1)[:, k95]  # the inside's darkest ink but specks (the tone's test and PENCIL_MAX's)
    tone = _paper_tone(aligned, printed, darkest, residue, even, geo)
    level, residue, even, to_edges = (np.clip(v - tone, 0.0, 1.0) for v in (level, residue, even, to_edges))
    # a small middle filled to its rim is a vote only when the ink also shows over the outline's
    # own print (level over the whole inside): a small mark in the middle fills such a middle too
    rim = np.where(level >= BEYOND_MIDDLE_LEVEL, _knots(to_edges, LEVEL_KNOTS), np.minimum(_knots(to_edges, LEVEL_KNOTS), HIGH_ANCHOR - 0.02))
    even_score = np.where(share >= OPEN_PAPER_SHARE, _knots(even, LEVEL_KNOTS), np.maximum(_knots(even, RESIDUE_KNOTS), rim))
    # ... but stands on its own where the ink covers the print too, or is a pencil's light fill
    pencil = (level < BEYOND_MIDDLE_LEVEL) & (to_edges >= PENCIL_RIM) & (residue >= PENCIL_RESIDUE) & (darkest <= PENCIL_MAX)
    stands = (share < OPEN_PAPER_SHARE) & ((level >= OVER_PRINT_LEVEL) | pencil)
    even_score = np.where(stands, np.maximum(even_score, _knots(residue, LEVEL_KNOTS)), even_score)
    obscured = (blank.reshape(n, -1)[:, geo.interior] >= PRINTED).mean(axis=1)
    fringe = None
    if side.boxed is not None:
        # a box's printed corners lie in the oval's zone, beyond the oval it inscribes: the rim a
        # thicker scan of that print leaves there, at opposite corners, spans the box with any
        # dot in its middle; the print's neighbourhood is left out for boxes
        boxed = np.asarray(side.boxed.any(axis=(1, 2)))
        fringe = cv2.dilate(printed.reshape(n * ch, cw).view(np.uint8), np.ones((3, 3), np.uint8)).reshape(printed.shape).astype(bool)
        fringe &= boxed[:, None, None]
    # a fold is a long light line: looked for with the blank's print widened two pixels, so a
    # printed rule a pixel off its blank leaves no fringe that looks like one
    wide = cv2.dilate(blank.reshape(n * ch, cw), np.ones((5, 5), np.uint8)).reshape(blank.shape)
    beyond_print = np.clip(aligned - wide, 0.0, 1.0)
    if tints_black:  # the card's darkness over the blank's light print is that print's, thresholded black
        beyond_print[wide >= BLANK_NOISE] = 0.0
    faint = beyond_print >= BLANK_NOISE
    # speckled: judged by the specks on bare paper only, away from the blank's print (what a
    # scan's error leaves along printed lines is no speck)
    away = cv2.dilate(blank.reshape(n * ch, cw), np.ones((2 * SPECK_AWAY_PX + 1,) * 2, np.uint8)).reshape(blank.shape) < BLANK_NOISE
    speckled_card = speckled(small_pieces(faint, FOLD_SPECK_PX, within=away))
    if speckled_card:  # most targets show specks beside them: a crease is a line, not its specks (nor their blur)
        specks = small_pieces(faint, FOLD_SPECK_PX).reshape(n * ch, cw).astype(np.uint8)
        beyond_print[cv2.dilate(specks, np.ones((3, 3), np.uint8)).reshape(faint.shape) > 0] = 0.0
    showing = np.maximum(share, SHOWING_MIN)

    # the blank's print the card does not show where most of its targets do not, DROPPED_MOST of it
    # (a drop-out ink the scanner's threshold took away): no print in the finer windows either,
    # where a pen's fine strokes over it are looked for
    dropped = as_printed & ~printed
    if dropped.sum() < DROPPED_MOST * as_printed.sum():  # a thinner print than the blank's only
        dropped[:] = False

    def fine_of(which: np.ndarray) -> _FineWindows:
        fine = _fine_windows(gray, hom, boxes, geo, dx, dy, reference, ref_dpi, which, {} if memo is None else memo,
                             {} if blank_memo is None else blank_memo)
        if not dropped.any():
            return fine
        f = fine.printed.shape[1] // dropped.shape[1]
        gone = np.repeat(np.repeat(dropped, f, axis=1), f, axis=2)
        return replace(fine, printed=fine.printed & ~gone)

    stroke = _span(ink, geo, len(geo.interior) * showing, visible=~printed, ignore=fringe)
    if side.boxed is not None:  # targets printed as boxes: a stroke crossing most of the box reaches across it
        in_box = _span_in_box(ink, side.boxed, len(geo.interior))
        stroke = np.where(in_box >= BOX_SPAN_MIN, np.maximum(stroke, in_box), stroke)
    # a span with almost no ink inside is a thin line across the target (a crease, a stray
    # stroke): for a person, never a vote by itself
    thin = np.minimum(fill, fill_as_printed) < THIN_FILL
    crossed = thin & (fill >= STROKES_MIN_FILL) & (_knots(stroke, SPAN_KNOTS) >= HIGH_ANCHOR)
    two = np.zeros(n, bool)
    looked = crossed.copy()  # targets whose fine strokes were looked at for two meeting
    if crossed.any():  # ... unless it is two strokes meeting or crossing (a check, an X)
        two = _two_strokes(fine_of(crossed), speckled_card)
        thin &= ~two
    span_score = np.where(thin, np.minimum(_knots(stroke, SPAN_KNOTS), HIGH_ANCHOR - 0.02), _knots(stroke, SPAN_KNOTS))
    # a span that ink beside the target makes long (a neighbour's loop passing under it, with a
    # dot inside) crosses no target: for a person, never a vote by itself
    spanned = (span_score >= HIGH_ANCHOR) & ~two  # two strokes meeting in it cross it
    if side.boxed is not None:
        spanned &= in_box < BOX_SPAN_MIN  # a stroke across the box itself
    if spanned.any():
        beside = _beside(ink, geo, spanned)
        unseen = beside & ~crossed  # an X or a check the blur thins (a thresholded scan's 1-px strokes): two strokes cross it
        looked |= unseen
        if unseen.any():
            beside &= ~_two_strokes(fine_of(unseen), speckled_card)
        span_score = np.where(beside, HIGH_ANCHOR - 0.02, span_score)
    ring = _ring_where_paper(flat, printed.reshape(n, -1), geo)
    centers_px = _jacobians(hom, boxes[:, :2] + boxes[:, 2:] / 2)[0]
    shade = None
    if page_size is not None and memo is not None:
        if "shade columns" not in memo:  # the paper's shade along the sheet's edges, once per page
            memo["shade columns"], memo["shade rows"] = paper_shade(gray, hom, page_size, plane)
        shade = shade_at((memo["shade columns"], memo["shade rows"]), centers_px)
    stain = np.clip(_stain(gray_aligned, plane, centers_px, geo, sides=STAIN_SIDES, shade=shade) - side.stain, 0.0, 1.0)
    tear = _tear_against_blank(aligned, blank)
    filled = fill >= FILLED_OWN_INK  # a fill whose overflow runs out beside it, or on to the name written next to it
    fold = _above_baseline(_fold(beyond_print, geo, filled), speckled_card)
    crossing = _crossing(gray, hom, boxes, _paper(card_win), side, {} if memo is None else memo,
                         [t.write_in_area_in if own else None for t, own in zip(targets, filled, strict=True)],
                         lambda k: _line_inked_inside(ink[k], printed[k], geo, (boxes[k, 2], boxes[k, 3])))
    score = np.maximum.reduce([_knots(level, LEVEL_KNOTS), _knots(cover, COVER_KNOTS), span_score,
                               _knots(residue, RESIDUE_KNOTS), even_score])
    # a stroke that leaves the target's own printed outline (a check or an X drawn over a thick
    # outline, whose ink on the print the blank hides) is never a clear no vote
    score = np.where(_leaves_outline(ink, printed, geo), np.maximum(score, LEAVES_OUTLINE_SCORE), score)
    # a fill crossed out (a zigzag across it) took the vote back, or not: for a person
    voted = np.asarray(score) >= HIGH_ANCHOR
    crossed_out = _crossed_out(ink, printed, geo, voted)
    score = np.where(crossed_out, np.minimum(score, HIGH_ANCHOR - 0.02), score)
    # between the anchors on a partial span (a thresholded scan's 1-px pen lines, which the blur
    # of the canonical windows breaks under DARK): two fine strokes meeting or crossing in it (an
    # X, a check) are a vote, scored by their reach as a span is; a fill crossed out and the
    # targets whose strokes were looked at already are left as they are
    mid = (score >= LOW_ANCHOR) & (score < HIGH_ANCHOR) & (fill >= STROKES_MIN_FILL) & ~looked & ~crossed_out
    if mid.any():
        fine_mid = fine_of(mid)
        two = _two_strokes(fine_mid, speckled_card)
        if two.any():
            reach = np.minimum(_fine_stroke_reach(fine_mid, speckled_card), 1.0)
            score = np.where(two, np.maximum(score, _knots(reach, SPAN_KNOTS)), score)
            stroke = np.where(two, np.maximum(stroke, reach), stroke)
    quiet = score < LOW_ANCHOR
    if quiet.any():
        fine = _fine_stroke_reach(fine_of(quiet), speckled_card)
        thin = fine >= FINE_REACH
        score = np.where(thin, np.maximum(score, FINE_STROKE_SCORE), score)
        stroke = np.where(thin, np.maximum(stroke, np.minimum(fine, 1.0)), stroke)  # a share, in [0, 1]
        # two of those strokes meeting or crossing in it (a check, an X a fine pen draws, which the
        # blur of the canonical windows takes under DARK) are what the thin-fill rule takes as a
        # vote: scored by their reach as a span is
        lines = thin & (fill >= STROKES_MIN_FILL)
        if lines.any():
            two = _two_strokes(fine_of(lines), speckled_card)
            score = np.where(two, np.maximum(score, _knots(np.minimum(fine, 1.0), SPAN_KNOTS)), score)
    still = score < LOW_ANCHOR  # an X the scan took away but for its crossing and its arms' ends: for a person
    if still.any():
        score = np.where(still & (_taken_away_x(ink, geo) | _taken_away_line(ink, geo)), np.maximum(score, LEAVES_OUTLINE_SCORE), score)
    # a ring above and below the printed name looked for right of the target, where the names
    # stand; where none of its own can (a column's rule between, the names printed left of the
    # targets), what lies there is another column's (a loop round a name on either side:
    # marks_loops.name_loops)
    # a target the blank prints over is for a person, but where the voter's mark shows on the part
    # the print leaves bare (SHOWN_FOR_A_VOTE of the inside at least), scoring a vote there as
    # on any target: a pen's fill or scribble run out from under a "SAMPLE" stamp is a vote
    # whatever the stamp hides (the score is measured on ink over the blank's paper alone)
    hidden = (obscured > MIN_VISIBLE) & ~((score >= HIGH_ANCHOR) & (share >= SHOWN_FOR_A_VOTE))
    measures = [stain, fold, tear, crossing, np.where(hidden, 1.0, 0.0)]
    damage = np.maximum.reduce(measures)
    causes = damage_causes(measures, (DamageCause.STAIN, DamageCause.FOLD, DamageCause.TEAR, DamageCause.CROSSING,
                                      DamageCause.PRINTED_OVER))
    name_ring = _name_rings_against_blank(gray, hom, reference, ref_hom, targets, tints_black)
    if nameless_right is not None:
        name_ring = np.where(nameless_right, 0.0, name_ring)
    dots = _lone_dots(ink, geo, boxes[0, 2:])
    shift_px = np.einsum("nij,nj->ni", jac, np.stack([dx, dy], 1) / CANON_PPI)
    corners_all = _boxes_px(hom, boxes)
    out = []
    for i, t in enumerate(targets):
        corners = corners_all[i]
        sx, sy = float(shift_px[i, 0]), float(shift_px[i, 1])
        out.append(TargetScore(
            contest=t.contest, option=t.option, score=float(score[i]), fill_score=float(bare_fill[i]),
            stroke_score=float(stroke[i]), ring_score=float(max(ring[i], name_ring[i])),
            damage_score=float(damage[i]), damage_cause=causes[i],
            write_in_score=_write_in_score(gray, hom, t.write_in_area_in, reference, ref_dpi, tints_black, speckled_card),
            box_px=(corners[0] + sx, corners[1] + sy, corners[2], corners[3]), shift_px=(sx, sy), dot_in=float(dots[i]),
        ))
    return out


def _lone_dots(ink: np.ndarray, geo: _Geometry, box_in: np.ndarray) -> np.ndarray:
    """Per target: the extent (in, the larger side of its bounding box) of a lone dot of added
    ink (``ink``: the aligned canonical windows) in the box grown by DOT_AROUND_IN: the one
    piece DARK or darker there, not touching the grown box's edge, with at most DOT_OTHER_PX of
    added ink DOT_FAINT or darker away from it; 0.0 where there is no such dot."""
    n, ch, cw = ink.shape
    o = MARGIN_IN * CANON_PPI - SEARCH_PX  # the box's corner in the crop (px)
    g = DOT_AROUND_IN * CANON_PPI
    r0, c0 = max(0, int(np.floor(o - g))), max(0, int(np.floor(o - g)))
    r1, c1 = min(ch, int(np.ceil(o + box_in[1] * CANON_PPI + g))), min(cw, int(np.ceil(o + box_in[0] * CANON_PPI + g)))
    zone = ink[:, r0:r1, c0:c1]
    dark = zone >= DARK
    out = np.zeros(n)
    for k in np.flatnonzero(dark.reshape(n, -1).any(axis=1)):
        count, labels, stats, _ = cv2.connectedComponentsWithStats(dark[k].view(np.uint8), connectivity=8)
        if count != 2:
            continue
        x, y, w, h = (int(v) for v in stats[1, :4])
        if x == 0 or y == 0 or x + w == zone.shape[2] or y + h == zone.shape[1]:
            continue  # it runs on out of the zone: a stroke
        near = cv2.dilate((labels == 1).view(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
        if int(((zone[k] >= DOT_FAINT) & ~near).sum()) > DOT_OTHER_PX:
            continue
        out[k] = max(w, h) / CANON_PPI
    return out


def _ink_over(aligned: np.ndarray, blank_near: np.ndarray) -> np.ndarray:
    """What the card adds to the blank: its darkness beyond the blank's print where the blank
    prints (BLANK_NOISE or darker; its paper noise is no print), all of it on the blank's paper."""
    return np.where(blank_near >= BLANK_NOISE, np.clip(aligned - blank_near, 0.0, 1.0), aligned)


def _as_the_card_prints(blank_near: np.ndarray, aligned: np.ndarray) -> np.ndarray:
    """The blank's print (``blank_near``, per window) as the card prints it: where most of the
    group's blank windows print (the targets' outlines, not a number one of them prints
    inside), no darker than most of the card's windows show there, a pixel either way (a blank
    thresholded heavily prints its outlines darker and thicker than a gray card shows them,
    and the ink of a check over a thick outline was taken for the print it lies on).
    Conservative: where most of the card's targets are marked, the blank stays as it is; a
    group of fewer than THINNER_SIBLINGS targets keeps it too. (The finer strokes' windows
    keep the blank's own print: taking the card's there too moved one score of 53,996 on six
    decks, no reading.)"""
    if len(blank_near) < THINNER_SIBLINGS:
        return blank_near
    common = np.median(blank_near, axis=0) >= BLANK_NOISE
    card = cv2.dilate(np.median(aligned, axis=0).astype(np.float32), np.ones((3, 3), np.uint8))
    return np.where(common[None], np.minimum(blank_near, card[None]), blank_near)


def _above_baseline(fold: np.ndarray, speckled_card: bool) -> np.ndarray:
    """A group's fold measures less what every target of its kind shows beside it (the print
    at a scan's stroke width; on a speckled card, its specks): in a group of FOLD_BASELINE_MIN
    or more, their FOLD_BASELINE_Q quantile, on a speckled card the median
    (FOLD_BASELINE_Q_SPECKLED: specks lie beside every target, some in a line by chance). A
    crease crosses a few targets of a group, never most."""
    if len(fold) < FOLD_BASELINE_MIN:
        return fold
    return np.clip(fold - np.quantile(fold, FOLD_BASELINE_Q_SPECKLED if speckled_card else FOLD_BASELINE_Q), 0.0, 1.0)


def _covered(blank: np.ndarray, geo: _Geometry) -> np.ndarray:
    """Per window: the share of the target's interior the blank prints over."""
    s = SEARCH_PX
    ch, cw = geo.crop
    return (blank[:, s: s + ch, s: s + cw].reshape(len(blank), -1)[:, geo.interior] >= PRINTED).mean(axis=1)


def _without_overprint(card: np.ndarray, blank: np.ndarray, like: np.ndarray, geo: _Geometry) -> np.ndarray:
    """The blank's darkness windows, where the blank prints over a target (a "SAMPLE" stamp
    across the oval) that the card does not carry, with the target's own box taken from the
    page's targets of about its size that are not printed over (``like``: their windows,
    the same geometry; per pixel, their median): the empty target as the card shows it.

    A target is restored only when: it is obscured on the blank (MIN_VISIBLE of its interior
    printed over); at least OVERPRINT_SIBLINGS targets like it are not (OVERPRINT_CLEAN or
    less), and they agree (a vendor printing numbers inside its ovals has no one empty
    target); and around the box the card shows bare paper on OVERPRINT_MISSING or more of
    the blank's print there (OVERPRINT_MIN_PX pixels at least): the overprint is not on this
    card (there, the blank's print the card shows as paper is taken out too). A card that
    carries the stamp keeps the target obscured, for a person."""
    clean = _covered(like, geo) <= OVERPRINT_CLEAN
    hidden = np.flatnonzero(_covered(blank, geo) > MIN_VISIBLE)
    if hidden.size == 0 or clean.sum() < OVERPRINT_SIBLINGS:
        return blank
    m = int(round(MARGIN_IN * CANON_PPI))
    g = OVERPRINT_BOX_GROW_PX
    box = np.zeros(blank.shape[1:], bool)
    box[max(0, m - g): blank.shape[1] - m + g, max(0, m - g): blank.shape[2] - m + g] = True
    typical = np.median(like[clean], axis=0)
    if float(np.median(np.abs(like[clean] - typical)[:, box].mean(axis=1))) > OVERPRINT_AGREE:
        return blank
    out = blank.copy()
    for k in hidden:
        printed = (blank[k] >= PRINTED) & ~box
        missing = printed & (card[k] < BLANK_NOISE)
        if missing.sum() >= OVERPRINT_MIN_PX and missing.sum() >= OVERPRINT_MISSING * printed.sum():
            out[k][box] = typical[box]
            out[k][missing] = 0.0  # around the box, the overprint the card lacks is not print to compare with
    return out


@dataclass(frozen=True)
class _BlankSide:
    """What scoring one group of same-sized targets measures of the blank alone (read-only)."""

    dark: np.ndarray  # the blank's windows' darkness (blurred)
    like_dark: np.ndarray | None  # where the blank prints over a target: the darkness of the page's targets like it
    stain: np.ndarray  # per target, the blank's own stain measure
    cross_printed: np.ndarray  # the crossing check's windows: the blank's print, widened
    cross_near: np.ndarray  # and its darkness, widened
    cross_dark: np.ndarray  # and its darkness as printed, in 256 levels (uint8: kept with the blank)
    cross_zone: np.ndarray  # and where each target lies in them: its own print and what that spans
    boxed: np.ndarray | None = None  # per target printed as a box (not an oval): the inside of its printed outline, else empty


def _blank_side(reference: np.ndarray, ref_dpi: float, boxes: np.ndarray, geo: _Geometry, page_boxes: Sequence[Box],
                ref_plane: tuple[float, float, float], blank_memo: dict[tuple[object, ...], object]) -> _BlankSide:
    """The blank's side of :func:`score_group_against_blank`, measured once per blank and group."""
    key = ("blank side", ref_dpi, boxes.tobytes(), geo.shape, tuple(page_boxes), ref_plane)
    found = blank_memo.get(key)
    if isinstance(found, _BlankSide):
        return found
    n = len(boxes)
    origins = boxes[:, :2] - MARGIN_IN
    sizes = np.repeat([[geo.shape[1] / CANON_PPI, geo.shape[0] / CANON_PPI]], n, axis=0)
    ref_hom = np.diag([ref_dpi, ref_dpi, 1.0])
    ref_win, _ = _windows(reference, ref_hom, origins, sizes, geo.shape, CANON_PPI)
    ref_win, ref_dark = _darkness(ref_win, geo)
    like_dark = None
    if page_boxes and (_covered(ref_dark, geo) > MIN_VISIBLE).any():
        like = np.array([b for b in page_boxes if abs(b[2] - boxes[0, 2]) <= OVERPRINT_SIZE_IN and abs(b[3] - boxes[0, 3]) <= OVERPRINT_SIZE_IN])
        centres = like[:, :2] + like[:, 2:] / 2
        like_win, _ = _windows(reference, ref_hom, centres - boxes[0, 2:] / 2 - MARGIN_IN, np.repeat(sizes[:1], len(like), axis=0),
                               geo.shape, CANON_PPI)
        like_dark = _darkness(like_win, geo)[1]
    s = SEARCH_PX
    ch, cw = geo.crop
    ref_centers = (boxes[:, :2] + boxes[:, 2:] / 2) * ref_dpi
    stain = _stain(ref_win[:, s: s + ch, s: s + cw], ref_plane, ref_centers, geo, sides=STAIN_SIDES)
    if ("crossing source", ref_dpi) not in blank_memo:
        blank_memo[("crossing source", ref_dpi)] = _reduced(reference, ref_hom)
    source: tuple[np.ndarray, np.ndarray] = blank_memo[("crossing source", ref_dpi)]  # type: ignore[assignment]
    size = boxes[0, 2:] + 2 * CROSS_MARGIN_IN
    shape = (int(round(size[1] * CROSS_PPI)), int(round(size[0] * CROSS_PPI)))
    blank, _ = _windows(*source, boxes[:, :2] - CROSS_MARGIN_IN, np.repeat(size[None], n, axis=0), shape, CROSS_PPI)
    blank_dark = np.clip(1.0 - blank / _paper(ref_win)[:, None, None], 0.0, 1.0)
    # the blank's print widened CROSS_PRINT_GROW_PX: what a scan or a registration leaves along printed lines is not a stroke
    grow = np.ones((2 * CROSS_PRINT_GROW_PX + 1, 2 * CROSS_PRINT_GROW_PX + 1), np.uint8)
    near = cv2.dilate(blank_dark.reshape(n * shape[0], shape[1]), grow).reshape(blank_dark.shape)
    boxed = _printed_boxes(ref_dark[:, s: s + ch, s: s + cw], geo)
    m = int(round(CROSS_MARGIN_IN * CROSS_PPI))
    bw, bh = int(round(boxes[0, 2] * CROSS_PPI)), int(round(boxes[0, 3] * CROSS_PPI))
    zone = np.stack([target_zone(blank_dark[k] >= BLANK_NOISE, (m, m, m + bw, m + bh), int(round(ZONE_MIN_IN * CROSS_PPI)))
                     for k in range(n)])
    as_printed = np.round(np.clip(blank_dark, 0.0, 1.0) * 255.0).astype(np.uint8)
    side = _BlankSide(ref_dark, like_dark, stain, near >= BLANK_NOISE, near, as_printed, zone, boxed)
    for a in (side.dark, side.stain, side.cross_printed, side.cross_near, side.cross_dark, side.cross_zone,
              *(() if like_dark is None else (like_dark,)),
              *(() if boxed is None else (boxed,))):
        a.setflags(write=False)
    blank_memo[key] = side
    return side


def _printed_boxes(blank: np.ndarray, geo: _Geometry) -> np.ndarray | None:
    """Per target, the inside of its printed outline where the blank prints it as a box
    (a rectangle, a rounded box), else nothing; None when no target of the group is one.

    A stroke's reach (the span, :func:`~scanpipe.imaging.marks._span`) is measured in the oval
    the target's box inscribes; a box's corners lie outside it, so an X drawn corner to corner
    of a box reached only half its width. The inside is the paper enclosed by the blank's own
    print around the window's centre (a flood fill that must not reach the window's edge: an
    arrow or a broken outline encloses nothing), and it counts as a box when it fills BOXED_FILL
    of its own bounding box (an oval fills pi/4 of it) and is no smaller than the oval's interior."""
    n, ch, cw = blank.shape
    out = np.zeros(blank.shape, bool)
    oval = len(geo.interior)
    for k in range(n):
        paper = (blank[k] < PRINTED).astype(np.uint8)
        cy, cx = ch // 2, cw // 2
        if not paper[cy, cx]:
            continue
        mask = np.zeros((ch + 2, cw + 2), np.uint8)
        cv2.floodFill(paper, mask, (cx, cy), 2, flags=4)
        inside = paper == 2
        if inside[0].any() or inside[-1].any() or inside[:, 0].any() or inside[:, -1].any():
            continue  # not enclosed
        rows, cols = np.flatnonzero(inside.any(axis=1)), np.flatnonzero(inside.any(axis=0))
        if len(rows) and inside.sum() >= BOXED_FILL * (rows[-1] - rows[0] + 1) * (cols[-1] - cols[0] + 1) and inside.sum() >= oval:
            out[k] = inside
    return out if out.any() else None


def _span_in_box(ink: np.ndarray, inside: np.ndarray, interior_px: int) -> np.ndarray:
    """:func:`~scanpipe.imaging.marks._span` with each target's zone the inside of its printed
    box (``inside``, per target) and the shares of that inside's width and height."""
    out = np.zeros(len(ink))
    for k in range(len(ink)):
        if not inside[k].any():
            continue
        rows, cols = np.flatnonzero(inside[k].any(axis=1)), np.flatnonzero(inside[k].any(axis=0))
        zone = (ink[k] >= DARK) & inside[k]
        count = int(zone.sum())
        if count < SPAN_MIN_SHARE * interior_px:
            continue
        counted = np.array([count])
        across = _extent_share(zone.sum(axis=0)[None].astype(np.float32), counted, cols[-1] - cols[0] + 1)
        down = _extent_share(zone.sum(axis=1)[None].astype(np.float32), counted, rows[-1] - rows[0] + 1)
        out[k] = float(np.clip(max(across[0], down[0]), 0.0, 1.0))
    return out


def _crossing(gray: np.ndarray, hom: np.ndarray, boxes: np.ndarray, plane_card: np.ndarray, side: _BlankSide,
              memo: dict[str, tuple[np.ndarray, np.ndarray]], areas: Sequence[Box | None],
              through: Callable[[int], Callable[[float, float, int], bool]]) -> np.ndarray:
    """1.0 for a target that a broad or long stroke crosses (a stamp's letter, a signature, a line
    drawn across the card), else 0.0: one stroke of ink added to the blank that touches the box
    and runs on CROSS_REACH_IN or more beyond it, with CROSS_AREA_IN2 of ink out there or out
    there on two sides. A voter's fill, check or X stays nearer its target. Measured on a wide
    window (the box and CROSS_MARGIN_IN around it, at CROSS_PPI, area-reduced first so a
    dithered scan's dots average out). Added ink counts only where the blank shows paper; the
    target's own printed outline next to added ink joins it (a stroke across the outline is
    one stroke); print elsewhere joins nothing (a mark touching a printed rule is not a stroke
    running on). A thin stroke between other print may stop short of that reach and be parted
    by the outline: pieces touching the box on one line through it, CROSS_OPPOSITE_IN or more
    past it on opposite sides, cross it too (:func:`_passes_through`); so do a broad stroke's
    pieces that the print round the target hides on their way to it, one on either side of it
    on one line through it (:func:`_bands_through`), and a straight piece leaving it on one side
    whose line runs on under print past its other side (:func:`_band_out_hidden`). Any of these
    crosses the target only where the stroke reaches the target itself, not just its box: its
    own print or what that spans (:func:`~scanpipe.imaging.marks_across.target_zone`); a stamp's
    letter through a box's corner beside an empty oval lies over nothing a voter marks (on the
    vendor profile's fresh seed 272727, five clear targets had gone to a person so)."""
    n = len(boxes)
    size = boxes[0, 2:] + 2 * CROSS_MARGIN_IN
    shape = (int(round(size[1] * CROSS_PPI)), int(round(size[0] * CROSS_PPI)))
    origins = boxes[:, :2] - CROSS_MARGIN_IN
    sizes = np.repeat(size[None], n, axis=0)
    if "card" not in memo:  # the whole card reduced once per page, not once per group of targets
        memo["card"] = _reduced(gray, hom)
    card, _ = _windows(*memo["card"], origins, sizes, shape, CROSS_PPI)
    card_dark = np.clip(1.0 - card / plane_card[:, None, None], 0.0, 1.0)
    near, printed = side.cross_near, side.cross_printed  # the blank's print (widened), measured once
    # added ink only where the blank shows paper: over its print, a scan's different rendering
    # of that print (a gray stamp or shading thresholded black) is not a stroke
    ink = (np.clip(card_dark - near, 0.0, 1.0) >= CROSS_DARK) & ~printed
    m = int(round(CROSS_MARGIN_IN * CROSS_PPI))
    bw, bh = int(round(boxes[0, 2] * CROSS_PPI)), int(round(boxes[0, 3] * CROSS_PPI))
    g = CROSS_PRINT_GROW_PX + 1  # on the box: its outline and the band around it that added ink cannot enter
    on_box = np.zeros(shape, bool)
    on_box[m - g: m + bh + g, m - g: m + bw + g] = True
    # a name written in a filled target's own write-in area (``areas``: None for the others) is
    # no stroke from elsewhere where the fill's overflow joins it: that area (grown by
    # CROSS_AREA_GROW_IN) is left out (into an empty target, a stroke from there is no voter's)
    for j, written in enumerate(areas):
        if written is not None:
            x0, y0 = (np.array(written[:2]) - CROSS_AREA_GROW_IN - origins[j]) * CROSS_PPI
            x1, y1 = (np.array(written[:2]) + np.array(written[2:]) + CROSS_AREA_GROW_IN - origins[j]) * CROSS_PPI
            ink[j, max(0, int(y0)): max(0, int(np.ceil(y1))), max(0, int(x0)): max(0, int(np.ceil(x1)))] = False
    g += CROSS_BRIDGE_PX
    box_zone = np.zeros(shape, bool)  # where the blank's print joins added ink: the target's own outline
    box_zone[max(0, m - g): m + bh + g, max(0, m - g): m + bw + g] = True
    r = int(round(CROSS_REACH_IN * CROSS_PPI))
    far = np.ones(shape, bool)
    far[max(0, m - r): m + bh + r, max(0, m - r): m + bw + r] = False
    sides = [np.zeros(shape, bool) for _ in range(4)]  # the far band above, below, left and right
    sides[0][: max(0, m - r)] = True
    sides[1][m + bh + r:] = True
    sides[2][:, : max(0, m - r)] = True
    sides[3][:, m + bw + r:] = True
    q = int(round(CROSS_OPPOSITE_IN * CROSS_PPI))  # nearer bands on opposite sides: a stroke passing through
    opposite = [np.zeros(shape, bool) for _ in range(4)]  # above, below, left, right of the box, q or more away
    opposite[0][: max(0, m - q)] = True
    opposite[1][m + bh + q:] = True
    opposite[2][:, : max(0, m - q)] = True
    opposite[3][:, m + bw + q:] = True
    area = CROSS_AREA_IN2 * CROSS_PPI ** 2
    bridge = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * CROSS_BRIDGE_PX + 1, 2 * CROSS_BRIDGE_PX + 1))
    out = np.zeros(n)
    past = np.logical_or.reduce(opposite)  # beyond the box by CROSS_OPPOSITE_IN: holds the far zone
    for k in np.flatnonzero((ink & past).reshape(n, -1).sum(axis=1) >= CROSS_TOUCH_PX):
        closed = cv2.morphologyEx(ink[k].astype(np.uint8), cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))  # a thin line's breaks
        stroke = closed | (printed[k] & box_zone & (cv2.dilate(closed, bridge) > 0)).astype(np.uint8)
        count, labels = cv2.connectedComponents(stroke, connectivity=8)
        touching = np.bincount(labels[on_box], minlength=count) >= CROSS_TOUCH_PX
        beyond = np.bincount(labels[far & ink[k]], minlength=count)  # added ink only, not the print joined to it
        reach = np.sum([np.bincount(labels[side & ink[k]], minlength=count) > 0 for side in sides], axis=0)
        target = (ink[k], printed[k], card_dark[k] - side.cross_dark[k] / np.float32(255.0), side.cross_zone[k])
        # (cheapest first; a stroke judged by touching the box must reach the target itself, one
        # whose pieces the print hides on their way to the target lies on a line through it)
        if ((touching[1:] & ((beyond[1:] >= area) | (reach[1:] >= 2))).any() or _passes_through(labels, touching, ink[k], opposite, (m, bw, bh))) and _reaches_target(*target):
            out[k] = 1.0
        elif _bands_through(labels, count, ink[k], printed[k], (m, bw, bh)) or _band_out_hidden(ink[k], printed[k], on_box, (m, bw, bh)):
            out[k] = 1.0
        elif _band_run(closed.astype(bool) & ~printed[k], printed[k], (m, bw, bh), CROSS_PRINT_GROW_PX + 1,
                       through(int(k))) >= CROSS_RUN_IN * CROSS_PPI and _reaches_target(*target):
            out[k] = 1.0
    return out


def _reaches_target(ink: np.ndarray, printed: np.ndarray, darker: np.ndarray, zone: np.ndarray) -> bool:
    """Whether a stroke that touches a target's box reaches the target itself (``zone``: its
    print and what that spans, :func:`~scanpipe.imaging.marks_across.target_zone`) and not just
    the box: a stamp's letter past the box's corner beside an empty oval lies over nothing a
    voter marks. Added ink (``ink``) stops where the blank's widened print (``printed``) starts,
    so the stroke is followed on into that band where the card is CROSS_DARK darker than the
    blank as printed (``darker``); it reaches the target where one piece of it lies beyond
    the band round the zone and comes within a pixel of the zone (a voter's fill inside the
    zone, a scan's sliver along an outline, reach out of it no farther than the band)."""
    zone_u8 = zone.view(np.uint8)
    beyond = cv2.dilate(zone_u8, np.ones((2 * CROSS_PRINT_GROW_PX + 3,) * 2, np.uint8)) == 0
    near = cv2.dilate(zone_u8, np.ones((3, 3), np.uint8)) > 0
    followed = ink | (printed & (darker >= CROSS_DARK))
    _, labels = cv2.connectedComponents(followed.view(np.uint8), connectivity=8)
    far = np.zeros(labels.max() + 1, bool)
    far[labels[followed & beyond & ink]] = True
    touching = np.zeros_like(far)
    touching[labels[followed & near]] = True
    return bool((far & touching)[1:].any())


def _band_run(ink: np.ndarray, printed: np.ndarray, box: tuple[int, int, int], grow: int,
              through: Callable[[float, float, int], bool]) -> float:
    """The longest way (px) a straight line through the box (``box``: its offset in the window
    and its size) runs on past it (and the band ``grow`` round it) on one side over added ink
    (``ink``) or print (``printed``: where added ink is not measured) without meeting paper,
    inked for CROSS_RUN_INK of that way, where ``through(angle_deg, offset_px, side)`` says the
    line is a band over the target (judged on the finer window: here the print round a small
    target, widened, may cover all its inside, and the paper between the box and ink further
    out). Lines every CROSS_RUN_STEP_DEG, a pixel apart across the box, each crossing half the
    box's height or more of it; a way that reaches the window's edge ends there."""
    least = CROSS_RUN_IN * CROSS_PPI
    m, bw, bh = box
    outside = int(ink.sum()) - int(ink[max(0, m - grow): m + bh + grow, max(0, m - grow): m + bw + grow].sum())
    if outside < CROSS_RUN_INK * least:
        return 0.0  # too little ink out of the box for any way that long
    lines = _run_lines(ink.shape, box, grow)
    inked_at = ink.ravel()[lines.flat]  # (lines, samples): added ink there (it wins over print)
    paper = ~(inked_at | printed.ravel()[lines.flat]) | ~lines.valid
    runs = []  # per side: each line's way that side
    for order, beyond in lines.sides:
        # from where each line leaves the box that way, up to the first paper
        ran = beyond & ~np.logical_or.accumulate(paper[:, order] & beyond, axis=1)
        inked = (ran & inked_at[:, order]).sum(axis=1)
        length = ran.sum(axis=1)
        runs.append(np.where(inked >= CROSS_RUN_INK * np.maximum(length, 1), length, 0))
    ways = np.stack(runs, axis=1).astype(np.float64)  # (lines, 2)
    best = 0.0
    for flat in np.argsort(-ways, axis=None):
        li, si = divmod(int(flat), 2)
        if ways[li, si] <= best or ways[li, si] < least:
            break
        if through(float(lines.params[li, 0]), float(lines.params[li, 1]), 1 - 2 * si):
            best = float(ways[li, si])
    return best


@dataclass(frozen=True)
class _RunLines:
    """:func:`_band_run`'s lines in one window: per line (rows) and sample (columns), the
    window's pixel there (flat index, clipped into the window) and whether the sample lies in
    the window; per line its direction (degrees) and offset from the box's middle (px); per
    side of the middle (along the direction, then against it), the samples in order outwards
    and which of them lie past the box and its band."""

    flat: np.ndarray
    valid: np.ndarray
    params: np.ndarray
    sides: tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


@lru_cache(maxsize=32)
def _run_lines(shape: tuple[int, ...], box: tuple[int, int, int], grow: int) -> _RunLines:
    """The sample points of :func:`_band_run`'s lines in a window of ``shape``, the box
    (``box``: its offset in the window and its size) and its band ``grow`` round it
    (:class:`_RunLines`): lines every CROSS_RUN_STEP_DEG, a pixel apart, each crossing half
    the box's height or more of it."""
    m, bw, bh = box
    h, w = shape[:2]
    cx, cy = m + (bw - 1) / 2.0, m + (bh - 1) / 2.0
    reach = int(np.ceil(np.hypot(h, w) / 2.0)) + 2  # the box lies in the window's middle
    t = np.arange(-reach, reach + 1, dtype=np.float64)
    rows, cols, outs, params = [], [], [], []
    half = np.hypot(bw, bh) / 2.0
    for deg in np.arange(0.0, 180.0, CROSS_RUN_STEP_DEG):
        u = np.array([np.cos(np.radians(deg)), np.sin(np.radians(deg))])
        nrm = np.array([-u[1], u[0]])
        for off in np.arange(-np.floor(half), np.floor(half) + 1):
            xi = np.rint(cx + off * nrm[0] + t * u[0]).astype(int)
            yi = np.rint(cy + off * nrm[1] + t * u[1]).astype(int)
            in_box = (xi >= m) & (xi < m + bw) & (yi >= m) & (yi < m + bh)
            if in_box.sum() < min(bw, bh) / 2.0:  # through the box, not past a corner
                continue
            banded = (xi >= m - grow) & (xi < m + bw + grow) & (yi >= m - grow) & (yi < m + bh + grow)
            ahead = np.flatnonzero(~banded[reach:])
            behind = np.flatnonzero(~banded[reach::-1])
            rows.append(yi)
            cols.append(xi)
            outs.append((int(ahead[0]) if len(ahead) else reach, int(behind[0]) if len(behind) else reach))
            params.append((float(deg), float(off)))
    ys, xs = np.array(rows), np.array(cols)
    valid = (ys >= 0) & (ys < h) & (xs >= 0) & (xs < w)
    out_at = np.array(outs)  # per line: samples from the middle to where it leaves the box and band, each way
    centre = ys.shape[1] // 2
    sides = []
    for side, order in enumerate((np.arange(centre, ys.shape[1]), np.arange(centre, -1, -1))):
        sides.append((order, np.arange(len(order))[None] >= out_at[:, side][:, None]))
    return _RunLines(np.clip(ys, 0, h - 1) * w + np.clip(xs, 0, w - 1), valid, np.array(params), (sides[0], sides[1]))


def _line_inked_inside(ink: np.ndarray, printed: np.ndarray, geo: _Geometry, box_in: tuple[float, float]
                       ) -> Callable[[float, float, int], bool]:
    """For :func:`_band_run`: whether its line (direction in degrees, offset from the box's
    middle in CROSS_PPI px, the side its way runs out: 1 along the direction, -1 against it)
    holds added ink (``ink``: one target's aligned canonical window; CROSS_DARK or darker)
    wherever the blank leaves the target's inside bare (``printed``: the blank's print),
    CROSS_RUN_INSIDE_PAPER of it on paper at most (an inside all print holds it), and runs on
    out of the box that side over ink or print to the window's edge, CROSS_RUN_GAP_PX of
    paper at most: a band over the target, not a fill near a band that runs past beyond
    other print."""
    ch, cw = geo.crop
    o = MARGIN_IN * CANON_PPI - SEARCH_PX  # the box's corner in the crop (px)
    cx, cy = o + box_in[0] * CANON_PPI / 2.0, o + box_in[1] * CANON_PPI / 2.0
    scale = CANON_PPI / CROSS_PPI
    t = np.arange(0.0, float(np.hypot(ch, cw)), 0.5)
    bx0, by0, bx1, by1 = o, o, o + box_in[0] * CANON_PPI, o + box_in[1] * CANON_PPI

    def through(deg: float, off: float, side: int) -> bool:
        u = np.array([np.cos(np.radians(deg)), np.sin(np.radians(deg))])
        px, py = cx - off * scale * u[1], cy + off * scale * u[0]
        line = []
        for sign in (-1, 1):
            xs_, ys_ = px + sign * t * u[0], py + sign * t * u[1]
            keep = (xs_ >= 0) & (xs_ <= cw - 1) & (ys_ >= 0) & (ys_ <= ch - 1)
            line.append((np.rint(xs_[keep]).astype(int), np.rint(ys_[keep]).astype(int), xs_[keep], ys_[keep]))
        xi = np.concatenate([line[0][0], line[1][0]])
        yi = np.concatenate([line[0][1], line[1][1]])
        on = geo.inside[yi, xi] & ~printed[yi, xi]
        if on.any():
            inked = ink[yi[on], xi[on]] >= CROSS_DARK
            if int(inked.sum()) < 2 or float((~inked).mean()) > CROSS_RUN_INSIDE_PAPER:
                return False
        xi, yi, fx, fy = line[1] if side > 0 else line[0]
        out = (fx < bx0) | (fx > bx1) | (fy < by0) | (fy > by1)  # from the box's edge out that side
        xi, yi = xi[out], yi[out]
        _, first = np.unique(yi * cw + xi, return_index=True)
        order = np.sort(first)  # each pixel once, outwards
        bare = ~printed[yi[order], xi[order]] & (ink[yi[order], xi[order]] < CROSS_DARK)
        return int(bare.sum()) <= CROSS_RUN_GAP_PX

    return through


def _band_out_hidden(ink: np.ndarray, printed: np.ndarray, on_box: np.ndarray, box: tuple[int, int, int]) -> bool:
    """Whether a straight piece of added ink leaves the box (``on_box``: the box and the band
    round it no added ink can enter) for CROSS_OUT_IN or more on a line through it, and that
    line runs on past the box's other side over print or ink (hidden) as far: a stamp letter's
    stroke whose far side the print round the target hides."""
    m, bw, bh = box
    rim = cv2.dilate(on_box.view(np.uint8), np.ones((3, 3), np.uint8)).astype(bool) & ~on_box
    count, labels = cv2.connectedComponents((ink & ~on_box).view(np.uint8), connectivity=8)
    centre = np.array([m + bw / 2.0, m + bh / 2.0])
    half = max(bw, bh) / 2.0
    out = CROSS_OUT_IN * CROSS_PPI
    touching = np.bincount(labels[rim], minlength=count) > 0
    sizes = np.bincount(labels.ravel(), minlength=count)
    hiding = printed | ink
    for label in np.flatnonzero(touching[1:] & (sizes[1:] >= out)) + 1:
        ys, xs = np.nonzero(labels == label)
        points = np.stack([xs, ys], axis=1).astype(np.float64)
        mean = points.mean(axis=0)
        values, vectors = np.linalg.eigh(np.cov((points - mean).T))
        length = float(np.sqrt(12.0 * max(values[1], 0.0)))  # a uniform band's extent along it
        width = len(xs) / max(length, 1.0)
        u, off = vectors[:, 1], centre - mean
        along = float(u @ (mean - centre))  # the piece lies out along its own line, not beside the box
        if (length < out or length < CROSS_BAND_ELONGATION * width or width < CROSS_OUT_MIN_PX or abs(along) < length / 2.0
                or abs(u[0] * off[1] - u[1] * off[0]) > half + width / 2.0):
            continue
        away = -u if along > 0 else u  # from the box towards its other side
        exit_t = _leaves_box_at(centre, away, on_box)
        steps = np.arange(exit_t, exit_t + out)
        xi, yi = np.rint(centre[0] + steps * away[0]).astype(int), np.rint(centre[1] + steps * away[1]).astype(int)
        inside = (xi >= 0) & (xi < ink.shape[1]) & (yi >= 0) & (yi < ink.shape[0])
        if inside.all() and float(hiding[yi, xi].mean()) >= CROSS_BAND_HIDDEN:
            return True
    return False


def _leaves_box_at(centre: np.ndarray, direction: np.ndarray, on_box: np.ndarray) -> float:
    """How far from ``centre`` along ``direction`` the line leaves ``on_box`` (pixels)."""
    t = 0.0
    h, w = on_box.shape
    while True:
        x, y = int(round(centre[0] + t * direction[0])), int(round(centre[1] + t * direction[1]))
        if not (0 <= x < w and 0 <= y < h) or not on_box[y, x]:
            return t
        t += 1.0


def _bands_through(labels: np.ndarray, count: int, ink: np.ndarray, printed: np.ndarray, box: tuple[int, int, int]) -> bool:
    """Whether two straight pieces of a band lie on one line through the box, one on either
    side of it: a stamp letter's stroke or a line drawn across the card, which the print round
    the target (its outline, its name, a rule beside it; added ink over print is not measured)
    cuts into pieces that neither touch the box nor reach far from it. Each piece is at least
    CROSS_BAND_MIN_IN long and CROSS_BAND_ELONGATION times as long as it is wide, its axis
    passes through the box, its path on to the box runs over the blank's print or ink all the
    way (CROSS_BAND_HIDDEN of it: the band is hidden there, not ended), and the two run within
    CROSS_BAND_DEG of one direction. A voter's marks beside other targets are not such a pair: a
    fill is not long and thin, two checks' strokes do not line up through a third target, and a
    name written beside a write-in oval starts past bare paper."""
    m, bw, bh = box
    centre = np.array([m + bw / 2.0, m + bh / 2.0])
    half = max(bw, bh) / 2.0
    least = CROSS_BAND_MIN_IN * CROSS_PPI
    bands: list[tuple[np.ndarray, float]] = []  # per straight piece: its direction and its place along it from the box
    for label in range(1, count):
        ys, xs = np.nonzero((labels == label) & ink)
        if len(xs) < least:
            continue
        points = np.stack([xs, ys], axis=1).astype(np.float64)
        mean = points.mean(axis=0)
        values, vectors = np.linalg.eigh(np.cov((points - mean).T))
        length, width = np.sqrt(12.0 * np.maximum(values[::-1], 0.0)) + 1.0  # a uniform band's extent along and across
        if length < least or length < CROSS_BAND_ELONGATION * width:
            continue
        u = vectors[:, 1]
        off = centre - mean
        if abs(u[0] * off[1] - u[1] * off[0]) > half + width / 2.0:
            continue  # its line misses the box
        t = float(u @ (mean - centre))
        if not _hidden_on_to(mean - np.sign(t) * u * length / 2.0, centre, box, printed | ink):
            continue
        bands.append((u, t))
    for i, (u, t) in enumerate(bands):
        for v, r in bands[i + 1:]:
            if abs(float(u @ v)) >= np.cos(np.radians(CROSS_BAND_DEG)) and t * r * float(np.sign(u @ v)) < 0:
                return True
    return False


def _hidden_on_to(end: np.ndarray, centre: np.ndarray, box: tuple[int, int, int], hiding: np.ndarray) -> bool:
    """Whether the way from ``end`` (a band's near end) straight to the box round ``centre``
    runs over ``hiding`` (print or ink) for CROSS_BAND_HIDDEN of its pixels."""
    m, bw, bh = box
    steps = int(np.ceil(np.hypot(*(centre - end)))) + 1
    xs, ys = np.linspace(end[0], centre[0], steps), np.linspace(end[1], centre[1], steps)
    outside = (xs < m) | (xs >= m + bw) | (ys < m) | (ys >= m + bh)  # up to the box's edge
    xi = np.clip(np.rint(xs[outside]).astype(int), 0, hiding.shape[1] - 1)
    yi = np.clip(np.rint(ys[outside]).astype(int), 0, hiding.shape[0] - 1)
    return xi.size == 0 or float(hiding[yi, xi].mean()) >= CROSS_BAND_HIDDEN


def _passes_through(labels: np.ndarray, touching: np.ndarray, ink: np.ndarray, opposite: list[np.ndarray],
                    box: tuple[int, int, int]) -> bool:
    """Whether added ink touching the box runs on CROSS_OPPOSITE_IN past it on two opposite
    sides, in pieces on one straight line through the box: a thin stroke crossing the target
    between other print (the target's own outline parts it in two, neither reaching far)."""
    m, bw, bh = box  # the box's offset in the window and its size (px)
    pieces = [label for label in np.flatnonzero(touching) if label != 0]
    centre = np.array([m + bw / 2.0, m + bh / 2.0])
    for first, second in ((0, 1), (2, 3)):
        ends = []
        for band in (opposite[first], opposite[second]):
            found = []
            for label in pieces:
                ys, xs = np.nonzero((labels == label) & band & ink)
                if len(xs) >= CROSS_TOUCH_PX:
                    found.append(np.array([xs.mean(), ys.mean()]))
            ends.append(found)
        for a in ends[0]:
            for b in ends[1]:
                d = b - a
                length = float(np.hypot(*d))
                if length > 0 and abs(d[0] * (centre[1] - a[1]) - d[1] * (centre[0] - a[0])) / length <= max(bw, bh) / 2.0:
                    return True
    return False


def _crossed_out(ink: np.ndarray, printed: np.ndarray, geo: _Geometry, which: np.ndarray) -> np.ndarray:
    """Per target (of ``which``; else False): strokes drawn across it that run on past its box
    on opposite sides (above and below, or left and right), CROSSED_REACH_IN or more beyond it
    and CROSSED_EXITS apart on each, joined to the ink inside (through the printed outline): a
    fill the voter crossed out with a zigzag. A fill's overflow, a felt pen's blot and a
    stroke's tail leave the box on one side or not as far; a slash through the target (a vote)
    leaves it once a side, an X twice (an X over a fill is not told from an X vote so, and
    stays a vote: left)."""
    n, ch, cw = ink.shape
    out = np.zeros(n, bool)
    m = int(round(MARGIN_IN * CANON_PPI))
    off = m - SEARCH_PX  # the box's origin in the crop
    bh, bw = geo.shape[0] - 2 * m, geo.shape[1] - 2 * m
    far = CROSSED_REACH_IN * CANON_PPI
    rows, cols = np.mgrid[0:ch, 0:cw]
    beyond = (off - rows, rows - (off + bh - 1), off - cols, cols - (off + bw - 1))  # above, below, left, right
    inside = np.zeros((ch, cw), bool)
    inside.flat[geo.interior] = True
    g = LEAVE_BOX_GROW_PX
    own = np.zeros((ch, cw), bool)  # the target's own print: its outline (and what it prints inside)
    own[max(0, off - g): off + bh + g, max(0, off - g): off + bw + g] = True
    for k in np.flatnonzero(which):
        stroke = (ink[k] >= RING_STROKE) & ~printed[k]
        joined = (stroke | (printed[k] & own)).astype(np.uint8)
        count, labels = cv2.connectedComponents(joined, connectivity=8)
        mine = np.zeros(count, bool)
        mine[np.unique(labels[inside & stroke])] = True
        mine[0] = False
        reach = (stroke & mine[labels]).astype(np.uint8)
        exits = [cv2.connectedComponents(reach * (b >= far).astype(np.uint8), connectivity=8)[0] - 1 for b in beyond]
        out[k] = min(exits[0], exits[1]) >= CROSSED_EXITS or min(exits[2], exits[3]) >= CROSSED_EXITS
    return out


def _beside(ink: np.ndarray, geo: _Geometry, which: np.ndarray) -> np.ndarray:
    """Per target (of ``which``; else False), whether its span is ink beside it: inside, dark
    ink reaching at most BESIDE_INSIDE_MAX across the interior either way, or none (a
    hesitation dot, a light smudge), and round it, dark ink in the band on one side only,
    within BESIDE_ARC_DEG of it (a neighbour's loop passing under the oval). A stroke across
    the target reaches across its interior, or leaves ink on two sides of it (a check's or an
    X's arms past the outline)."""
    out = np.zeros(len(ink), bool)
    rows, cols = np.nonzero(geo.inside)
    cy, cx = float(rows.mean()), float(cols.mean())
    ay, ax = float(np.ptp(rows)) + 1.0, float(np.ptp(cols)) + 1.0
    for k in np.flatnonzero(which):
        dark = ink[k] >= DARK
        band = dark & geo.span_zone & ~geo.inside
        inner = dark & geo.inside
        if not band.any():
            continue
        iy, ix = np.nonzero(inner)
        if inner.any() and (np.ptp(ix) + 1 > BESIDE_INSIDE_MAX * ax or np.ptp(iy) + 1 > BESIDE_INSIDE_MAX * ay):
            continue
        py, px = np.nonzero(band)
        angles = np.sort(np.degrees(np.arctan2((py - cy) / ay, (px - cx) / ax)) % 360.0)
        gaps = np.diff(np.concatenate([angles, angles[:1] + 360.0]))
        out[k] = 360.0 - float(gaps.max()) <= BESIDE_ARC_DEG  # the smallest arc holding all the band's ink
    return out


@dataclass(frozen=True)
class _FineWindows:
    """Some targets' windows on the card unblurred at FINE_PPI (:func:`_fine_windows`)."""

    which: np.ndarray  # indices of the targets (of the group's n)
    dark: np.ndarray  # (len(which), H, W) the card's darkness
    printed: np.ndarray  # (n, H, W) the blank's print, grown FINE_PRINT_GROW_PX
    zone: np.ndarray  # (H, W) the span zone grown FINE_BAND_IN
    inner: np.ndarray  # (H, W) the interior
    width: float  # the oval's width, FINE px
    n: int


def _fine_windows(gray: np.ndarray, hom: np.ndarray, boxes: np.ndarray, geo: _Geometry, dx: np.ndarray, dy: np.ndarray,
                  reference: np.ndarray, ref_dpi: float, which: np.ndarray, memo: dict[str, tuple[np.ndarray, np.ndarray]],
                  blank_memo: dict[tuple[object, ...], object]) -> _FineWindows:
    """The windows of the targets ``which`` (bool) at FINE_PPI, each shifted as the canonical
    refinement found (``dx``, ``dy``), with the blank's print there (kept in ``blank_memo``)."""
    n = len(boxes)
    idx = np.flatnonzero(which)
    f = int(round(FINE_PPI / CANON_PPI))
    ch, cw = geo.crop
    shape = (ch * f, cw * f)
    corner = boxes[idx, :2] - MARGIN_IN + SEARCH_PX / CANON_PPI  # the aligned crop's origin on the blank
    sizes = np.repeat([[cw / CANON_PPI, ch / CANON_PPI]], len(idx), axis=0)
    if "fine source" not in memo:
        memo["fine source"] = _reduced(gray, hom, FINE_PPI)
    shift = np.stack([dx[idx], dy[idx]], axis=1) / CANON_PPI
    card, _ = _windows(*memo["fine source"], corner + shift, sizes, shape, FINE_PPI)
    card_dark = 1.0 - card / _paper(card)[:, None, None]
    key = ("fine print", ref_dpi, boxes.tobytes(), geo.shape)
    if key not in blank_memo:
        if ("fine source", ref_dpi) not in blank_memo:
            blank_memo[("fine source", ref_dpi)] = _reduced(reference, np.diag([ref_dpi, ref_dpi, 1.0]), FINE_PPI)
        every = boxes[:, :2] - MARGIN_IN + SEARCH_PX / CANON_PPI
        src: tuple[np.ndarray, np.ndarray] = blank_memo[("fine source", ref_dpi)]  # type: ignore[assignment]
        blank, _ = _windows(*src, every, np.repeat(sizes[:1], n, axis=0), shape, FINE_PPI)
        blank_dark = (1.0 - blank / _paper(blank)[:, None, None]).reshape(n * shape[0], shape[1])
        grow = np.ones((2 * FINE_PRINT_GROW_PX + 1,) * 2, np.uint8)
        near = cv2.dilate((blank_dark >= BLANK_NOISE).astype(np.uint8), grow).reshape(n, *shape).astype(bool)
        near.setflags(write=False)
        blank_memo[key] = near
    printed: np.ndarray = blank_memo[key]  # type: ignore[assignment]
    zone = np.repeat(np.repeat(geo.span_zone, f, axis=0), f, axis=1).astype(np.uint8)
    band = int(round(FINE_BAND_IN * FINE_PPI))
    zone = cv2.dilate(zone, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * band + 1,) * 2)).astype(bool)
    inner = np.zeros(geo.crop, bool)
    inner.flat[geo.interior] = True
    inner = np.repeat(np.repeat(inner, f, axis=0), f, axis=1)
    return _FineWindows(idx, card_dark, printed, zone, inner, geo.axes_px[0] * f, n)


def _fine_pieces(fine: _FineWindows, j: int, speckled_card: bool, *, whole: bool = False, stubs: bool = False,
                 dark_level: float = FINE_DARK, lines_only: bool = False) -> list[np.ndarray]:
    """The pen's strokes (:func:`fine_strokes`: ink of ``dark_level`` or more) on the bare
    paper of the ``j``-th window, in the span zone (``whole``: anywhere in the window;
    ``stubs``: short pieces too, down to STUB_PX long and STUB_ELONGATION; ``lines_only``: the
    ink a line narrower than LINE_PX stands above what round it shows, so a broad light tone
    (a stain, its edge, a ghost) is none)."""
    k = fine.which[j]
    ink = np.where(fine.printed[k], 0.0, fine.dark[j]).astype(np.float32)  # the bare paper's (a line touching print stays a line)
    if lines_only:
        ink = ink - cv2.morphologyEx(ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (LINE_PX, LINE_PX)))
    dark = ink >= dark_level
    if stubs:
        return fine_strokes(dark if whole else dark & fine.zone, fine.inner, joined=not speckled_card,
                            least_px=STUB_PX, elongation=STUB_ELONGATION)
    return fine_strokes(dark if whole else dark & fine.zone, fine.inner, joined=not speckled_card)


def _fine_stroke_reach(fine: _FineWindows, speckled_card: bool) -> np.ndarray:
    """Per target (of those ``fine`` holds; else 0): how far strokes a pen's fine line draws
    reach across the span zone, as a share of the oval's width, measured unblurred at FINE_PPI
    on the bare paper FINE_PRINT_GROW_PX or more from the blank's print. A stroke is a piece of
    added ink FINE_DARK or darker (:func:`fine_strokes`): a hesitation dot, a speck or a blot
    is no stroke. The reach is the extent of all such pieces together (a check that the ballot
    number printed inside the oval cuts in two). Where a pen's pieces do not reach FINE_REACH,
    its stubs count too (STUB_PX long, STUB_ELONGATION: a flat X run along a numbered oval's
    outline shows only stubs either side of the number and past the outline; a dot is round),
    then lighter pieces: lines of FAINT_STROKE_DARK standing above the tone round them (a hard
    pencil's check; a stain's edge or a ghost from the other side is no line)."""
    out = np.zeros(fine.n)
    for j, k in enumerate(fine.which):
        # a pen's line; its stubs between the print (a flat X along a numbered oval's outline leaves
        # only stubs either side of the number); else a light pencil's line, as far as it reaches
        for level, stubs in ((FINE_DARK, False), (FINE_DARK, True), (FAINT_STROKE_DARK, False)):
            if np.count_nonzero((fine.dark[j] >= level) & fine.zone & ~fine.printed[k]) < FINE_PIECE_PX:
                continue  # nothing so dark in the zone: no piece (the line's part of it is no darker)
            strokes = _fine_pieces(fine, j, speckled_card, dark_level=level, lines_only=level < FINE_DARK, stubs=stubs)
            if strokes:
                (_, _), (a, b), _ = cv2.minAreaRect(np.concatenate(strokes)[:, ::-1].astype(np.float32))
                out[k] = max(out[k], (max(a, b) + 1.0) / fine.width)
            if out[k] >= FINE_REACH:
                break
    return out


def _two_strokes(fine: _FineWindows, speckled_card: bool) -> np.ndarray:
    """Per target (of those ``fine`` holds; else False), whether the pen's strokes in and round
    it (:func:`fine_strokes`, anywhere in the window) hold two straight strokes that meet or
    cross in the span zone: straight pieces (:func:`_straight_pieces`; an arc's piece bends
    out of line, a V or an X joined on bare paper is no one piece either) TWO_STROKES_DEG or
    more apart in direction, whose lines cross in the zone, each running on to that crossing
    over ink or the blank's print in the zone (the target's own: a number printed inside, the
    outline, hide a stroke; a rule or a neighbour's print beside it, no); the strokes so drawn
    (:func:`_stroke_through`) one TWO_STROKES_LONG of the oval's width long or more, the other
    TWO_STROKES_SHORT (a check's short arm). Pieces down to stubs count (STUB_PX, the print cuts
    a stroke short), at FINE_DARK and, where that finds no two strokes, at STUB_DARK."""
    out = np.zeros(fine.n, bool)
    rows, cols = np.nonzero(fine.inner)
    centre = np.array([cols.mean(), rows.mean()]) if rows.size else np.array(fine.inner.shape[::-1], float) / 2.0
    for j, k in enumerate(fine.which):
        # a stroke runs on hidden under the target's own print (its outline, a number inside), not other print
        hiding = fine.printed[k] & fine.zone
        for level in (FINE_DARK, STUB_DARK):  # a pen's dark strokes; else a pencil's or a blue ballpoint's lighter ones
            segments = _straight_pieces(_fine_pieces(fine, j, speckled_card, whole=True, stubs=True, dark_level=level))
            if len(segments) < 2:
                continue
            passable = cv2.dilate(((fine.dark[j] >= level) | hiding).astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
            if _meeting_pair(np.array(segments), fine.width, fine.zone, passable) or _stubs_cross(np.array(segments), fine.width, centre):
                out[k] = True
                break
    return out


def _stubs_cross(segments: np.ndarray, width: float, centre: np.ndarray) -> bool:
    """Whether four of ``segments`` (x1, y1, x2, y2 rows), one in each quadrant round the
    target's ``centre``, are an X's arms seen only where they leave the print (a flat X drawn
    along a numbered oval's outline: the widened print hides the rest): each two in opposite
    quadrants lie symmetric about the centre (their midpoint within STUBS_CENTRE_PX of it),
    TWO_STROKES_LONG of ``width`` apart or more, each within STUBS_DEG of the line joining them
    (an arm bowed along the outline) and its own line passing within STUBS_AIM of ``width`` of
    the centre (an arm points at it; a loop drawn round the oval leaves pieces at the same
    corners that run across the diagonals, their lines far from the centre); the two lines
    TWO_STROKES_DEG or more apart."""
    mids = (segments[:, :2] + segments[:, 2:]) / 2.0
    rel = mids - centre
    quadrant = (rel[:, 0] >= 0).astype(int) + 2 * (rel[:, 1] >= 0).astype(int)  # 0 up-left, 1 up-right, 2 down-left, 3 down-right
    along = np.degrees(np.arctan2(segments[:, 3] - segments[:, 1], segments[:, 2] - segments[:, 0])) % 180.0
    unit = (segments[:, 2:] - segments[:, :2]) / np.maximum(np.hypot(*(segments[:, 2:] - segments[:, :2]).T), 1e-9)[:, None]
    to_centre = centre - segments[:, :2]
    aimed = np.abs(unit[:, 0] * to_centre[:, 1] - unit[:, 1] * to_centre[:, 0]) <= STUBS_AIM * width  # its line passes near the centre

    def apart(a: float, b: float) -> float:
        d = abs(a - b) % 180.0
        return min(d, 180.0 - d)

    lines: dict[int, list[float]] = {0: [], 1: []}  # the diagonal (0: up-left to down-right; 1: the other) -> their directions
    for a in range(len(segments)):
        for b in np.flatnonzero(quadrant == 3 - quadrant[a]):
            if quadrant[a] > quadrant[b]:
                continue
            join = mids[b] - mids[a]
            direction = float(np.degrees(np.arctan2(join[1], join[0])) % 180.0)
            if (float(np.hypot(*join)) >= TWO_STROKES_LONG * width
                    and float(np.hypot(*((mids[a] + mids[b]) / 2.0 - centre))) <= STUBS_CENTRE_PX
                    and apart(along[a], direction) <= STUBS_DEG and apart(along[b], direction) <= STUBS_DEG
                    and aimed[a] and aimed[b]):
                lines[int(quadrant[a] != 0)].append(direction)
    return any(apart(u, v) >= TWO_STROKES_DEG for u in lines[0] for v in lines[1])


def _straight_pieces(strokes: list[np.ndarray]) -> list[np.ndarray]:
    """The strokes' pieces that are straight lines (the spread across their main axis at most
    TWO_STROKES_STRAIGHT_PX), each as the segment (x1, y1, x2, y2) it covers."""
    out = []
    for pts in strokes:
        spread, _centre, start, end = _line_fit(pts[:, ::-1].astype(np.float64))
        if spread <= TWO_STROKES_STRAIGHT_PX:
            out.append(np.concatenate([start, end]))
    return out


def _line_fit(xy: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """Points (n, 2: x, y) taken as one straight line: their spread across its main axis (a
    standard deviation), their mean, and the two ends of the segment they cover along it."""
    centre = xy.mean(axis=0)
    values, vectors = np.linalg.eigh(np.cov((xy - centre).T))
    axis = vectors[:, 1]
    along = (xy - centre) @ axis
    return float(np.sqrt(max(values[0], 0.0))), centre, centre + along.min() * axis, centre + along.max() * axis


def _meeting_pair(segments: np.ndarray, width: float, zone: np.ndarray, passable: np.ndarray) -> bool:
    """Whether two of ``segments`` (x1, y1, x2, y2 rows), TWO_STROKES_DEG or more apart in
    direction, cross in ``zone`` (bool, rows x columns) as two strokes (:func:`_stroke_through`)
    TWO_STROKES_LONG and TWO_STROKES_SHORT of ``width`` long or more."""
    along = segments[:, 2:] - segments[:, :2]
    angle = np.degrees(np.arctan2(along[:, 1], along[:, 0])) % 180.0
    for i in range(len(segments)):
        apart = np.abs(angle - angle[i])
        apart = np.minimum(apart, 180.0 - apart)
        for m in np.flatnonzero((apart >= TWO_STROKES_DEG) & (np.arange(len(segments)) > i)):
            # where the two lines cross: a_i + t * d_i = a_m + u * d_m
            system = np.array([[along[i, 0], -along[m, 0]], [along[i, 1], -along[m, 1]]])
            t, _u = np.linalg.solve(system, segments[m, :2] - segments[i, :2])
            cross = segments[i, :2] + t * along[i]
            x, y = int(round(cross[0])), int(round(cross[1]))
            if not (0 <= y < zone.shape[0] and 0 <= x < zone.shape[1] and zone[y, x]):
                continue
            lengths = sorted(_stroke_through(segments, int(e), cross, passable) for e in (i, m))
            if lengths[1] >= TWO_STROKES_LONG * width and lengths[0] >= TWO_STROKES_SHORT * width:
                return True
    return False


def _stroke_through(segments: np.ndarray, e: int, cross: np.ndarray, passable: np.ndarray) -> float:
    """The length of the stroke that segment ``e`` draws through the point ``cross`` (x, y):
    the segments on its line (within TWO_STROKES_ALIGN_DEG of its direction, their lines passing
    within TWO_STROKES_ALIGN_PX of ``cross``, more as far as that angle allows over their gap)
    that run on to ``cross`` over ``passable`` pixels (:func:`_runs_over`), their reach from
    it on either side added; 0 where segment ``e`` itself does not run on to it."""
    d = segments[e, 2:] - segments[e, :2]
    d = d / np.hypot(*d)
    reach = {1: 0.0, -1: 0.0}
    for s in range(len(segments)):
        a, b = segments[s, :2], segments[s, 2:]
        if s != e:  # on the stroke: as steep, its line passing the crossing (a short piece's direction is off a few degrees)
            ds = (b - a) / max(float(np.hypot(*(b - a))), 1e-9)
            off = abs(float((cross - a) @ np.array([-ds[1], ds[0]])))
            gap = min(float(np.hypot(*(a - cross))), float(np.hypot(*(b - cross))))
            slack = TWO_STROKES_ALIGN_PX + gap * np.tan(np.radians(TWO_STROKES_ALIGN_DEG))
            if abs(float(ds @ d)) < np.cos(np.radians(TWO_STROKES_ALIGN_DEG)) or off > slack:
                continue
        pa, pb = float((a - cross) @ d), float((b - cross) @ d)
        if pa * pb > 0:  # on one side of the crossing: it must run on to it
            near = a if abs(pa) < abs(pb) else b
            if not _runs_over(near, cross, passable):
                if s == e:
                    return 0.0
                continue
        for p in (pa, pb):
            side = 1 if p > 0 else -1
            reach[side] = max(reach[side], abs(p))
    return reach[1] + reach[-1]


def _runs_over(start: np.ndarray, end: np.ndarray, passable: np.ndarray) -> bool:
    """Whether the straight path from ``start`` to ``end`` (x, y) lies over ``passable``
    pixels, TWO_STROKES_PASS of its samples (a pixel apart) at least."""
    steps = int(np.ceil(np.hypot(*(end - start)))) + 1
    xs = np.round(np.linspace(start[0], end[0], steps)).astype(int).clip(0, passable.shape[1] - 1)
    ys = np.round(np.linspace(start[1], end[1], steps)).astype(int).clip(0, passable.shape[0] - 1)
    return float(passable[ys, xs].mean()) >= TWO_STROKES_PASS


def fine_strokes(dark: np.ndarray, inner: np.ndarray, *, joined: bool = True, least_px: int = FINE_PIECE_PX,
                 elongation: float = FINE_ELONGATION) -> list[np.ndarray]:
    """The pieces of ``dark`` (added ink at FINE_PPI) that are a pen's stroke, each as its
    (row, column) points: at least FINE_PIECE_PX long and FINE_ELONGATION times as long as its
    mean width, or FINE_LONG_PIECE_PX long and FINE_LONG_ELONGATION times (a ballpoint's
    stroke four pixels wide that the print cuts into short pieces); a piece outside ``inner``
    (the target's interior) within FINE_SQUARE_DEG of level or upright is a printed rule's
    edge. ``joined``: pieces a pixel apart are one (a thresholded line's breaks; not on a
    speckled card, whose specks a pixel apart are no line)."""
    if np.count_nonzero(dark) < least_px:
        return []
    grown = cv2.dilate(dark.astype(np.uint8), np.ones((3, 3), np.uint8)) if joined else dark.astype(np.uint8)
    _, labels, stats, _ = cv2.connectedComponentsWithStats(grown, connectivity=8)
    labels = np.where(dark, labels, 0)
    strokes = []
    for lab in np.flatnonzero(stats[1:, cv2.CC_STAT_AREA] >= least_px) + 1:  # a piece has fewer pixels than its joined area
        pts = np.argwhere(labels == lab)
        if len(pts) < least_px:
            continue
        (_, _), (a, b), angle = cv2.minAreaRect(pts[:, ::-1].astype(np.float32))
        length = max(a, b) + 1.0
        needed = min(elongation, FINE_LONG_ELONGATION) if length >= FINE_LONG_PIECE_PX else elongation
        if length < least_px or length * length < needed * len(pts):
            continue
        if min(angle % 90.0, 90.0 - angle % 90.0) < FINE_SQUARE_DEG and not inner[pts[:, 0], pts[:, 1]].any():
            continue  # level or upright beside the oval: a printed rule's edge the blank shows a pixel off
        strokes.append(pts)
    return strokes


def _taken_away_x(ink: np.ndarray, geo: _Geometry) -> np.ndarray:
    """Per target: whether its added ink shows an X's crossing and its four arms' ends
    (X_INK, X_CENTRE, X_OUT, X_DEG) and little else (X_SPARSE: a stain's tone is all over)."""
    n, ch, cw = ink.shape
    rows, cols = np.nonzero(geo.inside)
    cy, cx = rows.mean(), cols.mean()
    a, b = geo.axes_px[0] / 2.0, geo.axes_px[1] / 2.0
    yy, xx = np.mgrid[0:ch, 0:cw]
    u, v = (xx - cx) / a, (yy - cy) / b  # in half-axes of the oval
    radius = np.hypot(u, v)
    quadrant = (u >= 0).astype(int) + 2 * (v >= 0).astype(int)  # 0 up-left, 1 up-right, 2 down-left, 3 down-right
    angle = np.degrees(np.arctan2(v, u))
    within = np.count_nonzero(radius <= X_REACH)
    out = np.zeros(n, bool)
    for k in range(n):
        seen = (ink[k] >= X_INK) & (radius <= X_REACH)  # over the print too: ink there is what the card adds to it
        if not ((ink[k] >= DARK) & (radius <= X_CENTRE)).any() or np.count_nonzero(seen) > X_SPARSE * within:
            continue
        ends = []
        for q in range(4):
            arm = seen & (quadrant == q) & (radius >= X_OUT)
            if np.count_nonzero(arm) < X_MIN_PX:
                break
            ends.append(float(np.degrees(np.arctan2(np.sin(np.radians(angle[arm])).mean(), np.cos(np.radians(angle[arm])).mean()))))
        else:
            opposite = [abs(((ends[i] - ends[3 - i]) % 360.0) - 180.0) for i in (0, 1)]
            out[k] = max(opposite) <= X_DEG
    return out


def _taken_away_line(ink: np.ndarray, geo: _Geometry) -> np.ndarray:
    """Per target: whether its added ink (X_INK, within X_REACH of the oval's half-axes, over
    print or paper) lies along one straight line (LINE_SPREAD_PX from it, a standard deviation)
    LINE_LONG of the oval's height long or longer, through the oval (its middle within
    LINE_THROUGH of the half-axes; half of LINE_LONG of its pixels inside it) and out past its
    outline (an end beyond them), LINE_PEN dark somewhere, with little ink else (X_SPARSE)."""
    n, ch, cw = ink.shape
    rows, cols = np.nonzero(geo.inside)
    cy, cx = rows.mean(), cols.mean()
    a, b = geo.axes_px[0] / 2.0, geo.axes_px[1] / 2.0
    yy, xx = np.mgrid[0:ch, 0:cw]
    radius = np.hypot((xx - cx) / a, (yy - cy) / b)
    reach = radius <= X_REACH
    within = np.count_nonzero(reach)
    long_px = LINE_LONG * geo.axes_px[1]
    out = np.zeros(n, bool)
    for k in range(n):
        seen = (ink[k] >= X_INK) & reach
        ys, xs = np.nonzero(seen)
        if (len(xs) < long_px or len(xs) > X_SPARSE * within or float(ink[k][seen].max()) < LINE_PEN
                or np.count_nonzero(seen & (radius <= 1.0)) < long_px / 2):
            continue  # too little, too much, too light, or not in the oval (print beside it, thicker)
        spread, middle, start, end = _line_fit(np.stack([xs, ys], axis=1).astype(np.float64))
        if spread > LINE_SPREAD_PX or float(np.hypot(*(end - start))) < long_px:
            continue
        far = [float(np.hypot((x - cx) / a, (y - cy) / b)) for x, y in (middle, start, end)]
        out[k] = far[0] <= LINE_THROUGH and max(far[1:]) > 1.0
    return out


def _leaves_outline(ink: np.ndarray, printed: np.ndarray, geo: _Geometry) -> np.ndarray:
    """Per target: added ink (DARK or darker, on the blank's paper) joined to the target's own
    printed outline that reaches LEAVE_AWAY_PX or more from any print outside the oval,
    LEAVE_MIN_PX pixels of it at least (a stroke, not the fringe a thicker scan leaves along the
    print, nor a dot just inside the oval touching that fringe)."""
    n, ch, cw = ink.shape
    m = int(round(MARGIN_IN * CANON_PPI))  # the window's margin around the box (marks._geometry)
    off = m - SEARCH_PX  # the box's origin in the crop
    bh, bw = geo.shape[0] - 2 * m, geo.shape[1] - 2 * m
    g = LEAVE_BOX_GROW_PX
    own = np.zeros((ch, cw), bool)  # the target's own print: its outline (and what it prints inside)
    own[max(0, off - g): off + bh + g, max(0, off - g): off + bw + g] = True
    out = np.zeros(n, bool)
    for k in range(n):
        dark = (ink[k] >= DARK) & ~printed[k]
        if dark.sum() < LEAVE_MIN_PX:
            continue
        paper = (~printed[k]).astype(np.uint8)
        away = cv2.distanceTransform(paper, cv2.DIST_L2, 3) >= LEAVE_AWAY_PX
        outline = cv2.dilate((printed[k] & own).astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)  # its edge's blur too
        count, labels = cv2.connectedComponents((dark | outline).astype(np.uint8), connectivity=8)
        on_outline = np.bincount(labels[outline], minlength=count) > 0
        far = np.bincount(labels[dark & away & ~geo.inside], minlength=count)
        out[k] = bool((on_outline[1:] & (far[1:] >= LEAVE_MIN_PX)).any())
    return out


def _reduced(image: np.ndarray, hom: np.ndarray, least_ppi: float = CROSS_SOURCE_PPI) -> tuple[np.ndarray, np.ndarray]:
    """``image`` area-reduced by the whole factor that keeps at least ``least_ppi`` (a
    dithered scan's dots averaged, OpenCV's fast path) and ``hom`` (inches -> its pixels) to match."""
    scale = float(np.sqrt(abs(np.linalg.det(hom[:2, :2]))))  # pixels per inch (the perspective part is tiny)
    k = int(scale // least_ppi) if scale > 0 else 1
    h, w = image.shape[:2]
    if k < 2 or h < 2 * k or w < 2 * k:
        return image, hom
    small = cv2.resize(image[: h // k * k, : w // k * k], (w // k, h // k), interpolation=cv2.INTER_AREA)
    to_small = np.array([[1 / k, 0, 0.5 / k - 0.5], [0, 1 / k, 0.5 / k - 0.5], [0, 0, 1]])
    return small, to_small @ hom


def _darkness(win: np.ndarray, geo: _Geometry) -> tuple[np.ndarray, np.ndarray]:
    """Blurred windows and their darkness ``1 - gray / paper`` (per-window paper level)."""
    n = len(win)
    win = cv2.GaussianBlur(win.reshape(n * geo.shape[0], geo.shape[1]), (0, 0), BLUR_SIGMA_PX).reshape(win.shape)
    paper = _paper(win)
    return win, np.clip(1.0 - win / paper[:, None, None], 0.0, 1.0)


def _best_shifts(card: np.ndarray, blank: np.ndarray, geo: _Geometry) -> tuple[np.ndarray, np.ndarray]:
    """Integer (dx, dy) per window that best lays the card's window on the blank's (of near
    ties, the smallest)."""
    r0, r1, c0, c1 = geo.match
    s = SEARCH_PX
    yy, xx = np.mgrid[-s:s + 1, -s:s + 1]
    penalty = SHIFT_PRIOR * (xx**2 + yy**2) / float(s**2)
    dx, dy = np.zeros(len(card), int), np.zeros(len(card), int)
    for k in range(len(card)):
        template = blank[k, s + r0: s + r1, s + c0: s + c1]
        if float(template.std()) < 0.02:
            continue  # nothing printed to align on
        region = card[k, r0: r1 + 2 * s, c0: c1 + 2 * s]
        corr = cv2.matchTemplate(region, template - template.mean(), cv2.TM_CCORR)
        top = float(corr.max())
        if not top > 1e-6:
            continue
        fit = (corr - penalty * top) / top
        # shifts scoring within SHIFT_TIE of the best are a tie (a voter's mark tips it either
        # way): the one nearest no shift wins, so a hair of registration cannot move the window
        key = np.where(fit >= fit.max() - SHIFT_TIE, (xx**2 + yy**2) - 0.01 * fit, np.inf)
        iy, ix = np.unravel_index(int(np.argmin(key)), corr.shape)
        dx[k], dy[k] = ix - s, iy - s
    return dx, dy


def _ring_where_paper(flat: np.ndarray, printed: np.ndarray, geo: _Geometry) -> np.ndarray:
    """The share of the ring's sectors crossed by a stroke, among the sectors the blank leaves
    as paper (a printed name beside the target hides the loop there: those sectors abstain)."""
    idx, starts, sizes = geo.ring
    hits = np.add.reduceat((flat[:, idx] >= RING_STROKE).astype(np.int32), starts, axis=1)
    covered = np.add.reduceat(printed[:, idx].astype(np.int32), starts, axis=1) / np.maximum(sizes, 1)
    open_ = (covered < 0.5) & (sizes > 0)  # an empty sector (a target a few pixels tall) abstains
    crossed = (hits >= RING_NEED_PX) & open_
    count = open_.sum(axis=1)
    return np.where(count >= RING_MIN_OPEN, crossed.sum(axis=1) / np.maximum(count, 1), 0.0)


def _paper_edge(printed: np.ndarray, paper: np.ndarray, geo: _Geometry) -> np.ndarray:
    """Per target, the interior's bare-paper pixels within two pixels of the blank's print (the
    inner rim of the outline): a fill reaches them, a mark in the middle does not."""
    n = len(printed)
    shape = printed.shape[1:]
    near = cv2.dilate(printed.reshape(n * shape[0], shape[1]).astype(np.uint8), np.ones((5, 5), np.uint8))
    near = near.reshape(n, -1)[:, geo.interior].astype(bool)
    return near & paper


def _paper_tone(aligned: np.ndarray, printed: np.ndarray, darkest: np.ndarray, residue: np.ndarray, even: np.ndarray,
                geo: _Geometry) -> np.ndarray:
    """Per target, the tone of the paper round it that its inside shows and nothing darker (a
    stain's wash or the rim of its ring running on through the oval), else 0. Round it: on the
    box grown by marks.NEAR_GROW_IN, off the oval and the blank's print. The tone is the
    STAIN_TONE_Q quantile of the darkness there with lines narrower than STAIN_LIFT_PX lifted
    off (a check's tail, an X's arm: no stain); taken where it is at most STAIN_TONE_MAX,
    neither the inside (``darkest``: its STAIN_TONE_INK_Q quantile) nor the paper round it
    (its STAIN_TONE_INK_Q quantile, lines and all) holds ink darker than that, the residue is
    no darker than the darkest of the lifted paper round it (its STAIN_TONE_TOP_Q quantile: a
    rim through the middle of the oval is as dark inside as where it crosses the paper round
    it), and the inside is not as dark evenly all over (the even fill under STAIN_UNEVEN of the
    residue: a light pencil's fill next to a rim as dark is)."""
    n, h, w = aligned.shape
    near = geo.near.ravel()
    lifted = cv2.erode(aligned.reshape(n * h, w), np.ones((STAIN_LIFT_PX, STAIN_LIFT_PX), np.uint8)).reshape(n, -1)
    paper = ~printed.reshape(n, -1)[:, near]
    tone = _quantile_where(lifted[:, near], paper, STAIN_TONE_Q)
    top = _quantile_where(lifted[:, near], paper, STAIN_TONE_TOP_Q)
    ink_round = _quantile_where(aligned.reshape(n, -1)[:, near], paper, STAIN_TONE_INK_Q)
    stain_like = ((tone <= STAIN_TONE_MAX) & (ink_round <= STAIN_TONE_MAX) & (darkest <= STAIN_TONE_MAX)
                  & (residue <= top) & (even < STAIN_UNEVEN * residue))
    return np.where(stain_like, tone, 0.0)


def _quantile_where(values: np.ndarray, where: np.ndarray, q: float) -> np.ndarray:
    """Per row, the ``q`` quantile of ``values`` where ``where`` holds (0 where it never does)."""
    out = np.zeros(len(values))
    for k in range(len(values)):
        chosen = values[k, where[k]]
        if chosen.size:
            j = int(q * (chosen.size - 1))
            out[k] = float(np.partition(chosen, j)[j])
    return out


def _tear_against_blank(aligned: np.ndarray, blank: np.ndarray) -> np.ndarray:
    """Share of the blank's solid print in the window that the card shows as bare paper."""
    n = len(blank)
    solid = cv2.erode(blank.reshape(n * blank.shape[1], -1), np.ones((3, 3), np.uint8)).reshape(blank.shape) >= SOLID_PRINT
    count = solid.reshape(n, -1).sum(axis=1)
    missing = ((aligned < TORN_PAPER) & solid).reshape(n, -1).sum(axis=1)
    share = np.where(count >= 10, missing / np.maximum(count, 1), 0.0)
    return np.clip((share - TEAR_FLOOR) / TEAR_SPAN, 0.0, 1.0)


def _name_rings_against_blank(gray: np.ndarray, hom: np.ndarray, reference: np.ndarray, ref_hom: np.ndarray,
                              targets: list[TargetDef], tints_black: bool = False) -> np.ndarray:
    """Ink (beyond the blank's print) both above and below the option's printed name; where
    the card prints the blank's light tints and grey rules black (``tints_black``: a bilevel
    scan of a grey blank), the card's darkness on any of the blank's print is the print's;
    on any card, a light rule printed black on this row (RULED_SHARE) is."""
    out = np.zeros(len(targets))
    band = name_band(targets)
    if band is None:
        return out
    card, _ = _windows(gray, hom, band.origins, band.sizes, band.shape, SIDE_PPI)
    blank, _ = _windows(reference, ref_hom, band.origins, band.sizes, band.shape, SIDE_PPI)
    card_dark = 1.0 - card / _paper(card)[:, None, None]
    blank_dark = 1.0 - blank / _paper(blank)[:, None, None]
    near = cv2.dilate(blank_dark.reshape(len(band.idx) * band.shape[0], band.shape[1]), np.ones((5, 5), np.uint8)).reshape(blank_dark.shape)
    dark = np.where(near >= BLANK_NOISE, 0.0, card_dark - near) if tints_black else card_dark - near
    # a thresholded scan prints a light grey rule black on one row of options and leaves it
    # out on the next: a row of the window dark across RULED_SHARE of its width where the
    # blank prints light print is that rule (and the rows beside it), not a loop's arc
    light = (blank_dark >= LIGHT_PRINT[0]) & (blank_dark < LIGHT_PRINT[1])
    ruled = ((card_dark >= RING_STROKE).mean(axis=2) >= RULED_SHARE) & light.any(axis=2)
    ruled[:, 1:] |= ruled[:, :-1].copy()  # and the rows beside it (not wrapping round the window)
    ruled[:, :-1] |= ruled[:, 1:].copy()
    dark[ruled] = 0.0
    out[band.idx] = band.ring_cover(dark)
    return out
