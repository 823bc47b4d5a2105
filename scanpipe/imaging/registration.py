"""Register a card image to its layout page: a homography from layout inches to pixels.

Fiducials (our cards): each corner window of the image (where the layout's square should
be, widened for +-3 degrees of skew, +-2% stretch and shifts up to ~0.3 in) is reduced to
~100 dpi, Otsu-thresholded, and its contours are tested for a solid square of the expected
side; the winner's centroid is then measured at full resolution (sub-pixel). Four centres
give a homography, three an affine transform (a torn or smudged corner does not stop
registration); four centres that disagree with every affine fit drop the worst one.

Orientation: fiducials are symmetric, so a card fed upside down registers either way.
The QR code decides (:func:`orientation_from_code`); without a readable code,
:func:`layout_fit_score` compares how well printed oval outlines sit at the targets in
both orientations.

Blank reference scans (other vendors' cards): :mod:`scanpipe.imaging.align` aligns the card's
printed content with the blank's (coarse to fine) and measures the residual; a 180-degree
feed is found there and reported as ``rotated_180``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from scanpipe.imaging.align import FINE_STAGE, AlignmentFailure, Refined, align_to_page, refine, refine_locally, start_scale
from scanpipe.imaging.reference import PageModel
from scanpipe.types import Box, DecodedCode, LayoutPage, Reason, Registration

CORNER_NAMES = ("top-left", "top-right", "bottom-left", "bottom-right")
SEARCH_MARGIN_IN = 0.7  # skew of 3 degrees moves a corner ~0.36 in; shifts add ~0.3 in
WORK_DPI = 100.0
MIN_DPI, MAX_DPI = 100.0, 600.0
MAX_AFFINE_RESIDUAL_IN = 0.03
# A corner square a tear, a dog-ear or the scanner's edge took part of still shows its inner
# corner (the one facing the page's centre): where fewer than three squares are found whole,
# each such remnant's inner corner is used (:func:`_inner_corner`) when its two edges there run
# straight, at right angles, for INNER_EDGE_SHARE of the square's side, and the fit stands only
# with all four corners agreeing and the targets' printed outlines seen where it puts them
# (INNER_FIT_MIN of them). Made on the hardest profile's seed 3232: four cards of its 8,476
# (a tear or the scanner's edge through two squares, skewed 2.8-3 degrees) were refused before
INNER_EDGE_SHARE = 0.4
INNER_EDGE_TOL_PX = 2.5  # an edge's pixels this far off the corner's row or column at most ...
INNER_EDGE_SLOPE = 0.06  # ... and this much more a pixel along it (a skew of 3.4 degrees)
INNER_MIN_AREA = 0.15  # of the square's area, at least, left of it
INNER_FIT_MIN = 0.9
INNER_NEAR_IN = 0.2  # a remnant lies this near where the squares found whole put its square (besides its side)
MAX_BLANK_RESIDUAL_IN = 0.012  # a card registered to its blank must fit it this well (RMS)
MAX_PERSPECTIVE_IN = 0.04  # a scanned card's mapping is affine within this (photos are not)
MIN_SCAN_DPI = 120.0  # below this a vendor card is refused (low_resolution): its ovals are a few pixels


@dataclass(frozen=True)
class RegistrationFailure:
    """Why a card could not be registered (a per-card value, not an exception)."""

    reason: Reason
    detail: str


# --------------------------------------------------------------------------------------
# geometry helpers


def homography_of(registration: Registration) -> np.ndarray:
    return np.asarray(registration.homography, dtype=np.float64).reshape(3, 3)


def map_points(registration: Registration, pts_in: np.ndarray | Sequence[tuple[float, float]]) -> np.ndarray:
    """Layout inches ``(N, 2)`` -> image pixels ``(N, 2)`` of the upright image."""
    pts = np.asarray(pts_in, dtype=np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(pts, homography_of(registration)).reshape(-1, 2)


def map_box(registration: Registration, box_in: Box) -> tuple[float, float, float, float]:
    """Pixel ``(x, y, w, h)``: bounding rectangle of the box's four mapped corners."""
    x, y, w, h = box_in
    px = map_points(registration, [(x, y), (x + w, y), (x + w, y + h), (x, y + h)])
    x0, y0 = px.min(axis=0)
    x1, y1 = px.max(axis=0)
    return float(x0), float(y0), float(x1 - x0), float(y1 - y0)


