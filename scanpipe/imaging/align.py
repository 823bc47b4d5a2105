"""Register a card to a blank reference scan by its printed content (no marks of ours).

Where the blank has the vendor's timing marks, they come first (:func:`align_by_marks`):
the card's blobs of the marks' size, the direction and spacing of their rows (skew and a
fine scale), a vote over the translations every pair of blank mark and card blob proposes,
and an affine map fitted to the marks that agree (a fit finding one row or column only is
extended to the others: :func:`_extend`). Evenly spaced marks also fit a spacing off; the
card's print decides between such fits (:func:`_coarse_correlation`, the measure ECC
maximises). Otherwise, and where the marks do not fit, the dense steps below align the card.

Coarse to fine, every step on the card's ink (darkness relative to its own paper), so
bilevel (thresholded or dithered), gray, colour and JPEG scans compare alike:

1. **Scale hypotheses.** The card's resolution relative to the blank is never taken from the
   file's dpi tag alone: the ratios of the image sides, the tag (when plausible) and the
   size of the vendor's timing marks each propose one; step 2 keeps the best.
2. **Translation and feed direction** by phase correlation of the inks at
   :data:`~scanpipe.imaging.reference.COARSE_DPI`, the card as fed and turned 180 degrees.
3. **Affine fit** by ECC (enhanced correlation coefficient maximisation) at the coarse
   resolution: skew, stretch and the scale error of step 1; started from step 2's
   translation where the blank has no timing marks, else (and where that does not settle)
   from the best of nine skews.
4. **Local refinement.** Around each well-textured point of the blank (one per square inch
   of print) the card's offset is measured by normalised correlation; a homography is fitted
   to the offsets (RANSAC, then least squares). Its residual is the registration's measured
   error: a card that does not fit (a photo in perspective, another page, a crumpled sheet)
   fails with the figure instead of being read. Two passes (coarse, then fine); a start the
   timing marks fitted gets the fine pass alone when that shows it was close (:func:`refine`).

Pure: arrays in, values out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

import cv2
import numpy as np

from scanpipe.imaging.reference import (
    COARSE_DPI,
    MARK_ROW_MIN,
    MARK_SIDE_IN,
    REDUCE_WHOLE,
    REDUCED_STEP,
    PageModel,
    ink_of,
    reduce_to,
    solid_blobs,
)

SCALE_RANGE = (0.3, 4.0)  # card pixels per blank pixel considered at all
PRINT_INK = 0.12  # the print's extent (:func:`print_extent`): coarse ink this dark ...
PRINT_PIECE_PX = 4  # ... in pieces this large (COARSE_DPI px) ...
PRINT_MIN_PX = 200  # ... this many pixels of it at least
PRINT_SIDES_AGREE = 0.05  # the card's two sides give scales within this of each other (a scanner stretches 1-2%)
SCALE_DEDUP = 0.03  # hypotheses closer than this (relative) are one ...
DENSE_SCALE_DEDUP = 0.01  # ... for the dense steps, this (a side ratio a margin and a skew inflate by 2-3% is another scale)
MAX_IMAGE_EXTENT = 1.75  # a scale making the image this many times the blank's size both ways is none (a 72 or 96 dpi tag on a 200 dpi scan)
SKEW_STEPS_DEG = (0.0, -1.0, 1.0, -2.0, 2.0, -3.0, 3.0, -4.0, 4.0)
ECC_ITERATIONS = (20,)  # coarse (local refinement corrects the rest: ~0.2 in)
ECC_EPS = 1e-3
ECC_SCALE_OFF = 0.15  # an ECC fit scaling the card further than this from its scale hypothesis is no fit ...
ECC_STRETCH = 0.1  # ... nor one stretching it more than this along than across (a scanner's feed: 2-3%) ...
ECC_SKEW_DEG = 8.0  # ... nor one turning it further than this (cards are fed within a few degrees)
MIN_COARSE_CC = 0.45  # ECC correlation below which the card is not this page
DENSE_SETTLED_CC = 0.7  # a blank without timing marks: ECC from the translation alone settles at this, else the skews are searched ...
COARSE_EXACT = 0.005  # the dense alignment's coarse card within this of the scale hypothesis (:meth:`CardView.coarse_ink`)
DENSE_PEAKS_TRIED = 4  # ... and from each, ECC finding no fit from the phase correlation's highest peak, from this many next peaks
DENSE_SCALES_TRIED = 3  # ... and, ECC settling no fit (DENSE_SETTLED_CC) from the scale the phase correlation chose, up to this many scales in all
PATCH_SEARCH_IN = 0.03  # local refinement: each patch is searched this far either way
PATCH_MIN_SCORE = 0.55
MIN_PATCHES = 8
MAX_RESIDUAL_IN = 0.012  # RMS misfit of the local offsets the homography leaves
MIN_INLIER_SHARE = 0.5
FINE_ONLY_AGREE_IN = 0.02  # a start refined by the fine pass alone: no point moved more than this (two thirds of its search) ...
FINE_ONLY_QUADRANT_FOUND = 2  # ... and at least this many agreeing offsets found in every quarter of the page ...
FINE_ONLY_QUADRANT_MIN = 4  # ... holding at least this many of the blank's points
FOUND_ALL_SHARE = 0.75  # a dense fit under MIN_COARSE_CC stands when refinement finds this share of the blank's places (:func:`found_all_over`)
# Alignment by the timing marks (:func:`align_by_marks`)
MARK_SIZE_TOL = 0.4  # a card blob is mark-like when both sides are within 40% of the blank's marks (scaled)
CARD_BLOB_SCALE = 2.0  # a card's blobs are looked for up to this many times the largest a blank's marks may be: a card scanned at up to twice its blank's resolution (the file's tag untrusted) shows its marks that much larger
MARK_ANGLE_MAX_DEG = 5.0  # rows' direction looked for within this of the axes
MARK_PITCH_AGREE = 0.1  # the spacing's scale replaces a hypothesis it is this close to
MARK_VOTE_BIN_IN = 0.05  # translation vote cells
MARK_VOTE_LEADERS = 6  # translations tried (evenly spaced marks also fit a spacing or two off)
MARK_LOOSE_SHARE = 0.45  # first snap: this share of the marks' spacing (no neighbour can be taken)
MARK_SNAP_IN = 0.03  # a mark is found when a blob lies this close to where the fit puts it
MARK_MIN_MATCHED = 8
MARK_MIN_SHARE = 0.6  # of the blank's marks the fit puts on the card, found
MARK_MIN_OVERALL = 0.3  # of all the blank's marks found (a scanner may cut a row off, not most)
MARK_MIN_CC = 0.6  # a fit by the marks stands when the print correlates this well (else the dense steps decide)
MARK_SURE_CC = 0.8  # ... and below this the dense steps are tried too, the better correlation winning (:func:`surer_of`)
MARK_FAR_SPACINGS = 8  # ... and where no fit reaches MARK_MIN_CC, fits up to this many spacings off are tried too
MARK_CLOSE_SHARE = 0.8  # fits finding this share of the most marks found are told apart by the print
MARK_MIN_SPAN_IN = 1.0  # the marks found span at least this both ways
ROW_STRETCHES = tuple(1.0 + 0.005 * k for k in range(-6, 7))  # a fit by one row of marks, stretched across it by each of these
MARK_EXTEND_IN = 0.3  # a fit finding one row or column of marks: the others looked for this far off (a scanner's stretch)
MARK_LEADER_SHARE = 0.7  # marks fitted from the scales and feed directions whose votes reach this share of the most
MARK_SAME_FIT_IN = 0.02  # fits placing the blank's corners this close are one
LINE_MIN_MARKS = 6  # the rows' direction refined by straight lines through rows or columns of at least this many marks ...
LINE_MIN_SPACINGS = 8  # ... spanning this many spacings


@dataclass(frozen=True)
class Alignment:
    """Blank pixels -> card pixels, on the card turned upright (``turned``: a 180-degree feed).

    ``matrix`` is 3x3; ``score`` the ECC correlation of the inks at COARSE_DPI.
    """

    matrix: np.ndarray
    turned: bool
    score: float
    precise: bool = False  # locally refined (:func:`refine`), not only the global fit


@dataclass(frozen=True)
class AlignmentFailure:
    detail: str
    score: float = 0.0
    fit: Alignment | None = None  # the dense alignment's fit where only its correlation fell short (local refinement may confirm it)


@dataclass(frozen=True)
class Refined:
    matrix: np.ndarray  # blank pixels -> upright card pixels
    residual_in: float
    points: int  # local offsets that agree
    measured: int  # local offsets measured
    agreeing: np.ndarray | None = None  # (points, 2) the blank's refinement points (px) whose offsets agree


# --------------------------------------------------------------------------------------
# Steps 1-3: the global alignment


_T = TypeVar("_T")


class CardView:
    """What the alignment measures of one card, measured once however many blanks it is
    aligned to: its solid blobs and its ink at each reduced resolution (a per-card memo,
    passed explicitly; never module state)."""

    def __init__(self, gray: np.ndarray, unseen: Sequence[tuple[int, int]] = ()) -> None:
        self.gray = gray
        self.unseen = tuple(unseen)  # columns (first, last) of ``gray`` that show nothing of the card (a scanner's light streak)
        self._turned: np.ndarray | None = None
        self._blobs: dict[float, np.ndarray] = {}
        self._ink: dict[tuple[bool, float], np.ndarray] = {}
        self._exact: dict[tuple[bool, float], np.ndarray] = {}  # :meth:`coarse_ink`'s resized inks
        self._rows: dict[tuple[float, bytes], tuple[float, float] | None] = {}
        self._once: dict[tuple[object, ...], object] = {}  # :meth:`once`'s results

    def once(self, key: tuple[object, ...], compute: Callable[[], _T]) -> _T:
        """What ``compute`` gives for ``key`` (a step of aligning the card to a blank or
        comparing it with one: the blank, the fit, the step), computed once: a card no blank
        matched quickly is aligned and compared again searching harder, and that search
        begins with the very steps the quick one took (deterministic: the same arrays in, the
        same result out)."""
        if key not in self._once:
            self._once[key] = compute()
        return self._once[key]  # type: ignore[return-value]  # what ``compute`` gave for this key

    def blobs_px(self, dpi: float) -> np.ndarray:
        """``(n, 4)`` centre x, y, width, height (card pixels) of the card's solid blobs,
        sized as if the card had ``dpi``."""
        if dpi not in self._blobs:
            self._blobs[dpi] = solid_blobs(self.gray, dpi, largest_in=CARD_BLOB_SCALE * MARK_SIDE_IN[1]) * dpi
        return self._blobs[dpi]

    def rows_of(self, dpi: float, chosen: np.ndarray) -> tuple[float, float] | None:
        """:func:`_rows` of the blobs (sized for ``dpi``) that ``chosen`` picks: frames whose
        marks are alike in size pick the same blobs, measured once."""
        key = (dpi, chosen.tobytes())
        if key not in self._rows:
            self._rows[key] = _rows(self.blobs_px(dpi)[chosen, :2])
        return self._rows[key]

    def upright(self, turned: bool) -> np.ndarray:
        """The card as fed, or turned 180 degrees (a contiguous copy, made once)."""
        if not turned:
            return self.gray
        if self._turned is None:
            self._turned = np.ascontiguousarray(np.rot90(self.gray, 2))
        return self._turned

    def unseen_upright(self, turned: bool) -> tuple[tuple[int, int], ...]:
        """The :attr:`unseen` columns of the card as :meth:`upright` gives it."""
        w = self.gray.shape[1]
        return tuple((w - 1 - x1, w - 1 - x0) for x0, x1 in self.unseen) if turned else self.unseen

    def coarse_ink(self, factor: float, turned: bool = False) -> np.ndarray:
        """:meth:`ink` at the scale ``factor`` asks for: where the reduction took a whole factor
        near it (up to REDUCE_WHOLE off), the small image is resized by what that left (the
        dense alignment's phase correlation and ECC start from the scale hypothesis as it is: a
        240 dpi card reduced by 10 for 9.6 would start them 4% off, further than they hold)."""
        ink = self.ink(factor, turned)
        left = (self.gray.shape[1] / ink.shape[1]) / factor
        if abs(left - 1.0) <= COARSE_EXACT:
            return ink
        key = (turned, round(factor, 3))
        if key not in self._exact:
            h, w = ink.shape
            self._exact[key] = cv2.resize(ink, (max(1, round(w * left)), max(1, round(h * left))), interpolation=cv2.INTER_LINEAR)
        return self._exact[key]

    def ink(self, factor: float, turned: bool = False) -> np.ndarray:
        """The card's ink reduced by ``factor`` (card pixels per reduced pixel); ``turned``:
        of the card turned upright (reduced after the turn, so its pixels tile the upright card)."""
        whole = round(factor)
        factor = float(whole) if whole >= 2 and abs(factor / whole - 1.0) <= REDUCE_WHOLE else round(factor, 3)  # as reduce_to reduces
        key = (turned, factor)
        if key not in self._ink:
            self._ink[key] = _card_ink(self.upright(turned), factor)
        return self._ink[key]


def align_to_page(gray: np.ndarray, model: PageModel, *, dpi_hint: float | None = None,
                  turned: bool | None = None, view: CardView | None = None) -> Alignment | AlignmentFailure:
    """The affine alignment of the card to the blank (``turned``: force a feed direction):
    by the timing marks where the blank has them and the card shows them
    (:func:`align_by_marks`), else by the dense steps 1-3."""
    view = view if view is not None else CardView(gray)
    by_marks = align_by_marks(view, model, dpi_hint=dpi_hint, turned=turned)
    if isinstance(by_marks, Alignment):
        return surer_of(by_marks, view, model, dpi_hint=dpi_hint, turned=turned)
    return align_densely(view, model, dpi_hint=dpi_hint, turned=turned)


def surer_of(by_marks: Alignment, view: CardView, model: PageModel, *, dpi_hint: float | None = None,
             turned: bool | None = None) -> Alignment:
    """A fit by the timing marks under which the print correlates only weakly (below
    MARK_SURE_CC) may be a whole run of evenly spaced marks off (a long column of marks at a
    sixth of an inch fits a dozen spacings off nearly as well, and the print decides only
    among the few fits tried): the card is then aligned densely too, and the better
    correlation wins."""
    if by_marks.score >= MARK_SURE_CC:
        return by_marks
    dense = align_densely(view, model, dpi_hint=dpi_hint, turned=turned, thorough=False)
    return dense if isinstance(dense, Alignment) and dense.score > by_marks.score else by_marks


@dataclass(frozen=True)
class MarkVotes:
    """The first, cheap step of :func:`align_by_marks` for one card and blank: per scale
    hypothesis and feed direction, the translations its blank marks vote for among the
    card's mark-like blobs. ``share``: the most votes any translation drew, per blank mark
    (the frame whose marks the card shows draws most: how frames are ordered to be tried)."""

    anchor: np.ndarray  # the blank's marks, blank px
    rows: tuple[float, float]  # the blank's rows: direction, spacing
    votes: tuple[tuple[_Votes, np.ndarray, bool], ...]  # per scale and feed: votes, the card's blobs turned so, turned
    floor: float

    @property
    def share(self) -> float:
        return max(v.peak for v, _u, _t in self.votes) / max(1, len(self.anchor))


def mark_votes(view: CardView, model: PageModel, *, dpi_hint: float | None = None,
               turned: bool | None = None) -> MarkVotes | None:
    """The votes :func:`align_by_marks` fits from; None where the blank has no marks or the
    card shows no rows of blobs their size."""
    anchor = np.asarray(model.marks_in, np.float64) * model.dpi  # blank px
    if ("mark rows",) not in model.memo:  # the blank's own rows: the same for every card
        model.memo[("mark rows",)] = _rows(anchor) if model.has_timing_marks else None
    anchor_rows: tuple[float, float] | None = model.memo[("mark rows",)]  # type: ignore[assignment]
    if anchor_rows is None or model.mark_size_in is None:
        return None
    blobs = view.blobs_px(model.dpi)
    mark_px = np.asarray(model.mark_size_in) * model.dpi
    h, w = view.gray.shape
    tries: list[tuple[float, np.ndarray, float]] = []  # scale, the card's mark-like blobs, relative angle
    for scale in scale_hypotheses(view.gray, model, dpi_hint, view):
        alike = np.zeros(len(blobs), bool)
        for size in (mark_px, mark_px[::-1]):  # a frame may stand its marks crosswise along the other edges
            alike |= np.all(np.abs(blobs[:, 2:4] / (size * scale) - 1.0) <= MARK_SIZE_TOL, axis=1)
        points = blobs[alike, :2]
        card_rows = view.rows_of(model.dpi, alike)
        if card_rows is None:
            continue
        pitch_scale = card_rows[1] / anchor_rows[1]  # the marks' spacing: a finer measure of the scale than their size
        if abs(pitch_scale / scale - 1.0) <= MARK_PITCH_AGREE:
            scale = pitch_scale
        if all(abs(scale - t[0]) > SCALE_DEDUP * t[0] / 3 for t in tries):
            tries.append((scale, points, card_rows[0] - anchor_rows[0]))
    if not tries:
        return None
    floor = max(MARK_MIN_MATCHED, MARK_MIN_OVERALL * len(anchor))
    votes: list[tuple[_Votes, np.ndarray, bool]] = []
    for scale, points, angle in tries:
        for turn in ((False, True) if turned is None else (turned,)):
            upright = np.column_stack([w - 1 - points[:, 0], h - 1 - points[:, 1]]) if turn else points
            votes.append((_vote(anchor, upright, scale, angle, model.dpi), upright, turn))
    return MarkVotes(anchor, anchor_rows, tuple(votes), floor)


def align_by_marks(view: CardView, model: PageModel, *, dpi_hint: float | None = None,
                   turned: bool | None = None, votes: MarkVotes | None = None) -> Alignment | AlignmentFailure | None:
    """The affine alignment from the vendor's timing marks: the blank's marks matched to the
    card's mark-like blobs (size, then the rows' direction and spacing, then a vote over
    translations (:func:`mark_votes`; ``votes``: already counted), then least squares on the
    marks that agree). Evenly spaced marks also fit
    a whole spacing off; of the fits that find the marks, the one under which the card's
    print correlates best with the blank's wins. None where the blank has no marks or the
    card shows no rows of blobs their size: only the dense alignment can tell then. A failure
    says the card shows rows of mark-like blobs but not the blank's frame of them."""
    counted = votes if votes is not None else mark_votes(view, model, dpi_hint=dpi_hint, turned=turned)
    if counted is None:
        return None
    anchor, anchor_rows, floor = counted.anchor, counted.rows, counted.floor
    h, w = view.gray.shape
    fits: list[tuple[int, np.ndarray, bool]] = []  # marks found, matrix, turned
    top = max(v.peak for v, _u, _t in counted.votes)
    # the marks are fitted from the scales and feed directions whose translations drew nearly
    # as many votes as the most (a wrong feed or scale draws far fewer)
    for vote, upright, turn in sorted(counted.votes, key=lambda v: -v[0].peak):
        if vote.peak < max(floor, MARK_LEADER_SHARE * top):
            break
        for found, matrix in _fit_marks(anchor, upright, vote, model.dpi, anchor_rows[1], floor):
            if found >= _marks_needed(anchor, matrix, (h, w), model.dpi):
                fits.append((found, matrix, turn))
    if not fits:
        return AlignmentFailure(f"the card's rows of marks do not fit the blank's {len(anchor)} timing marks")
    most = max(f[0] for f in fits)
    close = _distinct([(m, t) for n, m, t in sorted(fits, key=lambda f: -f[0]) if n >= MARK_CLOSE_SHARE * most], model)
    if _spread(anchor, model.dpi):
        scored = [(_coarse_correlation(view, model, m, t), m, t) for m, t in close]
        if max(f[0] for f in scored) < MARK_SURE_CC:
            # a card stretched along its columns smears the vote over neighbouring spacings, so
            # that the right translation may be none of the leaders while fits a spacing off
            # either way are: the fits one spacing from those tried are tried too
            tried, shifts = [(m, t) for _cc, m, t in scored], _spacing_shifts(anchor)
            more = _distinct(tried + [(m @ shift, t) for m, t in tried for shift in shifts], model)[len(tried):]
            scored += [(_coarse_correlation(view, model, m, t), m, t) for m, t in more]
            if max(f[0] for f in scored) < MARK_MIN_CC:
                # still no fit: a card stretched unevenly (a percent one way, another the other)
                # may lead the vote several spacings off along a long column; the fits further
                # off are tried before the card is given up to the dense steps
                far = _spacing_shifts(anchor, steps=range(2, MARK_FAR_SPACINGS + 1))
                more = _distinct(tried + [(m @ shift, t) for m, t in tried for shift in far], model)[len(tried):]
                scored += [(_coarse_correlation(view, model, m, t), m, t) for m, t in more]
    else:  # one row of marks fixes a similarity: the stretch across the row (a scanner's feed) is searched
        scored = [(*_stretched_across(view, model, m, t, anchor), t) for m, t in close]
    cc, matrix, turn = max(scored, key=lambda f: f[0])
    if cc < MARK_MIN_CC:
        return AlignmentFailure(f"the timing marks fit, but the card's print matches the blank poorly "
                                f"(correlation {cc:.2f} < {MARK_MIN_CC})", cc)
    return Alignment(matrix, turn, cc)


