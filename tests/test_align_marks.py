"""Alignment by the vendor's timing marks (:func:`scanpipe.imaging.align.align_by_marks`):
the blank's frame of marks found on skewed, stretched, turned and cut cards; evenly spaced
marks that also fit a spacing off are told apart by the print; a frame that is not on the
card is a failure, a blank without marks is no answer at all (the dense steps decide)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from scanpipe.imaging.align import Alignment, AlignmentFailure, CardView, align_by_marks, align_densely
from scanpipe.imaging.reference import learn_page

DPI = 150.0
W_IN, H_IN = 8.5, 11.0


def _page(frame: str, seed: int, mark_in: tuple[float, float] = (0.18, 0.07)) -> np.ndarray:
    """A blank: timing marks (``frame``: "box" top row and both columns, "columns" the two
    long edges only, "top" the top row only, "none") of ``mark_in`` (the columns' dashes:
    width, height), and print (rules, text-like blocks, ovals) from ``seed``."""
    rng = np.random.default_rng(seed)
    w, h = int(W_IN * DPI), int(H_IN * DPI)
    img = np.full((h, w), 250, np.uint8)
    mw, mh = int(mark_in[0] * DPI), int(mark_in[1] * DPI)
    if frame in ("box", "columns"):
        for y in np.arange(0.6, H_IN - 0.4, 0.25):
            for x in (0.25, W_IN - 0.25 - mark_in[0]):
                cv2.rectangle(img, (int(x * DPI), int(y * DPI)), (int(x * DPI) + mw, int(y * DPI) + mh), 0, -1)
    if frame in ("box", "top"):
        for x in np.arange(0.6, W_IN - 0.6, 0.25):
            cv2.rectangle(img, (int(x * DPI), int(0.25 * DPI)), (int(x * DPI) + mh, int(0.25 * DPI) + mw), 0, -1)
    for _ in range(60):  # text-like blocks
        x, y = rng.uniform(0.8, W_IN - 2.5), rng.uniform(0.9, H_IN - 0.8)
        for k in range(int(rng.integers(3, 12))):
            cv2.rectangle(img, (int((x + 0.09 * k) * DPI), int(y * DPI)), (int((x + 0.09 * k + 0.06) * DPI), int((y + 0.08) * DPI)), 40, 1)
    for y in np.arange(1.0, H_IN - 1, 1.3):
        cv2.line(img, (int(0.8 * DPI), int(y * DPI)), (int((W_IN - 0.8) * DPI), int(y * DPI)), 0, 2)
    for _ in range(25):
        x, y = rng.uniform(1, W_IN - 1), rng.uniform(1, H_IN - 1)
        cv2.ellipse(img, (int(x * DPI), int(y * DPI)), (int(0.09 * DPI), int(0.05 * DPI)), 0, 0, 360, 0, 2)
    return img


def _scan(blank: np.ndarray, *, angle: float, sx: float, sy: float, shift: tuple[float, float], turned: bool,
          crop_top_in: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The blank 'scanned': stretched, turned by ``angle`` degrees, shifted, maybe fed upside
    down and with its top cut; and the true blank px -> upright card px."""
    h, w = blank.shape
    a = np.radians(angle)
    m = np.array([[sx * np.cos(a), -sy * np.sin(a), shift[0]], [sx * np.sin(a), sy * np.cos(a), shift[1]], [0, 0, 1]])
    out_w, out_h = int(w * sx) + 40, int(h * sy) + 40
    card = cv2.warpPerspective(blank, m, (out_w, out_h), flags=cv2.INTER_AREA, borderValue=250)
    cut = int(crop_top_in * DPI * sy)
    card = card[cut:]
    m = np.array([[1, 0, 0], [0, 1, -cut], [0, 0, 1]]) @ m
    if turned:  # fed upside down: the upright card is the warped blank again, the mapping unchanged
        card = np.ascontiguousarray(np.rot90(card, 2))
    return card, m


