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

Reference (other vendors' cards): ORB features of the card and of a blank reference scan,
both reduced to ~100 dpi, matched with a ratio test and a RANSAC homography; a 180-degree
feed shows up as a homography that turns the page, and is reported as ``rotated_180``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from scanpipe.types import Box, DecodedCode, LayoutPage, Reason, Registration

CORNER_NAMES = ("top-left", "top-right", "bottom-left", "bottom-right")
SEARCH_MARGIN_IN = 0.7  # skew of 3 degrees moves a corner ~0.36 in; shifts add ~0.3 in
WORK_DPI = 100.0
MIN_DPI, MAX_DPI = 100.0, 600.0
MAX_AFFINE_RESIDUAL_IN = 0.03
ORB_FEATURES = 3000
MIN_REFERENCE_INLIERS = 25


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
        return RegistrationFailure(
            Reason.NO_FIDUCIALS,
            f"found {len(image_pts)} of {len(found)} fiducials; missing: {', '.join(missing)}",
        )
    return _fit(np.array(layout_pts), np.array(image_pts), dpi)


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
# reference scans (other vendors' cards)


def register_by_reference(
    gray: np.ndarray, page: LayoutPage, reference: np.ndarray, reference_dpi: float
) -> Registration | RegistrationFailure:
    """Match the card's printed content to a blank reference scan of the page.

    The homography maps layout inches to pixels of the card *as it is*; when it turns the
    page over, ``rotated_180`` is set and the homography is re-expressed for the card turned
    upright with ``cv2.rotate(gray, cv2.ROTATE_180)``.
    """
    key = (id(reference), float(reference_dpi), tuple(page.size_in))
    for card, known, result in _REGISTERED:
        if card is gray and known == key:
            return result  # the same card against the same reference, just done by match_references
    result = _register_by_reference(gray, page, reference, reference_dpi)
    if not _REGISTERED or _REGISTERED[0][0] is not gray:
        _REGISTERED.clear()
    _REGISTERED.append((gray, key, result))
    return result


# Per process: the last card's registrations against each reference (match_references, then
# register_card, register the same card against the chosen reference: done once), the
# last card's ORB features, and every reference's features (references are stable arrays of
# the InterpretContext; entries hold the arrays themselves, so an id is never reused).
_REGISTERED: list[tuple[np.ndarray, tuple[int, float, tuple[float, ...]], Registration | RegistrationFailure]] = []
_CARD_FEATURES: list[tuple[np.ndarray, float, tuple]] = []
_REFERENCE_FEATURES: dict[tuple[int, float], tuple[np.ndarray, tuple]] = {}
_MAX_CACHED_REFERENCES = 64


def _register_by_reference(
    gray: np.ndarray, page: LayoutPage, reference: np.ndarray, reference_dpi: float
) -> Registration | RegistrationFailure:
    card_dpi = estimate_dpi(gray.shape, page)
    _card_small, card_factor, card_features = _card_features(gray, card_dpi)
    _ref_small, ref_factor, ref_features = _reference_features(reference, reference_dpi)
    matched = _orb_homography(ref_features, card_features)
    if isinstance(matched, RegistrationFailure):
        return matched
    small_h, inliers, residual = matched
    matrix = _pixel_centres(card_factor) @ small_h @ np.linalg.inv(_pixel_centres(ref_factor)) @ np.diag([reference_dpi, reference_dpi, 1.0])
    refined = refine_by_patches(gray, matrix, reference, reference_dpi)
    if refined is not None:
        matrix, residual, inliers = refined[0], refined[1] / card_factor, refined[2]
    turned = _turns_page(matrix, page)
    if turned:
        matrix = _rotation_180(gray.shape) @ matrix
    matrix = matrix / matrix[2, 2]
    if not _plausible(matrix, card_dpi):
        return RegistrationFailure(Reason.NO_FIDUCIALS, "the card's print does not match the reference scan")
    return Registration(
        homography=tuple(float(v) for v in matrix.ravel()),
        method="reference",
        rotated_180=turned,
        dpi=card_dpi,
        anchors_found=inliers,
        residual_px=residual * card_factor,
    )


def _pixel_centres(factor: float) -> np.ndarray:
    """Reduced-image pixels -> full-image pixels (pixel centres: ``x = (u + 0.5) f - 0.5``)."""
    return np.array([[factor, 0.0, 0.5 * factor - 0.5], [0.0, factor, 0.5 * factor - 0.5], [0.0, 0.0, 1.0]])


PATCH_CELL_IN = 1.0  # one refinement patch per square inch of the reference, where it has print
PATCH_IN = 0.3
PATCH_SEARCH_PX = 6  # reference pixels either way
PATCH_MIN_SCORE = 0.6


def refine_by_patches(
    gray: np.ndarray, matrix: np.ndarray, reference: np.ndarray, reference_dpi: float
) -> tuple[np.ndarray, float, int] | None:
    """Local refinement of a coarse inches -> card homography against the reference scan.

    The card is warped into the reference's frame with ``matrix``; in each ~1-inch cell the
    most textured ``PATCH_IN`` square of the reference is located in the warped card by
    normalised correlation within +-``PATCH_SEARCH_PX`` (sub-pixel peak); the shifted points
    are mapped back to the card and the homography is refit (RANSAC, then least squares on
    the inliers). Returns ``(matrix, rms residual in card pixels, inliers)`` or None when
    too few patches agree.
    """
    to_ref = np.diag([reference_dpi, reference_dpi, 1.0]) @ np.linalg.inv(matrix)
    height, width = reference.shape
    warped = cv2.warpPerspective(gray, to_ref, (width, height), flags=cv2.INTER_LINEAR, borderValue=255)
    ref_pts, card_pts = [], []
    for x, y in _textured_points(reference, reference_dpi):
        shift = _patch_shift(reference, warped, x, y, int(PATCH_IN * reference_dpi) // 2)
        if shift is not None:
            ref_pts.append((x, y))
            card_pts.append((x + shift[0], y + shift[1]))
    if len(ref_pts) < 8:
        return None
    src = np.asarray(ref_pts, dtype=np.float64) / reference_dpi
    dst = cv2.perspectiveTransform(np.asarray(card_pts, dtype=np.float64).reshape(-1, 1, 2), np.linalg.inv(to_ref)).reshape(-1, 2)
    scale = float(np.sqrt(abs(np.linalg.det(matrix[:2, :2]))))
    fitted, mask = cv2.findHomography(src, dst, cv2.RANSAC, 0.01 * scale)
    if fitted is None or int(mask.sum()) < 8:
        return None
    keep = mask.ravel().astype(bool)
    fitted, _ = cv2.findHomography(src[keep], dst[keep], 0)
    projected = cv2.perspectiveTransform(src[keep].reshape(-1, 1, 2), fitted).reshape(-1, 2)
    residual = float(np.sqrt(np.mean(np.sum((projected - dst[keep]) ** 2, axis=1))))
    return fitted / fitted[2, 2], residual, int(keep.sum())


_TEXTURED: dict[tuple[int, float], tuple[np.ndarray, list[tuple[int, int]]]] = {}


def _textured_points(reference: np.ndarray, dpi: float) -> list[tuple[int, int]]:
    """Per ~1-inch cell, the centre of the reference's most textured patch (if any);
    computed once per reference array and process."""
    cached = _TEXTURED.get((id(reference), float(dpi)))
    if cached is None or cached[0] is not reference:
        cached = (reference, _find_textured_points(reference, dpi))
        if len(_TEXTURED) >= _MAX_CACHED_REFERENCES:
            _TEXTURED.clear()
        _TEXTURED[(id(reference), float(dpi))] = cached
    return cached[1]


def _find_textured_points(reference: np.ndarray, dpi: float) -> list[tuple[int, int]]:
    half = int(PATCH_IN * dpi) // 2
    energy = cv2.boxFilter(cv2.absdiff(cv2.dilate(reference, np.ones((3, 3), np.uint8)), reference), cv2.CV_32F, (2 * half, 2 * half))
    cell = int(PATCH_CELL_IN * dpi)
    margin = half + PATCH_SEARCH_PX + 1
    points = []
    for y0 in range(margin, reference.shape[0] - margin, cell):
        for x0 in range(margin, reference.shape[1] - margin, cell):
            block = energy[y0 : min(y0 + cell, reference.shape[0] - margin), x0 : min(x0 + cell, reference.shape[1] - margin)]
            if block.size == 0:
                continue
            r, c = np.unravel_index(int(np.argmax(block)), block.shape)
            if block[r, c] >= 12.0:
                points.append((x0 + int(c), y0 + int(r)))
    return points


def _patch_shift(reference: np.ndarray, warped: np.ndarray, x: int, y: int, half: int) -> tuple[float, float] | None:
    """Sub-pixel offset of the reference patch at ``(x, y)`` within the warped card."""
    template = reference[y - half : y + half, x - half : x + half]
    s = PATCH_SEARCH_PX
    area = warped[y - half - s : y + half + s, x - half - s : x + half + s]
    if area.shape[0] < template.shape[0] + 2 * s or area.shape[1] < template.shape[1] + 2 * s:
        return None
    result = cv2.matchTemplate(area, template, cv2.TM_CCOEFF_NORMED)
    _, peak, _, (px, py) = cv2.minMaxLoc(result)
    if peak < PATCH_MIN_SCORE or not (0 < px < result.shape[1] - 1 and 0 < py < result.shape[0] - 1):
        return None
    return px - s + _parabola(result[py, px - 1 : px + 2]), py - s + _parabola(result[py - 1 : py + 2, px])


def _parabola(values: np.ndarray) -> float:
    denominator = values[0] - 2.0 * values[1] + values[2]
    return 0.0 if denominator >= 0 else float(0.5 * (values[0] - values[2]) / denominator)


def _reduced(gray: np.ndarray, dpi: float) -> tuple[np.ndarray, float]:
    """A copy near WORK_DPI and the factor from it back to ``gray`` pixels."""
    factor = max(1.0, dpi / WORK_DPI)
    if factor == 1.0:
        return gray, 1.0
    small = cv2.resize(gray, None, fx=1.0 / factor, fy=1.0 / factor, interpolation=cv2.INTER_AREA)
    return small, gray.shape[1] / small.shape[1]


def _orb_features(small: np.ndarray) -> tuple:
    # ORB_create exists at runtime (4.x); the bundled cv2 stubs only declare ORB.create.
    orb = cv2.ORB_create(nfeatures=ORB_FEATURES, scaleFactor=1.2, nlevels=4, fastThreshold=10)  # type: ignore[attr-defined]
    return orb.detectAndCompute(small, None)


def _card_features(gray: np.ndarray, dpi: float) -> tuple[np.ndarray, float, tuple]:
    """The card reduced near WORK_DPI, its factor back to ``gray``, its ORB features (the
    last card's are kept: a card is matched against several references)."""
    if _CARD_FEATURES and _CARD_FEATURES[0][0] is gray and _CARD_FEATURES[0][1] == dpi:
        return _CARD_FEATURES[0][2]
    small, factor = _reduced(gray, dpi)
    entry = (small, factor, _orb_features(small))
    _CARD_FEATURES[:] = [(gray, dpi, entry)]
    return entry


def _reference_features(reference: np.ndarray, dpi: float) -> tuple[np.ndarray, float, tuple]:
    key = (id(reference), float(dpi))
    cached = _REFERENCE_FEATURES.get(key)
    if cached is None or cached[0] is not reference:
        small, factor = _reduced(reference, dpi)
        cached = (reference, (small, factor, _orb_features(small)))
        if len(_REFERENCE_FEATURES) >= _MAX_CACHED_REFERENCES:
            _REFERENCE_FEATURES.clear()  # a long-lived process that loaded other references
        _REFERENCE_FEATURES[key] = cached
    return cached[1]


def _orb_homography(ref_features: tuple, card_features: tuple) -> tuple[np.ndarray, int, float] | RegistrationFailure:
    ref_kp, ref_desc = ref_features
    card_kp, card_desc = card_features
    if ref_desc is None or card_desc is None or len(ref_kp) < 8 or len(card_kp) < 8:
        return RegistrationFailure(Reason.NO_FIDUCIALS, "too little printed content to match the reference scan")
    pairs = cv2.BFMatcher(cv2.NORM_HAMMING).knnMatch(ref_desc, card_desc, k=2)
    good = [p[0] for p in pairs if len(p) == 2 and p[0].distance < 0.8 * p[1].distance]
    if len(good) < MIN_REFERENCE_INLIERS:
        return RegistrationFailure(
            Reason.NO_FIDUCIALS, f"only {len(good)} features match the reference scan (need {MIN_REFERENCE_INLIERS})"
        )
    src = np.asarray([ref_kp[m.queryIdx].pt for m in good], dtype=np.float32).reshape(-1, 1, 2)
    dst = np.asarray([card_kp[m.trainIdx].pt for m in good], dtype=np.float32).reshape(-1, 1, 2)
    matrix, inlier_mask = cv2.findHomography(src, dst, cv2.RANSAC, 2.0, maxIters=4000, confidence=0.999)
    inliers = int(inlier_mask.sum()) if inlier_mask is not None else 0
    if matrix is None or inliers < MIN_REFERENCE_INLIERS:
        return RegistrationFailure(
            Reason.NO_FIDUCIALS, f"only {inliers} features agree with the reference scan (need {MIN_REFERENCE_INLIERS})"
        )
    keep = inlier_mask.ravel().astype(bool)
    projected = cv2.perspectiveTransform(src[keep], matrix)
    residual = float(np.sqrt(np.mean(np.sum((projected - dst[keep]) ** 2, axis=2))))
    return matrix, inliers, residual


def _turns_page(matrix: np.ndarray, page: LayoutPage) -> bool:
    """True when the layout's left-to-right direction points leftwards in the image."""
    w, h = page.size_in
    pts = cv2.perspectiveTransform(np.asarray([[[w * 0.25, h / 2]], [[w * 0.75, h / 2]]], dtype=np.float64), matrix)
    return bool(pts[1, 0, 0] < pts[0, 0, 0])


def match_references(
    gray: np.ndarray,
    candidates: Sequence[tuple[str, int, np.ndarray, float, tuple[Box, ...]]],
    *,
    size_in: tuple[float, float] = (8.5, 11.0),
) -> list[tuple[str, int, float]]:
    """Score ``(style, page, reference, reference_dpi, distinguish boxes)`` candidates.

    Each reference is registered globally; the score is then the mean normalised
    correlation of the distinguish boxes' content (card warped into the reference's
    frame) with the reference's, or the inlier share when a candidate has no such boxes.
    Returned best first; failed registrations score 0.
    """
    scored = []
    for style, page_no, reference, reference_dpi, distinguish in candidates:
        page = LayoutPage(page=page_no, size_in=size_in, targets=())
        registration = register_by_reference(gray, page, reference, reference_dpi)
        if isinstance(registration, RegistrationFailure):
            scored.append((style, page_no, 0.0))
            continue
        score = _distinguish_score(gray, registration, reference, reference_dpi, distinguish)
        scored.append((style, page_no, score))
    return sorted(scored, key=lambda item: -item[2])


def _distinguish_score(
    gray: np.ndarray, registration: Registration, reference: np.ndarray, reference_dpi: float, boxes: tuple[Box, ...]
) -> float:
    """Mean correlation of the distinguish boxes; only each box's neighbourhood of the card
    (as scanned: a 180-degree turn is folded into the mapping) is warped."""
    if not boxes:
        return min(1.0, registration.anchors_found / 200.0)
    inches_to_card = homography_of(registration)
    if registration.rotated_180:
        inches_to_card = _rotation_180(gray.shape) @ inches_to_card
    card_to_ref = np.diag([reference_dpi, reference_dpi, 1.0]) @ np.linalg.inv(inches_to_card)
    scores = [_box_correlation(gray, card_to_ref, reference, box, reference_dpi) for box in boxes]
    return float(np.mean(scores))


def _box_correlation(gray: np.ndarray, card_to_ref: np.ndarray, reference: np.ndarray, box: Box, dpi: float) -> float:
    """Best normalised correlation of the reference box within +-0.05 in of the card's."""
    slack = int(0.05 * dpi) + 1
    x, y, w, h = (int(round(v * dpi)) for v in box)
    template = reference[y : y + h, x : x + w]
    x0, y0 = max(0, x - slack), max(0, y - slack)
    x1, y1 = min(reference.shape[1], x + w + slack), min(reference.shape[0], y + h + slack)
    if template.size == 0 or y1 - y0 < template.shape[0] or x1 - x0 < template.shape[1]:
        return 0.0
    shift = np.array([[1.0, 0.0, -x0], [0.0, 1.0, -y0], [0.0, 0.0, 1.0]])
    area = cv2.warpPerspective(gray, shift @ card_to_ref, (x1 - x0, y1 - y0), borderValue=255)
    if float(template.std()) < 1.0:
        return 1.0 - min(1.0, float(area.std()) / 32.0)
    result = cv2.matchTemplate(area, template, cv2.TM_CCOEFF_NORMED)
    return float(max(0.0, result.max()))


# --------------------------------------------------------------------------------------
# the whole step


def register_card(
    gray: np.ndarray,
    page: LayoutPage,
    *,
    reference: np.ndarray | None = None,
    code: DecodedCode | None = None,
    dpi_hint: float | None = None,
) -> tuple[np.ndarray, Registration] | RegistrationFailure:
    """Upright image and its registration: QR orientation, then fiducials, then reference."""
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
    if reference is not None and page.reference_dpi:
        by_reference = register_by_reference(gray, page, reference, page.reference_dpi)
        if isinstance(by_reference, Registration):
            image = cv2.rotate(gray, cv2.ROTATE_180) if by_reference.rotated_180 else gray
            return image, by_reference
        if not page.fiducials_in:
            return by_reference
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