def _spacing_shifts(anchor: np.ndarray, steps: Sequence[int] = (1,)) -> list[np.ndarray]:
    """Translations of the blank (3x3, blank px) by ``steps`` spacings of its marks either way,
    along its rows and along its columns: the median distance from a mark to its nearest
    neighbour that way."""
    d = anchor[None, :, :] - anchor[:, None, :]
    dist = np.hypot(d[..., 0], d[..., 1])
    np.fill_diagonal(dist, np.inf)
    nearest = d[np.arange(len(anchor)), np.argmin(dist, axis=1)]
    shifts = []
    for axis in (0, 1):
        along = np.abs(nearest[np.abs(nearest[:, axis]) > np.abs(nearest[:, 1 - axis]), axis])
        if len(along):
            for k in steps:
                for sign in (1.0, -1.0):
                    shift = np.eye(3)
                    shift[axis, 2] = sign * k * float(np.median(along))
                    shifts.append(shift)
    return shifts


def _marks_needed(anchor: np.ndarray, matrix: np.ndarray, shape: tuple[int, int], dpi: float) -> int:
    """How many of the blank's marks a fit must find: a share of those it puts on the card
    (a scanner may cut a margin off), and never fewer than a share of them all."""
    placed = cv2.transform(anchor.reshape(-1, 1, 2), matrix[:2]).reshape(-1, 2)
    edge = 0.05 * dpi * start_scale(matrix)
    h, w = shape
    inside = int(np.sum((placed[:, 0] >= edge) & (placed[:, 0] <= w - 1 - edge) & (placed[:, 1] >= edge) & (placed[:, 1] <= h - 1 - edge)))
    return max(MARK_MIN_MATCHED, int(np.ceil(MARK_MIN_SHARE * inside)), int(np.ceil(MARK_MIN_OVERALL * len(anchor))))