def estimate_dpi(shape: tuple[int, ...], page: LayoutPage, dpi_hint: float | None = None) -> float:
    """Scan resolution from the image size (scanners may add margins, so the smaller
    ratio); a metadata hint is preferred when it is consistent with that."""
    height, width = shape[:2]
    estimate = min(width / page.size_in[0], height / page.size_in[1])
    if dpi_hint and 0.75 * estimate <= dpi_hint <= 1.05 * estimate:
        return float(dpi_hint)
    return float(estimate)


def _box_centre(box: Box) -> tuple[float, float]:
    return box[0] + box[2] / 2.0, box[1] + box[3] / 2.0


def _rotation_180(shape: tuple[int, ...]) -> np.ndarray:
    height, width = shape[:2]
    return np.array([[-1.0, 0.0, width - 1.0], [0.0, -1.0, height - 1.0], [0.0, 0.0, 1.0]])


# --------------------------------------------------------------------------------------
# fiducials


def register_by_fiducials(
    gray: np.ndarray, page: LayoutPage, *, dpi_hint: float | None = None
) -> Registration | RegistrationFailure:
    """Find the layout's corner squares and fit layout inches -> pixels."""
    if len(page.fiducials_in) < 3:
        return RegistrationFailure(Reason.NO_FIDUCIALS, "the layout page has no fiducials")
    dpi = estimate_dpi(gray.shape, page, dpi_hint)
    found = [_find_fiducial(gray, box, dpi) for box in page.fiducials_in]
    whole = [f is not None and not f[2] for f in found]
    usable = whole if sum(whole) >= 3 else [f is not None for f in found]  # a clipped square's centre is biased
    layout_pts = [_box_centre(b) for b, ok in zip(page.fiducials_in, usable) if ok]
    image_pts = [(f[0], f[1]) for f, ok in zip(found, usable) if ok and f is not None]
    if len(image_pts) < 3:
        missing = [CORNER_NAMES[i] if i < 4 else f"#{i + 1}" for i, f in enumerate(found) if f is None]
        failure = RegistrationFailure(
            Reason.NO_FIDUCIALS,
            f"found {len(image_pts)} of {len(found)} fiducials; missing: {', '.join(missing)}",
        )
        return _by_inner_corners(gray, page, found, dpi, failure)
    return _fit(np.array(layout_pts), np.array(image_pts), dpi)


def _by_inner_corners(gray: np.ndarray, page: LayoutPage, found: Sequence[tuple[float, float, bool] | None], dpi: float,
                      failure: RegistrationFailure) -> Registration | RegistrationFailure:
    """The fit of the squares found whole (their centres) and of the inner corners of those a
    tear, a dog-ear or the image's edge took part of (:func:`_inner_corner`), where all four
    are found, agree (an affine fit within MAX_AFFINE_RESIDUAL_IN: a remnant whose corner was
    misread would go unseen among three) and the targets' printed outlines show where the fit
    puts them (INNER_FIT_MIN of them); else ``failure``."""
    width_in, height_in = page.size_in
    whole = [(box, (f[0], f[1])) for box, f in zip(page.fiducials_in, found, strict=True) if f is not None and not f[2]]
    # where each square should be: by the squares found whole (two fix a turn, a scale and a
    # shift; a scanner's stretch of 1-2% leaves a tenth of an inch), else by the dpi alone
    predict = np.diag([dpi, dpi, 1.0])
    if len(whole) >= 2:
        similar, _inliers = cv2.estimateAffinePartial2D(np.array([_box_centre(b) for b, _ in whole], np.float32),
                                                        np.array([p for _, p in whole], np.float32))
        if similar is not None:
            predict = np.vstack([similar, [0.0, 0.0, 1.0]])
    layout_pts: list[tuple[float, float]] = [_box_centre(b) for b, _ in whole]
    image_pts: list[tuple[float, float]] = [p for _, p in whole]
    partial = 0
    for box, f in zip(page.fiducials_in, found, strict=True):
        if f is not None and not f[2]:
            continue
        toward = (1.0 if box[0] + box[2] / 2 < width_in / 2 else -1.0, 1.0 if box[1] + box[3] / 2 < height_in / 2 else -1.0)
        at = predict @ np.array([*_box_centre(box), 1.0])
        corner = _inner_corner(gray, box, dpi, toward, (float(at[0] / at[2]), float(at[1] / at[2])))
        if corner is not None:
            layout_pts.append((box[0] + (box[2] if toward[0] > 0 else 0.0), box[1] + (box[3] if toward[1] > 0 else 0.0)))
            image_pts.append(corner)
            partial += 1
    if partial == 0 or len(image_pts) < 4 or _affine_residual(np.array(layout_pts), np.array(image_pts)) > MAX_AFFINE_RESIDUAL_IN * dpi:
        return failure  # every corner of the four needed, and all agreeing: a remnant misread would go unseen in three
    fitted = _fit(np.array(layout_pts), np.array(image_pts), dpi)
    if isinstance(fitted, RegistrationFailure) or layout_fit_score(gray, fitted, page) < INNER_FIT_MIN:
        return failure
    return Registration(homography=fitted.homography, method="fiducial corners", rotated_180=False, dpi=dpi,
                        anchors_found=fitted.anchors_found, residual_px=fitted.residual_px)