def _corner_error_in(found: np.ndarray, truth: np.ndarray, shape: tuple[int, int]) -> float:
    h, w = shape
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64).reshape(-1, 1, 2)
    return float(np.abs(cv2.perspectiveTransform(corners, found) - cv2.perspectiveTransform(corners, truth)).max() / DPI)


@pytest.mark.parametrize(("angle", "sx", "sy", "turned"), [
    (0.0, 1.0, 1.0, False),
    (2.5, 0.99, 1.012, False),
    (-3.0, 1.02, 0.985, True),
    (1.0, 0.97, 0.97, True),
])
def test_a_box_frame_is_found_on_a_skewed_stretched_or_turned_card(angle: float, sx: float, sy: float, turned: bool) -> None:
    blank = _page("box", 1)
    model = learn_page("s", 1, blank, DPI)
    assert model.mark_size_in is not None and len(model.marks_in) > 60
    card, truth = _scan(blank, angle=angle, sx=sx, sy=sy, shift=(12.0, 25.0), turned=turned)
    found = align_by_marks(CardView(card), model, dpi_hint=DPI)
    assert isinstance(found, Alignment), found
    assert found.turned is turned
    assert found.score > 0.8
    assert _corner_error_in(found.matrix, truth, blank.shape) < 0.03


def test_long_dashes_on_a_card_scanned_finer_than_its_blank_are_found() -> None:
    """A frame of long dashes (0.4 in) on a card scanned at 1.5 times its blank's resolution
    with no dpi tag: at the blank's resolution a dash measures 0.6 in, over the 0.5 in a
    blank's mark may be; the card's marks are still looked for (before, none was found, and a
    300-dpi card of such a frame went to the dense steps, which fitted it to another frame)."""
    blank = _page("columns", 5, mark_in=(0.4, 0.07))
    model = learn_page("s", 1, blank, DPI)
    assert model.mark_size_in is not None and model.mark_size_in[0] > 0.35
    card, truth = _scan(blank, angle=-1.0, sx=1.5, sy=1.5, shift=(20.0, 30.0), turned=False)
    found = align_by_marks(CardView(card), model)
    assert isinstance(found, Alignment), found
    assert _corner_error_in(found.matrix, truth, blank.shape) < 0.03


def test_fits_a_spacing_off_lead_to_the_right_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """A card stretched along its columns smears the translation vote over neighbouring
    spacings, so that every leading translation may lie a spacing off (a fourth-renderer Hart
    card, 2.5 degrees skewed and 1.6% stretched, was fitted 0.30 in off and queued): the fits a
    spacing from those tried are tried too, and the print picks the right one. Simulated here
    by the vote leading to one fit only, the right one moved a spacing down."""
    from scanpipe.imaging import align

    blank = _page("columns", 3)
    model = learn_page("s", 1, blank, DPI)
    card, truth = _scan(blank, angle=1.0, sx=1.0, sy=1.01, shift=(10.0, 10.0), turned=False)
    fit_marks = align._fit_marks
    down = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.25 * DPI], [0.0, 0.0, 1.0]])  # the marks stand 0.25 in apart

    def a_spacing_off(*args: object, **kwargs: object) -> list[tuple[int, np.ndarray]]:
        fits = fit_marks(*args, **kwargs)  # type: ignore[arg-type]
        if not fits:
            return fits
        right = min(fits, key=lambda f: _corner_error_in(f[1], truth, blank.shape))
        return [(right[0], right[1] @ down)]

    monkeypatch.setattr(align, "_fit_marks", a_spacing_off)
    found = align_by_marks(CardView(card), model, dpi_hint=DPI)
    assert isinstance(found, Alignment), found
    assert _corner_error_in(found.matrix, truth, blank.shape) < 0.03
    assert found.score > 0.9


