"""Registration on tiny synthetic pages with a known distortion."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
import zxingcpp

from scanpipe.imaging.codes import decode_codes
from scanpipe.imaging.reference import learn_page
from scanpipe.imaging.registration import (
    RegistrationFailure,
    layout_fit_score,
    map_box,
    map_points,
    orientation_from_code,
    register_by_blank,
    register_by_fiducials,
    register_card,
)
from scanpipe.imaging.style import StyleAmbiguous, StyleMatch, StyleUnknown, build_style_groups, identify_style
from scanpipe.types import LayoutPage, Reason, Registration, TargetDef

SIZE_IN = (4.0, 5.0)
FIDUCIALS = ((0.25, 0.25, 0.25, 0.25), (3.5, 0.25, 0.25, 0.25), (0.25, 4.5, 0.25, 0.25), (3.5, 4.5, 0.25, 0.25))
QR_BOX = (2.6, 0.7, 0.9, 0.9)
TARGETS = tuple(
    TargetDef("c1" if i < 3 else "c2", f"o{i}", (0.7 + (i // 3) * 1.6, 1.9 + (i % 3) * 0.45, 0.22, 0.14))
    for i in range(6)
)
PAGE = LayoutPage(page=1, size_in=SIZE_IN, targets=TARGETS, fiducials_in=FIDUCIALS, qr_in=QR_BOX)


def draw_page(dpi: float, *, fiducials: bool = True, text: str = "SPB1|E=e|S=S1|P=P1|PG=1", seed: int = 0) -> np.ndarray:
    """The upright printed page: corner squares, oval outlines, a QR code and some rules."""
    width, height = round(SIZE_IN[0] * dpi), round(SIZE_IN[1] * dpi)
    img = np.full((height, width), 245, np.uint8)
    if fiducials:
        for x, y, w, h in FIDUCIALS:
            pts = np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]]) * dpi
            cv2.fillPoly(img, [np.int32(np.round(pts * 16))], 15, cv2.LINE_AA, shift=4)
    for t in TARGETS:
        x, y, w, h = t.box_in
        centre = (int(round((x + w / 2) * dpi * 16)), int(round((y + h / 2) * dpi * 16)))
        axes = (int(round(w / 2 * dpi * 16)), int(round(h / 2 * dpi * 16)))
        cv2.ellipse(img, centre, axes, 0, 0, 360, 30, max(1, int(0.015 * dpi)), cv2.LINE_AA, shift=4)
        cv2.putText(img, t.option, (int((x + 0.35) * dpi), int((y + 0.12) * dpi)), cv2.FONT_HERSHEY_SIMPLEX, dpi / 300, 40, 1)
    rng = np.random.default_rng(seed)
    for _ in range(6):  # rules and text-like marks so a reference match has content
        y = rng.uniform(1.0, 4.3)
        cv2.line(img, (int(0.6 * dpi), int(y * dpi)), (int(3.3 * dpi), int(y * dpi)), 60, 1)
    qr = np.array(zxingcpp.create_barcode(text, zxingcpp.BarcodeFormat.QRCode).to_image(scale=1, add_quiet_zones=False))
    side = int(round(QR_BOX[2] * dpi))
    x0, y0 = int(round(QR_BOX[0] * dpi)), int(round(QR_BOX[1] * dpi))
    img[y0 : y0 + side, x0 : x0 + side] = cv2.resize(qr, (side, side), interpolation=cv2.INTER_NEAREST)
    return img


def distort(img: np.ndarray, angle_deg: float, sx: float, sy: float, shift: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Rotate about the centre, stretch and shift; return the image and the 3x3 matrix."""
    h, w = img.shape
    rot = np.vstack([cv2.getRotationMatrix2D((w / 2, h / 2), angle_deg, 1.0), [0, 0, 1]])
    matrix = np.array([[1, 0, shift[0]], [0, 1, shift[1]], [0, 0, 1]]) @ rot @ np.diag([sx, sy, 1.0])
    out = cv2.warpAffine(img, matrix[:2], (w, h), flags=cv2.INTER_LINEAR, borderValue=245)
    return out, matrix