def _inner_corner(gray: np.ndarray, box: Box, dpi: float, toward: tuple[float, float],
                  centre_px: tuple[float, float]) -> tuple[float, float] | None:
    """The image point (pixels) of a corner square's inner corner, the one facing ``toward``
    the page's centre (+1/-1 along x and y), where what is left of the square (INNER_MIN_AREA
    of it or more, the solid ink nearest where its centre should be, ``centre_px``, within its
    side and INNER_NEAR_IN) shows that corner with both its edges: from
    the corner, ink runs INNER_EDGE_SHARE of the side or more away from the centre along each
    axis, and the edge facing the centre stays within INNER_EDGE_TOL_PX of the corner's row
    (or column) all along that run; else None (a tear through the inner corner)."""
    x0, y0, window = _corner_window(gray, box, dpi)
    side = box[2] * dpi
    if window.size == 0 or side < 4:
        return None
    smooth = cv2.blur(window, (3, 3))
    count, labels, stats, _centroids = cv2.connectedComponentsWithStats(_solid_ink(smooth, side), connectivity=8)
    expected = (centre_px[0] - x0, centre_px[1] - y0)
    best, best_distance = 0, np.inf
    for k in range(1, count):
        left, top, w, h, area = (int(v) for v in stats[k])
        if area < INNER_MIN_AREA * side * side or w > 1.3 * side or h > 1.3 * side:
            continue
        distance = float(np.hypot(left + w / 2 - expected[0], top + h / 2 - expected[1]))
        if distance < best_distance and distance < side + INNER_NEAR_IN * dpi:
            best, best_distance = k, distance
    if best == 0:
        return None
    mask = labels == best
    ys, xs = np.nonzero(mask)
    # the pixel furthest toward the centre along the diagonal: the inner corner of a square
    # turned a few degrees (a 45-degree turn would make it an edge's middle)
    k = int(np.argmax(toward[0] * xs + toward[1] * ys))
    cx, cy = int(xs[k]), int(ys[k])
    run = int(np.ceil(INNER_EDGE_SHARE * side))
    sx, sy = -int(toward[0]), -int(toward[1])  # away from the centre
    # the edge facing the centre vertically (a row of ink's first pixel, column by column) and
    # horizontally (row by row), over ``run`` pixels away from the corner
    for along in range(run):
        col, row = cx + sx * along, cy + sy * along
        if not (0 <= col < mask.shape[1] and 0 <= row < mask.shape[0]):
            return None
        column, line = mask[:, col], mask[row, :]
        if not column.any() or not line.any():
            return None
        edge_row = int(np.nonzero(column)[0].max() if toward[1] > 0 else np.nonzero(column)[0].min())
        edge_col = int(np.nonzero(line)[0].max() if toward[0] > 0 else np.nonzero(line)[0].min())
        tolerance = INNER_EDGE_TOL_PX + INNER_EDGE_SLOPE * along
        if abs(edge_row - cy) > tolerance or abs(edge_col - cx) > tolerance:
            return None
    # the corner lies where ink meets paper: half a pixel on from the last pixel of ink
    return float(cx + x0 + 0.5 * toward[0]), float(cy + y0 + 0.5 * toward[1])