def test_columns_that_fit_a_spacing_off_are_told_apart_by_the_print() -> None:
    """Two columns of evenly spaced marks and the card's top cut off: a fit one or two marks
    up or down finds nearly as many marks; the print decides, as the dense alignment would."""
    blank = _page("columns", 2)
    model = learn_page("s", 1, blank, DPI)
    card, truth = _scan(blank, angle=1.5, sx=1.0, sy=1.0, shift=(10.0, 10.0), turned=False, crop_top_in=1.1)
    found = align_by_marks(CardView(card), model, dpi_hint=DPI)
    assert isinstance(found, Alignment), found
    assert _corner_error_in(found.matrix, truth, blank.shape) < 0.03
    dense = align_densely(CardView(card), model, dpi_hint=DPI)
    assert isinstance(dense, Alignment)
    assert found.score > dense.score - 0.05


@pytest.mark.parametrize(("sx", "turned"), [(0.975, False), (0.975, True), (1.025, False), (1.025, True)])
def test_two_columns_of_marks_on_a_card_stretched_across_them(sx: float, turned: bool) -> None:
    """A frame of two columns only: the marks' spacing gives the scale along them, not across,
    and a scanner stretching the card 2.5% across moves the far column 0.2 in. The marks path
    finds the frame within 0.03 in or says it does not fit (the dense steps then align the
    card), never a fit a spacing off (the code before this test accepted one 0.3 in off)."""
    blank = _page("columns", 3)
    model = learn_page("s", 1, blank, DPI)
    card, truth = _scan(blank, angle=-1.0, sx=sx, sy=1.0, shift=(14.0, 9.0), turned=turned)
    found = align_by_marks(CardView(card), model, dpi_hint=DPI)
    if not isinstance(found, Alignment):
        assert isinstance(found, AlignmentFailure)
        found = align_densely(CardView(card), model, dpi_hint=DPI)
        assert isinstance(found, Alignment), found
        assert _corner_error_in(found.matrix, truth, blank.shape) < 0.1  # local refinement takes it from there
    else:
        assert _corner_error_in(found.matrix, truth, blank.shape) < 0.03
    assert found.turned is turned


@pytest.mark.parametrize(("angle", "sy", "turned"), [(2.0, 1.015, False), (-2.5, 0.985, True), (0.3, 1.0, False)])
def test_one_row_of_marks_places_the_card_and_its_stretch_across_the_row_is_found(angle: float, sy: float, turned: bool) -> None:
    """A frame of one row of marks (ImageCast's along the top, a legal frame's along the
    bottom) fixes a similarity only: the card's stretch across the row (a scanner's feed, up to
    3%) is found from the print. Before, no fit was taken from one row (its marks do not span
    the page both ways) and the dense steps alone, which can settle a few degrees off, placed
    such cards. A card of another frame still does not fit."""
    blank = _page("top", 6)
    model = learn_page("s", 1, blank, DPI)
    card, truth = _scan(blank, angle=angle, sx=1.0, sy=sy, shift=(11.0, 17.0), turned=turned)
    found = align_by_marks(CardView(card), model, dpi_hint=DPI)
    assert isinstance(found, Alignment), found
    assert found.turned is turned
    assert _corner_error_in(found.matrix, truth, blank.shape) < 0.05
    other, _ = _scan(_page("top", 7), angle=angle, sx=1.0, sy=sy, shift=(11.0, 17.0), turned=turned)
    theirs = align_by_marks(CardView(other), model, dpi_hint=DPI)
    assert not isinstance(theirs, Alignment) or theirs.score < found.score - 0.2