def true_points(matrix: np.ndarray, dpi: float, pts_in: np.ndarray) -> np.ndarray:
    pts = np.hstack([np.asarray(pts_in) * dpi, np.ones((len(pts_in), 1))])
    return (pts @ matrix.T)[:, :2]


TARGET_CENTRES = np.array([[t.box_in[0] + 0.11, t.box_in[1] + 0.07] for t in TARGETS] + [[2.0, 2.5], [0.5, 4.8]])


@pytest.mark.parametrize(
    ("dpi", "angle", "sx", "sy", "shift"),
    [(150, 2.0, 1.01, 0.985, (12.0, -9.0)), (200, -3.0, 0.98, 1.02, (-20.0, 15.0)), (150, 0.0, 1.0, 1.0, (0.0, 0.0))],
)
def test_fiducials_recover_a_known_distortion_within_one_pixel(dpi, angle, sx, sy, shift) -> None:
    image, matrix = distort(draw_page(dpi), angle, sx, sy, shift)
    registration = register_by_fiducials(image, PAGE, dpi_hint=dpi)
    assert isinstance(registration, Registration)
    assert registration.anchors_found == 4 and registration.method == "fiducials"
    error = np.abs(map_points(registration, TARGET_CENTRES) - true_points(matrix, dpi, TARGET_CENTRES))
    assert error.max() < 1.0


def test_a_missing_corner_still_registers_with_three() -> None:
    dpi = 150
    page = draw_page(dpi)
    page[int(4.3 * dpi) :, int(3.3 * dpi) :] = 245  # bottom-right corner torn off
    image, matrix = distort(page, 1.5, 1.0, 1.01, (5.0, 3.0))
    registration = register_by_fiducials(image, PAGE)
    assert isinstance(registration, Registration)
    assert registration.anchors_found == 3
    error = np.abs(map_points(registration, TARGET_CENTRES) - true_points(matrix, dpi, TARGET_CENTRES))
    assert error.max() < 1.0


def test_two_missing_corners_fail_naming_them() -> None:
    dpi = 150
    page = draw_page(dpi)
    page[: int(0.8 * dpi), int(3.2 * dpi) :] = 245  # top-right
    page[int(4.2 * dpi) :, : int(0.8 * dpi)] = 245  # bottom-left
    result = register_by_fiducials(page, PAGE)
    assert result == RegistrationFailure(Reason.NO_FIDUCIALS, "found 2 of 4 fiducials; missing: top-right, bottom-left")


def test_a_smudge_near_a_corner_is_not_taken_for_a_fiducial() -> None:
    dpi = 150
    page = draw_page(dpi)
    cv2.circle(page, (int(0.9 * dpi), int(0.5 * dpi)), int(0.15 * dpi), 20, -1)  # round blot
    registration = register_by_fiducials(page, PAGE)
    assert isinstance(registration, Registration) and registration.anchors_found == 4
    expected = np.array([[0.375 * dpi, 0.375 * dpi]])
    assert np.abs(map_points(registration, [(0.375, 0.375)]) - expected).max() < 0.5


def test_map_box_is_the_bounding_rectangle_of_the_mapped_corners() -> None:
    registration = Registration((100.0, 0, 10, 0, 200.0, 20, 0, 0, 1), "fiducials", False, 100.0, 4, 0.0)
    assert map_box(registration, (1.0, 2.0, 0.5, 0.25)) == pytest.approx((110.0, 420.0, 50.0, 50.0))


def test_upside_down_is_detected_by_the_qr_code() -> None:
    dpi = 150
    turned = cv2.rotate(draw_page(dpi), cv2.ROTATE_180)
    (code,) = decode_codes(turned)
    assert orientation_from_code(code, PAGE, turned.shape) is True
    (upright_code,) = decode_codes(draw_page(dpi))
    assert orientation_from_code(upright_code, PAGE, turned.shape) is False
    result = register_card(turned, PAGE, model=None, code=code, dpi_hint=None)
    assert not isinstance(result, RegistrationFailure)
    image, registration = result
    assert registration.rotated_180 is True
    assert np.array_equal(image, draw_page(dpi))
    assert layout_fit_score(image, registration, PAGE) == 1.0