def _fit(layout_pts: np.ndarray, image_pts: np.ndarray, dpi: float) -> Registration | RegistrationFailure:
    residual = _affine_residual(layout_pts, image_pts)
    if len(layout_pts) == 4 and residual > MAX_AFFINE_RESIDUAL_IN * dpi:
        best = min(range(4), key=lambda i: _affine_residual(np.delete(layout_pts, i, 0), np.delete(image_pts, i, 0)))
        return _fit(np.delete(layout_pts, best, 0), np.delete(image_pts, best, 0), dpi)
    if len(layout_pts) == 4:
        matrix, _ = cv2.findHomography(layout_pts.astype(np.float32), image_pts.astype(np.float32), 0)
    else:
        affine = cv2.getAffineTransform(layout_pts.astype(np.float32), image_pts.astype(np.float32))
        matrix = np.vstack([affine, [0.0, 0.0, 1.0]])
    if matrix is None or not _plausible(matrix, dpi):
        return RegistrationFailure(Reason.NO_FIDUCIALS, "the fiducials found do not form the layout's rectangle")
    return Registration(
        homography=tuple(float(v) for v in matrix.ravel()),
        method="fiducials",
        rotated_180=False,
        dpi=dpi,
        anchors_found=len(layout_pts),
        residual_px=float(residual),
    )


def _affine_residual(layout_pts: np.ndarray, image_pts: np.ndarray) -> float:
    """RMS pixel error of the least-squares affine fit (0 for three points)."""
    design = np.hstack([layout_pts, np.ones((len(layout_pts), 1))])
    coeffs, *_ = np.linalg.lstsq(design, image_pts, rcond=None)
    return float(np.sqrt(np.mean(np.sum((design @ coeffs - image_pts) ** 2, axis=1))))


def _plausible(matrix: np.ndarray, dpi: float) -> bool:
    """Scale within 15% of the dpi and no mirror or shear beyond scanner tolerances."""
    linear = matrix[:2, :2] / matrix[2, 2]
    sx, sy = np.linalg.norm(linear[:, 0]), np.linalg.norm(linear[:, 1])
    return bool(
        np.linalg.det(linear) > 0
        and 0.85 * dpi <= sx <= 1.15 * dpi
        and 0.85 * dpi <= sy <= 1.15 * dpi
    )


def _find_fiducial(gray: np.ndarray, box: Box, dpi: float) -> tuple[float, float, bool] | None:
    """Centroid ``(x, y, clipped)`` in pixels of the solid square nearest the box, or None;
    ``clipped`` when the square runs off the image edge (its centroid is then biased)."""
    x0, y0, window = _corner_window(gray, box, dpi)
    if window.size == 0:
        return None
    factor = max(2, int(round(dpi / WORK_DPI)))
    small = _area_reduced(window, factor)
    side_px = box[2] * dpi / factor
    expected = ((box[0] + box[2] / 2) * dpi - x0) / factor, ((box[1] + box[3] / 2) * dpi - y0) / factor
    candidate = _best_square(small, side_px, expected)
    if candidate is None:
        return None
    cx, cy = candidate
    return _refine_centroid(gray, x0 + cx * factor, y0 + cy * factor, box[2] * dpi)


def _area_reduced(window: np.ndarray, factor: int) -> np.ndarray:
    """Mean of ``factor x factor`` blocks: averaging (not sampling) turns a bilevel scan's
    dithered gray square back into a solid one and halves the noise per step."""
    if factor == 1:
        return window
    rows, cols = window.shape[0] // factor, window.shape[1] // factor
    return cv2.resize(window[: rows * factor, : cols * factor], (cols, rows), interpolation=cv2.INTER_AREA)


def _corner_window(gray: np.ndarray, box: Box, dpi: float) -> tuple[int, int, np.ndarray]:
    height, width = gray.shape
    x0 = max(0, int((box[0] - SEARCH_MARGIN_IN) * dpi))
    y0 = max(0, int((box[1] - SEARCH_MARGIN_IN) * dpi))
    x1 = min(width, int((box[0] + box[2] + SEARCH_MARGIN_IN) * dpi))
    y1 = min(height, int((box[1] + box[3] + SEARCH_MARGIN_IN) * dpi))
    return x0, y0, gray[y0:y1, x0:x1]