def test_another_frame_is_a_failure_and_a_blank_without_marks_no_answer() -> None:
    """A card of two-column frame against a box frame: a failure (the top row is missing);
    against a blank without marks: None."""
    framed = learn_page("a", 1, _page("box", 3), DPI)
    other = learn_page("b", 1, _page("box", 4), DPI)  # the same frame, other print
    bare = learn_page("c", 1, _page("none", 3), DPI)
    assert bare.mark_size_in is None
    card, _ = _scan(_page("columns", 5)[:, : int(6 * DPI)], angle=0.5, sx=1.0, sy=1.0, shift=(5.0, 5.0), turned=False)
    assert align_by_marks(CardView(card), bare, dpi_hint=DPI) is None
    lost = align_by_marks(CardView(card), framed, dpi_hint=DPI)
    assert isinstance(lost, AlignmentFailure)
    mine, _ = _scan(_page("box", 3), angle=-1.0, sx=1.0, sy=1.0, shift=(8.0, 8.0), turned=False)
    own = align_by_marks(CardView(mine), framed, dpi_hint=DPI)
    theirs = align_by_marks(CardView(mine), other, dpi_hint=DPI)
    assert isinstance(own, Alignment) and own.score > 0.8
    # the same frame with other print: the same place, a lower correlation (telling the two
    # styles apart is the style comparison's work, on the aligned print)
    assert isinstance(theirs, Alignment)
    assert np.allclose(theirs.matrix, own.matrix, atol=0.5)
    assert theirs.score < own.score - 0.05


def test_a_fit_finding_one_column_is_extended_to_the_other() -> None:
    """Two columns of marks, the card stretched 2% across them: a similarity fitted to the left
    column puts the right one 0.15 in off (beyond the snap). :func:`_extend` votes that offset
    and refits, so every mark is found."""
    from scanpipe.imaging.align import MARK_SNAP_IN, _extend, _nearest

    ys = np.arange(0.6, 10.6, 0.25) * DPI
    anchor = np.array([(x * DPI, y) for x in (0.3, 8.0) for y in ys])
    card = np.column_stack([1.02 * anchor[:, 0] + 10.0, anchor[:, 1] + 5.0])  # the scanner's stretch across
    left = np.array([[1.0, 0.0, 10.0 + 0.02 * 0.3 * DPI], [0.0, 1.0, 5.0], [0.0, 0.0, 1.0]])  # fits the left column only
    radius = MARK_SNAP_IN * DPI
    assert _nearest(anchor, card, left, radius)[0].sum() == len(ys)
    extended = _extend(anchor, card, left, radius, DPI, floor=0.3 * len(anchor))
    assert _nearest(anchor, card, extended, radius)[0].all()
    assert abs(extended[0, 0] - 1.02) < 0.002