def test_upside_down_is_detected_by_layout_fit_without_a_code() -> None:
    dpi = 150
    upright = draw_page(dpi)
    turned = cv2.rotate(upright, cv2.ROTATE_180)
    as_is = register_by_fiducials(turned, PAGE)
    assert isinstance(as_is, Registration)
    assert layout_fit_score(turned, as_is, PAGE) <= 0.2
    result = register_card(turned, PAGE, model=None, code=None, dpi_hint=None)
    assert not isinstance(result, RegistrationFailure)
    image, registration = result
    assert registration.rotated_180 is True and np.array_equal(image, upright)
    assert layout_fit_score(image, registration, PAGE) == 1.0


def _reference_page() -> LayoutPage:
    return LayoutPage(page=1, size_in=SIZE_IN, targets=TARGETS, qr_in=QR_BOX, reference_dpi=150.0)


def _blank_model(image: np.ndarray, style: str = "S1", dpi: float = 150.0):
    return learn_page(style, 1, image, dpi)


@pytest.mark.parametrize(("dpi", "turn", "claimed"), [(150, False, None), (300, False, 96.0), (200, True, 72.0), (200, False, 300.0)])
def test_blank_registration_without_fiducials(dpi, turn, claimed) -> None:
    reference = draw_page(150, fiducials=False)
    image, matrix = distort(draw_page(dpi, fiducials=False), 2.0, 1.015, 0.99, (6.0, -4.0))
    if turn:
        image = cv2.rotate(image, cv2.ROTATE_180)
    result = register_by_blank(image, _reference_page(), _blank_model(reference), dpi_hint=claimed)
    assert not isinstance(result, RegistrationFailure), result
    upright, registration = result
    assert registration.rotated_180 is turn and registration.method == "reference"
    error = np.abs(map_points(registration, TARGET_CENTRES) - true_points(matrix, dpi, TARGET_CENTRES))
    assert error.max() < 0.01 * dpi  # within 0.01 in, whatever the file's dpi tag claims
    assert abs(registration.dpi - dpi) < 0.03 * dpi
    assert layout_fit_score(upright, registration, _reference_page()) == 1.0


@pytest.mark.parametrize("angle", [-3.0, 3.0])
def test_a_card_skewed_three_degrees_registers_to_a_blank_without_timing_marks(angle: float) -> None:
    """The dense path starts from the translation alone where the blank has no timing marks,
    and searches the skews when that does not settle: +-3 degrees still register."""
    reference = draw_page(150, fiducials=False)
    image, matrix = distort(draw_page(200, fiducials=False), angle, 1.0, 1.0, (8.0, 5.0))
    model = _blank_model(reference)
    assert not model.has_timing_marks
    result = register_by_blank(image, _reference_page(), model, dpi_hint=None)
    assert not isinstance(result, RegistrationFailure), result
    _upright, registration = result
    error = np.abs(map_points(registration, TARGET_CENTRES) - true_points(matrix, 200, TARGET_CENTRES))
    assert error.max() < 0.01 * 200


def test_a_card_that_does_not_fit_its_blank_fails_with_the_residual() -> None:
    reference = draw_page(150, fiducials=False)
    card = draw_page(200, fiducials=False)
    h, w = card.shape
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = np.float32([[0.08 * w, 0.02 * h], [0.93 * w, 0], [w, h], [0, 0.96 * h]])  # a photo: perspective
    photo = cv2.warpPerspective(card, cv2.getPerspectiveTransform(src, dst), (w, h), borderValue=245)
    result = register_by_blank(photo, _reference_page(), _blank_model(reference))
    assert isinstance(result, RegistrationFailure) and result.reason is Reason.REGISTRATION_FAILED
    assert "in" in result.detail


def test_a_card_scanned_at_100_dpi_is_refused_as_low_resolution() -> None:
    reference = draw_page(150, fiducials=False)
    result = register_by_blank(draw_page(100, fiducials=False), _reference_page(), _blank_model(reference))
    assert isinstance(result, RegistrationFailure) and result.reason is Reason.LOW_RESOLUTION


