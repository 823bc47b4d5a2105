"""Scanner streaks: a dark line down the whole scan where dirt or a scratch on the
scanner's glass darkened one column of sensor pixels on every row the paper passed.

Such a line crosses every target of its column on every card the scanner reads until the
glass is cleaned, and the machine cannot tell the line from a pen stroke there. Found here
from the scan alone, as fed (a streak is vertical in the scanner's own pixels whatever the
card's skew or feed direction): a column dark on (nearly) every stretch of the paper's
height, from its top edge to its bottom edge, margins included. Print never runs so: a
ruled line between contests stops short of the margins, a column of timing marks has its
gaps, text its line spacing. (:func:`on_print` is the check against the blank, once a
card is registered: a rule printed edge to edge on a sheet whose margins the scanner cut
is the blank's too.)

Pure: an image in, the streaks' columns out. VotingWorks' interpreter rejects a sheet
with a vertical streak the same way (columns of black without gaps, the image's edges
left out); here the card is still read and only the targets a streak crosses go to a
person, with the reason, so a board learns at its first card that the glass needs cleaning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from scanpipe.imaging.reference import paper_level

STREAK_DARK = 0.6  # a pixel darker than this share of the paper level is dark (as print is counted)
STREAK_MIN_PAPER = 100  # a page whose paper is darker than this (a scan of nothing) is not looked at
STREAK_WINDOWS = 200  # the paper's height in this many stretches (1/18 in on a letter sheet) ...
STREAK_WINDOW_DARK = 0.5  # ... every one of them dark on at least this share of its rows
STREAK_BACKGROUND = 0.3  # rows or columns averaging under this share of the paper level are the scanner's background round a smaller sheet
STREAK_CANDIDATE = 0.75  # a streak's column averages under this share of the paper level over the paper's height
STREAK_PAPER_BESIDE = 0.6  # ... and the columns a little way either side of it over this (a line on paper, not an edge)
PAPER_SAMPLE = 4  # the paper level from every fourth pixel both ways
SIDE_RUN = 6  # columns averaged to judge the background, and either side of a streak ...
SIDE_GAP = 3  # ... this many columns away from it
STREAK_EDGE_SHARE = 0.01  # columns this near the paper's sides are not looked at (a shadow along the edge)
STREAK_MAX_WIDTH_SHARE = 0.02  # of the image's width: a wider dark band down the page is something else
STREAK_ON_PRINT = 0.5  # a streak whose line the blank prints on this share of its points is the blank's print


@dataclass(frozen=True, slots=True)
class Streak:
    """Columns ``x0`` to ``x1`` (inclusive) of the image as fed, dark from the paper's top
    edge to its bottom edge."""

    x0: int
    x1: int

    def describe(self, width: int) -> str:
        columns = f"column {self.x0}" if self.x0 == self.x1 else f"columns {self.x0}-{self.x1}"
        return f"{columns} of {width} ({(self.x0 + self.x1) / 2 / max(1, width):.0%} across)"


def vertical_streaks(gray: np.ndarray) -> tuple[Streak, ...]:
    """The scanner streaks of a gray page (uint8, as fed), left to right (about a
    millisecond a 200-dpi page: means of rows and columns, then only the few columns dark
    enough on average looked at stretch by stretch)."""
    if gray.ndim != 2 or min(gray.shape) < STREAK_WINDOWS // 4:
        return ()
    paper = paper_level(gray[::PAPER_SAMPLE, ::PAPER_SAMPLE])
    if paper < STREAK_MIN_PAPER:
        return ()
    rows = np.flatnonzero(cv2.reduce(gray, 1, cv2.REDUCE_AVG, dtype=cv2.CV_32F).ravel() >= STREAK_BACKGROUND * paper)
    if rows.size < STREAK_WINDOWS:
        return ()
    band = gray[rows[0]: rows[-1] + 1]  # the paper's height (the scanner's background above or below left out)
    columns = cv2.reduce(band, 0, cv2.REDUCE_AVG, dtype=cv2.CV_32F).ravel() / paper
    w = columns.size
    # the scanner's background beside a smaller sheet (dithered, it alternates: judged over a few columns)
    near = np.convolve(columns, np.ones(SIDE_RUN) / SIDE_RUN, mode="same")
    left, right = 0, w - 1
    while left < w and near[left] < STREAK_BACKGROUND:
        left += 1
    while right > left and near[right] < STREAK_BACKGROUND:
        right -= 1
    edge = max(SIDE_RUN, int(round(w * STREAK_EDGE_SHARE)))
    left, right = left + edge, right - edge
    if right <= left:
        return ()
    candidates = np.flatnonzero(columns[left: right + 1] <= STREAK_CANDIDATE) + left
    if candidates.size == 0:
        return ()
    window = band.shape[0] // STREAK_WINDOWS
    dark = band[: window * STREAK_WINDOWS, candidates] < STREAK_DARK * paper
    stretches = dark.reshape(STREAK_WINDOWS, window, candidates.size).mean(axis=1, dtype=np.float32)
    found = candidates[stretches.min(axis=0) >= STREAK_WINDOW_DARK]
    if found.size == 0:
        return ()
    runs: list[tuple[int, int]] = []
    start = prev = int(found[0])
    for x in (int(v) for v in found[1:]):
        if x > prev + 1:
            runs.append((start, prev))
            start = x
        prev = x
    runs.append((start, prev))
    widest = max(1, int(w * STREAK_MAX_WIDTH_SHARE))
    beside = [(x0 - SIDE_GAP - SIDE_RUN, x0 - SIDE_GAP, x1 + 1 + SIDE_GAP, x1 + 1 + SIDE_GAP + SIDE_RUN) for x0, x1 in runs]
    return tuple(Streak(x0, x1) for (x0, x1), (a, b, c, d) in zip(runs, beside, strict=True)
                 if x1 - x0 + 1 <= widest and a >= 0 and d <= w  # on paper both sides: a line, not an edge
                 and columns[a:b].mean() >= STREAK_PAPER_BESIDE and columns[c:d].mean() >= STREAK_PAPER_BESIDE)


LIGHT_MAX_PX = 4  # a light streak: at most this many columns wide ...
LIGHT_BESIDE_PX = 2  # ... judged against the columns this far beside it (the line's blur left out) ...
LIGHT_CUT = 0.95  # ... light on this share at least of the rows where print lies on both sides of it ...
LIGHT_MIN_RUNS = 10  # ... in this many separate runs of rows at least (lines of text, rules, timing marks: not one double rule) ...
LIGHT_SPAN = 0.4  # ... spread over this share of the paper's height at least, ...
LIGHT_EDGE_SHARE = 0.03  # ... and this share of the image's width at least from its sides (a torn edge, a scanner's bed, timing marks) ...
LIGHT_ADJACENT = 0.5  # ... the print reaching it on both sides in this share of those rows at least (it cuts a stroke: not a gap in print)


def light_streaks(gray: np.ndarray) -> tuple[Streak, ...]:
    """The light streaks of a gray page (uint8, as fed), left to right: a line of one to
    LIGHT_MAX_PX columns down the scan where a sensor element read too bright (a dead pixel of
    the line sensor, a calibration fault), which shows only where it cuts print: wherever the
    page prints on both sides of it (LIGHT_BESIDE_PX away), it is paper, LIGHT_CUT of those
    rows, in LIGHT_MIN_RUNS runs over LIGHT_SPAN of the paper's height, LIGHT_EDGE_SHARE of the
    width from either side, the print reaching it on both sides (LIGHT_ADJACENT of those rows:
    a stroke cut, not a gap between two). Print is never cut so down a whole page: a gap
    between two rules runs one stretch, a glyph's counter a few rows. Looked for only where a
    card could not be read (about 0.1 s a 200-dpi page, 0.4 s a 300-dpi legal one)."""
    if gray.ndim != 2 or min(gray.shape) < STREAK_WINDOWS // 4:
        return ()
    paper = paper_level(gray[::PAPER_SAMPLE, ::PAPER_SAMPLE])
    if paper < STREAK_MIN_PAPER:
        return ()
    dark = gray < STREAK_DARK * paper
    h, w = dark.shape
    b = LIGHT_BESIDE_PX
    edge = max(SIDE_RUN, int(round(w * LIGHT_EDGE_SHARE)))
    found: list[tuple[int, int]] = []  # the windows cut so: first and last column
    light = ~dark
    for width in range(1, LIGHT_MAX_PX + 1):
        n = w - width + 1 - 2 * b
        if n <= 0:
            break
        run = light[:, b: b + n].copy()  # columns x .. x + width - 1 all light, x = b .. b + n - 1
        for k in range(1, width):
            run &= light[:, b + k: b + k + n]
        both = dark[:, : n] & dark[:, width - 1 + 2 * b: width - 1 + 2 * b + n]  # print LIGHT_BESIDE_PX beside either edge
        bridged = np.count_nonzero(both, axis=0)
        cut = np.count_nonzero(both & run, axis=0)
        for i in np.flatnonzero((cut >= LIGHT_CUT * np.maximum(bridged, 1)) & (bridged >= LIGHT_MIN_RUNS)):
            rows = np.flatnonzero(both[:, i] & run[:, i])
            runs = 1 + int(np.count_nonzero(np.diff(rows) > 1))
            x0, x1 = int(i) + b, int(i) + b + width - 1
            if (runs >= LIGHT_MIN_RUNS and rows[-1] - rows[0] >= LIGHT_SPAN * h and edge <= x0 and x1 < w - edge
                    and np.count_nonzero(dark[rows, x0 - 1] & dark[rows, x1 + 1]) >= LIGHT_ADJACENT * rows.size):
                found.append((x0, x1))
    # the windows over one line (a blurred line is found at more than one width) taken together
    out: list[Streak] = []
    for x0, x1 in sorted(found):
        if out and x0 <= out[-1].x1 + 1:
            out[-1] = Streak(out[-1].x0, max(out[-1].x1, x1))
        else:
            out.append(Streak(x0, x1))
    return tuple(out)


def upright_columns(streak: Streak, width: int, rotated_180: bool) -> tuple[int, int]:
    """The streak's columns in the card turned upright (a 180-degree feed mirrors them)."""
    return (width - 1 - streak.x1, width - 1 - streak.x0) if rotated_180 else (streak.x0, streak.x1)