def _stages_run(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The local refinement's passes, in the order :func:`refine` runs them."""
    from scanpipe.imaging import align

    run: list[str] = []
    real = align.refine_locally

    def counted(upright: np.ndarray, model: object, matrix: np.ndarray, stage: align.Stage = align.FINE_STAGE) -> object:
        run.append("coarse" if stage is align.COARSE_STAGE else "fine")
        return real(upright, model, matrix, stage)  # type: ignore[arg-type]

    monkeypatch.setattr(align, "refine_locally", counted)
    return run


def test_a_start_the_marks_fitted_is_refined_by_the_fine_pass_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The timing marks place the card within the fine pass's search: the coarse pass is
    skipped, and the result is as precise as both passes'."""
    from scanpipe.imaging.align import Refined, refine

    blank = _page("box", 6)
    model = learn_page("s", 1, blank, DPI)
    card, truth = _scan(blank, angle=1.5, sx=1.01, sy=0.99, shift=(11.0, 17.0), turned=False)
    found = align_by_marks(CardView(card), model, dpi_hint=DPI)
    assert isinstance(found, Alignment)
    run = _stages_run(monkeypatch)
    alone = refine(card, model, found.matrix, close=True)
    assert run == ["fine"]
    both = refine(card, model, found.matrix)
    assert run == ["fine", "coarse", "fine"]
    assert isinstance(alone, Refined) and isinstance(both, Refined)
    assert _corner_error_in(alone.matrix, truth, blank.shape) < 0.01
    assert _corner_error_in(alone.matrix, both.matrix, blank.shape) < 0.005


def test_a_start_off_beyond_the_fine_search_gets_both_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A start said to be close but 0.1 in off (beyond the fine pass's 0.03 in): the fine pass
    alone cannot stand, both passes run and find the card."""
    from scanpipe.imaging.align import Refined, refine

    blank = _page("box", 7)
    model = learn_page("s", 1, blank, DPI)
    card, truth = _scan(blank, angle=-1.0, sx=1.0, sy=1.0, shift=(9.0, 13.0), turned=False)
    off = np.array([[1, 0, 0.1 * DPI], [0, 1, -0.08 * DPI], [0, 0, 1]]) @ truth
    run = _stages_run(monkeypatch)
    refined = refine(card, model, off, close=True)
    assert run[0] == "fine" and "coarse" in run
    assert isinstance(refined, Refined)
    assert _corner_error_in(refined.matrix, truth, blank.shape) < 0.01


def test_the_card_is_warped_into_the_frame_in_affine_tiles() -> None:
    """The style comparison's warp: per tile affine, within OpenCV's own 1/32 px rounding of
    the exact perspective warp; a strong perspective (a photograph) is warped exactly."""
    from scanpipe.imaging.reference import warp_in_tiles

    rng = np.random.default_rng(3)
    image = cv2.GaussianBlur(rng.random((900, 700)).astype(np.float32), (0, 0), 2.0)
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    scan = np.array([[1.01, 0.02, 4.3], [-0.018, 0.995, 7.9], [4e-7, -6e-7, 1.0]])  # frame -> image: skew, stretch, a trace of perspective
    exact = cv2.warpPerspective(image, scan, (650, 850), flags=flags)
    tiled = warp_in_tiles(image, scan, (650, 850))
    assert tiled.shape == exact.shape and tiled.dtype == exact.dtype
    steepest = float(np.hypot(cv2.Sobel(image, cv2.CV_32F, 1, 0, ksize=1), cv2.Sobel(image, cv2.CV_32F, 0, 1, ksize=1)).max()) / 2
    # where a sample falls off the image's edge OpenCV's two warps blend in the border alike only roughly
    inside = cv2.erode(cv2.warpPerspective(np.ones_like(image), scan, (650, 850), flags=flags), np.ones((3, 3), np.uint8)) == 1.0
    assert inside.mean() > 0.9
    assert float(np.abs(tiled - exact)[inside].max()) <= steepest / 16  # sample positions 1/16 px apart at most
    photo = np.array([[1.0, 0.05, 3.0], [0.0, 1.0, 2.0], [2e-4, 1e-4, 1.0]])
    assert np.array_equal(warp_in_tiles(image, photo, (650, 850)), cv2.warpPerspective(image, photo, (650, 850), flags=flags))


@pytest.mark.parametrize("angle", [0.0, 1.8, -2.5])
def test_the_rows_direction_and_spacing_come_from_whole_lines_of_marks(angle: float) -> None:
    """Two columns of 60 marks a sixth of an inch apart (200 dpi) and a row, centroids off by
    up to a pixel: the median over neighbours misses the direction by up to a degree (the far
    column then lies a whole mark off) and the spacing by a pixel; lines through the columns
    do not."""
    from scanpipe.imaging.align import _rows

    rng = np.random.default_rng(4)
    along = np.arange(60) * 33.3
    marks = np.vstack([np.column_stack([np.full(60, 20.0), along]), np.column_stack([np.full(60, 1600.0), along]),
                       np.column_stack([np.arange(40) * 33.3 + 100, np.full(40, -40.0)])])
    a = np.radians(angle)
    seen = marks @ np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]).T + rng.normal(0, 0.6, marks.shape)
    found = _rows(seen)
    assert found is not None
    assert abs(found[0] - angle) < 0.05
    assert abs(found[1] / 33.3 - 1.0) < 0.002


def test_the_phase_correlations_next_peaks_hold_the_shift_a_repeated_print_hides() -> None:
    """The highest peak is cv2.phaseCorrelate's; a print that repeats (two like blocks) also
    correlates a block off, and that shift is among the next peaks (what ECC is started from
    where the highest peak gives no fit)."""
    from scanpipe.imaging.align import _phase_peaks, _phase_shift

    rng = np.random.default_rng(7)
    block = cv2.GaussianBlur(rng.random((40, 60)).astype(np.float32), (0, 0), 1.5)
    blank = np.zeros((160, 120), np.float32)
    blank[20:60, 30:90] = block
    blank[90:130, 30:90] = block  # the same block again, 70 rows lower
    card = np.zeros_like(blank)
    card[25:65, 33:93] = block  # one block only, moved (3, 5)
    (dx, dy), _peak = _phase_shift(blank, card)
    peaks = _phase_peaks(blank, card, 5)
    assert (round(dx), round(dy)) == peaks[0]
    assert {(3.0, 5.0), (3.0, -65.0)} <= set(peaks)  # in place, and the lower block moved up onto it


@pytest.mark.parametrize("linear, scanned", [
    ([[1.0, 0.0], [0.0, 1.0]], True),
    ([[0.97, -0.05], [0.05, 0.99]], True),  # 3 degrees, 2% stretch
    ([[1.017, 0.579], [-0.525, 0.375]], False),  # the sheared corner a wrong dpi tag led ECC to
    ([[1.25, 0.0], [0.0, 1.25]], False),  # a quarter off the scale hypothesis
    ([[1.0, 0.0], [0.0, 0.85]], False),  # 15% more along the feed than across
    ([[-1.0, 0.0], [0.0, 1.0]], False),  # a mirror
])
def test_an_ecc_fit_no_scanner_makes_is_no_fit(linear: list[list[float]], scanned: bool) -> None:
    from scanpipe.imaging.align import _scanned_shape

    assert _scanned_shape(np.array(linear)) is scanned


def test_a_wrong_dpi_tag_that_would_make_the_image_a_desk_is_no_scale() -> None:
    """A 150 dpi card whose file says 72 dpi: the tag's scale would make the image twice the
    blank's size both ways, which no scanner images; it is not searched (before, the dense
    steps searched it on an image four times the blank's area), the sides' and the marks' are."""
    from scanpipe.imaging.align import scale_hypotheses

    blank = _page("box", 1)
    model = learn_page("s", 1, blank, DPI)
    card, _truth = _scan(blank, angle=1.0, sx=1.0, sy=1.0, shift=(12.0, 25.0), turned=False)
    scales = scale_hypotheses(card, model, 72.0, CardView(card))
    assert scales and all(abs(s - 1.0) < 0.1 for s in scales), scales  # the sides (the scan 40 px larger) and the marks
    assert any(abs(s - 300.0 / DPI) < 0.01 for s in scale_hypotheses(card, model, 300.0, CardView(card)))  # a card smaller than its tag says may be


def test_the_scale_is_taken_from_the_print_and_a_right_tag_not_from_the_margins() -> None:
    """A card scanned a percent smaller than its blank, two degrees askew, with white margins
    the scanner left: its sides are 3-6% longer than the blank's (the sixth renderer's seeds
    4949 and 5151: such cards without a dpi tag, or with a wrong one, matched no blank, the dense
    steps trying scales 3-8% off). The extent of its print gives the scale within half a
    percent, tag or no tag; a right tag's scale is kept first, ahead of side ratios within 1%."""
    from scanpipe.imaging.align import scale_hypotheses

    blank = _page("none", 2)
    model = learn_page("s", 1, blank, DPI)
    h, w = blank.shape
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), 2.0, 0.99)
    turn[:, 2] += (0.03 * w, 0.02 * h)  # centred on a canvas 6% wider and 4% longer than the blank
    card = np.rot90(cv2.warpAffine(blank, turn, (int(1.06 * w), int(1.04 * h)), borderValue=250), 2).copy()  # fed upside down
    for tag in (None, 72.0):
        scales = scale_hypotheses(card, model, tag, CardView(card), dense=True)
        assert any(abs(s - 0.99) < 0.005 for s in scales), (tag, scales)
    square = np.full((int(h * 1.01), int(w * 1.035)), 250, np.uint8)
    square[:h, :w] = blank
    assert abs(scale_hypotheses(square, model, DPI, CardView(square), dense=True)[0] - 1.0) < 1e-9


