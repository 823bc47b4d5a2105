"""Show-through: the other side's ink seen through the paper.

A felt pen's fill on one side of a sheet shows faintly on the other, mirrored and blurred
(what a scan of thin ballot stock shows of a heavy mark behind it). Over an empty target the
ghost is a light, even tone, the very look of a light erasure or a faint fill, so it goes to a
person. Where both sides of the sheet are at hand (a two-page file: a duplex scan saved as
one file), the other side tells where its ghost must lie and how strong it is:

1. each side's added ink (the card's darkness beyond its blank's print) in its layout's frame
   (:func:`added_ink`), at FIT_PPI;
2. the other side's dark marks (ink of STRONG_INK or more), mirrored as the sheet turns over
   (left to right about its long edge, or top to bottom about its short edge: both are tried),
   and blurred as paper spreads light (:func:`measure`): the ghosts' strength is the median, over
   the other side's marks, of this side's added ink on bare paper under each mark's core over
   that mark's own ink. A strength within STRENGTH_RANGE, measured under MIN_MARKS marks or more,
   and at least WRONG_MIRROR_RATIO times the other mirror's (where no ghost lies, this side's
   ink there is its paper's noise) is the sheet's show-through;
3. the side with that show-through divided out (:func:`taken_out`): paper that a ghost of
   strength k over ink s darkened lets ``1 - k s`` of the light through, so each pixel is
   brightened by ``1 / (1 - k s)``; the voter's own ink on this side keeps what it had.

The caller scores the side again on the image so corrected; only a target that was for a
person (a score between the levels) is read again so: a vote, a clear no vote and any flag stand.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

FIT_PPI = 100.0  # the frame the two sides are compared in (0.01 in: an oval's inside has pixels of bare paper)
STRONG_INK = 0.3  # the other side's added ink that soaks through: a pen's mark, not its own ghosts or paper
PAPER = 0.12  # the blank's darkness under which it is bare paper (its print is where no ghost can be measured)
OWN_INK = 0.4  # this side's added ink at or over this is the voter's own ink there, not a ghost
MIN_CORE_PX = 6  # FIT_PPI px of bare paper under a mark's core for it to measure the ghost
MIN_MARKS = 3  # marks of the other side the strength must be measured under
STRENGTH_RANGE = (0.03, 0.45)  # a ghost this share of its mark's darkness, no fainter (noise) nor darker (no ghost)
WRONG_MIRROR_RATIO = 3.0  # the right mirror's strength over the wrong one's at least
PAPER_IN = 0.3  # the paper level is the brightest within this (a mark's core is narrower; a lamp's fall-off wider)
COVER_IN = 0.03  # print this near a mark is under it (a fill over its outline)
HOLE_IN = 0.08  # a mark's hole this wide or narrower is print it covers (a ballot number inside its oval)
BLUR_IN = 0.02  # light spreads this far (sigma) through the paper
MIRRORS = ("left-right", "top-bottom")


@dataclass(frozen=True, slots=True)
class ShowThrough:
    """The other side's ghost on this side: its strength (a share of the mark's darkness), the
    way the sheet turns over, and the marks it was measured under."""

    strength: float
    mirror: str
    marks: int

    def describe(self) -> str:
        return (f"the other side's show-through taken out (its marks seen mirrored {self.mirror} at "
                f"{self.strength:.0%} of their darkness, measured under {self.marks} of them)")


def blank_print(blank: np.ndarray, blank_dpi: float, size_in: tuple[float, float]) -> np.ndarray:
    """A blank's darkness in its layout's frame at FIT_PPI, its print widened a pixel (what
    :func:`added_ink` takes out; the same for every card of the blank: keep it)."""
    near = cv2.dilate(_darkness(_in_frame(blank, np.diag([blank_dpi, blank_dpi, 1.0]), size_in)), np.ones((3, 3), np.uint8))
    near.setflags(write=False)
    return near


def added_ink(upright: np.ndarray, hom: np.ndarray, near: np.ndarray, size_in: tuple[float, float]) -> np.ndarray:
    """A side's added ink: its darkness in the layout's frame at FIT_PPI beyond its blank's
    print ``near`` (:func:`blank_print`; a ghost is measured only where that is bare paper).
    ``hom`` maps layout inches to the upright card's pixels."""
    return np.clip(_darkness(_in_frame(upright, hom, size_in)) - near, 0.0, 1.0)