def _rows(points: np.ndarray) -> tuple[float, float] | None:
    """How the points stand in rows: the direction (degrees, within +-MARK_ANGLE_MAX_DEG of
    the axes) and the spacing (px), the medians over each point's nearest neighbour."""
    if len(points) < MARK_ROW_MIN:
        return None
    d = points[None, :, :] - points[:, None, :]
    dist = np.hypot(d[..., 0], d[..., 1])
    np.fill_diagonal(dist, np.inf)
    k = np.argmin(dist, axis=1)
    nearest = d[np.arange(len(points)), k]
    angle = (np.degrees(np.arctan2(nearest[:, 1], nearest[:, 0])) + 45.0) % 90.0 - 45.0
    along = np.abs(angle) <= MARK_ANGLE_MAX_DEG
    if along.sum() < MARK_ROW_MIN:
        return None
    spacing = float(np.median(dist[np.arange(len(points)), k][along]))
    rough = float(np.median(angle[along]))
    crosswise = np.abs(np.degrees(np.arctan2(nearest[:, 1], nearest[:, 0])) % 180.0 - 90.0) < 45.0  # in a column, not a row
    steady = along & (np.abs(dist[np.arange(len(points)), k] / spacing - 1.0) <= 0.3)
    turn, spaced = _lines(points[steady], crosswise[steady], rough, spacing)
    return rough + turn, spaced