def on_print(columns: tuple[int, int], height: int, to_blank: np.ndarray, blank: np.ndarray) -> bool:
    """Whether the blank prints the streak's line itself: ``columns`` of the upright card
    (``height`` rows), ``to_blank`` its pixels -> the blank's pixels (3x3), ``blank`` gray."""
    x = (columns[0] + columns[1]) / 2.0
    ys = np.linspace(0.0, height - 1.0, 400)
    points = np.stack([np.full_like(ys, x), ys, np.ones_like(ys)])
    mapped = to_blank @ points
    bx, by = mapped[0] / mapped[2], mapped[1] / mapped[2]
    h, w = blank.shape
    inside = (bx >= 1) & (bx <= w - 2) & (by >= 0) & (by <= h - 1)
    if not inside.any():
        return False
    paper = paper_level(blank)
    cols, rows = np.round(bx[inside]).astype(int), np.round(by[inside]).astype(int)
    near = np.minimum.reduce([blank[rows, cols - 1], blank[rows, cols], blank[rows, cols + 1]])  # the blank's line may sit a pixel off
    return float(np.mean(near < STREAK_DARK * paper)) >= STREAK_ON_PRINT


PAINT_BESIDE = 2  # a streak is painted over from the columns this far beside it (its own blur left out)


def painted_over(gray: np.ndarray, columns: Sequence[tuple[int, int]]) -> np.ndarray:
    """A copy of the upright card with each streak's ``columns`` (and PAINT_BESIDE either side,
    where the line blurs into the paper) painted over, row by row, by the straight blend of the
    columns just beside them: what the card shows there without the line. Ink wider than the
    streak (a filled oval, a pen stroke across it) continues through it; paper stays paper."""
    out = gray.copy()
    w = gray.shape[1]
    for c0, c1 in columns:
        a, b = max(0, c0 - PAINT_BESIDE - 1), min(w - 1, c1 + PAINT_BESIDE + 1)
        if b - a < 2:
            continue
        left, right = gray[:, a].astype(np.float32), gray[:, b].astype(np.float32)
        share = (np.arange(a + 1, b, dtype=np.float32) - a) / (b - a)
        out[:, a + 1: b] = np.round(left[:, None] * (1.0 - share) + right[:, None] * share).astype(gray.dtype)
    return out