def test_register_card_falls_back_to_the_blank() -> None:
    reference = draw_page(150, fiducials=False)
    page = LayoutPage(1, SIZE_IN, TARGETS, fiducials_in=FIDUCIALS, qr_in=QR_BOX, reference_dpi=150.0)
    card = draw_page(150, fiducials=False)
    result = register_card(card, page, model=_blank_model(reference), code=None, dpi_hint=None)
    assert not isinstance(result, RegistrationFailure)
    assert result[1].method == "reference"
    no_reference = register_card(card, page, model=None, code=None, dpi_hint=None)
    assert isinstance(no_reference, RegistrationFailure) and no_reference.reason is Reason.NO_FIDUCIALS


def _styled(name: str, dpi: float) -> np.ndarray:
    img = draw_page(dpi, fiducials=False)
    cv2.putText(img, name, (int(0.4 * dpi), int(0.9 * dpi)), cv2.FONT_HERSHEY_SIMPLEX, dpi / 150, 20, 2)
    return img


def _groups(names: dict[str, str], distinguish: tuple = ()):
    models = [_blank_model(_styled(name, 150), style) for style, name in names.items()]
    boxes = {m.key: tuple(t.box_in for t in TARGETS) for m in models}
    return build_style_groups(models, boxes, {m.key: distinguish for m in models})


def test_the_style_is_told_by_the_printed_precinct_name_alone() -> None:
    groups = _groups({"S1": "NORTH 01", "S2": "SOUTH 07", "S3": "SOUTH 08"})
    assert len(groups) == 1  # one frame
    for style, name in (("S2", "SOUTH 07"), ("S1", "NORTH 01"), ("S3", "SOUTH 08")):
        card, _ = distort(_styled(name, 200), 1.0, 1.0, 1.0, (4.0, 4.0))
        found = identify_style(card, groups)
        assert isinstance(found, StyleMatch) and found.model.style == style, found


def test_the_style_of_a_card_fed_upside_down_with_a_wrong_dpi_tag() -> None:
    groups = _groups({"S1": "NORTH 01", "S2": "SOUTH 07"}, distinguish=((0.3, 0.55, 1.9, 0.5),))
    card, _ = distort(_styled("NORTH 01", 200), 1.5, 1.0, 1.01, (4.0, -3.0))
    found = identify_style(cv2.rotate(card, cv2.ROTATE_180), groups, dpi_hint=72.0)
    assert isinstance(found, StyleMatch) and found.model.style == "S1" and found.alignment.turned


def test_two_identical_blanks_are_ambiguous_never_guessed() -> None:
    groups = _groups({"S1": "SOUTH 07", "S2": "SOUTH 07"})
    card, _ = distort(_styled("SOUTH 07", 200), 1.0, 1.0, 1.0, (4.0, 4.0))
    assert isinstance(identify_style(card, groups), StyleAmbiguous)


def test_a_card_of_a_style_the_election_lacks_is_unknown() -> None:
    groups = _groups({"S1": "NORTH 01", "S2": "SOUTH 07"})
    card = draw_page(200, fiducials=False)
    cv2.putText(card, "EAST 99 WARD 4 PRECINCT", (int(0.4 * 200), int(0.9 * 200)), cv2.FONT_HERSHEY_SIMPLEX, 200 / 150, 20, 2)
    cv2.putText(card, "CITY COUNCIL AT LARGE", (int(0.4 * 200), int(4.2 * 200)), cv2.FONT_HERSHEY_SIMPLEX, 200 / 150, 20, 2)
    found = identify_style(card, groups)
    assert not isinstance(found, StyleMatch), found


def test_a_blank_page_is_unknown() -> None:
    groups = _groups({"S1": "NORTH 01", "S2": "SOUTH 07"})
    found = identify_style(np.full((1000, 800), 250, np.uint8), groups)
    assert isinstance(found, StyleUnknown)


