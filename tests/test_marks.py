"""score_targets on tiny drawn cards: an oval outline on white paper, then one mark each."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from scanpipe.classify import classify_target, load_thresholds
from scanpipe.imaging.marks import _straight_lines, score_targets
from scanpipe.synth.marks import INTENT, MarkKind, damaged_targets, draw_mark, draw_stain
from scanpipe.synth.render import box_px, draw_target
from scanpipe.synth.scan import to_bilevel
from scanpipe.types import LayoutPage, MarkIntent, MarkStatus, Registration, TargetDef, TargetScore

DPI = 200
BOX_W, BOX_H = 0.22, 0.14


def _pt(x_in: float, y_in: float, dpi: float) -> tuple[int, int]:
    return int(round(x_in * dpi * 16)), int(round(y_in * dpi * 16))


def _axes(a_in: float, b_in: float, dpi: float) -> tuple[int, int]:
    return int(round(a_in * dpi * 16)), int(round(b_in * dpi * 16))


def draw(img: np.ndarray, kind: str, cx: float, cy: float, dpi: float) -> None:
    """One catalogue-like mark centred on the oval at (cx, cy) inches."""
    aa, s = cv2.LINE_AA, 4
    px = lambda v: max(1, int(round(v * dpi)))  # noqa: E731
    p = lambda dx, dy: _pt(cx + dx, cy + dy, dpi)  # noqa: E731
    if kind == "full_fill":
        cv2.ellipse(img, p(0, 0), _axes(0.112, 0.072, dpi), 0, 0, 360, 15, -1, aa, s)
    elif kind == "light_pencil":
        cv2.ellipse(img, p(0, 0), _axes(0.105, 0.065, dpi), 0, 0, 360, 150, -1, aa, s)
    elif kind == "check":
        cv2.polylines(img, [np.array([p(-0.07, 0.0), p(-0.02, 0.055), p(0.14, -0.12)], np.int32)], False, 30,
                      px(0.025), aa, s)
    elif kind == "x_mark":
        cv2.line(img, p(-0.1, -0.065), p(0.1, 0.065), 30, px(0.025), aa, s)
        cv2.line(img, p(-0.1, 0.065), p(0.1, -0.065), 30, px(0.025), aa, s)
    elif kind == "dot":
        cv2.circle(img, p(0.02, 0.01), int(0.016 * dpi * 16), 20, -1, aa, s)
    elif kind == "stray_line":
        cv2.line(img, p(-0.2, 0.14), p(0.15, 0.145), 20, px(0.02), aa, s)
    elif kind == "erasure":
        cv2.ellipse(img, p(0, 0), _axes(0.1, 0.06, dpi), 0, 0, 360, 205, -1, aa, s)
    elif kind == "circled":
        cv2.ellipse(img, p(0, 0), _axes(0.18, 0.14, dpi), 10, 0, 345, 30, px(0.015), aa, s)
    elif kind == "circled_name":
        cv2.ellipse(img, p(0.55, 0.0), _axes(0.38, 0.13, dpi), 0, 0, 350, 30, px(0.015), aa, s)
    elif kind == "fold":
        cv2.line(img, p(-1.0, -0.03), p(1.0, 0.04), 170, px(0.012), aa, s)
    elif kind == "write_in":
        xs = np.linspace(0.5, 1.8, 60)
        pts = [p(x, -0.02 + 0.05 * np.sin(9 * x)) for x in xs]
        cv2.polylines(img, [np.array(pts, np.int32)], False, 30, px(0.015), aa, s)
    else:
        assert kind == "none"


def card(kinds: list[str], *, dpi: float = DPI, angle_deg: float = 0.0, stretch: tuple[float, float] = (1.0, 1.0),
         offset_px: tuple[float, float] = (0.0, 0.0), bilevel: bool = False, write_in_row: int | None = None):
    """A card with one oval per kind in a column, its registration (with offset error) and layout page."""
    w_in, h_in = 3.0, 0.5 + 0.45 * len(kinds)
    img = np.full((int(h_in * dpi), int(w_in * dpi)), 255, np.uint8)
    targets = []
    for i, kind in enumerate(kinds):
        x, y = 0.5, 0.35 + 0.45 * i
        area = (0.95, y - 0.12, 1.8, 0.3) if i == write_in_row else None
        targets.append(TargetDef("c", f"o{i}", (x, y, BOX_W, BOX_H), area))
        t = 0.012 * dpi
        cv2.ellipse(img, _pt(x + BOX_W / 2, y + BOX_H / 2, dpi), _axes(BOX_W / 2 - 0.006, BOX_H / 2 - 0.006, dpi),
                    0, 0, 360, 20, max(1, int(round(t))), cv2.LINE_AA, 4)
        draw(img, kind, x + BOX_W / 2, y + BOX_H / 2, dpi)
    a = np.deg2rad(angle_deg)
    geo = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]]) @ np.diag([*stretch, 1.0])
    img = cv2.warpAffine(img, geo[:2], (img.shape[1], img.shape[0]), borderValue=255)
    if bilevel:  # error-diffusion dithering, as a scanner's bilevel mode / Pillow convert("1")
        from PIL import Image

        img = np.asarray(Image.fromarray(img).convert("1").convert("L"))
    true_h = geo @ np.diag([dpi, dpi, 1.0])
    told = np.array([[1, 0, offset_px[0]], [0, 1, offset_px[1]], [0, 0, 1]]) @ true_h
    reg = Registration(tuple(told.ravel()), "fiducials", False, dpi, 4, 0.0)
    return img, reg, LayoutPage(1, (w_in, h_in), tuple(targets))


KINDS = ["none", "full_fill", "light_pencil", "check", "x_mark", "dot", "stray_line", "erasure", "circled",
         "circled_name", "fold"]


def scores(**kw) -> dict[str, TargetScore]:
    img, reg, page = card(KINDS, **kw)
    return dict(zip(KINDS, score_targets(img, reg, page)))


@pytest.fixture(scope="module")
def plain() -> dict[str, TargetScore]:
    return scores()


def test_one_score_per_target_in_order(plain: dict[str, TargetScore]) -> None:
    assert [s.option for s in plain.values()] == [f"o{i}" for i in range(len(KINDS))]
    for s in plain.values():
        for v in (s.score, s.fill_score, s.stroke_score, s.ring_score, s.damage_score, s.write_in_score):
            assert 0.0 <= v <= 1.0


def test_votes_score_high_and_non_votes_low(plain: dict[str, TargetScore]) -> None:
    for kind in ("full_fill", "light_pencil", "check", "x_mark"):
        assert plain[kind].score >= 0.5, (kind, plain[kind])
    for kind in ("none", "stray_line", "circled", "circled_name"):
        assert plain[kind].score <= 0.05, (kind, plain[kind])
    assert plain["dot"].score <= 0.2
    assert 0.25 < plain["erasure"].score < 0.45


def test_check_and_x_are_strokes_a_dot_is_not(plain: dict[str, TargetScore]) -> None:
    assert plain["check"].stroke_score >= 0.75 and plain["x_mark"].stroke_score >= 0.75
    assert plain["dot"].stroke_score <= 0.35
    assert plain["full_fill"].fill_score >= 0.8 > plain["check"].fill_score


def test_circles_raise_the_ring_flag_only(plain: dict[str, TargetScore]) -> None:
    assert plain["circled"].ring_score >= 0.9
    assert plain["circled_name"].ring_score >= 0.8
    for kind in ("none", "full_fill", "check", "x_mark", "dot", "stray_line", "erasure"):
        assert plain[kind].ring_score <= 0.5, (kind, plain[kind])


def test_fold_line_over_the_target_is_damage(plain: dict[str, TargetScore]) -> None:
    assert plain["fold"].damage_score >= 0.8
    for kind in ("none", "full_fill", "light_pencil", "check", "x_mark", "dot", "stray_line", "erasure"):
        assert plain[kind].damage_score <= 0.2, (kind, plain[kind])


def test_skew_stretch_and_misregistration_do_not_move_scores(plain: dict[str, TargetScore]) -> None:
    moved = scores(angle_deg=3.0, stretch=(1.02, 0.98), offset_px=(5.0, -4.0))
    for kind in (k for k in KINDS if k != "fold"):  # a fold is flagged by damage, whatever its score
        assert abs(moved[kind].score - plain[kind].score) <= 0.08, (kind, moved[kind].score, plain[kind].score)
    dx, dy = moved["none"].shift_px
    assert abs(dx + 5.0) <= 2.0 and abs(dy - 4.0) <= 2.0  # the refinement undoes the offset


def test_bilevel_dithered_scan_keeps_the_reading() -> None:
    g4 = scores(bilevel=True, dpi=150)
    assert g4["light_pencil"].score >= 0.5 and g4["full_fill"].score >= 0.5
    assert g4["none"].score <= 0.05 and g4["dot"].score <= 0.2
    assert g4["fold"].damage_score >= 0.8


def test_write_in_area_ink() -> None:
    img, reg, page = card(["write_in", "none"], write_in_row=0)
    named = score_targets(img, reg, page)[0]
    img2, reg2, page2 = card(["none", "none"], write_in_row=0)
    empty = score_targets(img2, reg2, page2)[0]
    assert named.write_in_score >= 0.4 and empty.write_in_score <= 0.02
    assert named.score <= 0.05 and named.ring_score <= 0.5  # the name does not read as a mark or circle


# --------------------------------------------------------------------------------------
# The generator's catalogue on a tiny page: every kind gets exactly its expected status


CATALOGUE_STATUS = {MarkIntent.VOTE: MarkStatus.YES, MarkIntent.NO_VOTE: MarkStatus.NO,
                    MarkIntent.AMBIGUOUS: MarkStatus.UNKNOWN}
DRAWN = [k for k in MarkKind if k not in (MarkKind.NONE, MarkKind.DAMAGED)] + [MarkKind.NONE]


def tiny_page(kinds: list[MarkKind], seed: int, dpi: int, ink: str, *, bilevel: bool = False,
              damage: str | None = None) -> tuple[np.ndarray, Registration, LayoutPage, set[int]]:
    """Ovals in a column on a small printed page, each marked by the generator; returns the
    gray scan, its registration, the layout and the indices the damage lies over."""
    w_in, h_in = 2.4, 0.6 + 0.5 * len(kinds)
    rgb = np.full((int(h_in * dpi), int(w_in * dpi), 3), 255, np.uint8)
    rng = np.random.default_rng(seed)
    targets, boxes = [], {}
    for i, kind in enumerate(kinds):
        box_in = (0.5, 0.4 + 0.5 * i, BOX_W, BOX_H)
        targets.append(TargetDef("c", f"o{i}", box_in, None))
        boxes[i] = box_px(box_in, dpi)
        draw_target(rgb, boxes[i], dpi)
        draw_mark(rgb, boxes[i], kind, rng, ink=ink, dpi=dpi)
    hit: set[int] = set()
    if damage == "stain":
        i = int(rng.integers(len(kinds)))
        hit = damaged_targets(draw_stain(rgb, rng, dpi=dpi, near_px=boxes[i][:2]), boxes, dpi=dpi)
    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    if bilevel:
        gray = np.asarray(to_bilevel(gray).convert("L"))
    reg = Registration(tuple(np.diag([dpi, dpi, 1.0]).ravel()), "fiducials", False, dpi, 4, 0.0)
    return gray, reg, LayoutPage(1, (w_in, h_in), tuple(targets)), hit


@pytest.mark.parametrize(("seed", "dpi", "ink", "bilevel"), [
    (1, 200, "black", False), (2, 150, "blue", False), (3, 300, "red", False), (4, 200, "green", True),
    (5, 150, "black", True),
])
def test_generator_catalogue_reads_exactly(seed: int, dpi: int, ink: str, bilevel: bool) -> None:
    thresholds = load_thresholds()
    gray, reg, page, _ = tiny_page(DRAWN, seed, dpi, ink, bilevel=bilevel)
    for kind, s in zip(DRAWN, score_targets(gray, reg, page)):
        got = classify_target(s, thresholds)
        assert got.status is CATALOGUE_STATUS[INTENT[kind]], (kind, got.why, s)


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_generator_stains_over_targets_go_to_a_person(seed: int) -> None:
    thresholds = load_thresholds()
    kinds = [MarkKind.NONE, MarkKind.FULL_FILL, MarkKind.CHECK, MarkKind.NONE, MarkKind.LIGHT_PENCIL]
    gray, reg, page, hit = tiny_page(kinds, seed, 200, "black", damage="stain")
    assert hit, "the stain was drawn over a target"
    for i, (kind, s) in enumerate(zip(kinds, score_targets(gray, reg, page))):
        got = classify_target(s, thresholds).status
        if i in hit:
            assert got is MarkStatus.UNKNOWN, (i, kind, s)
        elif s.damage_score < thresholds.damage:  # beside the stain, not over it: read as drawn
            assert got is CATALOGUE_STATUS[INTENT[kind]], (i, kind, s)


@pytest.mark.parametrize("against_blank", [False, True])
def test_a_write_in_name_in_a_fine_pen_is_ink_in_the_area(against_blank: bool) -> None:
    """A ballpoint's hairline (a pixel wide at 200 dpi, finer than the area's window pixel):
    the name is never missed between samples, and the empty area stays empty."""
    blank, reg, page = card(["none", "none"], write_in_row=0)
    named = blank.copy()
    x, y, w, h = page.targets[0].write_in_area_in
    cv2.putText(named, "Marion Tolliver", (int((x + 0.1) * DPI), int((y + h - 0.08) * DPI)), cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
                1.1, 60, 1, cv2.LINE_AA)
    ref = {"reference": blank, "reference_dpi": float(DPI)} if against_blank else {}
    assert score_targets(named, reg, page, **ref)[0].write_in_score >= 0.4
    assert score_targets(blank.copy(), reg, page, **ref)[0].write_in_score <= 0.02


@pytest.mark.parametrize("against_blank", [False, True])
@pytest.mark.parametrize("size", [0.6, 0.75, 0.9])
def test_a_name_written_small_and_light_is_ink_in_the_area(against_blank: bool, size: float) -> None:
    """A name written small (letters about 0.1 in) in a ballpoint's stroke scanned light gray
    (a blue pen, a pencil): under WRITE_IN_INK at the area's resolution, it reads as a word of
    fainter ink (the fifth renderer's write-in names beside an empty target: 19 of 88 read as
    an empty area before on its development seed). A dot of the same gray is no word."""
    blank, reg, page = card(["none", "none"], write_in_row=0)
    x, y, w, h = page.targets[0].write_in_area_in
    named, smudged = blank.copy(), blank.copy()
    cv2.putText(named, "Fern Oduya", (int((x + 0.1) * DPI), int((y + h - 0.08) * DPI)), cv2.FONT_HERSHEY_SIMPLEX, size, 185, 2, cv2.LINE_AA)
    cv2.circle(smudged, (int((x + 0.6) * DPI), int((y + h / 2) * DPI)), 5, 185, -1, cv2.LINE_AA)
    ref = {"reference": blank, "reference_dpi": float(DPI)} if against_blank else {}
    assert score_targets(named, reg, page, **ref)[0].write_in_score >= load_thresholds().write_in
    assert score_targets(smudged, reg, page, **ref)[0].write_in_score == 0.0


@pytest.mark.parametrize("against_blank", [False, True])
@pytest.mark.parametrize("gray", [170, 180])
def test_a_name_written_in_light_pencil_is_ink_in_the_area(against_blank: bool, gray: int) -> None:
    """A name in a light pencil's hairline, scanned soft: at the area's resolution its strokes
    reach about 0.2, and at the first faint level its letters fall apart into pieces no word
    wide (the fifth renderer's light-pencil names beside an empty target read as an empty area).
    A smear of the same gray as long as the name, and the empty area, stay empty."""
    blank, reg, page = card(["none", "none"], write_in_row=0)
    x, y, w, h = page.targets[0].write_in_area_in
    named, smeared = blank.copy(), blank.copy()
    cv2.putText(named, "Oren Haskins", (int((x + 0.1) * DPI), int((y + h - 0.08) * DPI)), cv2.FONT_HERSHEY_SCRIPT_SIMPLEX, 1.0,
                gray, 1, cv2.LINE_AA)
    cv2.line(smeared, (int((x + 0.1) * DPI), int((y + h / 2) * DPI)), (int((x + 1.2) * DPI), int((y + h / 2) * DPI)), gray, 5, cv2.LINE_AA)
    named, smeared = cv2.GaussianBlur(named, (0, 0), 0.7), cv2.GaussianBlur(smeared, (0, 0), 0.7)
    ref = {"reference": blank, "reference_dpi": float(DPI)} if against_blank else {}
    assert score_targets(named, reg, page, **ref)[0].write_in_score >= load_thresholds().write_in
    assert score_targets(smeared, reg, page, **ref)[0].write_in_score == 0.0
    assert score_targets(cv2.GaussianBlur(blank, (0, 0), 0.7), reg, page, **ref)[0].write_in_score == 0.0


@pytest.mark.parametrize("tone", [110, 160])
def test_a_stamp_crossing_the_write_in_area_is_no_name_but_a_name_under_it_or_rising_above_it_is(tone: int) -> None:
    """A "SAMPLE" stamp over a card: its frame's line crosses the write-in area at a slant and a
    letter's broad stroke runs through it from above to below, most of their ink outside it and
    no darker inside. That ink is no name written there (about ten empty write-ins a vendor-profile
    deck went to a person so). A name written in the area under the same stamp (a short one
    joined to the letter's stroke, most of their ink outside the area: it is darker there), or
    written so large that it rises well above the area, is still a name."""
    blank, reg, page = card(["none", "none"], write_in_row=0)
    x, y, w, h = page.targets[0].write_in_area_in
    px = lambda xi, yi: (int(round(xi * DPI)), int(round(yi * DPI)))  # noqa: E731

    def stamped(img: np.ndarray) -> np.ndarray:
        out = img.copy()
        stamp = np.full_like(out, 255)
        cv2.line(stamp, px(x + 0.4, y + h + 0.45), px(x + 2.1, y - 0.35), 0, max(1, int(0.02 * DPI)), cv2.LINE_AA)
        cv2.line(stamp, px(x + 0.9, y - 0.55), px(x + 1.05, y + h + 0.55), 0, int(0.1 * DPI), cv2.LINE_AA)
        return np.minimum(out, np.where(stamp < 128, tone, 255).astype(np.uint8))

    def named(img: np.ndarray, scale: float = 1.1, name: str = "Marion Tolliver", at: float = 0.1) -> np.ndarray:
        out = img.copy()
        cv2.putText(out, name, px(x + at, y + h - 0.08), cv2.FONT_HERSHEY_SCRIPT_SIMPLEX, scale, 40, 2, cv2.LINE_AA)
        return out

    def write_in(img: np.ndarray) -> float:
        return score_targets(img, reg, page, reference=blank, reference_dpi=float(DPI))[0].write_in_score

    threshold = load_thresholds().write_in
    assert write_in(stamped(blank)) < threshold
    assert write_in(named(stamped(blank))) >= threshold
    assert write_in(stamped(named(blank))) >= threshold
    assert write_in(stamped(named(blank, name="Li Wu", at=0.75))) >= threshold  # a short name over the letter's stroke
    assert write_in(named(blank, scale=2.2)) >= threshold  # letters about 0.35 in tall, in an area 0.3 in high


@pytest.mark.parametrize(("angle", "offset"), [(0.0, (0.0, 2.0)), (0.8, (1.0, -2.0)), (-0.8, (-1.0, 3.0))])
def test_the_printed_write_in_line_inside_the_area_is_not_writing(angle: float, offset: tuple[float, float]) -> None:
    """The area's box reaches the printed write-in line (a board drew it that way, or the scan's
    skew and scale bring the line in): an empty write-in stays empty, a name still reads."""
    def with_line(kinds: list[str]):
        img, reg, page = card(kinds, write_in_row=0, angle_deg=angle, offset_px=offset)
        x, y, w, h = page.targets[0].write_in_area_in
        line = np.array([[x + 0.05, y + h - 0.02, 1.0], [x + w - 0.05, y + h - 0.02, 1.0]]) @ np.asarray(reg.homography).reshape(3, 3).T
        (x0, y0), (x1, y1) = line[0, :2] / line[0, 2], line[1, :2] / line[1, 2]
        cv2.line(img, (int(x0 - offset[0]), int(y0 - offset[1])), (int(x1 - offset[0]), int(y1 - offset[1])), 25, 2, cv2.LINE_AA)
        return score_targets(img, reg, page)[0]

    empty = with_line(["none", "none"])
    named = with_line(["write_in", "none"])
    assert empty.write_in_score <= 0.02, empty.write_in_score
    assert named.write_in_score >= 0.4, named.write_in_score


def test_a_word_whose_body_runs_straight_is_no_printed_line() -> None:
    """A name in a heavy pen on a bilevel scan, blurred solid along its letters' bodies, runs
    straight for more than LINE_IN at the write-in window's resolution; its letters rise above
    and fall below that run, so it is writing, where a rule across the area is print (seen: a
    name under a shaded rule printed black read as an empty area, fourth renderer seed 6060)."""
    dark = np.zeros((17, 180), np.float32)  # a 3 x 0.28 in write-in area at SIDE_PPI
    dark[2, :] = 1.0  # a rule across it
    dark[10:12, 19:47] = 1.0  # a word's body: 0.47 in straight
    for x in range(19, 47, 3):
        dark[6:16, x: x + 2] = 1.0  # its letters' strokes, up and down (half the word's columns at least)
    lines = _straight_lines(dark)
    assert lines[2, 100] and lines[2, 30]
    assert not lines[10:12, 19:47].any()


def test_a_strokes_reach_leaves_out_the_specks_of_a_speckled_card() -> None:
    """On a card whose targets mostly show specks (a speckled bilevel scan), the span is
    measured without pieces of three dark pixels or fewer: a hesitation dot with a speck rows
    away keeps the dot's reach; a stroke, even one a ballpoint skips along, and an X keep all
    of theirs. On a clean card (specks by few targets) nothing is left out."""
    from scanpipe.imaging.marks import _without_specks

    zone = np.zeros((8, 25, 44), bool)
    zone[0, 9:14, 17:22] = True  # a dot ...
    zone[0, 4, 33:36] = True  # ... and a speck by the printed outline
    for x in range(4, 40):  # a stroke across the box, skipping two pixels every eight
        if x % 8 not in (0, 1):
            zone[1, 12 + (x - 4) // 6, x] = True
    for k in range(20):  # an X
        zone[2, 2 + k, 10 + k] = zone[2, 2 + k, 29 - k] = True
    zone[1:, 22, 2] = True  # specks by the others
    kept = _without_specks(zone)
    assert kept[0].sum() == 25 and not kept[0, 4].any()
    assert not kept[1:, 22, 2].any()
    stroke, cross = zone[1].copy(), zone[2].copy()
    stroke[22, 2] = cross[22, 2] = False
    assert (kept[1] == stroke).all() and (kept[2] == cross).all()
    clean = zone.copy()
    clean[2:, 22, 2] = False  # specks by two targets of eight: a clean card
    assert (_without_specks(clean) == clean).all()


def test_small_pieces_within_a_zone_are_those_wholly_inside_it() -> None:
    """``small_pieces``: the pieces of at most ``px`` pixels, per target; given ``within``, only
    those lying wholly within it (a speck on bare paper, not a scan's fringe along print that
    the zone's edge cuts short); labelled across targets without joining them."""
    from scanpipe.imaging.marks import small_pieces, speckled

    zone = np.zeros((2, 10, 12), bool)
    zone[0, 1:3, 1:3] = True  # 4 px, on the paper
    zone[0, 6:9, 4:10] = True  # 18 px: too large
    zone[1, 9, 0:3] = True  # 3 px at the last row: not joined to the next target's first row
    zone[1, 0, 8:11] = True  # 3 px by the print (outside the paper zone in part)
    paper = np.ones_like(zone)
    paper[1, 0, 10] = False
    small = small_pieces(zone, 4)
    assert small[0, 1:3, 1:3].all() and not small[0, 6:9].any() and small[1, 9, 0:3].all() and small[1, 0, 8:11].all()
    inside = small_pieces(zone, 4, within=paper)
    assert inside[0, 1:3, 1:3].all() and inside[1, 9, 0:3].all() and not inside[1, 0].any()
    assert speckled(np.zeros((8, 4, 4), bool)) is False
    many = np.zeros((8, 4, 4), bool)
    many[:6, 0, 0] = True  # specks by six targets of eight: speckled
    assert speckled(many) is True and speckled(many[:5]) is False  # five: under SPECKLED_MIN