CROSS_PAD_PX = 1  # a target whose box comes this near a streak's columns is crossed by it


def crossing(columns: Sequence[tuple[int, int]], box_px: Sequence[float]) -> list[tuple[int, int]]:
    """The streaks (``columns`` of the upright card) that cross a target's box (x, y, w, h,
    the upright card's pixels), CROSS_PAD_PX grazing included."""
    x, w = box_px[0], box_px[2]
    return [(c0, c1) for c0, c1 in columns if x <= c1 + CROSS_PAD_PX and x + w >= c0 - CROSS_PAD_PX]


SEE_THROUGH_LEVEL = 0.15  # a streak's line at least this share of the paper's level shows ink under it
SEE_THROUGH_DARKER = 0.8  # a row of the line inside a target under this share of the line's own level: something under it
SEE_THROUGH_INSET = 0.2  # of a target's height, left out at its top and bottom (the outline the line crosses there)
# A line too dark to see through hides nothing a voter draws where it is THIN_LINE_IN wide or
# less and the columns beside it that painting over replaces (PAINT_BESIDE either side) show
# nothing inside the target but the blank's print (no pixel there under BESIDE_DARKER of its
# column's own level): a fill, a check, an X or a dot is wider than such a line and shows
# beside it; only a stroke thinner than the line, drawn exactly along it, could hide under it.
THIN_LINE_IN = 0.011
BESIDE_DARKER = 0.8