def _line_fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope and offset of ``y = slope * x + offset``."""
    mx, my = float(x.mean()), float(y.mean())
    dx = x - mx
    slope = float(np.dot(dx, y - my) / np.dot(dx, dx))
    return slope, my - slope * mx


def _lines(points: np.ndarray, crosswise: np.ndarray, rough_deg: float, spacing: float) -> tuple[float, float]:
    """The rows' direction and spacing as straight lines through whole rows and columns of
    marks show them: the correction (degrees) to ``rough_deg`` and the spacing (px). The
    median over each mark's nearest neighbour is off by up to a degree (neighbours a pixel
    apart across a spacing; at a sixth of an inch spacing a degree moves the far column of a
    page by a whole mark) and short by a pixel or two (the nearer of two noisy neighbours).
    Lines of at least LINE_MIN_MARKS marks spanning LINE_MIN_SPACINGS spacings, points off a
    first fit by a quarter spacing left out; the direction weighted by marks and squared span,
    the spacing the lines' length over the spacings they hold (a missing mark is a gap of
    two). (0, ``spacing``) where no line qualifies."""
    a = np.radians(rough_deg)
    upright = points @ np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])  # turned back by rough_deg
    found: list[tuple[float, float]] = []  # correction (radians), weight
    length = steps = 0.0
    for columns in (False, True):
        pts = upright[crosswise == columns]
        if len(pts) < LINE_MIN_MARKS:
            continue
        along, across = (pts[:, 1], pts[:, 0]) if columns else (pts[:, 0], pts[:, 1])
        order = np.argsort(across)
        breaks = np.flatnonzero(np.diff(across[order]) > 0.3 * spacing) + 1
        for line in np.split(order, breaks):
            if len(line) < LINE_MIN_MARKS or np.ptp(along[line]) < LINE_MIN_SPACINGS * spacing:
                continue
            x, y = along[line], across[line]
            slope, offset = _line_fit(x, y)
            keep = np.abs(y - (slope * x + offset)) <= 0.25 * spacing
            if keep.sum() < LINE_MIN_MARKS or np.ptp(x[keep]) < LINE_MIN_SPACINGS * spacing:
                continue
            slope, _ = _line_fit(x[keep], y[keep])
            turn = np.arctan(slope)
            found.append((-turn if columns else turn, float(keep.sum()) * float(np.ptp(x[keep])) ** 2))
            gaps = np.diff(np.sort(x[keep])) * np.sqrt(1.0 + slope * slope)
            held = np.round(gaps / spacing)
            length, steps = length + float(gaps[held >= 1].sum()), steps + float(held[held >= 1].sum())
    if not found:
        return 0.0, spacing
    turns, weights = np.array(found).T
    return float(np.degrees(np.average(turns, weights=weights))), (length / steps if steps else spacing)


@dataclass(frozen=True)
class _Votes:
    """The translations every pair of blank mark and card blob proposes for one scale,
    rotation and feed direction, voted in cells of MARK_VOTE_BIN_IN (each cell's count summed
    with its neighbours')."""

    counts: np.ndarray  # votes per cell
    cells: np.ndarray  # (pairs, 2) each pair's cell
    offsets: np.ndarray  # (pairs, 2) each pair's translation, card px
    turn: np.ndarray  # 2x2: the blank marks' rotation and scale about their centre
    centre: np.ndarray
    unit: float  # card px per inch
    scale: float

    @property
    def peak(self) -> float:
        return float(self.counts.max())


def _vote(anchor: np.ndarray, card: np.ndarray, scale: float, angle_deg: float, dpi: float) -> _Votes:
    """Vote the translations of blank marks (px) onto card blobs (upright card px) for one
    scale and rotation."""
    unit = dpi * scale  # card px per inch
    a = np.radians(angle_deg)
    turn = scale * np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    centre = anchor.mean(axis=0)
    moved = (anchor - centre) @ turn.T  # the marks turned and scaled about their centre
    offsets = (card[:, None, :] - moved[None, :, :]).reshape(-1, 2)
    votes, cells = _histogram(offsets, MARK_VOTE_BIN_IN * unit)
    return _Votes(votes, cells, offsets, turn, centre, unit, scale)


def _histogram(offsets: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray]:
    """Votes for translations (n, 2) in cells of ``step`` px, each cell's count summed with
    its neighbours' (a translation on a cell's edge is not split); and each one's cell."""
    cells = np.floor(offsets / step).astype(np.int64)
    cells -= cells.min(axis=0)
    rows, cols = int(cells[:, 1].max()) + 1, int(cells[:, 0].max()) + 1
    counts = np.bincount(cells[:, 1] * cols + cells[:, 0], minlength=rows * cols).reshape(rows, cols).astype(np.float32)
    return np.asarray(cv2.boxFilter(counts, -1, (3, 3), normalize=False, borderType=cv2.BORDER_CONSTANT)), cells


def _fit_marks(anchor: np.ndarray, card: np.ndarray, vote: _Votes, dpi: float, spacing_px: float,
               floor: float) -> list[tuple[int, np.ndarray]]:
    """Blank marks (px) to card blobs (upright card px) from the leading translations of
    ``vote``: from each the marks are snapped to the nearest blobs and an affine map is
    fitted, loosely (a share of ``spacing_px``, the blank marks' spacing), then tightly.
    Returns, per leading translation that finds at least ``floor`` marks spanning the page,
    (marks within MARK_SNAP_IN of a blob, the 3x3 blank px -> card px). A fit finding one row
    or column of marks only is extended to the others (:func:`_extend`)."""
    unit, turn, centre = vote.unit, vote.turn, vote.centre
    votes = vote.counts.copy()
    cells, offsets = vote.cells, vote.offsets
    step = MARK_VOTE_BIN_IN * unit
    pitch = spacing_px * vote.scale
    loose = MARK_LOOSE_SHARE * pitch
    apart = max(1, int(0.5 * pitch / step))  # leading translations at least half a spacing apart
    out: list[tuple[int, np.ndarray]] = []
    for _ in range(MARK_VOTE_LEADERS):
        r, c = np.unravel_index(int(np.argmax(votes)), votes.shape)
        if votes[r, c] < floor:
            break
        votes[max(0, r - apart): r + apart + 1, max(0, c - apart): c + apart + 1] = 0
        near = (np.abs(cells[:, 0] - c) <= 1) & (np.abs(cells[:, 1] - r) <= 1)
        shift = offsets[near].mean(axis=0)
        guess = np.vstack([np.hstack([turn, (shift - centre @ turn.T)[:, None]]), [0.0, 0.0, 1.0]])
        lost = False
        for radius in (loose, max(loose / 2, MARK_SNAP_IN * unit), MARK_SNAP_IN * unit):
            src, dst = _snap(anchor, card, guess, radius)
            if len(src) < floor:
                lost = True
                break
            if not _spread(src, dpi):
                # the marks snapped so far stand in one row or column (the vote's uniform scale
                # missed the others by a stretch): an affine fit to them is free across it and
                # would snap the others a spacing off; a similarity is not, and the others are
                # then looked for as below
                similar, _inliers = cv2.estimateAffinePartial2D(src, dst, method=cv2.RANSAC, ransacReprojThreshold=radius)
                lost = similar is None
                guess = guess if similar is None else np.vstack([similar, [0.0, 0.0, 1.0]])
                break
            fitted, _inliers = cv2.estimateAffine2D(src, dst, method=cv2.RANSAC, ransacReprojThreshold=MARK_SNAP_IN * unit)
            if fitted is None:
                lost = True
                break
            guess = np.vstack([fitted, [0.0, 0.0, 1.0]])
        if not lost:
            src, dst = _snap(anchor, card, guess, MARK_SNAP_IN * unit)
            if len(src) >= floor and not _spread(src, dpi):
                # one row or column: the affine fit is free across it; a similarity fitted to
                # the marks found (its scale measured along them) places the others to look for
                similar, _inliers = cv2.estimateAffinePartial2D(src, dst, method=cv2.RANSAC, ransacReprojThreshold=MARK_SNAP_IN * unit)
                if similar is not None:
                    guess = _extend(anchor, card, np.vstack([similar, [0.0, 0.0, 1.0]]), MARK_SNAP_IN * unit, dpi, floor)
                src, dst = _snap(anchor, card, guess, MARK_SNAP_IN * unit)
            if len(src) >= MARK_MIN_MATCHED and (_spread(src, dpi) or not _spread(anchor, dpi)):
                # (a frame of one row of marks, ImageCast's along the top or a legal frame's along
                # the bottom, fixes no more than the similarity its row gives: its stretch across
                # the row is searched (:func:`_stretched_across`), the rest refined locally)
                out.append((len(src), guess))
    return out


def _extend(anchor: np.ndarray, card: np.ndarray, matrix: np.ndarray, radius: float, dpi: float, floor: float) -> np.ndarray:
    """A fit that found one row or column of the marks (say the left column of two): the scale
    across it is not measured, so the other rows lie off by a stretch (a scanner's feed). Their
    offset is voted among the card's blobs within MARK_EXTEND_IN of where the fit puts them
    (blank px), and the map refitted to the marks found both ways; ``matrix`` as it was where
    no offset draws ``floor`` votes."""
    if abs(np.linalg.det(matrix[:2, :2])) < 1e-6:
        return matrix  # a degenerate similarity (marks on top of each other): nothing to extend
    found, _nearest_blob = _nearest(anchor, card, matrix, radius)
    rest = anchor[~found]
    to_blank = np.linalg.inv(matrix)
    blobs = card @ to_blank[:2, :2].T + to_blank[:2, 2]  # the card's blobs, in blank px
    offsets = (blobs[None, :, :] - rest[:, None, :]).reshape(-1, 2)
    offsets = offsets[np.all(np.abs(offsets) <= MARK_EXTEND_IN * dpi, axis=1)]
    if len(offsets) < floor:
        return matrix
    votes, cells = _histogram(offsets, MARK_VOTE_BIN_IN * dpi)
    r, c = np.unravel_index(int(np.argmax(votes)), votes.shape)
    if votes[r, c] < floor:
        return matrix
    shift = offsets[(np.abs(cells[:, 0] - c) <= 1) & (np.abs(cells[:, 1] - r) <= 1)].mean(axis=0)
    moved = anchor.copy()
    moved[~found] += shift  # where the other marks lie, in blank px of the present fit
    keep, nearest = _nearest(moved, card, matrix, radius)
    if keep.sum() < floor:
        return matrix
    fitted, _inliers = cv2.estimateAffine2D(anchor[keep].astype(np.float32), card[nearest[keep]].astype(np.float32),
                                            method=cv2.RANSAC, ransacReprojThreshold=radius)
    return matrix if fitted is None else np.vstack([fitted, [0.0, 0.0, 1.0]])


def _distinct(fits: list[tuple[np.ndarray, bool]], model: PageModel) -> list[tuple[np.ndarray, bool]]:
    """The fits (in order) that no earlier one of the same feed direction places within
    MARK_SAME_FIT_IN at the blank's corners: leaders and scales that snapped to the same
    marks are one fit, its print measured once."""
    h, w = model.image.shape
    corners = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float64).reshape(-1, 1, 2)
    kept: list[tuple[np.ndarray, bool, np.ndarray]] = []
    for matrix, turn in fits:
        placed = cv2.transform(corners, matrix[:2]).reshape(-1, 2)
        limit = MARK_SAME_FIT_IN * model.dpi * start_scale(matrix)
        if not any(t == turn and float(np.abs(placed - p).max()) <= limit for _m, t, p in kept):
            kept.append((matrix, turn, placed))
    return [(m, t) for m, t, _p in kept]