def measure(ink: np.ndarray, blank: np.ndarray, other_ink: np.ndarray, other_blank: np.ndarray) -> ShowThrough | None:
    """This side's show-through of the other side's marks (see the module docstring), or None
    when the sheet shows none that can be measured (too few marks, ghosts too faint, or both
    mirrors alike)."""
    if ink.shape != other_ink.shape:
        return None  # the sides are not one sheet's (another page size)
    marks = marks_of(other_ink, other_blank)
    found = {name: _strength(ink, blank, _mirrored(marks, name)) for name in MIRRORS}
    (best, (strength, under)), (_, (other, _)) = sorted(found.items(), key=lambda kv: -kv[1][0])
    if under < MIN_MARKS or not STRENGTH_RANGE[0] <= strength <= STRENGTH_RANGE[1]:
        return None
    if strength < WRONG_MIRROR_RATIO * max(other, 0.0):
        return None
    return ShowThrough(strength, best, under)


def ghost(other_ink: np.ndarray, other_blank: np.ndarray, show: ShowThrough) -> np.ndarray:
    """The other side's marks as this side sees them through the paper (darkness, layout frame
    at FIT_PPI)."""
    marks = _mirrored(marks_of(other_ink, other_blank), show.mirror)
    return show.strength * cv2.GaussianBlur(marks, (0, 0), BLUR_IN * FIT_PPI)


def marks_of(ink: np.ndarray, blank: np.ndarray) -> np.ndarray:
    """A side's dark marks (added ink of STRONG_INK or more) with the print they cover: a fill
    covers its oval's outline where it meets it and a number printed inside, which show no
    added ink (the print is as dark) yet soak through under the fill: print within
    COVER_IN of a mark and holes in a mark HOLE_IN wide or narrower count as the mark."""
    strong = np.where(ink >= STRONG_INK, ink, 0.0).astype(np.float32)
    reach = int(round(COVER_IN * FIT_PPI)) * 2 + 1
    covered = np.where(blank >= PAPER, cv2.dilate(strong, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (reach, reach))), 0.0)
    side = int(round(HOLE_IN * FIT_PPI)) | 1
    return cv2.morphologyEx(np.maximum(strong, covered), cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (side, side)))


def taken_out(upright: np.ndarray, hom: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """The upright side with the ghost ``seen`` (:func:`ghost`) divided out."""
    h, w = upright.shape[:2]
    to_card = hom @ np.diag([1.0 / FIT_PPI, 1.0 / FIT_PPI, 1.0])
    on_card = cv2.warpPerspective(seen, to_card, (w, h), flags=cv2.INTER_LINEAR, borderValue=0.0)
    lighter = upright.astype(np.float32) / np.maximum(1.0 - on_card, 0.5)
    return np.clip(lighter, 0.0, 255.0).astype(np.uint8)


def _strength(ink: np.ndarray, blank: np.ndarray, marks: np.ndarray) -> tuple[float, int]:
    """The median ratio, over ``marks`` (the other side's, mirrored), of this side's added ink on
    bare paper under a mark's core to the mark's own ink there; and how many marks gave one."""
    strong = (marks >= STRONG_INK).astype(np.uint8)
    count, labels = cv2.connectedComponents(strong, connectivity=8)
    core = cv2.erode(strong, np.ones((3, 3), np.uint8)).astype(bool)
    usable = core & (blank < PAPER) & (ink < OWN_INK)
    ratios = []
    for label in range(1, count):
        under = usable & (labels == label)
        if np.count_nonzero(under) >= MIN_CORE_PX:
            ratios.append(float(ink[under].mean() / marks[under].mean()))
    return (float(np.median(ratios)), len(ratios)) if ratios else (0.0, 0)


def _mirrored(image: np.ndarray, mirror: str) -> np.ndarray:
    return np.ascontiguousarray(image[:, ::-1] if mirror == "left-right" else image[::-1, :])


def _in_frame(image: np.ndarray, hom: np.ndarray, size_in: tuple[float, float]) -> np.ndarray:
    """``image`` resampled into the layout's frame at FIT_PPI (area-averaged first)."""
    w, h = int(round(size_in[0] * FIT_PPI)), int(round(size_in[1] * FIT_PPI))
    px_per_in = float(np.sqrt(abs(np.linalg.det(hom[:2, :2]))))
    source = cv2.GaussianBlur(image, (0, 0), max(0.5, px_per_in / FIT_PPI / 2.0)) if px_per_in > FIT_PPI else image
    to_card = hom @ np.diag([1.0 / FIT_PPI, 1.0 / FIT_PPI, 1.0])
    return cv2.warpPerspective(source, to_card, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderValue=255).astype(np.float32)


def _darkness(frame: np.ndarray) -> np.ndarray:
    """``1 - gray / paper``, the paper level local (the brightest within PAPER_IN, smoothed: a
    scanner lamp's fall-off across the sheet is no ink)."""
    side = int(round(PAPER_IN * FIT_PPI)) | 1
    paper = cv2.GaussianBlur(cv2.dilate(frame, np.ones((side, side), np.uint8)), (0, 0), side / 2.0)
    return np.clip(1.0 - frame / np.maximum(paper, 1.0), 0.0, 1.0)