def test_a_line_touching_a_fiducial_does_not_move_it() -> None:
    dpi = 150
    page = draw_page(dpi)
    cv2.line(page, (0, int(0.45 * dpi)), (int(1.5 * dpi), int(0.45 * dpi)), 20, 2)  # through top-left square
    cv2.putText(page, "Ag", (int(0.45 * dpi), int(0.7 * dpi)), cv2.FONT_HERSHEY_SIMPLEX, 0.8, 20, 2)
    registration = register_by_fiducials(page, PAGE)
    assert isinstance(registration, Registration) and registration.anchors_found == 4
    assert np.abs(map_points(registration, TARGET_CENTRES) - TARGET_CENTRES * dpi).max() < 0.5


# --------------------------------------------------------------------------------------
# regressions from the "hardest" deck: one per cause


def _bilevel(gray: np.ndarray) -> np.ndarray:
    """A scanner's bilevel mode: error-diffusion dithering (a gray square becomes dotted)."""
    from PIL import Image

    return np.array(Image.fromarray(gray).convert("1").convert("L"))


@pytest.mark.parametrize("dpi", [150, 300])
def test_dithered_bilevel_fiducials_register(dpi: int) -> None:
    page = draw_page(dpi)
    page[page < 128] = 90  # a dark-gray square dithers into dots (the G4 cards' failure)
    image, matrix = distort(page, 1.5, 1.0, 1.0, (5.0, -4.0))
    registration = register_by_fiducials(_bilevel(image), PAGE, dpi_hint=dpi)
    assert isinstance(registration, Registration) and registration.anchors_found == 4
    error = np.abs(map_points(registration, TARGET_CENTRES) - true_points(matrix, dpi, TARGET_CENTRES))
    assert error.max() < 1.5


def test_a_torn_corner_and_a_stained_corner_still_register_with_three() -> None:
    dpi = 150
    image, matrix = distort(draw_page(dpi), 2.0, 1.0, 1.0, (3.0, 3.0))
    image[:120, :120] = 255  # torn off: the top-left square is gone
    stain = np.full(image.shape, 0, np.uint8)
    cv2.circle(stain, (int(3.6 * dpi), int(4.6 * dpi)), 60, 50, -1)
    stained = cv2.subtract(image, stain)  # a darker blob over the bottom-right square
    registration = register_by_fiducials(stained, PAGE, dpi_hint=dpi)
    assert isinstance(registration, Registration) and registration.anchors_found >= 3
    error = np.abs(map_points(registration, TARGET_CENTRES) - true_points(matrix, dpi, TARGET_CENTRES))
    assert error.max() < 1.5



def _erase_below(page: np.ndarray, dpi: float, a: tuple[float, float], b: tuple[float, float]) -> None:
    """Paper below the line through ``a`` and ``b`` (inches), to the page's bottom: a tear."""
    h, w = page.shape
    pts = np.array([[a[0] * dpi, a[1] * dpi], [b[0] * dpi, b[1] * dpi], [b[0] * dpi, h], [a[0] * dpi, h]], np.int32)
    cv2.fillPoly(page, [pts], 245)


def test_two_squares_a_tear_and_the_scanner_s_edge_took_part_of_register_by_their_inner_corners() -> None:
    """A tear across the bottom-left square's outer half and the scanner's edge through the
    bottom-right one leave neither a square, yet each its inner corner with both edges there;
    with the two squares found whole, all four agree and the targets' outlines are where the fit
    puts them: registered within a pixel and a half, skewed 2.5 degrees and stretched (the
    hardest profile's seed 3232: four such cards were refused ``no_fiducials``)."""
    dpi = 150
    page = draw_page(dpi)
    _erase_below(page, dpi, (0.0, 4.2), (0.75, 5.0))  # the bottom-left square's outer half torn away
    page[int(4.3 * dpi):, int(3.64 * dpi):] = 245  # the bottom-right square's outer half past the scanner's edge
    image, matrix = distort(page, 2.5, 1.015, 0.99, (6.0, -5.0))
    registration = register_by_fiducials(image, PAGE, dpi_hint=dpi)
    assert isinstance(registration, Registration), registration
    assert registration.method == "fiducial corners" and registration.anchors_found == 4
    error = np.abs(map_points(registration, TARGET_CENTRES) - true_points(matrix, dpi, TARGET_CENTRES))
    assert error.max() < 1.5