def _snap(anchor: np.ndarray, card: np.ndarray, matrix: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Each blank mark and the card blob nearest its predicted place, where within ``radius``."""
    ok, nearest = _nearest(anchor, card, matrix, radius)
    return anchor[ok].astype(np.float32), card[nearest[ok]].astype(np.float32)


def _nearest(anchor: np.ndarray, card: np.ndarray, matrix: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Per blank mark: whether a card blob lies within ``radius`` of its predicted place, and the nearest."""
    predicted = anchor @ matrix[:2, :2].T + matrix[:2, 2]
    d2 = (predicted**2).sum(axis=1)[:, None] + (card**2).sum(axis=1)[None, :] - 2.0 * (predicted @ card.T)
    nearest = np.argmin(d2, axis=1)
    return d2[np.arange(len(anchor)), nearest] <= radius * radius, nearest


def _spread(points: np.ndarray, dpi: float) -> bool:
    """Whether the points span the page in both directions (an affine map is then determined)."""
    extent = points.max(axis=0) - points.min(axis=0)
    return bool(np.all(extent >= MARK_MIN_SPAN_IN * dpi))


def _coarse_correlation(view: CardView, model: PageModel, matrix: np.ndarray, turned: bool) -> float:
    """The correlation of the blank's and the card's inks at COARSE_DPI under ``matrix``
    (blank px -> upright card px), over the blank's pixels the card covers: what ECC maximises."""
    factor = start_scale(matrix) * model.dpi / COARSE_DPI
    card = view.ink(factor, turned)
    fr = model.image.shape[1] / model.coarse.shape[1]
    fc = view.gray.shape[1] / card.shape[1]
    coarse_to_blank = np.array([[fr, 0, 0.5 * fr - 0.5], [0, fr, 0.5 * fr - 0.5], [0, 0, 1]])
    card_to_coarse = np.array([[1 / fc, 0, 0.5 / fc - 0.5], [0, 1 / fc, 0.5 / fc - 0.5], [0, 0, 1]])
    m = card_to_coarse @ matrix @ coarse_to_blank
    h, w = model.coarse.shape
    warped = cv2.warpAffine(card, m[:2], (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                            borderMode=cv2.BORDER_CONSTANT, borderValue=-1.0)
    valid = warped >= 0
    if valid.sum() < 0.25 * valid.size:
        return 0.0
    x = model.coarse[valid] - model.coarse[valid].mean()
    y = warped[valid] - warped[valid].mean()
    den = float(np.sqrt(np.dot(x, x) * np.dot(y, y)))
    return float(np.dot(x, y) / den) if den > 0 else 0.0


def _stretched_across(view: CardView, model: PageModel, matrix: np.ndarray, turned: bool,
                      anchor: np.ndarray) -> tuple[float, np.ndarray]:
    """A fit by one row (or column) of timing marks, a similarity (blank px -> upright card px),
    stretched across the row by the factor of ROW_STRETCHES under which the card's print
    correlates best with the blank's (:func:`_coarse_correlation`), and that correlation: a
    scanner's feed stretches a sheet by a percent or two, which one row of marks cannot show.
    Nothing else is freed (a freer fit lays a page of another frame on the blank too)."""
    along_x = np.ptp(anchor[:, 0]) >= np.ptp(anchor[:, 1])
    line = float(np.median(anchor[:, 1] if along_x else anchor[:, 0]))
    best: tuple[float, np.ndarray] | None = None
    for k in ROW_STRETCHES:
        across = (np.array([[1.0, 0.0, 0.0], [0.0, k, (1.0 - k) * line], [0.0, 0.0, 1.0]]) if along_x
                  else np.array([[k, 0.0, (1.0 - k) * line], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
        stretched = matrix @ across
        cc = _coarse_correlation(view, model, stretched, turned)
        if best is None or cc > best[0]:
            best = (cc, stretched)
    assert best is not None
    return best


_Fit = tuple[float, np.ndarray, np.ndarray]  # ECC's correlation, its warp, the coarse card it was found on
_NO_FIT: _Fit = (-np.inf, np.zeros((2, 3), np.float32), np.zeros((1, 1), np.float32))


def _better_fit(found: _Fit, ecc: Callable[[np.ndarray, np.ndarray, np.ndarray, int], tuple[float, np.ndarray]],
                blank: np.ndarray, card: np.ndarray, begin: np.ndarray, view: CardView, key: tuple[object, ...]) -> _Fit:
    """``found`` or ECC's fit of ``card`` to ``blank`` from ``begin``, whichever correlates
    better (a fit ECC cannot find, or :func:`_scanned_shape` refuses, is none); ECC's fit is
    kept in ``view`` under ``key`` (:meth:`CardView.once`: the step and its start)."""
    def fit() -> tuple[float, np.ndarray] | None:
        try:
            return ecc(blank, card, begin, ECC_ITERATIONS[0])
        except cv2.error:
            return None

    fitted = view.once((*key, ecc.__name__), fit)
    if fitted is None:
        return found
    cc, warp = fitted
    return (cc, warp, card) if cc > found[0] else found


def align_densely(view: CardView, model: PageModel, *, dpi_hint: float | None = None,
                  turned: bool | None = None, thorough: bool = True) -> Alignment | AlignmentFailure:
    """Steps 1-3: scale hypotheses, phase correlation, ECC. ``thorough``: where ECC settles
    no fit (DENSE_SETTLED_CC), the next scales, ECC on halved inks first and the phase
    correlation's next peaks are tried too, and where none settles, all that in the other feed
    direction as well, the better fit winning; without, the next scales only where ECC finds no
    fit at all (MIN_COARSE_CC): a second opinion on a fit the timing marks found
    (:func:`surer_of`) need not search as hard as the only alignment a card gets."""
    gray = view.gray
    peaks: list[tuple[float, float, bool]] = []
    for scale in scale_hypotheses(gray, model, dpi_hint, view, dense=thorough):
        for turn in ((False, True) if turned is None else (turned,)):
            ink = view.coarse_ink(scale * model.dpi / COARSE_DPI)
            peak = view.once((id(model), model.key, scale, turn, "phase peak"),
                             partial(_phase_peak, model.coarse, np.rot90(ink, 2) if turn else ink))
            peaks.append((peak, scale, turn))
    if not peaks:
        return AlignmentFailure("the image is too small to align")
    # the scale whose phase correlation peaks highest first; where ECC finds no fit from it
    # (under MIN_COARSE_CC: a scale a few percent off, the timing marks' size misread), the next
    # scales too (in the feed direction that won), the best correlation winning
    peaks.sort(key=lambda p: -p[0])
    first_turn = peaks[0][2]
    # searching (``thorough``), the other feed direction too where the first settles no fit
    # (DENSE_SETTLED_CC): a card askew by a few degrees may correlate a little more strongly upside
    # down, and ECC there can find a weak fit (0.6) where the card as fed fits well (0.8)
    turns = (first_turn, not first_turn) if thorough and turned is None else (first_turn,)
    upright_shape = gray.shape
    found = _NO_FIT  # correlation, warp, the coarse card it was found on
    turn = first_turn  # the feed direction of ``found``
    for this_turn in turns:
        scales = [scale for _peak, scale, t in peaks if t == this_turn][:DENSE_SCALES_TRIED]
        best, found = found, _NO_FIT
        for scale in scales:
            coarse_card = view.coarse_ink(scale * model.dpi / COARSE_DPI, this_turn)
            starts = [_translation_start, _rotation_start] if not model.has_timing_marks else [_rotation_start]
            for start in starts:  # without timing marks ECC finds the skew from the translation alone, mostly
                step: tuple[object, ...] = (id(model), model.key, scale, this_turn, start.__name__)
                begin = view.once(step, partial(start, model.coarse, coarse_card))
                for ecc in (_ecc, _ecc_halved_first) if thorough else (_ecc,):  # the second where the first settles no fit
                    if (found := _better_fit(found, ecc, model.coarse, coarse_card, begin, view, step))[0] >= DENSE_SETTLED_CC:
                        break
                if found[0] >= DENSE_SETTLED_CC:
                    break
            if thorough and found[0] < MIN_COARSE_CC:
                # no fit from the highest peak: the print repeats (rows of contests, a row of marks)
                # and correlates a row off more strongly than in place; ECC from the next peaks
                for dx, dy in _phase_peaks(model.coarse, coarse_card, DENSE_PEAKS_TRIED + 1)[1:]:
                    begin = np.array([[1.0, 0.0, dx], [0.0, 1.0, dy]], np.float32)
                    step = (id(model), model.key, scale, this_turn, "phase peak at", dx, dy)
                    if (found := _better_fit(found, _ecc, model.coarse, coarse_card, begin, view, step))[0] >= DENSE_SETTLED_CC:
                        break
            if found[0] >= (DENSE_SETTLED_CC if thorough else MIN_COARSE_CC):
                break  # a fit under it may be a scale off (the marks' size misread): the next scales too, the best winning
        if best is _NO_FIT or found[0] >= MIN_COARSE_CC and found[0] > best[0]:
            best, turn = found, this_turn  # the other direction only for a fit (a fit short of the gate may still stand)
        found = best
        if found[0] >= (DENSE_SETTLED_CC if thorough else MIN_COARSE_CC):
            break  # searching, a fit that settles nothing leaves the other direction to try (the better wins)
    if found is _NO_FIT:
        return AlignmentFailure("the card's print could not be aligned with the blank (no correlation)")
    cc, warp, coarse_card = found
    matrix = _to_full(warp, model, model.coarse.shape, upright_shape, coarse_card.shape)
    if cc < MIN_COARSE_CC:
        return AlignmentFailure(f"the card's print matches the blank poorly (correlation {cc:.2f} < {MIN_COARSE_CC})", cc,
                                Alignment(matrix, turn, float(cc)))
    return Alignment(matrix, turn, float(cc))


def scale_hypotheses(gray: np.ndarray, model: PageModel, dpi_hint: float | None, view: CardView | None = None, *,
                     dense: bool = False) -> list[float]:
    """Card pixels per blank pixel: the timing marks' size, the side ratios, the dpi tag; none
    that makes the image more than MAX_IMAGE_EXTENT times the blank's size both ways (a
    scanner images a sheet, not a desk: such a scale comes from a wrong dpi tag, and the
    dense alignment would search it on an image several times the blank's size for nothing).
    Of hypotheses within SCALE_DEDUP of each other the first is kept.

    ``dense`` (the dense steps searching hard, a card no blank matched quickly: no timing
    marks fix its scale, or they do not fit): the marks' size, the dpi
    tag, the extent of the print (:func:`print_extent`), then the side ratios, kept apart down
    to DENSE_SCALE_DEDUP: a margin and a skew inflate a side ratio by a few percent, where a
    right tag is exact and the print's extent is the page's."""
    h, w = gray.shape
    ref_h, ref_w = model.image.shape
    view = view if view is not None else CardView(gray)
    found = [w / ref_w, h / ref_h]
    if dense:
        printed = _print_scale(view, model)
        found[:0] = ([dpi_hint / model.dpi] if dpi_hint and dpi_hint > 0 else []) + ([printed] if printed is not None else [])
    elif dpi_hint and dpi_hint > 0:
        found.append(dpi_hint / model.dpi)
    if model.mark_size_in is not None:
        marks = _mark_scale(view, model)
        if marks is not None:
            found.insert(0, marks)
    apart = DENSE_SCALE_DEDUP if dense else SCALE_DEDUP
    out: list[float] = []
    for s in found:
        if (SCALE_RANGE[0] <= s <= SCALE_RANGE[1] and min(w / (s * ref_w), h / (s * ref_h)) <= MAX_IMAGE_EXTENT
                and all(abs(s - o) > apart * o for o in out)):
            out.append(s)
    return out


def _print_scale(view: CardView, model: PageModel) -> float | None:
    """Card pixels per blank pixel from the extent of the print (:func:`print_extent`) on the
    card and on the blank, at COARSE_DPI as if the card had the blank's resolution; None where
    either shows too little print or the two sides disagree by more than PRINT_SIDES_AGREE (a
    stain or a signature beyond the print, a cut side)."""
    key = ("print extent",)
    if key not in model.memo:
        model.memo[key] = print_extent(model.coarse)
    blank: tuple[float, float] | None = model.memo[key]  # type: ignore[assignment]  # what this function put there
    ink = view.ink(model.dpi / COARSE_DPI)
    card = print_extent(ink)
    if blank is None or card is None:
        return None
    card_px = view.gray.shape[1] / ink.shape[1]  # card pixels per reduced pixel
    blank_px = model.image.shape[1] / model.coarse.shape[1]
    ratios = [c * card_px / (b * blank_px) for c, b in zip(card, blank, strict=True)]
    if abs(ratios[0] / ratios[1] - 1.0) > PRINT_SIDES_AGREE:
        return None
    return float(np.mean(ratios))


def print_extent(ink: np.ndarray) -> tuple[float, float] | None:
    """The sides (shorter first, pixels) of the smallest rectangle, turned as it fits best,
    holding the print of a coarse ink image: its pieces of PRINT_PIECE_PX or more (a speck
    left out) darker than PRINT_INK; None with fewer than PRINT_MIN_PX such pixels. A skew
    turns the rectangle with the page; a margin, a scanner's backing or the image's size do
    not change it."""
    mask = (ink >= PRINT_INK).astype(np.uint8)
    _count, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    keep = stats[:, cv2.CC_STAT_AREA] >= PRINT_PIECE_PX
    keep[0] = False
    pts = np.argwhere(keep[labels])
    if len(pts) < PRINT_MIN_PX:
        return None
    (_, _), (a, b), _angle = cv2.minAreaRect(pts[:, ::-1].astype(np.float32))
    return (float(min(a, b)) + 1.0, float(max(a, b)) + 1.0)


def _mark_scale(view: CardView, model: PageModel) -> float | None:
    """Card pixels per blank pixel from the size of the card's timing-mark-like blobs."""
    assert model.mark_size_in is not None
    blobs = view.blobs_px(model.dpi) / model.dpi  # inches as if the card had the blank's resolution
    if len(blobs) < 6:
        return None
    want = np.asarray(model.mark_size_in)
    ratios = blobs[:, 2:4] / want  # per blob (sx, sy)
    similar = np.abs(ratios[:, 0] / ratios[:, 1] - 1.0) < 0.25  # the marks' shape
    if similar.sum() < 6:
        return None
    r = ratios[similar].mean(axis=1)
    hist, edges = np.histogram(r, bins=40, range=(SCALE_RANGE[0], SCALE_RANGE[1]))
    k = int(np.argmax(hist))
    if hist[k] < 6:
        return None
    near = r[(r >= edges[max(0, k - 1)]) & (r <= edges[min(len(edges) - 1, k + 2)])]
    return float(np.median(near))


def _translation_start(reference: np.ndarray, card: np.ndarray) -> np.ndarray:
    """A starting warp (reference -> card, 2x3) for ECC: the phase correlation's translation."""
    (dx, dy), _peak = _phase_shift(reference, card)
    return np.array([[1.0, 0.0, dx], [0.0, 1.0, dy]], np.float32)


def _rotation_start(reference: np.ndarray, card: np.ndarray) -> np.ndarray:
    """A starting warp (reference -> card, 2x3) for ECC: the skew among SKEW_STEPS_DEG whose
    phase correlation peaks highest, with its translation. ECC alone can settle on a wrong
    skew where evenly spaced timing marks line up one mark off."""
    h, w = card.shape
    centre = (w / 2.0, h / 2.0)
    best: tuple[float, np.ndarray] | None = None
    for angle in SKEW_STEPS_DEG:
        turn = cv2.getRotationMatrix2D(centre, angle, 1.0)  # card -> turned card
        turned = cv2.warpAffine(card, turn, (w, h), flags=cv2.INTER_LINEAR) if angle else card
        (dx, dy), peak = _phase_shift(reference, turned)
        back = cv2.invertAffineTransform(turn)  # turned card -> card
        warp = back[:, :2] @ np.array([[1.0, 0.0, dx], [0.0, 1.0, dy]]) + np.hstack([np.zeros((2, 2)), back[:, 2:]])
        if best is None or peak > best[0]:
            best = (peak, warp)
    assert best is not None
    return best[1].astype(np.float32)


def _card_ink(gray: np.ndarray, factor: float) -> np.ndarray:
    """The card's ink reduced by ``factor`` (card pixels per reduced pixel)."""
    return ink_of(reduce_to(gray, factor, 1.0))


def _phase_peak(reference: np.ndarray, card: np.ndarray) -> float:
    """The strength of :func:`_phase_shift`'s peak."""
    return _phase_shift(reference, card)[1]


def _phase_shift(reference: np.ndarray, card: np.ndarray) -> tuple[tuple[float, float], float]:
    """Translation (reference px -> card px) and peak strength, both padded to one canvas."""
    a, b = _on_one_canvas(reference, card)
    (dx, dy), peak = cv2.phaseCorrelate(a, b)
    return _nearest_zero(dx, dy, a.shape), float(peak)


def _on_one_canvas(reference: np.ndarray, card: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both images (float32) at the top left of one canvas a quarter larger than either, of a
    size the DFT is fast for: a shift is found modulo the canvas, never wrapping print onto print."""
    rows = max(reference.shape[0], card.shape[0])
    cols = max(reference.shape[1], card.shape[1])
    size = (cv2.getOptimalDFTSize(rows + rows // 4), cv2.getOptimalDFTSize(cols + cols // 4))
    a = np.zeros(size, np.float32)
    b = np.zeros(size, np.float32)
    a[: reference.shape[0], : reference.shape[1]] = reference
    b[: card.shape[0], : card.shape[1]] = card
    return a, b


def _nearest_zero(dx: float, dy: float, size: tuple[int, ...]) -> tuple[float, float]:
    """A shift modulo a canvas of ``size`` (rows, columns): the representative nearest zero."""
    return (float(dx - size[1] if dx > size[1] / 2 else dx), float(dy - size[0] if dy > size[0] / 2 else dy))


def _phase_peaks(reference: np.ndarray, card: np.ndarray, count: int) -> list[tuple[float, float]]:
    """The translations (reference px -> card px, whole pixels) at the ``count`` highest local
    peaks of the phase correlation surface (:func:`_phase_shift` gives the highest, to a
    fraction of a pixel): a page of evenly repeated print (rows of contests, a row of timing
    marks) also correlates a row or a box off, sometimes more strongly than in place."""
    a, b = _on_one_canvas(reference, card)
    cross = cv2.mulSpectrums(cv2.dft(b, flags=cv2.DFT_COMPLEX_OUTPUT), cv2.dft(a, flags=cv2.DFT_COMPLEX_OUTPUT), 0, conjB=True)
    magnitude = cv2.magnitude(cross[..., 0], cross[..., 1]) + np.float32(1e-9)
    normalised = (cross / magnitude[..., None]).astype(np.float32)
    surface = cv2.idft(normalised, flags=cv2.DFT_REAL_OUTPUT | cv2.DFT_SCALE)
    peaks = (surface >= cv2.dilate(surface, np.ones((5, 5), np.uint8))) & (surface > 0)
    ys, xs = np.nonzero(peaks)
    order = np.argsort(-surface[ys, xs])[:count]
    return [_nearest_zero(float(x), float(y), a.shape) for y, x in zip(ys[order], xs[order], strict=True)]


def _ecc(template: np.ndarray, image: np.ndarray, warp: np.ndarray, iterations: int) -> tuple[float, np.ndarray]:
    """ECC's affine fit from ``warp``; a fit no scanner makes (:func:`_scanned_shape`) raises
    ``cv2.error`` as a fit that does not converge does: on a small overlap (a scale
    hypothesis from a wrong dpi tag) ECC can shear the blank onto a corner of the card and
    correlate highly there."""
    criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, iterations, ECC_EPS)
    no_mask = np.ones(image.shape, np.uint8)  # every pixel of the card is valid (the stubs do not accept None)
    cc, out = cv2.findTransformECC(template, image, warp.astype(np.float32), cv2.MOTION_AFFINE, criteria, no_mask, 1)
    if not _scanned_shape(np.asarray(out)[:, :2]):
        raise cv2.error("ECC settled on an affine map no scan makes")
    return float(cc), np.asarray(out)


def _scanned_shape(linear: np.ndarray) -> bool:
    """Whether the 2x2 linear part of a coarse fit (reference px -> card px, the scale
    hypothesis's own scale being 1) is one a scan makes: a scale within ECC_SCALE_OFF of the
    hypothesis, stretch along and across the feed differing by ECC_STRETCH at most, a skew of
    ECC_SKEW_DEG at most."""
    s = np.linalg.svd(linear, compute_uv=False)
    turn = float(np.degrees(np.arctan2(linear[1, 0] - linear[0, 1], linear[0, 0] + linear[1, 1])))
    return bool(np.linalg.det(linear) > 0 and abs(s[0] / s[1] - 1.0) <= ECC_STRETCH
                and all(abs(v - 1.0) <= ECC_SCALE_OFF for v in s) and abs(turn) <= ECC_SKEW_DEG)


def _ecc_halved_first(template: np.ndarray, image: np.ndarray, warp: np.ndarray, iterations: int) -> tuple[float, np.ndarray]:
    """:func:`_ecc` from a fit found first on both inks halved: twice the reach (a start a few
    percent off in scale is a dozen coarse pixels off at a long page's far end, beyond what ECC
    converges from at the coarse resolution itself)."""
    def halved(a: np.ndarray) -> np.ndarray:
        return cv2.resize(a, (max(1, a.shape[1] // 2), max(1, a.shape[0] // 2)), interpolation=cv2.INTER_AREA)

    start = warp.astype(np.float64).copy()
    start[:, 2] = (start[:, 2] + start[:, :2].sum(axis=1) * 0.5 + 0.5) / 2.0 - 0.5  # pixel centres at half size
    _cc, half = _ecc(halved(template), halved(image), start.astype(np.float32), 2 * iterations)
    full = np.asarray(half, np.float64).copy()
    full[:, 2] = 2.0 * (full[:, 2] + 0.5) - 0.5 - full[:, :2].sum(axis=1) * 0.5
    return _ecc(template, image, full.astype(np.float32), iterations)


def _to_full(warp: np.ndarray, model: PageModel, frame_shape: tuple[int, ...], card_shape: tuple[int, ...],
             card_frame_shape: tuple[int, ...]) -> np.ndarray:
    """A frame-resolution warp as blank pixels -> card pixels at full resolution."""
    fr = model.image.shape[1] / frame_shape[1]
    fc = card_shape[1] / card_frame_shape[1]
    ref_to_frame = np.array([[1 / fr, 0, 0.5 / fr - 0.5], [0, 1 / fr, 0.5 / fr - 0.5], [0, 0, 1]])
    frame_to_card = np.array([[fc, 0, 0.5 * fc - 0.5], [0, fc, 0.5 * fc - 0.5], [0, 0, 1]])
    return frame_to_card @ np.vstack([warp.astype(np.float64), [0, 0, 1]]) @ ref_to_frame


def start_scale(matrix: np.ndarray) -> float:
    """Mean linear scale of a 3x3 (affine part)."""
    return float(np.sqrt(abs(np.linalg.det(matrix[:2, :2]))))


# --------------------------------------------------------------------------------------
# Step 4: local refinement


@dataclass(frozen=True)
class Stage:
    """One pass of local refinement: patches of ``half_in`` searched ``search_in`` either way,
    sampled every ``step`` blank pixels."""

    step: int
    half_in: float
    search_in: float
    tolerance_in: float  # RANSAC inlier distance


COARSE_STAGE = Stage(step=REDUCED_STEP, half_in=0.2, search_in=0.2, tolerance_in=0.03)
FINE_STAGE = Stage(step=1, half_in=0.15, search_in=PATCH_SEARCH_IN, tolerance_in=0.01)


def refine(upright: np.ndarray, model: PageModel, matrix: np.ndarray, *, close: bool = False) -> Refined | AlignmentFailure:
    """Both stages of local refinement: the coarse one corrects what the global alignment
    leaves (up to ~0.2 in at a corner), the fine one measures the residual.

    ``close``: the start should already lie within the fine pass's search (the vendor's
    timing marks fitted it, all round the page). The fine pass is then run alone first and
    stands when it shows the start was indeed close (:func:`_start_was_close`); else both
    passes run as for any start."""
    if close:
        fine = refine_locally(upright, model, matrix, FINE_STAGE)
        if isinstance(fine, Refined) and _start_was_close(fine, matrix, model):
            return fine
    coarse = refine_locally(upright, model, matrix, COARSE_STAGE)
    if isinstance(coarse, AlignmentFailure):
        return coarse
    fine = refine_locally(upright, model, coarse.matrix, FINE_STAGE)
    if isinstance(fine, Refined) and fine.points < FOUND_ALL_SHARE * len(model.patches_px):
        # a start off by more than the coarse search in parts of the page (a scale misread by
        # a few percent is off by a third of an inch at the far edges): the places found
        # where it was close fix the map, and from that map both passes reach the rest
        again = refine_locally(upright, model, fine.matrix, COARSE_STAGE)
        if isinstance(again, Refined):
            second = refine_locally(upright, model, again.matrix, FINE_STAGE)
            if isinstance(second, Refined) and second.points > fine.points:
                return second
    return fine


def _start_was_close(fine: Refined, start: np.ndarray, model: PageModel) -> bool:
    """Whether a fine pass run from ``start`` alone (no coarse pass) can stand: its map moves
    none of the blank's refinement points more than FINE_ONLY_AGREE_IN from where ``start``
    put them (a coarse pass would have corrected nothing), and the offsets that agree lie all
    over the print: at least FINE_ONLY_QUADRANT_FOUND in every quarter of the page (split at
    the points' medians) holding FINE_ONLY_QUADRANT_MIN of them. A start off in one region
    finds no patch there (they lie beyond the fine search) and fails the second test; a voter's
    marks or a stamp over some points do not."""
    points = np.asarray(model.patches_px, np.float64)
    moved = cv2.perspectiveTransform(points.reshape(-1, 1, 2), fine.matrix) - cv2.perspectiveTransform(points.reshape(-1, 1, 2), start)
    if float(np.sqrt((moved.reshape(-1, 2) ** 2).sum(axis=1)).max()) > FINE_ONLY_AGREE_IN * model.dpi * start_scale(start):
        return False
    quarters = _quarters(fine, model)
    return bool(quarters) and all(found >= FINE_ONLY_QUADRANT_FOUND for held, found in quarters if held >= FINE_ONLY_QUADRANT_MIN)


def _quarters(refined: Refined, model: PageModel) -> list[tuple[int, int]]:
    """Per quarter of the page (split at the medians of the blank's refinement points), how
    many of those points it holds and how many of them agree in ``refined``; points on the
    timing marks do not count (evenly spaced, they match a start a spacing off as well).
    Empty where no point is left to count."""
    points = np.asarray(model.patches_px, np.float64)
    if refined.agreeing is None or len(points) == 0:
        return []
    points, agreeing = points[~_on_marks(points, model)], refined.agreeing[~_on_marks(refined.agreeing, model)]
    if len(points) == 0:
        return []
    mx, my = np.median(points[:, 0]), np.median(points[:, 1])
    return [(int((((points[:, 0] > mx) == right) & ((points[:, 1] > my) == lower)).sum()),
             int((((agreeing[:, 0] > mx) == right) & ((agreeing[:, 1] > my) == lower)).sum()))
            for right in (False, True) for lower in (False, True)]


def found_all_over(refined: Refined, model: PageModel) -> bool:
    """Whether local refinement found the blank on the card all over it: FOUND_ALL_SHARE of
    the blank's refinement points agreeing on one mapping, and half of them in every quarter
    of the page holding FINE_ONLY_QUADRANT_MIN (:func:`_quarters`). What a stamp or heavy ink
    over a card's empty parts leaves of a right fit (the print's correlation falls, its places
    are all there), and what a wrong page never shows (a page of another layout: a quarter of
    its places at most, none in some quarter)."""
    if refined.points < FOUND_ALL_SHARE * len(model.patches_px):
        return False
    quarters = _quarters(refined, model)
    return bool(quarters) and all(found >= 0.5 * held for held, found in quarters if held >= FINE_ONLY_QUADRANT_MIN)


def _on_marks(points_px: np.ndarray, model: PageModel) -> np.ndarray:
    """Which points (blank px) lie within a refinement patch of one of the blank's timing marks."""
    if not model.has_timing_marks or model.mark_size_in is None or len(points_px) == 0:
        return np.zeros(len(points_px), bool)
    marks = np.asarray(model.marks_in, np.float64) * model.dpi
    reach = (max(model.mark_size_in) / 2 + FINE_STAGE.half_in + FINE_STAGE.search_in) * model.dpi
    d = np.abs(points_px[:, None, :] - marks[None, :, :]).max(axis=2)
    return d.min(axis=1) <= reach


def refine_locally(upright: np.ndarray, model: PageModel, matrix: np.ndarray, stage: Stage = FINE_STAGE) -> Refined | AlignmentFailure:
    """Measure the card's offset at every refinement point of the blank and fit a homography.

    ``matrix``: blank pixels -> upright card pixels. All patch windows are resampled from the
    card with one ``cv2.remap`` (no whole-page warp), every ``stage.step`` blank pixels.
    """
    points = np.asarray(model.patches_px, np.float64)
    if len(points) < MIN_PATCHES:
        return AlignmentFailure(f"the blank has only {len(points)} textured places to refine on (need {MIN_PATCHES})")
    step = stage.step
    half = max(3, int(stage.half_in * model.dpi / step))
    search = max(2, int(round(stage.search_in * model.dpi / step)))
    side = 2 * (half + search)
    windows = _windows(upright, matrix, points - (half + search) * step, side, step)
    templates = model.patch_templates(step, half)
    found_ref, found_card = [], []
    for k, (x, y) in enumerate(points.astype(int)):
        template = templates[k]
        if template is None:
            continue
        result = cv2.matchTemplate(windows[k], template, cv2.TM_CCOEFF_NORMED)
        _, peak, _, (px, py) = cv2.minMaxLoc(result)
        if peak < PATCH_MIN_SCORE or not (0 < px < result.shape[1] - 1 and 0 < py < result.shape[0] - 1):
            continue
        dx = (px - search + _parabola(result[py, px - 1: px + 2])) * step
        dy = (py - search + _parabola(result[py - 1: py + 2, px])) * step
        found_ref.append((x, y))
        found_card.append((x + dx, y + dy))  # where the blank's point sits, in the card resampled at blank px
    measured = len(found_ref)
    if measured < MIN_PATCHES:
        return AlignmentFailure(f"only {measured} places of the blank were found on the card (need {MIN_PATCHES})")
    src = np.asarray(found_ref, np.float64)
    dst = cv2.perspectiveTransform(np.asarray(found_card, np.float64).reshape(-1, 1, 2), matrix).reshape(-1, 2)
    scale = start_scale(matrix)
    fitted, mask = cv2.findHomography(src, dst, cv2.RANSAC, stage.tolerance_in * model.dpi * scale)
    if fitted is None or int(mask.sum()) < MIN_PATCHES:
        return AlignmentFailure(f"the {measured} local offsets measured agree with no single mapping")
    keep = mask.ravel().astype(bool)
    fitted, _ = cv2.findHomography(src[keep], dst[keep], 0)
    projected = cv2.perspectiveTransform(src[keep].reshape(-1, 1, 2), fitted).reshape(-1, 2)
    residual_px = float(np.sqrt(np.mean(np.sum((projected - dst[keep]) ** 2, axis=1))))
    residual_in = residual_px / (model.dpi * scale)
    if keep.sum() < MIN_INLIER_SHARE * measured:
        return AlignmentFailure(f"only {int(keep.sum())} of {measured} local offsets fit one mapping "
                                f"(residual {residual_in:.3f} in)", 0.0)
    return Refined(fitted / fitted[2, 2], residual_in, int(keep.sum()), measured, src[keep])


def _windows(image: np.ndarray, matrix: np.ndarray, origins: np.ndarray, side: int, step: int = 1) -> np.ndarray:
    """(n, side, side) float32 windows of ``image`` every ``step`` blank pixels, one remap."""
    n = len(origins)
    u, v = np.meshgrid(np.arange(side, dtype=np.float64) * step, np.arange(side, dtype=np.float64) * step)
    # each row of the matrix at (origin + grid offset): its grid part once for all the windows,
    # its origin part once per window, summed by broadcasting (half the arithmetic; the same map
    # once rounded to float32, but for a rare last bit)
    m = matrix
    grid = [m[r, 0] * u + m[r, 1] * v for r in range(3)]
    at = [m[r, 0] * origins[:, 0] + m[r, 1] * origins[:, 1] + m[r, 2] for r in range(3)]
    den = np.add(grid[2][None], at[2][:, None, None])
    mx = np.add(grid[0][None], at[0][:, None, None])
    mx /= den
    my = np.add(grid[1][None], at[1][:, None, None])
    my /= den
    mx, my = mx.astype(np.float32).reshape(n * side, side), my.astype(np.float32).reshape(n * side, side)
    source = image
    if step > 1:  # sample an area-reduced card so a coarse window is not aliased
        # by a whole factor (OpenCV's fast path): the nearest where within REDUCE_WHOLE, else
        # the one under the wanted factor (an exact 2.25 or 4.5 costs three times as much,
        # and a coarse pass needs no exact filter)
        factor = start_scale(matrix) * step
        k = round(factor) if abs(factor / max(round(factor), 1) - 1.0) <= REDUCE_WHOLE else int(factor)
        h, w = image.shape[:2]
        if k >= 2 and h >= 2 * k and w >= 2 * k:
            source = cv2.resize(image[: h // k * k, : w // k * k], (w // k, h // k), interpolation=cv2.INTER_AREA)
            f = w / source.shape[1]
            mx, my = (mx + 0.5) / f - 0.5, (my + 0.5) / f - 0.5
    out = cv2.remap(source, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=255)
    return out.reshape(n, side, side).astype(np.float32)


def _parabola(values: np.ndarray) -> float:
    denominator = values[0] - 2.0 * values[1] + values[2]
    return 0.0 if denominator >= 0 else float(0.5 * (values[0] - values[2]) / denominator)