def _solid_ink(gray: np.ndarray, side_px: float) -> np.ndarray:
    """Otsu ink with thin strokes opened away, so text or a line touching a square
    does not change its outline (an opening leaves a solid square unchanged)."""
    _, ink = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    k = max(3, int(side_px * 0.4))
    return cv2.morphologyEx(ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))


def _best_square(small: np.ndarray, side_px: float, expected: tuple[float, float]) -> tuple[float, float] | None:
    """The solid, square, right-sized dark blob nearest ``expected`` (window pixels)."""
    contours, _ = cv2.findContours(_solid_ink(small, side_px), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    best, best_distance = None, np.inf
    for contour in contours:
        area = cv2.contourArea(contour)
        if not 0.55 * side_px**2 <= area <= 1.6 * side_px**2:
            continue
        (cx, cy), (rw, rh), _angle = cv2.minAreaRect(contour)
        if min(rw, rh) <= 0 or max(rw, rh) / min(rw, rh) > 1.25 or area / (rw * rh) < 0.85:
            continue
        distance = float(np.hypot(cx - expected[0], cy - expected[1]))
        if distance < best_distance:
            best, best_distance = (float(cx), float(cy)), distance
    return best


def _refine_centroid(gray: np.ndarray, cx: float, cy: float, side_px: float) -> tuple[float, float, bool] | None:
    """Sub-pixel centroid of the dark square around ``(cx, cy)`` at full resolution."""
    half = int(side_px * 0.85) + 3
    x0, y0 = max(0, int(cx) - half), max(0, int(cy) - half)
    patch = gray[y0 : int(cy) + half + 1, x0 : int(cx) + half + 1]
    if patch.size == 0:
        return None
    smooth = cv2.blur(patch, (5, 5))  # a dithered (bilevel) square is solid once smoothed
    count, labels, stats, centroids = cv2.connectedComponentsWithStats(_solid_ink(smooth, side_px), connectivity=8)
    if count < 2:
        return None
    local = (cx - x0, cy - y0)
    label = labels[min(int(local[1]), patch.shape[0] - 1), min(int(local[0]), patch.shape[1] - 1)]
    if label == 0:
        label = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    # intensity-weighted centroid over the component: darkness weights give sub-pixel edges
    mask = cv2.dilate((labels == label).astype(np.uint8), np.ones((3, 3), np.uint8))
    moments = cv2.moments(cv2.bitwise_and(cv2.bitwise_not(patch), cv2.bitwise_not(patch), mask=mask))
    if moments["m00"] <= 0:
        return None
    left, top, width, height = (int(v) for v in stats[label, :4])
    at_edge = (left == 0 and x0 == 0) or (top == 0 and y0 == 0) or (
        left + width >= patch.shape[1] and x0 + patch.shape[1] >= gray.shape[1]) or (
        top + height >= patch.shape[0] and y0 + patch.shape[0] >= gray.shape[0])
    clipped = at_edge and min(width, height) < 0.92 * side_px
    return float(moments["m10"] / moments["m00"] + x0), float(moments["m01"] / moments["m00"] + y0), clipped


# --------------------------------------------------------------------------------------
# orientation


def orientation_from_code(code: DecodedCode, page: LayoutPage, image_shape: tuple[int, ...]) -> bool:
    """True when the card is turned 180 degrees: the QR centre sits nearer the point-mirror
    of the layout's qr box than the box itself."""
    if page.qr_in is None:
        return False
    dpi = estimate_dpi(image_shape, page)
    qx, qy = _box_centre(page.qr_in)
    cx = sum(p[0] for p in code.corners_px) / len(code.corners_px)
    cy = sum(p[1] for p in code.corners_px) / len(code.corners_px)
    height, width = image_shape[:2]
    upright = np.hypot(cx - qx * dpi, cy - qy * dpi)
    turned = np.hypot(cx - (width - 1 - qx * dpi), cy - (height - 1 - qy * dpi))
    return bool(turned < upright)


def layout_fit_score(gray: np.ndarray, registration: Registration, page: LayoutPage) -> float:
    """Fraction of targets whose printed oval outline is seen where the layout puts it.

    Each target's inscribed ellipse is sampled at 16 points (darkest pixel within +-2 px)
    and compared with points on an ellipse 1.6 times larger; a target fits when most
    outline samples are clearly darker than the paper around it.
    """
    if not page.targets:
        return 0.0
    fits = [_oval_fits(gray, registration, t.box_in) for t in page.targets]
    return float(np.mean(fits))


_ANGLES = np.linspace(0.0, 2.0 * np.pi, 16, endpoint=False)


def _oval_fits(gray: np.ndarray, registration: Registration, box_in: Box) -> bool:
    x, y, w, h = box_in
    cx, cy = x + w / 2.0, y + h / 2.0
    ring = np.column_stack([cx + w / 2 * np.cos(_ANGLES), cy + h / 2 * np.sin(_ANGLES)])
    outside = np.column_stack([cx + 0.8 * w * np.cos(_ANGLES), cy + 0.8 * h * np.sin(_ANGLES)])
    ring_px, outside_px = map_points(registration, ring), map_points(registration, outside)
    ring_values = _darkest_near(gray, ring_px, radius=2)
    paper = np.median(_darkest_near(gray, outside_px, radius=0))
    return bool(np.mean(ring_values < paper - 40) >= 0.6)


def _darkest_near(gray: np.ndarray, pts: np.ndarray, radius: int) -> np.ndarray:
    height, width = gray.shape
    values = np.full(len(pts), 255.0)
    for i, (px, py) in enumerate(np.rint(pts).astype(int)):
        x0, y0 = max(0, px - radius), max(0, py - radius)
        patch = gray[y0 : py + radius + 1, x0 : px + radius + 1]
        if patch.size:
            values[i] = float(patch.min())
    return values


# --------------------------------------------------------------------------------------
# blank reference scans (other vendors' cards): see scanpipe.imaging.align


def register_by_blank(
    gray: np.ndarray,
    page: LayoutPage,
    model: PageModel,
    *,
    dpi_hint: float | None = None,
    start: tuple[np.ndarray, bool] | None = None,
    precise: bool = False,
    measured: Refined | None = None,
) -> tuple[np.ndarray, Registration] | RegistrationFailure:
    """Upright image and its registration against the page's blank scan.

    ``start``: a coarse alignment already found (blank pixels -> upright card pixels, and
    whether the card is turned), e.g. while telling the style. The measured residual of the
    local refinement decides: a card that does not fit its blank is refused with the figure.
    ``precise``: ``start`` is already locally refined (only the fine pass is run again);
    ``measured``: that fine pass itself, against this very blank (while telling the style).
    """
    if start is None:
        aligned = align_to_page(gray, model, dpi_hint=dpi_hint)
        if isinstance(aligned, AlignmentFailure):
            return RegistrationFailure(Reason.REGISTRATION_FAILED, f"the card does not align with the blank of style "
                                                                   f"{model.style} page {model.page}: {aligned.detail}")
        start = (aligned.matrix, aligned.turned)
    matrix, turned = start
    upright = np.ascontiguousarray(np.rot90(gray, 2)) if turned else gray
    card_dpi = start_scale(matrix) * model.dpi
    if card_dpi < MIN_SCAN_DPI:
        return RegistrationFailure(Reason.LOW_RESOLUTION, f"the card was scanned at about {card_dpi:.0f} dpi; marks are read "
                                                          f"from {MIN_SCAN_DPI:.0f} dpi up: rescan it at 200 dpi or more")
    if measured is not None:
        refined: Refined | AlignmentFailure = measured
    else:
        refined = refine(upright, model, matrix) if precise is False else refine_locally(upright, model, matrix, FINE_STAGE)
    if isinstance(refined, AlignmentFailure):
        return RegistrationFailure(Reason.REGISTRATION_FAILED, f"the card does not fit the blank of style {model.style} "
                                                               f"page {model.page}: {refined.detail}")
    if refined.residual_in > MAX_BLANK_RESIDUAL_IN:
        return RegistrationFailure(Reason.REGISTRATION_FAILED, f"the card does not fit the blank of style {model.style} "
                                   f"page {model.page}: residual {refined.residual_in:.3f} in after alignment "
                                   f"(at most {MAX_BLANK_RESIDUAL_IN} in); a fold, a photo or a crumpled card?")
    inches = refined.matrix @ np.diag([model.dpi, model.dpi, 1.0])
    card_dpi = start_scale(refined.matrix) * model.dpi
    bend = _perspective_in(inches, model.size_in, card_dpi)
    if bend > MAX_PERSPECTIVE_IN:
        return RegistrationFailure(Reason.REGISTRATION_FAILED, f"the card is seen in perspective ({bend:.2f} in off a flat "
                                   f"scan at a corner): a photograph, not a scan? Rescan it on a scanner")
    return upright, Registration(
        homography=tuple(float(v) for v in (inches / inches[2, 2]).ravel()),
        method="reference",
        rotated_180=turned,
        dpi=card_dpi,
        anchors_found=refined.points,
        residual_px=refined.residual_in * card_dpi,
    )


def _perspective_in(inches_to_px: np.ndarray, size_in: tuple[float, float], dpi: float) -> float:
    """How far (inches) the page corners lie from the best affine fit of the mapping: 0 for a
    scanner (a scanner's geometry is affine), large for a photograph taken at an angle."""
    w, h = size_in
    grid = np.array([[x, y] for x in np.linspace(0, w, 5) for y in np.linspace(0, h, 5)], np.float64)
    mapped = cv2.perspectiveTransform(grid.reshape(-1, 1, 2), inches_to_px).reshape(-1, 2)
    design = np.hstack([grid, np.ones((len(grid), 1))])
    coeffs, *_ = np.linalg.lstsq(design, mapped, rcond=None)
    return float(np.abs(design @ coeffs - mapped).max() / dpi)


# --------------------------------------------------------------------------------------
# the whole step


def register_card(
    gray: np.ndarray,
    page: LayoutPage,
    *,
    model: PageModel | None = None,
    code: DecodedCode | None = None,
    dpi_hint: float | None = None,
    start: tuple[np.ndarray, bool] | None = None,
    precise: bool = False,
    measured: Refined | None = None,
) -> tuple[np.ndarray, Registration] | RegistrationFailure:
    """Upright image and its registration: QR orientation, then fiducials, then the blank."""
    turned = code is not None and orientation_from_code(code, page, gray.shape)
    upright = cv2.rotate(gray, cv2.ROTATE_180) if turned else gray
    result: Registration | RegistrationFailure = RegistrationFailure(
        Reason.NO_FIDUCIALS, "the layout page has neither fiducials nor a reference scan"
    )
    if page.fiducials_in:
        result = register_by_fiducials(upright, page, dpi_hint=dpi_hint)
    if isinstance(result, Registration):
        if code is None and page.targets:
            return _better_orientation(gray, upright, result, page, dpi_hint)
        return upright, _with_turn(result, turned)
    if model is not None:
        by_blank = register_by_blank(gray, page, model, dpi_hint=dpi_hint, start=start, precise=precise, measured=measured)
        if not isinstance(by_blank, RegistrationFailure) or not page.fiducials_in:
            return by_blank
    return result


def _with_turn(registration: Registration, turned: bool) -> Registration:
    return Registration(
        homography=registration.homography,
        method=registration.method,
        rotated_180=turned,
        dpi=registration.dpi,
        anchors_found=registration.anchors_found,
        residual_px=registration.residual_px,
    )


def _better_orientation(
    gray: np.ndarray, upright: np.ndarray, registration: Registration, page: LayoutPage, dpi_hint: float | None
) -> tuple[np.ndarray, Registration]:
    """Without a code: keep the orientation whose targets show printed oval outlines."""
    as_is = layout_fit_score(upright, registration, page)
    if as_is >= 0.9:
        return upright, registration
    turned_image = cv2.rotate(gray, cv2.ROTATE_180)
    turned = register_by_fiducials(turned_image, page, dpi_hint=dpi_hint)
    if isinstance(turned, Registration) and layout_fit_score(turned_image, turned, page) > as_is:
        return turned_image, _with_turn(turned, True)
    return upright, registration