def test_a_square_torn_through_its_inner_corner_is_no_anchor() -> None:
    """A notch torn out of the bottom-left square's inner corner leaves an edge a step away
    from where the corner was: no anchor (or, taken for one, a corner 0.12 in off that the
    other three disagree with); the card is refused, naming the squares not found whole,
    though the bottom-right one's inner corner, past the scanner's edge, is sound."""
    dpi = 150
    page = draw_page(dpi)
    page[int(4.4 * dpi): int(4.62 * dpi), int(0.35 * dpi): int(0.6 * dpi)] = 245  # the notch
    page[int(4.3 * dpi):, int(3.64 * dpi):] = 245  # the bottom-right square's outer half past the scanner's edge
    image, _matrix = distort(page, 1.5, 1.0, 1.01, (5.0, 3.0))
    result = register_by_fiducials(image, PAGE, dpi_hint=dpi)
    assert result == RegistrationFailure(Reason.NO_FIDUCIALS, "found 2 of 4 fiducials; missing: bottom-left, bottom-right")


@pytest.mark.parametrize("shape", [(1, 1), (3, 1), (7, 5), (275, 212), (1100, 850)])
def test_paper_level_from_the_histogram_is_numpys_percentile(shape: tuple[int, int]) -> None:
    """The 8-bit fast path computes exactly what ``np.percentile`` does (interpolation included),
    over every other pixel of the page's middle."""
    from scanpipe.imaging.reference import PAPER_EDGE_SHARE, PAPER_PCT, paper_level

    rng = np.random.default_rng(sum(shape))
    mh, mw = int(shape[0] * PAPER_EDGE_SHARE), int(shape[1] * PAPER_EDGE_SHARE)
    for trial in range(20):
        page = rng.integers(0, 256, shape).astype(np.uint8)
        if trial % 2:
            page = np.clip(page // 16 * 16 + 180, 0, 255).astype(np.uint8)  # few levels: ties around the percentile
        middle = page[mh: shape[0] - mh: 2, mw: shape[1] - mw: 2]
        assert paper_level(page) == max(float(np.percentile(middle, PAPER_PCT)), 1.0)
        as_float = page.astype(np.float32)  # other types: np.percentile itself
        assert paper_level(as_float) == max(float(np.percentile(middle.astype(np.float32), PAPER_PCT)), 1.0)


def test_the_paper_level_is_the_sheets_not_the_backings() -> None:
    """A sheet of coloured stock (gray 190) on a white scanner backing showing round it."""
    from scanpipe.imaging.reference import paper_level

    bed = np.full((1100, 850), 252, np.uint8)
    bed[60:1040, 45:805] = 190
    bed[200:900:20, 100:700] = 20  # some print
    assert paper_level(bed) == 190.0


@pytest.mark.parametrize("density", [0.0, 0.02, 0.3, 0.6, 1.0])
def test_dark_components_are_opencvs_statistics(density: float) -> None:
    """The timing-mark search's component statistics are what OpenCV's own give, to the last
    bit and in its label order (blobs touching the borders, one-pixel specks, an empty and a
    wholly dark page included)."""
    from scanpipe.imaging.reference import dark_components

    rng = np.random.default_rng(int(density * 100))
    for shape in ((1, 1), (3, 700), (257, 191)):
        dark = (rng.random(shape) < density).astype(np.uint8)
        dark = cv2.dilate(dark, np.ones((2, 3), np.uint8)) if density < 0.1 else dark
        count, _labels, stats, centroids = cv2.connectedComponentsWithStats(dark, connectivity=8)
        found = dark_components(dark)
        if count <= 1:
            assert found is None
            continue
        assert found is not None
        w, h, area, centres = found
        assert np.array_equal(w, stats[1:, cv2.CC_STAT_WIDTH]) and np.array_equal(h, stats[1:, cv2.CC_STAT_HEIGHT])
        assert np.array_equal(area, stats[1:, cv2.CC_STAT_AREA])
        assert np.array_equal(centres, centroids[1:])


def _bold(name: str, dpi: float) -> np.ndarray:
    img = draw_page(dpi, fiducials=False)
    cv2.putText(img, name, (int(0.4 * dpi), int(0.9 * dpi)), cv2.FONT_HERSHEY_TRIPLEX, dpi / 200, 0, max(2, int(dpi / 60)))
    return img


def _bold_groups(blanks: dict[str, np.ndarray]):
    models = [learn_page(style, 1, image, 200.0) for style, image in blanks.items()]
    return build_style_groups(models, {m.key: tuple(t.box_in for t in TARGETS) for m in models}, {m.key: () for m in models})


def test_names_set_in_the_same_place_are_told_apart_in_detail() -> None:
    """Bold names of one length in one place ("01 ... NORTH" against "02 ... SOUTH"): at the
    frame resolution no pixel is solid on one and paper on the other, so the pair is compared
    in detail at the blanks' resolution, and each card is its own style by a wide margin."""
    names = {"S1": "PRECINCT 01 HARLAN NORTH", "S2": "PRECINCT 02 HARLAN SOUTH"}
    groups = _bold_groups({style: _bold(name, 200) for style, name in names.items()})
    assert len(groups) == 1
    assert groups[0].only_in(0, 1).size + groups[0].only_in(1, 0).size < 12  # the coarse comparison cannot tell them
    for style, name in names.items():
        card, _ = distort(_bold(name, 200), 1.2, 1.01, 0.995, (4.0, 4.0))
        found = identify_style(card, groups)
        assert isinstance(found, StyleMatch) and found.model.style == style and found.margin > 0.5, found
    assert groups[0].details  # the detail comparison decided


def test_two_scans_of_one_blank_are_ambiguous_in_detail_too() -> None:
    """Two scans of the same blank (shifted, turned a little, noisy) differ along every edge
    of their print, not in any piece of it: never told apart."""
    rng = np.random.default_rng(1)
    second, _ = distort(_bold("PRECINCT 01 HARLAN NORTH", 200), 0.3, 1.002, 0.998, (2.0, -1.5))
    second = np.clip(second.astype(int) + rng.integers(-12, 12, second.shape), 0, 255).astype(np.uint8)
    groups = _bold_groups({"S1": _bold("PRECINCT 01 HARLAN NORTH", 200), "S2": second})
    card, _ = distort(_bold("PRECINCT 01 HARLAN NORTH", 200), -0.5, 1.0, 1.0, (4.0, 4.0))
    assert isinstance(identify_style(card, groups), StyleAmbiguous)


def test_a_card_a_blank_s_print_fits_closely_is_not_searched_against_frames_whose_marks_it_lacks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A card whose print one blank fits closely, refused its style for print it lacks (here a
    precinct the election lacks: "SOUTH 07" where the blank prints "NORTH 01"), is not aligned
    to a frame of timing marks it does not show: it fits that no better, and searching such
    frames (quickly, then as fed and turned) cost a stamped card of the vendor profile seconds
    and read nothing (seed 282828, ``0062-p1.tif``: 6.2 s). Its reason stays the close blank's."""
    import scanpipe.imaging.style as style
    from tests.test_align_marks import _page

    lone = _blank_model(_styled("NORTH 01", 150), "S1")
    framed = learn_page("M1", 1, _page("box", 4), 150.0)
    models = [lone, framed]
    groups = build_style_groups(models, {m.key: tuple(t.box_in for t in TARGETS) for m in models}, {m.key: () for m in models})
    assert len(groups) == 2 and framed.has_timing_marks and not lone.has_timing_marks
    aligned: list[str] = []
    real = style.align_densely

    def recording(view: object, model: object, **options: object) -> object:
        aligned.append(model.style)  # type: ignore[attr-defined]
        return real(view, model, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(style, "align_densely", recording)
    card, _ = distort(_styled("SOUTH 07", 200), 1.0, 1.0, 1.0, (4.0, 4.0))
    found = identify_style(card, groups)
    assert isinstance(found, StyleUnknown) and "S1 page 1" in found.detail, found
    assert aligned and set(aligned) == {"S1"}, aligned