def test_a_card_that_correlates_more_strongly_upside_down_is_still_found_upright(monkeypatch: pytest.MonkeyPatch) -> None:
    """The feed direction is chosen by the phase correlation's highest peak; a card askew by
    nearly three degrees may peak a little higher turned than upright (the sixth renderer's
    seed 4949, card 0071: 0.107 against 0.100), and ECC then finds no fit turned. The dense
    search tries the other direction before giving up. Here the turned peak is made the higher."""
    import scanpipe.imaging.align as align

    blank = _page("none", 3)
    model = learn_page("s", 1, blank, DPI)
    card, truth = _scan(blank, angle=2.0, sx=1.0, sy=1.0, shift=(20.0, 15.0), turned=False)
    real = align._phase_shift

    def turned_peaks_higher(reference: np.ndarray, image: np.ndarray) -> tuple[tuple[float, float], float]:
        shift, peak = real(reference, image)
        return shift, peak + (1.0 if image.strides[0] < 0 else 0.0)  # np.rot90's view: the turned card

    monkeypatch.setattr(align, "_phase_shift", turned_peaks_higher)
    found = align_densely(CardView(card), model, thorough=True)
    assert isinstance(found, Alignment) and not found.turned, found
    assert _corner_error_in(found.matrix, truth, blank.shape) < 0.3