@dataclass(frozen=True, slots=True)
class StreakLine:
    """What a streak's line down the upright card lets one see of a target it crosses, per
    row of the card: ``through``, the line's mean level where it is light enough to see
    through (SEE_THROUGH_LEVEL of the paper's level or more; else None: a black line, a
    bilevel scan's, hides whatever is under it); ``beside``, where it is THIN_LINE_IN wide or
    less, the darkest of the columns beside it that painting over replaces, each as a share
    of its own level (the line's blur), the blank's print left out; else None."""

    through: np.ndarray | None
    beside: np.ndarray | None


def streak_line(gray: np.ndarray, columns: tuple[int, int], px_per_in: float,
                blank: tuple[np.ndarray, np.ndarray] | None = None) -> StreakLine:
    """The :class:`StreakLine` of the streak at ``columns`` of the upright card ``gray``
    (``px_per_in``: the card's scale); ``blank``: the card's pixels -> its blank's (3x3) and
    the blank (gray), where the columns beside the line are judged only where the blank
    shows paper (BESIDE_PRINT_PX round its print: a registration's pixel). Measured once per
    streak, for :func:`nothing_under`."""
    c0, c1 = columns
    line = gray[:, c0: c1 + 1].astype(np.float32).mean(axis=1)
    through = line if float(np.median(line)) >= SEE_THROUGH_LEVEL * paper_level(gray[::PAPER_SAMPLE, ::PAPER_SAMPLE]) else None
    a, b = c0 - PAINT_BESIDE, c1 + PAINT_BESIDE
    if c1 - c0 + 1 > THIN_LINE_IN * px_per_in or a < 0 or b >= gray.shape[1]:
        return StreakLine(through, None)
    where = np.r_[a:c0, c1 + 1:b + 1]
    beside = gray[:, where].astype(np.float32)
    relative = beside / np.maximum(np.median(beside, axis=0), 1.0)
    if blank is not None:
        ys, xs = np.mgrid[0:gray.shape[0], 0:len(where)]
        relative[_printed_at(where[xs].ravel(), ys.ravel(), *blank).reshape(relative.shape)] = 1.0
    return StreakLine(through, relative.min(axis=1))


BESIDE_PRINT_PX = 2  # the blank's print, widened this many of its pixels each way


def _printed_at(xs: np.ndarray, ys: np.ndarray, to_blank: np.ndarray, blank: np.ndarray) -> np.ndarray:
    """Per point (``xs``, ``ys``: the upright card's pixels), whether the blank prints within
    BESIDE_PRINT_PX of it (STREAK_DARK of its paper's level or darker); off the blank, no."""
    mapped = to_blank @ np.stack([xs, ys, np.ones(len(xs))]).astype(np.float64)
    bx, by = np.round(mapped[0] / mapped[2]).astype(int), np.round(mapped[1] / mapped[2]).astype(int)
    size = 2 * BESIDE_PRINT_PX + 1
    printed = cv2.dilate((blank < STREAK_DARK * paper_level(blank)).astype(np.uint8), np.ones((size, size), np.uint8))
    h, w = blank.shape
    inside = (bx >= 0) & (bx < w) & (by >= 0) & (by < h)
    out = np.zeros(len(xs), bool)
    out[inside] = printed[by[inside], bx[inside]] > 0
    return out


def nothing_under(line: StreakLine, box_px: Sequence[float]) -> bool:
    """Whether a streak's line (:func:`streak_line`) shows nothing under it inside a target
    (``box_px``: x, y, w, h, its top and bottom SEE_THROUGH_INSET left out): where one sees
    through it, no row of it there darker than SEE_THROUGH_DARKER of the line's own level (ink
    under a line darkens it as ink darkens paper); or, where it is thin, nothing beside it
    there but the blank's print (no pixel of the columns beside it under BESIDE_DARKER of
    their own level: a voter's stroke, wider than the line, would show there)."""
    _x, y, _w, h = box_px
    r0, r1 = max(0, int(y + SEE_THROUGH_INSET * h)), int(np.ceil(y + (1 - SEE_THROUGH_INSET) * h))
    through, beside = line.through, line.beside
    if through is not None and min(r1, len(through)) > r0:
        if float(through[r0:r1].min()) >= SEE_THROUGH_DARKER * float(np.median(through)):
            return True
    return beside is not None and min(r1, len(beside)) > r0 and float(beside[r0:r1].min()) >= BESIDE_DARKER
