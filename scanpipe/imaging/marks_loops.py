"""A loop drawn around an option's printed name, found against the blank (contract §7: a
circled target *or name* is for a person).

The name's place is not in the layout (it gives target boxes only) and vendors print it on
either side of the target: right of an oval or box, left of an arrow. So the card's ink that
the blank does not print is looked at across the whole page, at LOOP_PPI:

1. The card's print beyond the blank's (the blank widened a little for the registration's
   error), target boxes and write-in areas left out, and nothing within RULE_NEAR_PX of the
   blank's rules (straight runs of print RULE_MIN_IN long: a scan printing a rule thicker
   rims it with "drawn" ink, which would join a loop touching it into one long piece along
   the print): what a voter drew away from the targets. The card is sampled with its print
   widened a pixel (a pen stroke finer than the raster's spacing is not missed); where what
   that leaves is mostly specks (CHECK_SPECKS_IN2: a dithered bilevel scan, whose dots of a
   shade or a pencil's gray the widening joins into print and whose loops it breaks into
   specks), the card is also sampled averaged over the raster's pixel and, where that is
   clean, looked at so as well, checks too, the higher score kept (a light pencil's loop
   averaged may fall under LOOP_STROKE where its widened dots still show it; the fifth
   renderer's dithered cards: a circled name and checks beside names and over arrows' tails
   read as no vote on seeds 3232, 3333 and 3434).
2. Each connected piece of it the size of a loop around a name is a **loop** when it runs
   along at least three of its bounding box's four sides (an underline, a crossing line, an
   X or a check does not), encloses the blank's print (a name), holds little drawn ink
   inside (a loop drawn round twice crosses its round ends; a stamp's words or a signature
   hold more) and runs mostly through paper, not along the print
   (a scan printing every stroke thicker than its blank rims a printed bar with "drawn" ink).
   Its score is the third-best side's coverage: the share of the box's columns (top,
   bottom) or rows (left, right) its ink reaches there; one side, or both ends (left and
   right: a loop drawn tight along the name crosses its first and last letters), may count
   the print it runs over as loop hidden there. A piece that is not surely a loop alone
   (under 1) is also taken together with the pieces whose boxes overlap its own, the better
   score kept (a loop the print cuts in two where it runs along tall letters).
3. The loop belongs to the target on its row on the names' side: the side of its targets on
   which the page prints a glyph right beside most of them (within NAME_BESIDE_IN, not
   touching the box), learned once per blank. Where the page shows neither side (a broken
   arrow has print on both: its tail and its head), the nearest target on each side of the
   loop is given it: a person then sees both.

A **check beside** an option (a check, a tick or an X drawn after its name or over an arrow's
tail, outside the target: a careful person may see a vote there) is a drawn piece CHECK_IN in
size whose own pixels, where the print does not hide them, spread across their main direction
(a straight stray line does not: section 7 reads it as no vote), fill no more than a blot
would, do not run into a target's box (a target's own mark run over its edge) and stand alone
(CHECK_CLEAR_IN: a fragment of a stamp's letters or a signature has others round it); not looked
for on a card whose drawn ink is mostly specks however it is sampled (CHECK_SPECKS_IN2:
speckled stock, whose specks join into any shape). A check drawn over the target's own print (an
arrow's tail) leaves only what the print does not hide: the end of an arm above the tail, a
stub below, nearly straight at LOOP_PPI (the fifth renderer's "check beside" arrows, 9 of 47
read as no vote on seeds 2828 and 3030). A piece of a check's size that meets the print (it runs
on under it) yet lies mostly off it, CUT_CHECK_MIN_PX or more, alone, not into a box, beside a
target on its row (within CHECK_NEAR_IN) on the side away from the names (an arrow's tail; a line
struck through a name meets the name's print on the other side) is therefore a check too,
however straight what is left of it. It belongs to the target on its row within CHECK_NEAR_IN on either side, else as a loop
does; it scores 1.

The score joins the target's ``ring_score`` (a circled target): the calibration's ``ring``
threshold sends it to a person unless the target itself is filled. Pure: arrays in, scores out.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from scanpipe.imaging.reference import component_boxes, cut_off, largest_hole, paper_level, reduce_to, warp_in_tiles
from scanpipe.types import TargetDef

LOOP_PPI = 75.0  # the page looked at this finely (a pen stroke survives: the card's print is widened a pixel first)
LOOP_STROKE = 0.3  # darkness beyond the blank's that is a drawn stroke
TILE_TOLERANCE_PX = 0.5  # the card warped an affine map per tile where it misses the homography by at most this (card px) ...
TILE_PX = 256  # ... in tiles of this side (raster px)
BLANK_PRINT = 0.35  # the blank's darkness that is print (widened NEAR_PX for the registration's error)
NEAR_PX = 1  # at LOOP_PPI: 0.013 in
TARGET_CLEAR_IN = 0.03  # target boxes grown by this are left out (the marks themselves)
JOIN_PX = 5  # drawn pieces within this (less one) pixels are one drawing
LOOP_MIN_IN = (0.15, 0.1)  # a loop's bounding box: at least this wide and tall ...
LOOP_MAX_IN = (3.5, 0.8)  # ... and at most this (a stamp's frame is larger)
LOOP_MAX_HUG = 0.5  # a loop runs mostly through paper: at most this share of it within HUG_PX of the blank's print
HUG_PX = 2  # at LOOP_PPI: 0.027 in
RULE_MIN_IN = 0.75  # the blank's print in straight runs this long (a contest's rules, a box's sides; not a glyph, not an arrow) ...
RULE_NEAR_PX = 2  # ... clears the card's drawn ink this close (at LOOP_PPI): a scan's thicker rule is not a stroke, nor joins a loop to itself
SIDE_BAND = 0.3  # the share of the box's height (width) that makes its top or bottom (left or right) band ...
SIDE_BAND_MAX_IN = 0.15  # ... at most this wide
INNER_COLS = 0.8  # top and bottom coverage counted over this middle share of the columns ...
INNER_ROWS = 0.5  # ... left and right over this of the rows (a loop's ends are round)
ENCLOSED_PRINT = 0.03  # the blank prints on at least this share of the loop's inside ...
ENCLOSED_DRAWN = 0.12  # ... and the card adds ink on at most this share of it
HOLE_SHARE = 0.5  # a closed loop the inside refuses is judged again on the inside less its stroke where its hole fills this share of it
BRIDGE_PX = 4  # ... a loop broken over print closed there: the print this near its stroke counts as stroke ...
PRINT_WIDE_PX = 2  # ... the print widened this much (as the card's ink is left out round it: NEAR_PX and a blur's fringe) ...
WALLED_SHARE = 0.8  # ... and what it then encloses bordered by its stroke this much at least
ROW_SLACK_IN = 0.05  # a target is on the loop's row when its centre lies within the loop's rows, this grown
NAME_REACH_IN = 2.0  # a loop belongs to a target at most this far from it
NAME_BESIDE_IN = 0.25  # a page's names begin (or end) this close to most of its targets ...
BESIDE_MIN_IN = 0.03  # ... and not closer (print touching the box is the target's own)
CHECK_IN = (0.08, 0.4)  # a check drawn beside an option: its bounding box's sides within these ...
CHECK_BEND = 0.3  # ... its pixels spread across their main direction at least this share of along it (a line: far less) ...
CHECK_OWN_MIN_IN = 0.04  # ... its own pixels (where print does not hide them) this far each way at least ...
CHECK_MAX_FILL = 0.65  # ... filling at most this share of their box (a dot, a blot, a smudge: more) ...
CHECK_MIN_PX = 12  # ... and this many pixels at least ...
CUT_CHECK_MIN_PX = 10  # a check the target's own print cuts (over an arrow's tail): what is left of it, this many pixels at least
CHECK_MAX_PARTS = 3  # ... in at most this many connected parts (print may cut a stroke), ...
CHECK_MAIN_PART = 0.5  # ... the largest holding this share of them at least
CHECK_SPECKS_IN2 = 3.0  # checks are looked for only on a card with at most this many drawn specks a square inch ...
SPECK_MAX_PX = 2  # ... pieces of this many pixels or fewer (a clean scan shows a fraction of one)
CHECK_CLEAR_IN = 0.15  # a check stands alone: within this of it ...
CHECK_CLEAR_SHARE = 0.2  # ... other drawn ink at most this share of its own
CHECK_NEAR_IN = 0.15  # a check this close to a target on its row, either side, is that target's
GLYPH_IN = (0.03, 0.3)  # a glyph's (a word's) height; at most GLYPH_MAX_W_IN wide
GLYPH_MAX_W_IN = 1.5


def name_loops(gray: np.ndarray, hom: np.ndarray, reference: np.ndarray, ref_dpi: float, targets: Sequence[TargetDef],
               blank_memo: dict[tuple[object, ...], object]) -> np.ndarray:
    """Per target, the score of a loop drawn around its printed name (0 where none);
    ``gray`` the upright card, ``hom`` layout inches -> its pixels; ``reference`` the blank at
    ``ref_dpi``; ``blank_memo`` keeps what is measured of the blank alone."""
    out = np.zeros(len(targets))
    named = [i for i, t in enumerate(targets) if t.write_in_area_in is None]
    if not named:
        return out
    every = range(len(targets))
    learned = _learned(reference, ref_dpi, targets, blank_memo)
    blank_dark, blank_near, beside_print, near_rules, side, upright_rules = learned
    h, w = blank_dark.shape
    to_px = np.array([[1.0, 0.0, -0.5], [0.0, 1.0, -0.5], [0.0, 0.0, 1.0]]) @ hom @ _loop_to_inches()
    left_out = _left_out(targets, (h, w))
    # the card's print widened a pixel, so a pen stroke finer than a sample's spacing is sampled
    widened = _drawn(_warp(cv2.erode(gray, np.ones((3, 3), np.uint8)), to_px, (w, h)), blank_near, left_out, near_rules)
    # a speckled or dithered scan's specks join into any shape: checks are looked for only on a clean one
    clean = _specks_per_in2(widened) <= CHECK_SPECKS_IN2
    drawings = [(widened, clean)]
    if not clean:
        # a dithered scan (or speckled stock): widened, its dots of a shade or a pencil's gray join
        # into print and break a loop into specks; averaged over the raster's pixel, a shade is
        # its gray again and a drawn line a line (a light pencil's loop may fall under
        # LOOP_STROKE so, where the widened dots still show it: both are looked at)
        px_per_in = float(np.sqrt(abs(np.linalg.det(hom[:2, :2]))))
        small = reduce_to(gray, px_per_in, LOOP_PPI)
        to_small = np.diag([small.shape[1] / gray.shape[1], small.shape[0] / gray.shape[0], 1.0]) @ to_px
        averaged = _drawn(_warp(small, to_small, (w, h)), blank_near, left_out, near_rules)
        if _specks_per_in2(averaged) <= CHECK_SPECKS_IN2:
            drawings.append((averaged, True))
    # drawn ink reaching a target's box is that target's own mark run over its edge, not one beside it
    at_targets = cv2.dilate(left_out.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    boxes = np.array([t.box_in for t in targets], np.float64) * LOOP_PPI
    lo, hi = np.array(LOOP_MIN_IN) * LOOP_PPI, np.array(LOOP_MAX_IN) * LOOP_PPI
    check_lo, check_hi = CHECK_IN[0] * LOOP_PPI, CHECK_IN[1] * LOOP_PPI
    for drawn, looks_for_checks in drawings:
        # pieces this close are one drawing: a loop is broken where it grazes print (taken out with it)
        found = component_boxes(cv2.dilate(drawn, np.ones((JOIN_PX, JOIN_PX), np.uint8)))
        if found is None:
            continue
        labels, table = found[0], found[1]
        for k, x, y, bw, bh in table.tolist():
            loop_sized = lo[0] <= bw <= hi[0] and lo[1] <= bh <= hi[1]
            check_sized = check_lo <= bw <= check_hi and check_lo <= bh <= check_hi
            if not (loop_sized or check_sized):
                continue
            at: tuple[int, int, int, int] = (x, y, bw, bh)
            score = _loop_at(drawn, labels, (k,), at, blank_dark, beside_print) if loop_sized else 0.0
            if loop_sized and score < 1.0:
                # a loop the print broke in two (it crosses a letter): with the pieces whose boxes
                # overlap its box, taken together (the piece alone may be some of it)
                joined = _overlapping(table, k, at)
                if joined is not None and lo[0] <= joined[1][2] <= hi[0] and lo[1] <= joined[1][3] <= hi[1]:
                    together = _loop_at(drawn, labels, *joined, blank_dark, beside_print)
                    score, at = (together, joined[1]) if together > score else (score, at)
            check = False
            if score <= 0.0 and check_sized and looks_for_checks:
                own = (labels[y: y + bh, x: x + bw] == k) & drawn[y: y + bh, x: x + bw].astype(bool)
                hugs, size = int(np.count_nonzero(own & beside_print[y: y + bh, x: x + bw])), int(np.count_nonzero(own))
                cut = 0 < hugs and size >= CUT_CHECK_MIN_PX and _beside_a_target(boxes, every, at, side)  # the rest under the print
                check = (hugs <= LOOP_MAX_HUG * size  # not the print's own rim
                         and not (own & at_targets[y: y + bh, x: x + bw]).any() and (_check_like(own) or cut)
                         and _alone(drawn, labels, k, at, beside_print))
            if check:
                score = 1.0  # a check (or an X, a tick) drawn beside the option, outside its target
            if score <= 0.0:
                continue
            # a check may be a write-in's too, beside its target away from the names (its area,
            # where the name is written, is never looked at): a loop only round a printed name
            owners = (_owners(boxes, every, at, side, near_in=CHECK_NEAR_IN, rules=upright_rules) if check
                      else _owners(boxes, named, at, side, rules=upright_rules))
            for i in owners:
                if i in named or _beside_a_target(boxes, (i,), at, side):
                    out[i] = max(out[i], score)
    return out


def _beside_a_target(boxes: np.ndarray, named: Sequence[int], at: tuple[int, int, int, int], side: str) -> bool:
    """Whether a drawn piece (``at``, raster px) lies beside a target on its row, within
    CHECK_NEAR_IN of its box, on the side away from the names (``side``: where they stand; an
    arrow's tail, away from the head that points to the name): a line struck through a name
    meets the name's print beside the target too, on the names' side."""
    if side not in ("left", "right"):
        return False
    x, y, w, h = at
    slack = ROW_SLACK_IN * LOOP_PPI
    for i in named:
        bx, by, bw, bh = boxes[i]
        away = x + w / 2 < bx + bw / 2 if side == "right" else x + w / 2 > bx + bw / 2
        if away and y - slack <= by + bh / 2 <= y + h + slack and max(0.0, bx - (x + w), x - (bx + bw)) <= CHECK_NEAR_IN * LOOP_PPI:
            return True
    return False


def _loop_at(drawn: np.ndarray, labels: np.ndarray, ks: Sequence[int], box: tuple[int, int, int, int],
             blank_dark: np.ndarray, beside_print: np.ndarray) -> float:
    """The loop score (:func:`_loop_score`) of drawn pieces ``ks`` taken as one in ``box``
    (raster px); 0 where most of them runs along the print (the print itself, thicker in this
    scan: a darker threshold)."""
    x, y, bw, bh = box
    piece = drawn[y: y + bh, x: x + bw].astype(bool)
    own = np.isin(labels[y: y + bh, x: x + bw], ks) & piece
    if (own & beside_print[y: y + bh, x: x + bw]).sum() > LOOP_MAX_HUG * own.sum():
        return 0.0
    return _loop_score(own, blank_dark[y: y + bh, x: x + bw] >= BLANK_PRINT, piece)


def _overlapping(table: np.ndarray, k: int, box: tuple[int, int, int, int]) -> tuple[tuple[int, ...], tuple[int, int, int, int]] | None:
    """Piece ``k`` with every other piece whose box overlaps its ``box`` (raster px; ``table``:
    :func:`~scanpipe.imaging.reference.component_boxes`' rows), and the box of them all; None
    where no other overlaps."""
    x, y, bw, bh = box
    j, jx, jy, jw, jh = table.T
    hit = table[(j != k) & (jx < x + bw) & (x < jx + jw) & (jy < y + bh) & (y < jy + jh)]
    if len(hit) == 0:
        return None
    x0, y0 = min(x, int(hit[:, 1].min())), min(y, int(hit[:, 2].min()))
    x1, y1 = max(x + bw, int((hit[:, 1] + hit[:, 3]).max())), max(y + bh, int((hit[:, 2] + hit[:, 4]).max()))
    return (k, *(int(v) for v in hit[:, 0])), (x0, y0, x1 - x0, y1 - y0)


def _drawn(card: np.ndarray, blank_near: np.ndarray, left_out: np.ndarray, near_rules: np.ndarray) -> np.ndarray:
    """What the voter drew (uint8), ``card`` sampled at LOOP_PPI: its darkness LOOP_STROKE
    beyond the blank's (``blank_near``), neither on a target (``left_out``) nor near a rule
    (``near_rules``: a rule printed thicker, or a little off, in this scan)."""
    dark = np.clip(1.0 - card.astype(np.float32) / paper_level(card), 0.0, 1.0)
    drawn = (dark - blank_near >= LOOP_STROKE).astype(np.uint8)
    drawn[left_out] = 0
    drawn[near_rules] = 0
    return drawn


def _warp(gray: np.ndarray, to_px: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The card sampled at LOOP_PPI (``to_px``: raster px -> card px): by one affine map where
    the homography's is within TILE_TOLERANCE_PX of it at the page's fourth corner (a scan),
    else an affine map per tile (:func:`~scanpipe.imaging.reference.warp_in_tiles`)."""
    w, h = size
    corners = np.array([[0, 0], [w - 1, 0], [0, h - 1], [w - 1, h - 1]], np.float64).reshape(-1, 1, 2)
    there = cv2.perspectiveTransform(corners, to_px).reshape(-1, 2)
    if float(np.abs(there[1] + there[2] - there[0] - there[3]).max()) > TILE_TOLERANCE_PX:
        return warp_in_tiles(gray, to_px, size, border_value=255, tolerance_px=TILE_TOLERANCE_PX, tile_px=TILE_PX)
    affine = cv2.getAffineTransform(corners.reshape(-1, 2)[:3].astype(np.float32), there[:3].astype(np.float32))
    return cv2.warpAffine(gray, affine, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderValue=255)


def _loop_to_inches() -> np.ndarray:
    """Loop-raster pixels (col, row) -> layout inches (pixel centres)."""
    s = 1.0 / LOOP_PPI
    return np.array([[s, 0.0, 0.5 * s], [0.0, s, 0.5 * s], [0.0, 0.0, 1.0]])


def no_name_right(reference: np.ndarray, ref_dpi: float, targets: Sequence[TargetDef], blank_memo: dict[tuple[object, ...], object],
                  reach_in: float) -> np.ndarray:
    """Per target, whether no name of its own can lie right of it within ``reach_in``: the blank
    prints its names left of its targets (:func:`_names_side`), or an upright rule (a column's
    side) stands between the target and that far right of it on its row. Learned once per
    blank, with the rest of its side."""
    learned = _learned(reference, ref_dpi, targets, blank_memo)
    if learned[4] == "left":
        return np.ones(len(targets), bool)
    rules = learned[5]
    out = np.zeros(len(targets), bool)
    for i, t in enumerate(targets):
        x, y, w, h = (v * LOOP_PPI for v in t.box_in)
        out[i] = _ruled_between(rules, (x, y, w, h), (int(x + w + reach_in * LOOP_PPI), int(y), 0, int(h)))
    return out


_Learned = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str, np.ndarray]


def _learned(reference: np.ndarray, ref_dpi: float, targets: Sequence[TargetDef],
             blank_memo: dict[tuple[object, ...], object]) -> _Learned:
    """:func:`_blank_side` of the page's ``targets``, kept in ``blank_memo``."""
    key = ("name loops", LOOP_PPI, ref_dpi)
    if key not in blank_memo:
        blank_memo[key] = _blank_side(reference, ref_dpi, targets)
    return blank_memo[key]  # type: ignore[return-value]  # what this function put there


def _blank_side(reference: np.ndarray, ref_dpi: float, targets: Sequence[TargetDef]) -> _Learned:
    """The blank's darkness at LOOP_PPI, it widened NEAR_PX (what a card's own print may
    cover), where it prints within HUG_PX, its rules (widened RULE_NEAR_PX), the side its names
    stand on ("right", "left" or "either") and its upright rules (a column's or a box's side)."""
    size_in = (reference.shape[1] / ref_dpi, reference.shape[0] / ref_dpi)
    w, h = int(round(size_in[0] * LOOP_PPI)), int(round(size_in[1] * LOOP_PPI))
    to_px = np.array([[1.0, 0.0, -0.5], [0.0, 1.0, -0.5], [0.0, 0.0, 1.0]]) @ np.diag([ref_dpi, ref_dpi, 1.0]) @ _loop_to_inches()
    widened = cv2.erode(reference, np.ones((3, 3), np.uint8))
    blank = cv2.warpPerspective(widened, to_px, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                borderMode=cv2.BORDER_REPLICATE)
    dark = np.clip(1.0 - blank.astype(np.float32) / paper_level(blank), 0.0, 1.0)
    near = cv2.dilate(dark, np.ones((2 * NEAR_PX + 1,) * 2, np.uint8))
    printed = (dark >= BLANK_PRINT).astype(np.uint8)
    beside = cv2.dilate(printed, np.ones((2 * HUG_PX + 1,) * 2, np.uint8)).astype(bool)
    run = max(3, int(round(RULE_MIN_IN * LOOP_PPI)))
    rules = cv2.bitwise_or(cv2.morphologyEx(printed, cv2.MORPH_OPEN, np.ones((1, run), np.uint8)),
                           cv2.morphologyEx(printed, cv2.MORPH_OPEN, np.ones((run, 1), np.uint8)))
    near_rules = cv2.dilate(rules, np.ones((2 * RULE_NEAR_PX + 1,) * 2, np.uint8)).astype(bool)
    upright_rules = cv2.morphologyEx(printed, cv2.MORPH_OPEN, np.ones((run, 1), np.uint8)).astype(bool)  # columns' rules
    for a in (dark, near, beside, near_rules, upright_rules):
        a.setflags(write=False)
    return dark, near, beside, near_rules, _names_side(dark, targets), upright_rules


def _left_out(targets: Sequence[TargetDef], shape: tuple[int, int]) -> np.ndarray:
    """Where drawn ink is not looked at: the target boxes (grown) and write-in areas."""
    mask = np.zeros(shape, bool)
    grow = TARGET_CLEAR_IN
    for t in targets:
        for (x, y, bw, bh), g in ((t.box_in, grow), *(((t.write_in_area_in, 0.0),) if t.write_in_area_in is not None else ())):
            c0, r0 = max(0, int(np.floor((x - g) * LOOP_PPI))), max(0, int(np.floor((y - g) * LOOP_PPI)))
            c1, r1 = int(np.ceil((x + bw + g) * LOOP_PPI)), int(np.ceil((y + bh + g) * LOOP_PPI))
            mask[r0:r1, c0:c1] = True
    return mask


def _alone(drawn: np.ndarray, labels: np.ndarray, k: int, box: tuple[int, int, int, int], beside_print: np.ndarray) -> bool:
    """Whether drawn piece ``k`` (its box, raster px) stands alone: within CHECK_CLEAR_IN of its
    box, other drawn ink away from the print (HUG_PX: a check's own stroke the print cut off,
    running on under an arrow's tail, is there) amounts to at most CHECK_CLEAR_SHARE of its own
    (a fragment of a stamp's letters or of a signature that the print cut has its fellows round
    it)."""
    x, y, w, h = box
    m = int(round(CHECK_CLEAR_IN * LOOP_PPI))
    r0, c0 = max(0, y - m), max(0, x - m)
    area = drawn[r0: y + h + m, c0: x + w + m].astype(bool)
    mine = labels[r0: y + h + m, c0: x + w + m] == k
    others = area & ~mine & ~beside_print[r0: y + h + m, c0: x + w + m]
    return int(np.count_nonzero(others)) <= CHECK_CLEAR_SHARE * int(np.count_nonzero(area & mine))


def _specks_per_in2(drawn: np.ndarray) -> float:
    """Drawn pieces of SPECK_MAX_PX pixels or fewer per square inch of the page (a clean scan:
    a fraction of one; a bilevel scan of speckled stock or a dithered one: tens to hundreds)."""
    count, _labels, stats, _ = cv2.connectedComponentsWithStats(drawn, connectivity=8)
    specks = int(np.count_nonzero(stats[1:count, cv2.CC_STAT_AREA] <= SPECK_MAX_PX))
    return specks / (drawn.shape[0] * drawn.shape[1] / LOOP_PPI**2)


def _check_like(own: np.ndarray) -> bool:
    """Whether a drawn piece is a check, a tick or an X rather than a speck, a straight stroke
    or a blot: its own pixels CHECK_OWN_MIN_IN or more each way, spread across their main direction
    by CHECK_BEND of their spread along it or more (a line, however long, hardly at all),
    filling at most CHECK_MAX_FILL of their box, in at most CHECK_MAX_PARTS connected parts
    (print may cut a stroke; specks that the joining gathered are many) of which the largest
    holds CHECK_MAIN_PART."""
    ys, xs = np.nonzero(own)
    if len(xs) < CHECK_MIN_PX:
        return False
    count, _labels, stats, _ = cv2.connectedComponentsWithStats(own.astype(np.uint8), connectivity=8)
    if count - 1 > CHECK_MAX_PARTS or int(stats[1:, cv2.CC_STAT_AREA].max()) < CHECK_MAIN_PART * len(xs):
        return False  # specks joined (a speckled stock, a dithered shade): not a stroke
    w, h = int(xs.max() - xs.min()) + 1, int(ys.max() - ys.min()) + 1  # its own extent (the piece's box was widened to join it)
    if min(w, h) < CHECK_OWN_MIN_IN * LOOP_PPI or len(xs) > CHECK_MAX_FILL * w * h:
        return False
    spread = np.linalg.eigvalsh(np.cov(np.stack([xs, ys]).astype(np.float64)))  # ascending
    return bool(spread[1] > 0 and np.sqrt(max(spread[0], 0.0) / spread[1]) >= CHECK_BEND)


def _loop_score(own: np.ndarray, printed: np.ndarray, drawn: np.ndarray) -> float:
    """How surely the piece ``own`` (its bounding box) is a loop around print: the third-best
    coverage of its four sides, one of which, or both ends (left and right), may count the
    print they run over as the loop hidden there; 0 where it encloses no print or much drawn ink."""
    h, w = own.shape
    band_r = max(2, min(int(round(SIDE_BAND * h)), int(SIDE_BAND_MAX_IN * LOOP_PPI)))
    band_c = max(2, min(int(round(SIDE_BAND * w)), int(SIDE_BAND_MAX_IN * LOOP_PPI)))
    c0, r0 = int(w * (1 - INNER_COLS) / 2), int(h * (1 - INNER_ROWS) / 2)
    c1, r1 = max(int(w * (1 + INNER_COLS) / 2), c0 + 1), max(int(h * (1 + INNER_ROWS) / 2), r0 + 1)
    def sides(seen: np.ndarray) -> list[float]:
        return [float(seen[:band_r, c0:c1].any(axis=0).mean()), float(seen[h - band_r:, c0:c1].any(axis=0).mean()),
                float(seen[r0:r1, :band_c].any(axis=1).mean()), float(seen[r0:r1, w - band_c:].any(axis=1).mean())]

    inside = (slice(band_r, h - band_r), slice(band_c, w - band_c))
    if printed[inside].size == 0 or not (_encloses(printed[inside], drawn[inside]) or _hole_encloses(own, printed, drawn, inside)):
        return 0.0
    drawn_sides, hidden_sides = sides(own), sides(own | printed)
    # one side may run over the print (a loop's end across the name's first letter, where ink
    # over print is not measured): that side counts the print it crosses as hidden loop; so
    # may both ends of a loop drawn tight along the name, across its first and last letters
    best = sorted(drawn_sides)[1]
    for k in range(4):
        best = max(best, sorted(drawn_sides[:k] + [hidden_sides[k]] + drawn_sides[k + 1:])[1])
    best = max(best, sorted(drawn_sides[:2] + hidden_sides[2:])[1])
    return float(best)


def _encloses(printed: np.ndarray, drawn: np.ndarray) -> bool:
    """Whether a loop's inside (the blank's print and the card's drawn ink there) holds print
    (ENCLOSED_PRINT of it at least) and little drawn ink (ENCLOSED_DRAWN at most)."""
    return bool(printed.mean() >= ENCLOSED_PRINT and drawn.mean() <= ENCLOSED_DRAWN)


def _hole_encloses(own: np.ndarray, printed: np.ndarray, drawn: np.ndarray, inside: tuple[slice, slice]) -> bool:
    """:func:`_encloses` judged on the box's ``inside`` less the stroke of a closed loop ``own``:
    where its largest hole (what it cuts off from its box's edge) fills HOLE_SHARE of the
    inside at least, the inside's pixels in that hole or in what lies within it (a stamp's
    words in its frame, joined to it or not, count as drawn there). A felt pen's loop drawn
    tight round a name is thicker than the band the inside leaves for it (the fifth renderer's
    seed 3535, ``0228.tif``: the loop's own stroke 17% of the inside).

    A loop with no such hole may be broken only where it runs over the name's print (ink over
    the print, widened, is not measured: a felt pen's loop across the name's first letter and
    a descender, the fifth renderer's seed 3636, ``0040.jpg``): it is closed across that print
    (the print within BRIDGE_PX of its stroke counts as stroke), and what it then encloses
    (paper and print, less its own stroke), where the stroke borders it (WALLED_SHARE), is
    judged the same way."""
    hole = largest_hole(own)
    if hole is not None and np.count_nonzero(hole) >= HOLE_SHARE * own[inside].size:
        within = hole | cut_off(~hole)  # the hole and the islands inside it
    else:
        walls = own | (_widened(printed, PRINT_WIDE_PX) & _widened(own, BRIDGE_PX))
        cut = cut_off(~walls)
        within = (walls | cut) & ~own
        if not cut.any() or np.count_nonzero(within) < HOLE_SHARE * own[inside].size:
            return False
        # ... and walled by the loop's own stroke: WALLED_SHARE of what borders it at least (a
        # stamp's broad letter over a line of names closes pockets of their print too, but
        # that print borders on paper: 38-63% on the vendor seed 363636, a loop 92%)
        rim = _widened(within, 1) & ~within
        if np.count_nonzero(rim & own) < WALLED_SHARE * np.count_nonzero(rim):
            return False
    enclosed = np.zeros(own.shape, bool)
    enclosed[inside] = True
    enclosed &= within
    return bool(enclosed.any()) and _encloses(printed[enclosed], drawn[enclosed])


def _widened(mask: np.ndarray, px: int) -> np.ndarray:
    """``mask`` grown ``px`` pixels every way."""
    return cv2.dilate(mask.astype(np.uint8), np.ones((2 * px + 1, 2 * px + 1), np.uint8)).astype(bool)


def _owners(boxes: np.ndarray, named: Sequence[int], loop: tuple[int, int, int, int], side: str, *,
            near_in: float = 0.0, rules: np.ndarray | None = None) -> list[int]:
    """The target(s) a loop (raster px) belongs to: on its row, nearest on the names' side, and
    no upright rule of the blank's (``rules``: a column's side) between them (a loop round the
    next column's name is not this column's); ``near_in``: a target on its row this close on
    either side is its (a check over an arrow's tail, left of its box, when the names stand
    right)."""
    x, y, w, h = loop
    slack = ROW_SLACK_IN * LOOP_PPI
    cx = x + w / 2
    best: dict[str, tuple[float, int]] = {}
    for i in named:
        bx, by, bw, bh = boxes[i]
        if not (y - slack <= by + bh / 2 <= y + h + slack):
            continue
        if bx + bw / 2 <= cx:  # the target left of the loop: the name right of it
            where, gap = "right", max(0.0, x - (bx + bw))
        else:
            where, gap = "left", max(0.0, bx - (x + w))
        if rules is not None and _ruled_between(rules, (bx, by, bw, bh), loop):
            continue
        if gap <= NAME_REACH_IN * LOOP_PPI and (where not in best or gap < best[where][0]):
            best[where] = (gap, i)
    close = [(gap, i) for gap, i in best.values() if gap <= near_in * LOOP_PPI]
    if close:
        return [min(close)[1]]
    if side in best:
        return [best[side][1]]
    return [i for _gap, i in best.values()] if side == "either" else []


def _ruled_between(rules: np.ndarray, box: np.ndarray | tuple[float, float, float, float], loop: tuple[int, int, int, int]) -> bool:
    """Whether an upright rule of the blank (``rules``, raster px) stands between a target's box
    and a loop on its row, crossing the row at the box's middle (raster px both)."""
    bx, by, bw, bh = (float(v) for v in box)
    x, _y, w, _h = loop
    row = int(round(by + bh / 2))
    c0, c1 = (int(np.ceil(bx + bw)), int(x)) if bx + bw <= x else (int(np.ceil(x + w)), int(bx))
    if not 0 <= row < rules.shape[0] or c1 <= c0:
        return False
    return bool(rules[row, max(0, c0): min(rules.shape[1], c1)].any())


def _names_side(dark: np.ndarray, targets: Sequence[TargetDef]) -> str:
    """The side of its targets on which the page prints its names: "right" where a glyph
    begins within NAME_BESIDE_IN right of most targets (and not left of as many), "left"
    where one ends that close left of most, else "either". A glyph touching the box (within
    BESIDE_MIN_IN: a broken arrow's tail and head, a box's own print) is the target's, not a name."""
    count, _labels, stats, _ = cv2.connectedComponentsWithStats((dark >= 0.5).astype(np.uint8), connectivity=8)
    s = stats[1:count].astype(np.float64) / LOOP_PPI  # inches
    gx0, gy0, gw, gh = s[:, 0], s[:, 1], s[:, 2], s[:, 3]
    glyph = (gh >= GLYPH_IN[0]) & (gh <= GLYPH_IN[1]) & (gw <= GLYPH_MAX_W_IN)
    gx0, gy0, gw, gh = gx0[glyph], gy0[glyph], gw[glyph], gh[glyph]
    gx1, gcy = gx0 + gw, gy0 + gh / 2
    right = left = named = 0
    for t in targets:
        if t.write_in_area_in is not None:
            continue
        named += 1
        x, y, w, h = t.box_in
        row = (gcy >= y - ROW_SLACK_IN) & (gcy <= y + h + ROW_SLACK_IN)
        right += bool((row & (gx0 >= x + w + BESIDE_MIN_IN) & (gx0 <= x + w + NAME_BESIDE_IN)).any())
        left += bool((row & (gx1 <= x - BESIDE_MIN_IN) & (gx1 >= x - NAME_BESIDE_IN)).any())
    if right >= 0.5 * named and right > left:
        return "right"
    if left >= 0.5 * named and left > right:
        return "left"
    return "either"