def test_a_card_searched_harder_after_a_quick_pass_repeats_none_of_its_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """A card no blank matched quickly is aligned again searching harder (``thorough``), and
    that search begins with the steps the quick pass took: the card's view keeps each step's
    result (:meth:`~scanpipe.imaging.align.CardView.once`), so ECC runs only for the steps the
    quick pass did not take, and the outcome is the one a search from scratch finds. Here a
    card a third of which a black block covers: no fit settles, and the search goes on through
    the scales, the feed directions and the phase correlation's next peaks."""
    import functools

    import scanpipe.imaging.align as align

    blank = _page("none", 5)
    model = learn_page("s", 1, blank, DPI)
    card, _truth = _scan(blank, angle=2.5, sx=1.02, sy=0.99, shift=(25.0, 12.0), turned=True)
    h, w = card.shape
    cv2.rectangle(card, (int(0.1 * w), int(0.2 * h)), (int(0.4 * w), int(0.5 * h)), 0, -1)
    calls: list[int] = []
    real = align._ecc

    @functools.wraps(real)
    def counted(*args: object) -> tuple[float, np.ndarray]:
        calls.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(align, "_ecc", counted)
    fresh = align_densely(CardView(card), model, thorough=True)
    from_scratch = len(calls)
    view = CardView(card)
    calls.clear()
    align_densely(view, model, thorough=False)
    quick = len(calls)
    calls.clear()
    again = align_densely(view, model, thorough=True)
    assert quick >= 2 and len(calls) <= from_scratch - quick, (from_scratch, quick, len(calls))
    assert isinstance(fresh, AlignmentFailure) and isinstance(again, AlignmentFailure)
    assert (again.detail, again.score) == (fresh.detail, fresh.score)
    assert (again.fit is None) == (fresh.fit is None)
    if again.fit is not None and fresh.fit is not None:
        assert np.array_equal(again.fit.matrix, fresh.fit.matrix) and again.fit.score == fresh.fit.score
