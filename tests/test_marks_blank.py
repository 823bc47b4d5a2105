"""Scoring against the blank (scanpipe.imaging.marks_blank): what crosses a target from
elsewhere (a stamp's letter, a signature) and what a scan does to the print beside every
target (a thresholded scan thickens it) are told apart from a voter's mark and from a crease."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from scanpipe.classify import classify_target, load_thresholds
from scanpipe.imaging.marks import HIGH_ANCHOR, score_targets
from scanpipe.types import MarkStatus
from tests.test_marks import BOX_H, BOX_W, DPI, card

EMPTY = ["none"] * 8


def _centre(page, i: int) -> tuple[float, float]:
    x, y, w, h = page.targets[i].box_in
    return x + w / 2, y + h / 2


def _px(v: float) -> int:
    return int(round(v * DPI))


def _read(img: np.ndarray, blank: np.ndarray, reg, page) -> list:
    thresholds = load_thresholds()
    return [classify_target(s, thresholds) for s in score_targets(img, reg, page, reference=blank, reference_dpi=DPI)]


def test_a_stamp_or_a_signature_across_an_empty_target_is_for_a_person_not_a_vote() -> None:
    blank, reg, page = card(EMPTY)
    img = blank.copy()
    cx, cy = _centre(page, 2)  # a stamp's broad, light letter stroke across target 2, on to the page beyond
    cv2.line(img, (_px(cx - 0.5), _px(cy + 0.5)), (_px(cx + 0.6), _px(cy - 0.45)), 150, _px(0.12), cv2.LINE_AA)
    cx, cy = _centre(page, 5)  # a signature's pen line through target 5
    pts = np.array([(_px(cx - 0.9 + 0.1 * k), _px(cy + 0.03 * np.sin(3 * k))) for k in range(19)], np.int32)
    cv2.polylines(img, [pts], False, 30, _px(0.015), cv2.LINE_AA)
    got = [r.status for r in _read(img, blank, reg, page)]
    assert got[2] is MarkStatus.UNKNOWN and got[5] is MarkStatus.UNKNOWN, got
    assert all(s is MarkStatus.NO for i, s in enumerate(got) if i not in (2, 5)), got


@pytest.mark.parametrize("angle", [0.0, 1.5])
def test_marks_made_in_the_target_are_votes_against_the_blank(angle: float) -> None:
    kinds = ["full_fill", "check", "x_mark", "light_pencil", "none", "none", "full_fill", "none"]
    blank, _, _ = card(EMPTY)  # the blank as the layout measures it; the card turned as scanned
    img, reg, page = card(kinds, angle_deg=angle)
    got = _read(img, blank, reg, page)
    want = [MarkStatus.YES if k != "none" else MarkStatus.NO for k in kinds]
    assert [r.status for r in got] == want, [(r.status.value, r.why) for r in got]


def _arrows(img: np.ndarray, page, width_px: int) -> None:
    """A printed gray bar on either side of every target (an arrow to complete), ``width_px`` thick."""
    for i in range(len(page.targets)):
        cx, cy = _centre(page, i)
        for a, b in ((cx - BOX_W / 2 - 0.3, cx - BOX_W / 2 - 0.05), (cx + BOX_W / 2 + 0.05, cx + BOX_W / 2 + 0.3)):
            cv2.line(img, (_px(a), _px(cy)), (_px(b), _px(cy)), 140, width_px, cv2.LINE_8)


def test_print_a_scan_thickens_beside_every_target_is_not_a_crease_but_a_crease_still_is() -> None:
    blank, reg, page = card(EMPTY)
    _arrows(blank, page, 1)
    img, _, _ = card(EMPTY)
    _arrows(img, page, 9)  # a thresholded scan: the same print, thicker
    assert [r.status for r in _read(img, blank, reg, page)] == [MarkStatus.NO] * 8
    cx, cy = _centre(page, 3)  # a crease through target 3 and the print beside it
    cv2.line(img, (_px(cx - 1.0), _px(cy - 0.02)), (_px(cx + 1.0), _px(cy + 0.03)), 170, _px(0.012), cv2.LINE_AA)
    got = [r.status for r in _read(img, blank, reg, page)]
    assert got[3] is MarkStatus.UNKNOWN, got
    assert BOX_H > 0  # the layout's box size is the one test_marks draws


def test_a_check_drawn_over_a_thick_outline_is_never_a_clear_no_vote() -> None:
    """A vendor's flat oval with a thick outline: a check whose stroke lies on the outline and
    leaves it (the blank hides the ink on its print) goes to a person; an empty one stays no."""
    blank, reg, page = card(EMPTY)
    for i in range(len(page.targets)):  # thicken every outline, as an ES&S-like flat oval
        cx, cy = _centre(page, i)
        cv2.ellipse(blank, (_px(cx), _px(cy)), (_px(BOX_W / 2 - 0.012), _px(BOX_H / 2 - 0.012)), 0, 0, 360, 20, _px(0.024), cv2.LINE_AA)
    img = blank.copy()
    cx, cy = _centre(page, 4)  # the check's foot on the lower outline, its arm out past the upper right
    a, b = BOX_W / 2 - 0.012, BOX_H / 2 - 0.012  # the outline's centre line
    foot = [(cx + a * np.cos(t), cy + b * np.sin(t)) for t in np.linspace(np.pi * 0.75, np.pi * 0.2, 12)]
    pts = np.array([(_px(x), _px(y)) for x, y in [*foot, (cx + 0.25, cy - 0.1)]], np.int32)
    cv2.polylines(img, [pts], False, 25, _px(0.018), cv2.LINE_AA)
    got = [r.status for r in _read(img, blank, reg, page)]
    assert got[4] is not MarkStatus.NO, got
    assert all(s is MarkStatus.NO for i, s in enumerate(got) if i != 4), got


def _arrows_to_complete(shape: tuple[int, int], page) -> np.ndarray:
    """A blank printing, for every target, a broken arrow whose gap is the target's box: a
    thick tail ending at the box's left edge, a head starting at its right edge (no oval)."""
    img = np.full(shape, 255, np.uint8)
    for i in range(len(page.targets)):
        x, y, w, h = page.targets[i].box_in
        cy = y + h / 2
        cv2.line(img, (_px(x - 0.35), _px(cy)), (_px(x), _px(cy)), 0, _px(0.04), cv2.LINE_AA)
        head = np.array([(_px(x + w), _px(cy - 0.06)), (_px(x + w + 0.12), _px(cy)), (_px(x + w), _px(cy + 0.06))], np.int32)
        cv2.fillConvexPoly(img, head, 0, cv2.LINE_AA)
    return img


def test_a_line_joining_an_arrows_tail_and_head_is_a_vote_a_short_stroke_in_the_gap_is_not() -> None:
    """An arrow to complete, its gap boxed: the line a voter draws shows only between the
    printed tail and head (its ink on them is the blank's print). Its reach is measured
    against that gap, so a line joining them reaches across the target as a line through an
    oval does (it read as 0.6 of the oval the box inscribes: for a person)."""
    shape, reg, ovals = card(EMPTY)[0].shape, *card(EMPTY)[1:]
    gap_w, gap_h = 0.16, 0.1  # a short gap: the oval it inscribes reaches well past the tail's end and the head's
    page = replace(ovals, targets=tuple(replace(t, box_in=(t.box_in[0], t.box_in[1], gap_w, gap_h)) for t in ovals.targets))
    blank = _arrows_to_complete(shape, page)
    img = blank.copy()
    for i in (1, 4, 6):  # a ballpoint line from the tail into the head, a little off level
        x, y, w, h = page.targets[i].box_in
        cy = y + h / 2
        cv2.line(img, (_px(x - 0.04), _px(cy + 0.005)), (_px(x + w + 0.03), _px(cy - 0.008)), 60, _px(0.012), cv2.LINE_AA)
    x, y, w, h = page.targets[3].box_in  # a short stroke in the gap, not reaching the head
    cv2.line(img, (_px(x + 0.03), _px(y + h / 2)), (_px(x + 0.08), _px(y + h / 2)), 60, _px(0.012), cv2.LINE_AA)
    got = _read(img, blank, reg, page)
    assert [r.status for i, r in enumerate(got) if i in (1, 4, 6)] == [MarkStatus.YES] * 3, [(r.status.value, r.why) for r in got]
    assert got[3].status is not MarkStatus.YES, got[3].why
    assert all(r.status is MarkStatus.NO for i, r in enumerate(got) if i not in (1, 3, 4, 6)), [(r.status.value, r.why) for r in got]


def test_of_two_shifts_fitting_the_blank_about_equally_the_smaller_is_taken() -> None:
    """The card's oval lies between two canonical pixels: where the shift of one pixel fits the
    blank better by less than SHIFT_TIE, no shift is taken (a hair of registration or a
    voter's mark must not move the window a pixel and change the score); where it fits
    clearly better, it is taken."""
    from scanpipe.imaging import marks, marks_blank

    geo = marks._geometry(0.2, 0.12)
    s = marks.SEARCH_PX
    h, w = geo.shape
    blank = np.zeros((h, w), np.float32)
    cv2.ellipse(blank, (w // 2, h // 2), (int(0.1 * marks.CANON_PPI), int(0.06 * marks.CANON_PPI)), 0, 0, 360, 1.0, 2, cv2.LINE_AA)
    blank = cv2.GaussianBlur(blank, (0, 0), 1.0)  # as scanned: the correlation changes smoothly with the offset
    r0, r1, c0, c1 = geo.match
    template = blank[s + r0: s + r1, s + c0: s + c1]
    yy, xx = np.mgrid[-s:s + 1, -s:s + 1]
    penalty = marks.SHIFT_PRIOR * (xx**2 + yy**2) / float(s**2)

    def lead(t: float) -> tuple[np.ndarray, float]:
        """The card moved ``t`` canonical px right; how much better one pixel right fits than none."""
        moved = cv2.warpAffine(blank, np.float32([[1, 0, t], [0, 1, 0]]), (w, h), flags=cv2.INTER_LINEAR)
        corr = cv2.matchTemplate(moved[r0: r1 + 2 * s, c0: c1 + 2 * s], template - template.mean(), cv2.TM_CCORR)
        fit = (corr - penalty * corr.max()) / corr.max()
        return moved, float(fit[s, s + 1] - fit[s, s])

    leads = [(t, *lead(t)) for t in np.linspace(0.3, 0.9, 601)]
    near_tie = [(t, m) for t, m, d in leads if 0 < d < marks_blank.SHIFT_TIE]
    clear = [(t, m) for t, m, d in leads if d > 2 * marks_blank.SHIFT_TIE]
    assert near_tie and clear
    for _t, moved in near_tie:
        dx, dy = marks_blank._best_shifts(moved[None], blank[None], geo)
        assert (dx[0], dy[0]) == (0, 0)
    dx, dy = marks_blank._best_shifts(clear[-1][1][None], blank[None], geo)
    assert (dx[0], dy[0]) == (1, 0)



def _stamped(img: np.ndarray, page, i: int) -> np.ndarray:
    """``img`` with a broad gray stamp stroke (a "SAMPLE" letter) across target ``i`` and well beyond."""
    out = img.copy()
    cx, cy = _centre(page, i)
    cv2.line(out, (_px(cx - 0.6), _px(cy - 0.25)), (_px(cx + 0.7), _px(cy + 0.2)), 120, _px(0.22), cv2.LINE_AA)
    return out


@pytest.mark.parametrize("kind", ["full_fill", "check", "x_mark", "none"])
def test_a_blank_stamped_over_a_target_the_ballots_lack_reads_the_target_as_its_siblings_show_it(kind: str) -> None:
    """The county's blank carries a SAMPLE stamp across an oval; the ballots do not: the
    oval's empty look comes from the page's other ovals, and what the voter did reads."""
    kinds = ["none", "full_fill", "none", kind, "check", "none", "none", "none"]
    blank, _, _ = card(EMPTY)
    img, reg, page = card(kinds)
    got = _read(img, _stamped(blank, page, 3), reg, page)
    want = [MarkStatus.YES if k != "none" else MarkStatus.NO for k in kinds]
    assert [r.status for r in got] == want, [(r.status.value, r.why) for r in got]
    assert got[3].score.damage_score < 0.3


def test_a_ballot_carrying_the_blank_s_stamp_over_a_target_stays_with_a_person() -> None:
    kinds = ["none", "full_fill", "none", "full_fill", "check", "none", "none", "none"]
    blank, _, _ = card(EMPTY)
    img, reg, page = card(kinds)
    got = _read(_stamped(img, page, 3), _stamped(blank, page, 3), reg, page)
    assert got[3].status is MarkStatus.UNKNOWN and got[3].score.damage_score >= 0.3, got[3]
    assert [r.status for i, r in enumerate(got) if i != 3] == [MarkStatus.YES if k != "none" else MarkStatus.NO
                                                                  for i, k in enumerate(kinds) if i != 3]


def test_a_thin_stroke_crossing_a_target_between_other_print_is_for_a_person() -> None:
    """A stamp letter's thin light stroke crosses an empty oval and stops short of the far
    band, between print above and below (the target's outline parts it in two, neither piece
    reaching 0.25 in): the two pieces stand on one line through the box, 0.15 in or more
    past it on opposite sides: for a person, never a vote. A check's short arm does not."""
    blank, _, _ = card(EMPTY)
    img, reg, page = card(["none", "none", "none", "none", "check", "none", "none", "none"])
    cx, cy = _centre(page, 2)
    cv2.line(img, (_px(cx - 0.06), _px(cy - 0.3)), (_px(cx + 0.06), _px(cy + 0.3)), 110, 5, cv2.LINE_AA)
    got = _read(img, blank, reg, page)
    assert got[2].status is MarkStatus.UNKNOWN and got[2].score.damage_score >= 0.3, got[2]
    assert got[4].status is MarkStatus.YES, got[4]
    assert all(r.status is MarkStatus.NO for i, r in enumerate(got) if i not in (2, 4)), got


def _band_between_print(img: np.ndarray, page, i: int, *, printed: bool) -> None:
    """A stamp letter's broad gray stroke across target ``i``, seen only beyond print on either
    side of it (a rule and a party code left of the oval, the name right of it, printed black
    over the stroke) when ``printed``; without the print, the stroke's two pieces stop short of
    the oval on bare paper."""
    cx, cy = _centre(page, i)
    x0, x1 = cx - BOX_W / 2, cx + BOX_W / 2
    band = np.full_like(img, 255)
    cv2.line(band, (_px(x0 - 0.6), _px(cy + 0.08)), (_px(x1 + 0.6), _px(cy - 0.08)), 110, _px(0.045), cv2.LINE_AA)
    if not printed:  # the stroke stops 0.15 in short of the oval on both sides
        band[:, _px(x0 - 0.15): _px(x1 + 0.15)] = 255
    np.minimum(img, band, out=img)
    if printed:
        for a, b in ((x0 - 0.22, x0 - 0.05), (x1 + 0.05, x1 + 0.22)):
            cv2.rectangle(img, (_px(a), _px(cy - 0.09)), (_px(b), _px(cy + 0.09)), 15, -1)


@pytest.mark.parametrize("printed", [True, False])
def test_a_stamp_stroke_the_print_round_a_target_hides_still_crosses_it(printed: bool) -> None:
    """A broad stamp stroke crosses an empty oval between print on either side of it, which
    hides the stroke where it passes (added ink over print is not measured): its two pieces
    beyond the print touch nothing of the target, yet lie on one line through it, each hidden
    on its way to the target. For a person, never a clear no vote. The same pieces ending on
    bare paper short of the oval cross nothing: the oval reads as it is, empty."""
    blank, _, _ = card(EMPTY)
    img, reg, page = card(EMPTY)
    if printed:  # the print is the blank's too
        cx, cy = _centre(page, 3)
        for a, b in ((cx - BOX_W / 2 - 0.22, cx - BOX_W / 2 - 0.05), (cx + BOX_W / 2 + 0.05, cx + BOX_W / 2 + 0.22)):
            cv2.rectangle(blank, (_px(a), _px(cy - 0.09)), (_px(b), _px(cy + 0.09)), 15, -1)
    _band_between_print(img, page, 3, printed=printed)
    got = _read(img, blank, reg, page)
    if printed:
        assert got[3].status is MarkStatus.UNKNOWN and got[3].score.damage_score >= 0.3, got[3]
    else:
        assert got[3].status is MarkStatus.NO and got[3].score.damage_score < 0.3, got[3]
    assert all(r.status is MarkStatus.NO for i, r in enumerate(got) if i != 3), got


def _boxes_card(marks: list[str]) -> tuple[np.ndarray, np.ndarray, object, object]:
    """A card whose targets are printed boxes (not ovals), its blank, registration and page;
    ``marks``: per box "x" (thin pen lines corner to corner), "check" or "none"."""
    from scanpipe.types import LayoutPage, Registration, TargetDef

    w_in, h_in = 3.0, 0.5 + 0.45 * len(marks)
    blank = np.full((_px(h_in), _px(w_in)), 255, np.uint8)
    targets = []
    for i in range(len(marks)):
        x, y = 0.5, 0.35 + 0.45 * i
        targets.append(TargetDef("c", f"o{i}", (x, y, BOX_W, BOX_H)))
        cv2.rectangle(blank, (_px(x), _px(y)), (_px(x + BOX_W), _px(y + BOX_H)), 20, max(2, _px(0.012)))
    img = blank.copy()
    pen = max(2, _px(0.015))
    for i, mark in enumerate(marks):
        x, y = 0.5, 0.35 + 0.45 * i
        if mark == "x":
            cv2.line(img, (_px(x + 0.02), _px(y + 0.02)), (_px(x + BOX_W - 0.02), _px(y + BOX_H - 0.02)), 60, pen, cv2.LINE_AA)
            cv2.line(img, (_px(x + 0.02), _px(y + BOX_H - 0.02)), (_px(x + BOX_W - 0.02), _px(y + 0.02)), 60, pen, cv2.LINE_AA)
        elif mark == "check":
            pts = np.array([(_px(x + 0.04), _px(y + 0.07)), (_px(x + 0.09), _px(y + BOX_H - 0.02)), (_px(x + BOX_W + 0.05), _px(y - 0.1))], np.int32)
            cv2.polylines(img, [pts], False, 60, pen, cv2.LINE_AA)
    reg = Registration(tuple(np.diag([DPI, DPI, 1.0]).ravel()), "reference", False, DPI, 20, 0.0)
    return img, blank, reg, LayoutPage(1, (w_in, h_in), tuple(targets))


def test_thin_x_and_check_in_a_printed_box_are_votes() -> None:
    """A box's corners lie outside the oval it inscribes: a thin X drawn corner to corner
    reached half the oval's width there and went to a person. Its reach is now measured inside
    the box the blank prints."""
    img, blank, reg, page = _boxes_card(["x", "none", "check", "none", "x"])
    got = [r.status for r in _read(img, blank, reg, page)]
    assert got == [MarkStatus.YES, MarkStatus.NO, MarkStatus.YES, MarkStatus.NO, MarkStatus.YES], got


@pytest.mark.parametrize("dot_in", [0.03, 0.04])
def test_a_dot_in_a_box_a_scan_prints_thicker_is_no_vote(dot_in: float) -> None:
    """A bilevel scan thresholded dark prints every box thicker than its blank: the rim
    that leaves at the box's corners lies in the zone beyond the oval the box inscribes, at
    opposite sides, and with a hesitation dot in the middle it spanned the box (a vote: the
    fourth renderer's seed 9191, a Hart-like box at 150 dpi). Checks and X's in boxes stay votes."""
    img, blank, reg, page = _boxes_card(["none", "x", "none", "check", "none"])
    img = cv2.erode(img, np.ones((5, 5), np.uint8))  # the print (and the marks) two pixels thicker all round
    for i in (0, 2):
        x, y, w, h = page.targets[i].box_in
        cv2.circle(img, (_px(x + w / 2), _px(y + h / 2)), max(1, _px(dot_in / 2)), 30, -1, cv2.LINE_AA)
    got = [r.status for r in _read(img, blank, reg, page)]
    assert got[1] is MarkStatus.YES and got[3] is MarkStatus.YES, got
    assert got[0] is not MarkStatus.YES and got[2] is not MarkStatus.YES and got[4] is MarkStatus.NO, got


def _speckled(img: np.ndarray, seed: int, per_in2: float = 200.0) -> np.ndarray:
    """``img`` with a bilevel scan's specks of coloured stock thresholded near its paper: black
    dots of two to six pixels (0.01-0.015 in) scattered all over, beside every target."""
    out = img.copy()
    rng = np.random.default_rng(seed)
    h, w = out.shape
    for _ in range(int(per_in2 * h * w / DPI**2)):
        y, x = int(rng.integers(0, h - 3)), int(rng.integers(0, w - 3))
        out[y: y + int(rng.integers(1, 3)), x: x + int(rng.integers(2, 4))] = 0
    return out


@pytest.mark.parametrize("seed", [1, 3, 5])
def test_the_specks_of_a_speckled_scan_are_no_crease_but_a_crease_through_them_still_is(seed: int) -> None:
    """Where most targets show specks beside them, the fold measure leaves out pieces of added
    ink a speck's size (and their blur): rows of specks in both strips beside a target had
    looked like a light line through them (each of these seeds sent two or three empty targets
    to a person so). A crease is a line across both strips: still one."""
    blank, reg, page = card(EMPTY)
    img = _speckled(blank, seed)
    got = _read(img, blank, reg, page)
    assert [r.status for r in got] == [MarkStatus.NO] * 8, [(r.status.value, r.why) for r in got]
    cx, cy = _centre(page, 3)  # a crease through target 3 and the print beside it
    cv2.line(img, (_px(cx - 1.0), _px(cy - 0.02)), (_px(cx + 1.0), _px(cy + 0.03)), 170, _px(0.012), cv2.LINE_AA)
    got = _read(img, blank, reg, page)
    assert got[3].status is MarkStatus.UNKNOWN and got[3].score.damage_score >= load_thresholds().damage, got[3]
    assert all(r.status is MarkStatus.NO for i, r in enumerate(got) if i != 3), [(r.status.value, r.why) for r in got]


def test_a_speckled_cards_crease_baseline_is_the_median_of_its_group() -> None:
    """On a speckled card specks lie beside every target and some stand in a line by chance:
    the fold measures of a group (values of the kind a 300-dpi bilevel scan of coloured stock gave)
    are taken less their median, not their lower quartile, so the chance lines stay under the
    damage level; a crease crossing two targets of the group stands out either way."""
    from scanpipe.imaging.marks_blank import _above_baseline

    damage = load_thresholds().damage
    noise = np.array([0.05, 0.31, 0.12, 0.36, 0.08, 0.28, 0.42, 0.15, 0.22, 0.33, 0.10, 0.26])
    assert (_above_baseline(noise, speckled_card=True) < damage).all()
    assert (_above_baseline(noise, speckled_card=False) >= damage).any()  # the clean card's baseline would flag them
    creased = noise.copy()
    creased[[2, 7]] = 0.95
    assert (_above_baseline(creased, speckled_card=True)[[2, 7]] >= damage).all()
    assert (_above_baseline(noise[:4], speckled_card=True) == noise[:4]).all()  # a small group: no baseline


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_specks_of_a_speckled_scan_are_no_write_in_but_a_name_is(seed: int) -> None:
    """On a speckled card an empty write-in area shows specks over a tenth of its columns; they
    are pieces of ink too small to be writing (a name's strokes join into larger ones), so the
    empty area stays empty and a name written in a fine pen still reads as one."""
    blank, reg, page = card(EMPTY, write_in_row=0)
    thresholds = load_thresholds()
    empty = _read(_speckled(blank, seed), blank, reg, page)[0]
    assert empty.status is MarkStatus.NO and empty.score.write_in_score < thresholds.write_in, empty
    named = blank.copy()
    x, y, w, h = page.targets[0].write_in_area_in
    cv2.putText(named, "Marion Tolliver", (_px(x + 0.1), _px(y + h - 0.08)), cv2.FONT_HERSHEY_SCRIPT_SIMPLEX, 1.1, 60, 1, cv2.LINE_AA)
    written = _read(_speckled(named, seed), blank, reg, page)[0]
    assert written.status is MarkStatus.UNKNOWN and written.score.write_in_score >= 0.4, written


def test_grey_rules_a_bilevel_scan_prints_black_on_some_rows_are_no_loop_round_a_name() -> None:
    """The blank prints light grey rules between the options; a bilevel scan thresholded near
    their grey prints some black and leaves others out (so the card as a whole does not print
    the blank's light print black). A black rule above and below a name is print, not a loop
    drawn round it; a loop drawn round a name still is one."""
    blank, reg, page = card(EMPTY)
    grey = blank.copy()
    rules = []
    for i in range(len(page.targets)):
        x, y, w, h = page.targets[i].box_in
        rules += [(_px(0.3), _px(y - 0.08), _px(2.8)), (_px(0.3), _px(y + h + 0.08), _px(2.8))]
    for x0, y, x1 in rules:
        cv2.line(grey, (x0, y), (x1, y), 175, 2)
    img = blank.copy()
    for k, (x0, y, x1) in enumerate(rules):
        if k < len(rules) // 2:  # the upper rows' rules thresholded black, the lower rows' left out
            cv2.line(img, (x0, y), (x1, y), 0, 2)
    got = _read(img, grey, reg, page)
    assert [r.status for r in got] == [MarkStatus.NO] * 8, [(r.status.value, r.why) for r in got]
    x, y, w, h = page.targets[1].box_in  # a loop round the second option's name
    cv2.ellipse(img, (_px(x + w + 0.45), _px(y + h / 2)), (_px(0.35), _px(0.12)), 0, 0, 360, 30, 3)
    got = _read(img, grey, reg, page)
    assert got[1].status is MarkStatus.UNKNOWN and got[1].score.ring_score >= 0.7, got[1]


CHECKED = (1, 4, 6)


def _checked_card(*, numbered: bool, ink: int, width_px: int):
    """Eight empty ovals (each with its ballot number printed inside, if ``numbered``) and a
    ballpoint check ``width_px`` wide through those of CHECKED: the blank, the card, its
    registration and layout page."""
    blank, reg, page = card(EMPTY)
    for i in range(len(page.targets)) if numbered else ():
        cx, cy = _centre(page, i)
        cv2.putText(blank, str(11 + i), (_px(cx - 0.045), _px(cy + 0.025)), cv2.FONT_HERSHEY_SIMPLEX, 0.42, 0, 1, cv2.LINE_AA)
    img = blank.copy()
    for i in CHECKED:
        cx, cy = _centre(page, i)
        stroke = [(_px(cx - 0.07), _px(cy - 0.01)), (_px(cx - 0.02), _px(cy + 0.045)), (_px(cx + 0.12), _px(cy - 0.14))]
        cv2.polylines(img, [np.array(stroke, np.int32)], False, ink, width_px, cv2.LINE_AA)
    return blank, img, reg, page


@pytest.mark.parametrize("ink", [90, 110])
def test_a_check_through_an_oval_with_its_ballot_number_printed_inside_is_never_no_vote(ink: int) -> None:
    """A Premier-like oval prints the option's ballot number inside it: with the print taken
    out, a ballpoint check (black, or blue that a gray scan renders lighter) shows only over the
    paper left inside, and fell under the dark ink a stroke needs (a share of the whole inside:
    the sixth renderer's seeds 1606 and 2707 read 59 such checks and X's as no vote). That
    share is of the inside that shows added ink; the fill it leaves is a thin line's, so a person
    may have to look, never a clear no vote. The empty numbered ovals stay no vote."""
    blank, img, reg, page = _checked_card(numbered=True, ink=ink, width_px=2)
    got = _read(img, blank, reg, page)
    assert all(got[i].score.stroke_score >= 0.6 and got[i].status is not MarkStatus.NO for i in CHECKED), \
        [(r.status.value, r.score.stroke_score) for r in got]
    assert all(got[i].status is MarkStatus.NO for i in range(8) if i not in CHECKED), [r.status.value for r in got]


@pytest.mark.parametrize("numbered", [False, True])
def test_a_check_a_pixel_wide_is_never_a_clear_no_vote(numbered: bool) -> None:
    """A check about a pixel wide at 200 dpi (a fine pen, or a blue ballpoint a thresholded scan
    breaks up), through a plain oval or one with its number printed inside, blurs under the dark
    ink a stroke needs in the canonical window (the sixth renderer's fresh seed 3838 read ten
    such checks and X's as no vote): it is looked for unblurred at twice that resolution, and is
    a vote or a person's call, never a clear no vote. Empty ovals stay no vote."""
    blank, img, reg, page = _checked_card(numbered=numbered, ink=40, width_px=1)
    got = [r.status for r in _read(img, blank, reg, page)]
    assert all(got[i] is not MarkStatus.NO for i in CHECKED), got
    assert all(got[i] is MarkStatus.NO for i in range(8) if i not in CHECKED), got


def test_a_ballpoint_check_cut_short_by_a_printed_number_is_still_a_stroke_and_a_dot_is_not() -> None:
    """A black ballpoint's check through an oval whose ballot number covers the crossing (the
    sixth renderer's fresh seed 4949 read two such as no vote): with the print taken out, what
    is left are pieces about 16 px long and 4 px wide at the finer look's resolution, four times
    as long as wide at most. A piece that long needs only three times its width; a hesitation
    dot, a short blot and a speck do not pass, nor a printed rule's level edge beside the oval."""
    from scanpipe.imaging.marks_blank import fine_strokes

    def mask(draw) -> np.ndarray:
        m = np.zeros((80, 120), np.uint8)
        draw(m)
        return m.astype(bool)

    inner = np.zeros((80, 120), bool)
    inner[25:55, 30:90] = True
    arm = mask(lambda m: cv2.line(m, (70, 30), (77, 20), 1, 4))  # the arm past the number, cut by the outline: 16.5 by 4.4
    assert len(fine_strokes(arm, inner)) == 1
    assert len(fine_strokes(arm, inner, joined=False)) == 1
    for blob in (lambda m: cv2.circle(m, (60, 40), 4, 1, -1),  # a hesitation dot
                 lambda m: cv2.line(m, (60, 40), (65, 34), 1, 4),  # a short blot
                 lambda m: cv2.line(m, (60, 40), (62, 38), 1, 2)):  # a speck
        assert fine_strokes(mask(blob), inner) == []
    rule = mask(lambda m: cv2.line(m, (5, 70), (40, 70), 1, 2))  # level, outside the interior
    assert fine_strokes(rule, inner) == []


@pytest.mark.parametrize("peaks", [5, 7])
def test_a_fill_crossed_out_with_a_zigzag_is_for_a_person_and_a_slash_or_x_stays_a_vote(peaks: int) -> None:
    """A voter who filled an oval and then scribbled a zigzag across it, past the oval above
    and below, took the vote back or not: a person decides (the sixth renderer's seed 3838 read 9
    of 19 such as votes, the fill under the zigzag being solid). A slash or an X through an oval
    leaves it once or twice a side, and stays a vote; a fill's overflow leaves it nowhere far."""
    blank, reg, page = card(EMPTY)
    img = blank.copy()
    for i in range(4):
        x, y, w, h = page.targets[i].box_in
        cx, cy = x + w / 2, y + h / 2
        if i in (0, 1):  # filled, overflowing a little
            cv2.ellipse(img, (_px(cx), _px(cy)), (_px(w / 2 + 0.01), _px(h / 2 + 0.01)), 0, 0, 360, 40, -1, cv2.LINE_AA)
        if i == 1:  # then crossed out
            xs = np.linspace(cx - 0.75 * w, cx + 0.75 * w, 2 * peaks + 1)
            pts = [(_px(float(v)), _px(cy + (1 if k % 2 else -1) * 0.7 * h)) for k, v in enumerate(xs)]
            cv2.polylines(img, [np.array(pts, np.int32)], False, 40, 3, cv2.LINE_AA)
        if i == 2:  # a slash
            cv2.line(img, (_px(cx - 0.6 * w), _px(cy + 0.9 * h)), (_px(cx + 0.6 * w), _px(cy - 0.9 * h)), 40, 3, cv2.LINE_AA)
        if i == 3:  # an X
            for s in (-1, 1):
                cv2.line(img, (_px(cx - 0.6 * w), _px(cy + s * 0.9 * h)), (_px(cx + 0.6 * w), _px(cy - s * 0.9 * h)), 40, 3, cv2.LINE_AA)
    got = _read(img, blank, reg, page)
    assert [r.status for r in got[:4]] == [MarkStatus.YES, MarkStatus.UNKNOWN, MarkStatus.YES, MarkStatus.YES], \
        [(r.status.value, r.why) for r in got[:4]]
    assert all(r.status is MarkStatus.NO for r in got[4:]), [r.status.value for r in got]


def test_a_dot_with_a_neighbours_loop_passing_under_the_oval_is_no_vote_of_its_own() -> None:
    """A hesitation dot in an ES&S-like flat oval (thick outline, a small bare middle) and the
    felt loop a voter drew round the next option passing just under it (the fifth renderer's
    seed 6464): together their ink spanned the oval's bare middle and its band, and read as a
    vote. Ink inside reaching under half across it, with ink round it on one side only, is
    beside the target: for a person at most. A check and an X on the same ovals stay votes."""
    blank, reg, page = card(EMPTY)
    for i in range(len(page.targets)):  # thicken every outline, as an ES&S-like flat oval
        cx, cy = _centre(page, i)
        cv2.ellipse(blank, (_px(cx), _px(cy)), (_px(BOX_W / 2 - 0.012), _px(BOX_H / 2 - 0.012)), 0, 0, 360, 20, _px(0.024), cv2.LINE_AA)
    img = blank.copy()
    cx, cy = _centre(page, 3)
    cv2.circle(img, (_px(cx), _px(cy)), _px(0.018), 15, -1, cv2.LINE_AA)  # the dot
    nx, ny = _centre(page, 4)  # the loop round option 4, its top just under option 3's oval
    cv2.circle(img, (_px(nx), _px(ny)), _px(ny - cy - BOX_H / 2 - 0.022), 15, _px(0.03), cv2.LINE_AA)
    cx, cy = _centre(page, 0)  # an X and a check on the others, each a vote
    for d in (-1, 1):
        cv2.line(img, (_px(cx - 0.14), _px(cy - 0.09 * d)), (_px(cx + 0.14), _px(cy + 0.09 * d)), 15, _px(0.02), cv2.LINE_AA)
    cx, cy = _centre(page, 6)
    pts = np.array([(_px(cx - 0.13), _px(cy - 0.02)), (_px(cx - 0.03), _px(cy + 0.08)), (_px(cx + 0.16), _px(cy - 0.13))], np.int32)
    cv2.polylines(img, [pts], False, 15, _px(0.02), cv2.LINE_AA)
    got = _read(img, blank, reg, page)
    seen = [(r.status.value, round(r.score.score, 3)) for r in got]
    assert got[3].score.score < HIGH_ANCHOR, seen  # 0.859 before: the loop's arc counted as the dot's reach
    assert got[0].status is MarkStatus.YES and got[6].status is MarkStatus.YES, seen


def _numbered_card():
    """Eight empty ovals, each with its ballot number printed inside (a Premier-like oval):
    the blank, its registration and layout page."""
    blank, reg, page = card(EMPTY)
    for i in range(len(page.targets)):
        cx, cy = _centre(page, i)
        cv2.putText(blank, str(11 + i), (_px(cx - 0.045), _px(cy + 0.025)), cv2.FONT_HERSHEY_SIMPLEX, 0.42, 0, 1, cv2.LINE_AA)
    return blank, reg, page


def test_a_check_or_an_x_over_a_printed_number_is_a_vote_a_single_line_or_an_arc_is_not() -> None:
    """With the number printed inside taken out, a ballpoint check or X leaves under a tenth of
    the oval's inside dark, as a crease or a stray line across it does (the sixth renderer's
    seeds 6464 and 7575 sent 150 such checks and X's to a person). Two straight strokes that
    meet or cross in the target, each running on to the crossing over ink or the print that
    hides it, are a vote; one straight line, and the arc of a loop drawn round something else,
    stay with a person. The empty ovals stay no vote."""
    blank, reg, page = _numbered_card()
    img = blank.copy()
    ink, width = 90, 3
    cx, cy = _centre(page, 1)  # a check: the short arm from the oval's left, the vertex under it, the long arm up and right
    check = [(_px(cx - 0.1), _px(cy - 0.03)), (_px(cx - 0.03), _px(cy + 0.09)), (_px(cx + 0.14), _px(cy - 0.16))]
    cv2.polylines(img, [np.array(check, np.int32)], False, ink, width, cv2.LINE_AA)
    cx, cy = _centre(page, 3)  # an X, a finer pen
    for d in (-1, 1):
        cv2.line(img, (_px(cx - 0.15), _px(cy - 0.1 * d)), (_px(cx + 0.15), _px(cy + 0.1 * d)), ink, width - 1, cv2.LINE_AA)
    cx, cy = _centre(page, 5)  # one straight line across
    cv2.line(img, (_px(cx - 0.15), _px(cy + 0.1)), (_px(cx + 0.15), _px(cy - 0.1)), ink, width, cv2.LINE_AA)
    cx, cy = _centre(page, 7)  # the arc of a loop round something below and right of the oval
    cv2.circle(img, (_px(cx + 0.2), _px(cy + 0.22)), _px(0.3), ink, width, cv2.LINE_AA)
    got = _read(img, blank, reg, page)
    seen = [(r.status.value, round(r.score.score, 3), round(r.score.fill_score, 3)) for r in got]
    assert all(got[i].score.fill_score < 0.08 for i in (1, 3, 5, 7)), seen  # the thin fill the rule is about
    assert got[1].status is MarkStatus.YES and got[3].status is MarkStatus.YES, seen
    assert got[5].status is MarkStatus.UNKNOWN and got[7].status is MarkStatus.UNKNOWN, seen
    assert all(got[i].status is MarkStatus.NO for i in (0, 2, 4, 6)), seen


def test_an_x_whose_strokes_the_print_cuts_into_stubs_is_a_vote_a_loop_round_the_oval_is_not() -> None:
    """A wide, shallow X across an oval with a bold number printed inside and a thick outline:
    the print (widened by a registration's slack) hides most of each stroke, leaving stubs
    between the outline and the number and just past the outline, each a few hundredths of an
    inch. Such stubs count as pieces of the strokes, so the two strokes still meet in the
    target: a vote. A loop drawn round the oval leaves arcs whose pieces never line up
    through it: for a person."""
    blank, reg, page = card(EMPTY)
    for i in range(len(page.targets)):
        cx, cy = _centre(page, i)
        cv2.ellipse(blank, (_px(cx), _px(cy)), (_px(BOX_W / 2 - 0.006), _px(BOX_H / 2 - 0.006)), 0, 0, 360, 20, _px(0.02))
        cv2.putText(blank, str(11 + i), (_px(cx - 0.045), _px(cy + 0.025)), cv2.FONT_HERSHEY_SIMPLEX, 0.55, 0, 2, cv2.LINE_AA)
    img = blank.copy()
    ink = 90
    cx, cy = _centre(page, 2)  # the X: just past the outline, shallow
    for d in (-1, 1):
        cv2.line(img, (_px(cx - 0.15), _px(cy - 0.085 * d)), (_px(cx + 0.15), _px(cy + 0.085 * d)), ink, 3, cv2.LINE_AA)
    cx, cy = _centre(page, 5)  # a loop round the oval
    cv2.ellipse(img, (_px(cx), _px(cy)), (_px(BOX_W / 2 + 0.05), _px(BOX_H / 2 + 0.05)), 5, 0, 360, ink, 2, cv2.LINE_AA)
    got = _read(img, blank, reg, page)
    seen = [(r.status.value, round(r.score.score, 3), round(r.score.fill_score, 3), r.why[:40]) for r in got]
    assert got[2].status is MarkStatus.YES, seen
    assert got[5].status is MarkStatus.UNKNOWN, seen
    assert all(got[i].status is not MarkStatus.YES for i in (0, 1, 3, 4, 6, 7)), seen  # (print over half the inside: for a person)


@pytest.mark.parametrize("ink", [150, 175])
def test_a_light_pencil_check_or_x_over_a_printed_number_is_never_a_clear_no_vote(ink: int) -> None:
    """A hard pencil's check and X, light on the scan (darkness 0.3-0.4), over ovals with their
    number printed inside: the print taken out leaves a few light strokes, lighter than a pen's
    (FINE_DARK), and the empty-looking inside scored them under the marginal level (a definite
    error, read as no vote). Strokes that light reaching across the target are for a person
    (FAINT_STROKE_DARK); the empty ovals stay no vote."""
    blank, reg, page = _numbered_card()
    img = blank.copy()
    cx, cy = _centre(page, 1)
    check = [(_px(cx - 0.1), _px(cy - 0.03)), (_px(cx - 0.03), _px(cy + 0.09)), (_px(cx + 0.14), _px(cy - 0.16))]
    cv2.polylines(img, [np.array(check, np.int32)], False, ink, 3, cv2.LINE_AA)
    cx, cy = _centre(page, 3)
    for d in (-1, 1):
        cv2.line(img, (_px(cx - 0.15), _px(cy - 0.1 * d)), (_px(cx + 0.15), _px(cy + 0.1 * d)), ink, 3, cv2.LINE_AA)
    got = _read(img, blank, reg, page)
    seen = [(r.status.value, round(r.score.score, 3)) for r in got]
    assert got[1].status is not MarkStatus.NO and got[3].status is not MarkStatus.NO, seen
    assert all(got[i].status is MarkStatus.NO for i in (0, 2, 4, 5, 6, 7)), seen


def test_two_straight_pieces_meet_only_where_the_print_or_ink_joins_them() -> None:
    """The geometry of :func:`_meeting_pair`: a check's two arms, the vertex hidden under print,
    meet; the same two pieces with bare paper between them and the crossing do not (a curve's
    pieces, extended, leave it over paper); pieces under 45 degrees apart never; an X's half
    strokes on either side of the crossing add up to one stroke."""
    from scanpipe.imaging.marks_blank import _meeting_pair

    zone = np.ones((100, 140), bool)
    paper = np.zeros((100, 140), bool)
    hidden = paper.copy()
    hidden[40:75, 30:80] = True  # the print over the vertex
    arms = np.array([[20.0, 45.0, 38.0, 60.0], [62.0, 58.0, 110.0, 5.0]])  # short arm down-right, long arm up-right
    assert _meeting_pair(arms, 60.0, zone, hidden)
    assert not _meeting_pair(arms, 60.0, zone, paper)
    assert not _meeting_pair(np.array([[20.0, 50.0, 60.0, 50.0], [62.0, 52.0, 100.0, 40.0]]), 60.0, zone, hidden)
    halves = np.array([[10.0, 10.0, 30.0, 30.0], [70.0, 70.0, 90.0, 90.0], [10.0, 90.0, 30.0, 70.0]])
    assert not _meeting_pair(halves, 60.0, zone, paper)
    ink = paper.copy()
    cv2.line(ink.view(np.uint8), (10, 10), (90, 90), 1, 3)
    cv2.line(ink.view(np.uint8), (10, 90), (50, 50), 1, 3)
    assert _meeting_pair(halves, 60.0, zone, ink)


def test_an_overfilled_oval_with_its_number_printed_inside_stores_the_fill_of_its_bare_paper() -> None:
    """A felt pen's overfill spills round the whole oval, which the ring measure sees as a loop
    drawn round it; a fill of the oval's own inside says it is the fill's overflow. Where the
    ballot number is printed inside, that fill was the mean over the whole inside, the number's
    share counted as paper (the sixth renderer's seeds 6464 and 7575 sent 58 overfills so to a
    person, their fill 0.40-0.49); the fill stored is the mean over the paper the blank leaves bare. A
    loop round an empty numbered oval still fills nothing and stays with a person."""
    blank, reg, page = card(EMPTY)
    for i in range(len(page.targets)):
        cx, cy = _centre(page, i)
        cv2.putText(blank, str(11 + i), (_px(cx - 0.035), _px(cy + 0.02)), cv2.FONT_HERSHEY_SIMPLEX, 0.32, 0, 1, cv2.LINE_AA)
    img = blank.copy()
    cx, cy = _centre(page, 3)
    cv2.ellipse(img, (_px(cx), _px(cy)), (_px(BOX_W / 2 + 0.06), _px(BOX_H / 2 + 0.06)), 0, 0, 360, 60, -1, cv2.LINE_AA)
    cx, cy = _centre(page, 7)
    cv2.ellipse(img, (_px(cx), _px(cy)), (_px(BOX_W / 2 + 0.06), _px(BOX_H / 2 + 0.06)), 0, 0, 360, 60, 3, cv2.LINE_AA)
    got = _read(img, blank, reg, page)
    darkness = 1.0 - 60 / 255
    assert got[3].score.ring_score >= 0.7 and got[3].score.fill_score >= 0.9 * darkness, got[3]  # 0.517 before: the number's share counted
    assert got[3].status is MarkStatus.YES, got[3]
    assert got[7].status is MarkStatus.UNKNOWN and got[7].score.fill_score < 0.05, got[7]
    assert all(got[i].status is MarkStatus.NO for i in range(8) if i not in (3, 7)), [r.status.value for r in got]



def test_a_check_whose_short_arm_is_a_quarter_of_the_oval_wide_meets_its_long_arm() -> None:
    """The sixth renderer's checks over numbered ovals (72 px wide at FINE_PPI): the short arm
    runs 20-21.5 px from the vertex the outline hides, a little under 0.3 of the width (28 of
    seed 9393's clear targets sent to a person). A hand's short arm is a third to a half of
    its long one: a quarter of the oval's width (TWO_STROKES_SHORT) is a check; a stub of a
    sixth is not."""
    from scanpipe.imaging.marks_blank import TWO_STROKES_SHORT, _meeting_pair

    zone = np.ones((100, 140), bool)
    hidden = np.zeros((100, 140), bool)
    hidden[58:78, 50:70] = True  # the outline and the number over the vertex, about (60, 70)
    long_arm = [66.0, 62.0, 100.0, 20.0]  # from the print up and right, 64 px from the vertex
    short = np.array([[46.0, 56.0, 54.0, 64.0], long_arm])  # 19.8 px from the vertex: 0.275 of 72
    assert TWO_STROKES_SHORT * 72.0 <= 19.8 < 0.3 * 72.0
    assert _meeting_pair(short, 72.0, zone, hidden)
    stub = np.array([[52.0, 62.0, 54.0, 64.0], long_arm])  # 11.3 px: a sixth of the width
    assert not _meeting_pair(stub, 72.0, zone, hidden)


def test_a_pixel_wide_check_whose_two_strokes_meet_is_a_vote() -> None:
    """A pixel-wide check in a blue ballpoint's gray (the blur of the canonical windows takes it
    under the dark ink a stroke needs): found unblurred at twice the resolution, its two strokes
    meet in the target as the thin-fill rule's check does, so it is a vote, scored by how far
    they reach (it went to a person: the sixth renderer's seed 9393 sent three such checks)."""
    blank, img, reg, page = _checked_card(numbered=False, ink=90, width_px=1)
    got = _read(img, blank, reg, page)
    seen = [(r.status.value, round(r.score.score, 3), round(r.score.fill_score, 3)) for r in got]
    assert all(got[i].status is MarkStatus.YES for i in CHECKED), seen
    assert all(got[i].status is MarkStatus.NO for i in range(8) if i not in CHECKED), seen


@pytest.mark.parametrize("bold", [1, 2])
def test_a_flat_light_x_along_a_numbered_oval_s_outline_is_never_a_clear_no_vote(bold: int) -> None:
    """A blue ballpoint's X drawn flat, its strokes running along the outline of an oval with its
    number printed inside: the print, widened by a registration's slack, hides all but stubs
    either side of the number and just past the outline, none long enough to be a stroke, and
    it read as no vote (two X's of the sixth renderer's fresh seed 1212: a definite error).
    Stubs that reach half across the target keep it for a person at least; the empty ovals
    stay no vote."""
    blank, reg, page = card(EMPTY)
    for i in range(len(page.targets)):
        cx, cy = _centre(page, i)
        cv2.putText(blank, str(61 + i), (_px(cx - 0.05), _px(cy + 0.028)), cv2.FONT_HERSHEY_SIMPLEX, 0.42, 0, bold, cv2.LINE_AA)
    img = blank.copy()
    cx, cy = _centre(page, 2)
    for d in (-1, 1):
        cv2.line(img, (_px(cx - 0.14), _px(cy - 0.07 * d)), (_px(cx + 0.14), _px(cy + 0.07 * d)), 140, 2, cv2.LINE_AA)
    got = _read(img, blank, reg, page)
    seen = [(r.status.value, round(r.score.score, 3), round(r.score.fill_score, 3)) for r in got]
    assert got[2].status is not MarkStatus.NO, seen
    assert all(got[i].status is MarkStatus.NO for i in range(8) if i != 2), seen


def _stain(shape: tuple[int, int], centre_in: tuple[float, float], radius_in: float, *, rim: float = 0.16,
           wash: float = 0.05, width_in: float = 0.05) -> np.ndarray:
    """A dried drop's darkness over the paper: a soft rim ``rim`` dark round ``centre_in`` at
    ``radius_in``, a light ``wash`` inside it."""
    yy, xx = np.mgrid[0:shape[0], 0:shape[1]] / DPI
    r = np.hypot(xx - centre_in[0], yy - centre_in[1])
    return rim * np.exp(-((r - radius_in) / width_in) ** 2) + wash * (r < radius_in)


def test_a_stain_s_tone_through_an_empty_oval_is_the_paper_s_a_light_fill_under_it_is_not() -> None:
    """The rim of a dried drop running through an empty oval, and on over the paper round it,
    darkens the inside as a light pencil's even fill would: it read between the levels, for a
    person (about ten empty ovals a deck of the sixth renderer's 240 sheets). The paper round
    the target shows the same tone, so it is the paper's and is taken off; a light fill under
    a rim or a wash is darker than the paper round it and stays a vote or a person's call, and
    an erasure's even gray on clean paper still goes to a person."""
    from tests.test_marks import draw

    blank, reg, page = card(EMPTY)
    dark = np.zeros(blank.shape)
    for i in (1, 4, 6):  # a rim down through the middle of targets 1, 4 and 6
        cx, cy = _centre(page, i)
        dark += _stain(blank.shape, (cx + 0.7, cy + 0.05), 0.7, rim=0.12, wash=0.03)
    cx, cy = _centre(page, 3)  # a wash with its rim past target 3
    dark += _stain(blank.shape, (cx + 0.1, cy), 0.3, rim=0.1, wash=0.08)
    img = np.clip(blank * (1.0 - np.clip(dark, 0.0, 1.0)), 0, 255).astype(np.uint8)
    for i in (3, 6):  # a light fill (a hard pencil's gray) under the wash and under the rim
        cx, cy = _centre(page, i)
        cv2.ellipse(img, (_px(cx) * 16, _px(cy) * 16), (_px(0.105) * 16, _px(0.065) * 16), 0, 0, 360, 200, -1, cv2.LINE_AA, 4)
    cx, cy = _centre(page, 7)
    draw(img, "erasure", cx, cy, DPI)
    got = _read(img, blank, reg, page)
    seen = [(r.status.value, round(r.score.score, 3), r.why) for r in got]
    assert all(got[i].status is MarkStatus.NO for i in (0, 1, 2, 4, 5)), seen
    assert got[3].status is not MarkStatus.NO and got[6].status is not MarkStatus.NO, seen
    assert got[7].status is MarkStatus.UNKNOWN, seen


@pytest.mark.parametrize("bilevel", [False, True], ids=["gray", "thresholded"])
def test_a_pixel_wide_x_between_the_levels_is_a_vote_when_its_strokes_meet(bilevel: bool) -> None:
    """A fine pen's X a pixel wide (a blue ballpoint a thresholded scan leaves as 1-px lines):
    the blur of the canonical windows breaks its strokes under the dark ink a span needs, so it
    read part of a span, between the levels, for a person (five X's on one card of the sixth
    renderer's seed 9393). Looked for unblurred as the quiet targets are, its two strokes
    meet in the oval: a vote. A smaller X inside the outline stays a person's call at least;
    the empty ovals stay no vote."""
    blank, reg, page = card(EMPTY, bilevel=bilevel)
    img = blank.copy()
    for i, (w, h) in zip((1, 3, 5), ((0.12, 0.075), (0.13, 0.08), (0.11, 0.06)), strict=True):
        cx, cy = _centre(page, i)
        for d in (-1, 1):
            cv2.line(img, (_px(cx - w), _px(cy - h * d)), (_px(cx + w), _px(cy + h * d)), 0, 1, cv2.LINE_8)
    if bilevel:
        img = np.where(img < 128, 0, 255).astype(np.uint8)
    got = _read(img, blank, reg, page)
    seen = [(r.status.value, round(r.score.score, 3)) for r in got]
    assert got[1].status is MarkStatus.YES and got[3].status is MarkStatus.YES and got[5].status is not MarkStatus.NO, seen
    assert all(got[i].status is MarkStatus.NO for i in (0, 2, 4, 6, 7)), seen


@pytest.mark.parametrize("thresholded", [False, True], ids=["gray", "thresholded"])
def test_a_marker_s_overfill_out_to_the_sides_or_joined_to_the_written_name_is_a_vote_not_damage(thresholded: bool) -> None:
    """A felt marker's overfill: a blob run out in bars to both sides of the oval (the strips a
    crease is looked for in hold the bars' lighter edges), and, on a write-in option, one joined
    to the name written on its line (one stroke running on far past the box, as a stamp's
    would). Both were damage, for a person (eight overfills of the sixth renderer's seed 9393);
    both are votes: a strip's column a pen's stroke crosses shows no crease, and the target's
    own write-in area holds no stroke from elsewhere. A crease across a target is still damage."""
    from tests.test_marks import draw

    blank, reg, page = card(EMPTY, write_in_row=3)
    img = blank.copy()
    for i in (1, 3):
        cx, cy = _centre(page, i)
        cv2.ellipse(img, (_px(cx) * 16, _px(cy) * 16), (_px(0.135) * 16, _px(0.09) * 16), 0, 0, 360, 0, -1, cv2.LINE_AA, 4)
    cx, cy = _centre(page, 1)
    for a, b in ((-0.2, -0.1), (0.1, 0.2)):
        cv2.line(img, (_px(cx + a), _px(cy + 0.01)), (_px(cx + b), _px(cy + 0.01)), 0, _px(0.03))
    cx, cy = _centre(page, 3)
    xs = np.linspace(cx + 0.1, cx + 1.2, 80)
    cv2.polylines(img, [np.array([(_px(x), _px(cy + 0.02 * np.sin(25 * x))) for x in xs], np.int32)], False, 0, _px(0.02), cv2.LINE_AA)
    if thresholded:
        img = np.where(img < 140, 0, 255).astype(np.uint8)
    else:
        cx, cy = _centre(page, 5)
        draw(img, "fold", cx, cy, DPI)
    got = _read(img, blank, reg, page)
    seen = [(r.status.value, round(r.score.score, 3), round(r.score.damage_score, 2)) for r in got]
    assert got[1].status is MarkStatus.YES and got[3].status is MarkStatus.YES, seen
    assert got[5].status is (MarkStatus.NO if thresholded else MarkStatus.UNKNOWN), seen
    assert all(got[i].status is MarkStatus.NO for i in (0, 2, 4, 6, 7)), seen


def test_an_x_seen_only_as_four_stubs_past_the_print_is_two_strokes_a_loop_s_corners_are_not() -> None:
    """A flat X drawn along a numbered oval's outline: the print, widened by a registration's
    slack, hides all of it but a stub past the outline at each corner (the sixth renderer's
    seed 9393, a blue ballpoint on a gray JPEG, 72 px wide at FINE_PPI: these four stubs, as
    measured). Two stubs in opposite corners, symmetric about the centre and pointing at it,
    are one arm; two such arms crossing are an X. A loop drawn round the oval leaves pieces at
    the same corners, but they run across the diagonals, not at the centre: no X. One arm alone
    is no X either."""
    from scanpipe.imaging.marks_blank import _stubs_cross

    centre = np.array([73.5, 54.5])
    stubs = np.array([[46.9, 37.5, 39.8, 35.6], [105.3, 34.7, 99.2, 37.5], [46.0, 71.0, 39.7, 73.3], [107.3, 73.3, 100.2, 70.5]])
    assert _stubs_cross(stubs, 72.0, centre)
    assert not _stubs_cross(stubs[[0, 3]], 72.0, centre)
    a, b = 40.0, 22.0  # a loop round the oval: its pieces at the four corners, along its tangent there
    loop = []
    for t in np.radians([135.0, 45.0, 225.0, 315.0]):
        x, y = centre + np.array([a * np.cos(t), -b * np.sin(t)])
        dx, dy = -a * np.sin(t), -b * np.cos(t)
        n = 4.0 / np.hypot(dx, dy)
        loop.append([x - n * dx, y - n * dy, x + n * dx, y + n * dy])
    assert not _stubs_cross(np.array(loop), 72.0, centre)


def _flat_ovals(print_value: int):
    """A card of ES&S-like flat ovals: a thick outline printed ``print_value`` round a small bare middle."""
    blank, reg, page = card(EMPTY)
    for i in range(len(page.targets)):
        cx, cy = _centre(page, i)
        cv2.ellipse(blank, (_px(cx), _px(cy)), (_px(BOX_W / 2 - 0.012), _px(BOX_H / 2 - 0.012)), 0, 0, 360, print_value, _px(0.024), cv2.LINE_AA)
    return blank, reg, page


def _oval(img: np.ndarray, page, i: int, a_in: float, b_in: float, value: int, dx_in: float = 0.0) -> None:
    cx, cy = _centre(page, i)
    cv2.ellipse(img, (_px(cx + dx_in), _px(cy)), (_px(a_in), _px(b_in)), 0, 0, 360, value, -1, cv2.LINE_AA)


def test_a_flat_oval_s_small_middle_filled_by_a_light_pencil_or_a_fill_over_its_print_is_a_vote() -> None:
    """An oval whose thick outline leaves a small bare middle: a small mark fills that middle
    too, so a fill of it alone went to a person (0.48). A pencil's light, even fill up to the
    middle's rim all round is a vote (black print: nothing shows over it), an erasure's lighter
    residue stays for a person; a marker's fill that also darkens the outline's grey print is a
    vote though the middle's rim shows paper on one side (a fill with a hole); a ring of ink
    round a bare middle is not (the vendor seeds 121212 and 828282: 30 light pencils and 28 full
    fills for a person)."""
    blank, reg, page = _flat_ovals(20)
    img = np.full_like(blank, 255)
    _oval(img, page, 1, BOX_W / 2 - 0.005, BOX_H / 2 - 0.005, 150)  # a light pencil over the whole oval
    _oval(img, page, 5, BOX_W / 2 - 0.005, BOX_H / 2 - 0.005, 205)  # an erasure's residue
    img = np.minimum(img, blank)
    got = _read(img, blank, reg, page)
    seen = [(r.status.value, round(r.score.score, 3)) for r in got]
    assert got[1].status is MarkStatus.YES, seen  # 0.480 before
    assert got[5].status is MarkStatus.UNKNOWN, seen
    assert all(r.status is MarkStatus.NO for i, r in enumerate(got) if i not in (1, 5)), seen

    blank, reg, page = _flat_ovals(60)
    img = np.full_like(blank, 255)
    for i, (hole_in, dx_in) in ((0, (0.035, -0.04)), (2, (0.03, -0.05)), (4, (0.07, 0.0)), (7, (0.03, -0.045))):
        _oval(img, page, i, BOX_W / 2 + 0.005, BOX_H / 2 + 0.005, 60)  # a marker's fill over the outline ...
        _oval(img, page, i, hole_in, hole_in * 0.6, 210, dx_in)  # ... with a hole (the middle's rim bare on one side; a ring at 4)
    img = (img.astype(np.float32) / 255.0 * blank.astype(np.float32)).astype(np.uint8)
    got = _read(img, blank, reg, page)
    seen = [(r.status.value, round(r.score.score, 3)) for r in got]
    assert [got[i].status for i in (0, 2, 7)] == [MarkStatus.YES] * 3, seen  # 0 and 7: 0.480 before
    assert got[4].status is not MarkStatus.YES, seen
    assert all(got[i].status is MarkStatus.NO for i in (1, 3, 5, 6)), seen


def test_a_stamp_stroke_leaving_an_empty_oval_on_one_side_with_its_far_side_under_print_crosses_it() -> None:
    """A stamp letter's stroke (0.055 in, gray) runs through an empty oval: up-right over bare
    paper for 0.2 in, then under a printed block; down-left under a printed tint. Seen on one
    side only, it read as a span across the oval: a vote (the vendor seeds 121212 and 828282).
    Its line runs on under print past the box's other side: a stroke from elsewhere, for a
    person. A marker's check whose long arm leaves its oval the same way, with paper past the
    other side, stays a vote."""
    blank, reg, page = card(EMPTY)
    for i in (2, 5):  # a printed header block up-right of the target, a tint down-left of it
        cx, cy = _centre(page, i)
        cv2.rectangle(blank, (_px(cx + 0.38), _px(cy - 0.45)), (_px(cx + 0.9), _px(cy - 0.24)), 90, -1)
        if i == 2:
            cv2.rectangle(blank, (_px(0.05), _px(cy + 0.08)), (_px(cx - 0.15), _px(cy + 0.42)), 170, -1)
    img = blank.copy()
    cx, cy = _centre(page, 2)
    u = np.array([0.83, -0.56])
    a, b = np.array([cx, cy]) - 0.6 * u, np.array([cx, cy]) + 0.6 * u
    stroke = np.full_like(blank, 255)
    cv2.line(stroke, (_px(a[0]), _px(a[1])), (_px(b[0]), _px(b[1])), 150, _px(0.055), cv2.LINE_AA)
    img = np.minimum(img, stroke)
    cx, cy = _centre(page, 5)  # a marker's check, its long arm up-right 0.3 in past the centre
    pts = np.array([(_px(cx - 0.08), _px(cy - 0.01)), (_px(cx - 0.02), _px(cy + 0.05)), (_px(cx + 0.25), _px(cy - 0.17))], np.int32)
    cv2.polylines(img, [pts], False, 30, _px(0.045), cv2.LINE_AA)
    got = _read(img, blank, reg, page)
    seen = [(r.status.value, round(r.score.score, 3), round(r.score.damage_score, 3)) for r in got]
    assert got[2].status is MarkStatus.UNKNOWN, seen
    assert got[5].status is MarkStatus.YES, seen
    assert all(r.status is MarkStatus.NO for i, r in enumerate(got) if i not in (2, 5)), seen


def _window_with_pieces(draw_piece) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """A crossing window (80 ppi, a 0.2 x 0.1 in box 0.45 in in) whose box and name the print
    covers, a 5-px band through the box hidden under print but where ``draw_piece`` draws."""
    from scanpipe.imaging import marks_blank

    shape, m, bw, bh = (80, 88), 36, 16, 8
    ink, printed = np.zeros(shape, bool), np.zeros(shape, bool)
    printed[m - 4: m + bh + 4, m - 10: m + bw + 10] = True  # the oval and its name, widened
    centre, u = np.array([m + bw / 2, m + bh / 2]), np.array([0.8, -0.6])
    band = np.zeros(shape, np.uint8)
    cv2.line(band, tuple(np.round(centre - 40 * u).astype(int)), tuple(np.round(centre + 40 * u).astype(int)), 1, 5)
    for t0, t1 in ((-29, -18), (18, 29)):
        piece = np.zeros(shape, np.uint8)
        draw_piece(piece, centre + t0 * u, centre + t1 * u)
        ink |= piece.astype(bool)
    printed |= band.astype(bool) & ~ink  # the band runs on under the print between the pieces
    count, labels = cv2.connectedComponents(ink.view(np.uint8), connectivity=8)
    assert marks_blank.CROSS_PPI == 80.0
    return labels, count, ink, printed


def test_a_broad_stamp_stroke_seen_in_two_short_pieces_either_side_of_a_box_crosses_it() -> None:
    """A stamp letter's broad stroke (0.06 in) across a target between print shows only two
    pieces of it, one either side, each 0.2 in long: 2.2 times as long as broad, under the 2.5
    once needed (the vendor seeds 121212 and 939393: three stamps across targets read as marks).
    Two round blots in the same places (a voter's marks beside other targets) are no band."""
    from scanpipe.imaging.marks_blank import _bands_through

    box = (36, 16, 8)

    def line(img: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        cv2.line(img, tuple(np.round(a).astype(int)), tuple(np.round(b).astype(int)), 1, 5)

    def blot(img: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        cv2.circle(img, tuple(np.round((a + b) / 2).astype(int)), 5, 1, -1)

    labels, count, ink, printed = _window_with_pieces(line)
    assert _bands_through(labels, count, ink, printed, box)
    labels, count, ink, printed = _window_with_pieces(blot)
    assert not _bands_through(labels, count, ink, printed, box)


def test_an_x_a_threshold_took_away_but_for_its_crossing_and_its_arms_ends_is_never_a_clear_no_vote() -> None:
    """A light blue ballpoint's X on a 150-dpi scan thresholded dark: the threshold leaves only
    its crossing, where it thickens the number printed in the middle, and its arms where they
    cross the outline (the sixth renderer's fresh seed 1515: read as no vote, a definite error).
    Its crossing and four arm ends, each two on one line through the centre, are for a person;
    a dot in the middle alone stays no vote."""
    blank, reg, page = card(EMPTY)
    for i in range(len(page.targets)):  # a ballot number printed in each oval
        cx, cy = _centre(page, i)
        cv2.putText(blank, "1", (_px(cx - 0.015), _px(cy + 0.025)), cv2.FONT_HERSHEY_SIMPLEX, 0.45, 20, 2, cv2.LINE_AA)
    img = blank.copy()
    cx, cy = _centre(page, 3)
    cv2.circle(img, (_px(cx), _px(cy)), _px(0.022), 20, -1, cv2.LINE_AA)  # the crossing over the number
    a, b = BOX_W / 2, BOX_H / 2
    arms = np.full_like(img, 255)
    for sx, sy in ((-1, -1), (1, -1), (-1, 1), (1, 1)):  # each arm's end, light, where it crosses the outline
        p, q = (cx + sx * 0.85 * a, cy + sy * 0.85 * b), (cx + sx * 0.95 * a, cy + sy * 0.95 * b)
        cv2.line(arms, (_px(p[0]), _px(p[1])), (_px(q[0]), _px(q[1])), 180, _px(0.015), cv2.LINE_AA)
    img = np.minimum(img, arms)
    cx, cy = _centre(page, 6)
    cv2.circle(img, (_px(cx + 0.02), _px(cy)), _px(0.025), 20, -1, cv2.LINE_AA)  # a hesitation dot by the number
    got = _read(img, blank, reg, page)
    seen = [(r.status.value, round(r.score.score, 3)) for r in got]
    assert got[3].status is MarkStatus.UNKNOWN, seen  # no vote at 0.022 before
    assert all(r.status is MarkStatus.NO for i, r in enumerate(got) if i != 3), seen


def test_a_check_over_an_outline_the_blank_prints_darker_and_thicker_is_a_vote_and_empty_ovals_stay_empty() -> None:
    """The blank, thresholded, prints its ovals black with an outline 0.024 in thick round a
    small middle; the card, a gray scan, shows them gray and 0.02 in thick. A marker's check
    whose vertex lies on the outline and whose long arm runs out past the box lay mostly
    where the blank prints and was taken for that print: the little left inside seemed ink
    beside the oval, not across it (0.48, for a person; on the vendor profile's fresh seed
    161616 a clear check read as no vote, 0.116). The blank's print now counts only as dark
    as the card's targets show it; the card's empty ovals, and a dot, stay no vote."""
    blank, reg, page = _flat_ovals(0)
    img = np.full_like(blank, 255)
    for i in range(len(page.targets)):
        cx, cy = _centre(page, i)
        cv2.ellipse(img, (_px(cx), _px(cy)), (_px(BOX_W / 2 - 0.012), _px(BOX_H / 2 - 0.012)), 0, 0, 360, 120, _px(0.02), cv2.LINE_AA)
    pen = np.full_like(img, 255)
    cx, cy = _centre(page, 2)
    low = (_px(cx - 0.01), _px(cy + BOX_H / 2 - 0.025))  # the check's low point on the outline's bottom
    cv2.line(pen, (_px(cx - BOX_W / 2 + 0.03), _px(cy)), low, 80, _px(0.025), cv2.LINE_AA)
    cv2.line(pen, low, (_px(cx + BOX_W / 2 + 0.05), _px(cy - BOX_H / 2 - 0.06)), 80, _px(0.025), cv2.LINE_AA)
    cx, cy = _centre(page, 5)
    cv2.circle(pen, (_px(cx + 0.02), _px(cy)), _px(0.012), 60, -1, cv2.LINE_AA)  # a hesitation dot
    got = _read(np.minimum(img, pen), blank, reg, page)
    seen = [(r.status.value, round(r.score.score, 3)) for r in got]
    assert got[2].status is MarkStatus.YES, seen
    assert got[5].status is not MarkStatus.YES, seen
    assert all(r.status is MarkStatus.NO for i, r in enumerate(got) if i not in (2, 5)), seen


def test_a_stamp_s_light_band_ending_on_an_empty_oval_is_still_a_line_by_the_fill_the_blank_shows() -> None:
    """A stamp letter's broad, light stroke (dithered on a bilevel scan) comes down from far
    above over the right half of an empty oval and ends on it. Measured against the blank's
    thick print the oval holds little ink: a thin line across it, for a person. Measured
    against the card's own thinner print it holds more, and read as a vote (vendor seed
    141414); the thin-line cap is judged by the fill the blank shows, so it stays for a person."""
    from PIL import Image

    blank, reg, page = _flat_ovals(0)
    img = np.full_like(blank, 255)
    for i in range(len(page.targets)):
        cx, cy = _centre(page, i)
        cv2.ellipse(img, (_px(cx), _px(cy)), (_px(BOX_W / 2 - 0.012), _px(BOX_H / 2 - 0.012)), 0, 0, 360, 120, _px(0.02), cv2.LINE_AA)
    cx, cy = _centre(page, 3)
    cv2.rectangle(img, (_px(cx), _px(cy - 0.3)), (_px(cx + 0.1), _px(cy + BOX_H / 2 - 0.01)), 150, -1)
    img = np.asarray(Image.fromarray(img).convert("1").convert("L"))
    got = _read(img, np.asarray(Image.fromarray(blank).convert("1").convert("L")), reg, page)
    seen = [(r.status.value, round(r.score.score, 3)) for r in got]
    assert got[3].status is MarkStatus.UNKNOWN, seen  # 0.937, a vote, without the cap
    assert all(r.status is MarkStatus.NO for i, r in enumerate(got) if i != 3), seen


def test_a_dot_just_inside_the_outline_does_not_leave_it_a_tail_out_past_it_does() -> None:
    """:func:`_leaves_outline`: a hesitation dot three pixels inside a thin oval's printed
    outline touched its fringe and lay away from the print, so it was taken for a stroke
    leaving the outline, for a person (seven dots on the sixth renderer's fresh seed 1616).
    Only ink outside the oval leaves it; a check's tail run out past the outline still does."""
    from scanpipe.imaging import marks
    from scanpipe.imaging.marks_blank import _leaves_outline

    geo = marks._geometry(0.24, 0.15)
    ch, cw = geo.crop
    rows, cols = np.nonzero(geo.inside)
    cy, cx = rows.mean(), cols.mean()
    yy, xx = np.mgrid[0:ch, 0:cw]
    rho = np.hypot((xx - cx) / 14.0, (yy - cy) / 9.0)
    printed = (rho >= 0.8) & (rho <= 1.0)  # the outline, widened as the blank's print is
    away = cv2.distanceTransform((~printed).astype(np.uint8), cv2.DIST_L2, 3)
    dot = np.where((away >= 3) & (away <= 6.5) & (rho < 0.8) & (abs(yy - cy) <= 2) & (xx < cx), 0.9, 0.0)
    tail = np.zeros((ch, cw))
    for t in range(14):  # from the outline's upper right, out and up
        tail[int(cy) - 6 - t, int(cx) + 11 + t: int(cx) + 14 + t] = 0.9
    assert dot.sum() >= 0.9 * 12
    ink = np.stack([dot, np.where(printed, 0.0, tail)])
    got = _leaves_outline(ink, np.stack([printed, printed]), geo)
    assert list(got) == [False, True]


def test_a_real_check_whose_long_arm_a_threshold_left_in_pieces_is_for_a_person_not_a_no_vote() -> None:
    """A column of the sixth renderer's fresh seed 1818 (``tests/fixtures/check_taken_away``:
    a blue ballpoint's checks on a 200-dpi scan thresholded at 121, ballot numbers printed in
    the ovals). In ``town-wi2`` the threshold left the check's long arm as a hairline broken
    where it crosses the number and the outline, and its short arm hardly at all: read as no
    vote (0.013), a definite error. That straight line through the oval and out past it is now
    for a person; the column's empty ovals stay no vote and its filled one a vote."""
    got = _real_column("check_taken_away")
    seen = {o: (r.status.value, round(r.score.score, 3)) for o, r in got.items()}
    assert got["town-wi2"].status is MarkStatus.UNKNOWN, seen
    assert got["tc2"].status is MarkStatus.YES, seen
    assert all(got[o].status is MarkStatus.NO for o in ("tc1", "tc3", "tc4", "tc5")), seen


def _real_column(name: str) -> dict:
    """A fixture cut from a rendered card and its blank (``tests/fixtures/NAME``: the crop of
    each, where it lies on its page, the card's registration and the contest's targets), read
    as the scorer reads the whole page: option -> classified mark."""
    import json
    from pathlib import Path

    from PIL import Image

    from scanpipe.types import LayoutPage, Registration, TargetDef

    here = Path(__file__).parent / "fixtures" / name
    meta = json.loads((here / "card.json").read_text())

    def page_of(file: str, size: list[int], offset: list[int]) -> np.ndarray:
        full = np.full((size[1], size[0]), 255, np.uint8)
        crop = np.asarray(Image.open(here / file).convert("L"))
        x, y = offset
        full[y: y + crop.shape[0], x: x + crop.shape[1]] = crop
        return full

    card_img = page_of("card.png", meta["card_size_px"], meta["card_offset_px"])
    blank = page_of("blank.png", meta["blank_size_px"], meta["blank_offset_px"])
    page = LayoutPage(1, tuple(meta["page_size_in"]), tuple(TargetDef(t["contest"], t["option"], tuple(t["box"])) for t in meta["targets"]))
    reg = Registration(tuple(meta["homography"]), "reference", False, float(meta["blank_dpi"]), 4, 0.0)
    thresholds = load_thresholds()
    return {s.option: classify_target(s, thresholds) for s in score_targets(card_img, reg, page, reference=blank,
                                                                            reference_dpi=float(meta["blank_dpi"]))}


def test_a_stamp_s_line_through_an_empty_arrow_between_rows_of_print_crosses_it_a_fill_beside_a_band_does_not(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Vendor profile, fresh seed 202020. ``band_through_arrows``: a SAMPLE stamp's frame, a
    thin gray line, runs through board-d's empty arrow and on across the column; the rows of
    print above and below (the other arrows, their names) cut it into short pieces, none
    reaching far nor two of them seen on one line through the box, and it was read as a vote
    (1.0). A straight line through the target that runs on 0.35 in past it over ink or print
    without meeting paper crosses it: for a person. ``fill_beside_band``: qb-yes half filled,
    a stamp's dithered band passing left of it beyond the column's rule; some line through the
    fill runs on over that print into the band, but the paper between the fill and the rule
    (seen on the finer window) shows the band does not pass through it: still a vote by the
    band rule. The stamp's letters lie round it, though, one of them within a pixel or two of
    the fill: seen from the whole page (:mod:`scanpipe.imaging.marks_across`) it is for a person."""
    from scanpipe.imaging import marks

    got = _real_column("band_through_arrows")
    seen = {o: (r.status.value, round(r.score.score, 3), round(r.score.damage_score, 2)) for o, r in got.items()}
    assert got["board-d"].status is MarkStatus.UNKNOWN and got["board-d"].score.damage_score >= 0.3, seen
    assert got["board-a"].status is MarkStatus.NO, seen  # empty, no stamp over it
    assert got["board-e"].status is MarkStatus.YES and got["board-w"].status is MarkStatus.YES, seen  # filled
    got = _real_column("fill_beside_band")
    assert got["qb-yes"].status is MarkStatus.UNKNOWN, got["qb-yes"]  # the stamp's letters round it
    monkeypatch.setattr(marks, "targets_crossed_by_ink_across", lambda *args: np.zeros(len(args[6].targets), bool))
    got = _real_column("fill_beside_band")
    seen = {o: (r.status.value, round(r.score.score, 3), round(r.score.damage_score, 2)) for o, r in got.items()}
    assert got["qb-yes"].status is MarkStatus.YES, seen  # the band rule alone: a vote


def test_a_lone_dot_s_width_is_measured_a_stroke_or_a_dot_in_a_light_fill_is_no_lone_dot() -> None:
    """``dot_in``: the extent of the one dark piece of added ink in and just round the box (a
    pen rested: classify.settle_hesitation_dots reads it as no vote beside the contest's votes).
    A check's stroke runs out of that zone; a dot inside a light fill has ink round it: neither
    is a lone dot. A full fill is one piece too, its width the oval's (never a hesitation)."""
    blank, _, _ = card(EMPTY)
    img, reg, page = card(["dot", "check", "full_fill", "none", "dot", "none", "none", "none"])
    cx, cy = _centre(page, 4)  # a light even fill round the dot of target 4
    cv2.ellipse(img, (_px(cx), _px(cy)), (_px(BOX_W / 2 - 0.02), _px(BOX_H / 2 - 0.02)), 0, 0, 360, 200, -1)
    cv2.circle(img, (_px(cx + 0.02), _px(cy + 0.01)), _px(0.016), 20, -1, cv2.LINE_AA)
    got = _read(img, blank, reg, page)
    dots = [round(r.score.dot_in, 3) for r in got]
    assert 0.02 <= dots[0] <= 0.05, dots  # a 0.032-in dot
    assert dots[1] == 0.0 and dots[4] == 0.0 and dots[3] == 0.0, dots
    assert dots[2] >= 0.1, dots


def test_a_loop_whose_end_runs_across_the_name_s_first_letter_is_still_a_loop() -> None:
    """The fifth renderer's fresh seed 2222 (``tests/fixtures/loop_over_the_name``): a loop
    drawn tight round "AGAINST Issue No. 2", its left end across the A. The ink over the print
    is not measured, so that side of the loop looked open (0.53) and the option was read as no
    vote. One side of a loop may count the print it runs over as the loop hidden there: for a
    person. The filled option stays a vote."""
    got = _real_column("loop_over_the_name")
    seen = {o: (r.status.value, round(r.score.score, 3), round(r.score.ring_score, 3)) for o, r in got.items()}
    assert got["is2-against"].status is MarkStatus.UNKNOWN and got["is2-against"].score.ring_score >= 0.7, seen
    assert got["is2-for"].status is MarkStatus.YES, seen




def test_a_stamp_past_a_box_s_corner_beside_an_empty_oval_does_not_cross_it_one_through_the_oval_does() -> None:
    """A box holds an oval with paper at its corners: a stamp's broad letter past the corner
    touches the box, not the target (the oval and its inside), and lies over nothing a voter
    marks there: no damage (what else it leaves in the box the scoring still weighs); through
    the oval it crosses the target, for a person as before."""
    blank, reg, page = card(EMPTY)
    img = blank.copy()
    x, y, _, _ = page.targets[2].box_in
    d = 0.02 / np.sqrt(2.0)  # its inner edge at the box's top-left corner, at right angles to the corner's diagonal
    cv2.line(img, (_px(x - 0.02 - d - 0.6), _px(y - 0.02 - d + 0.6)), (_px(x - 0.02 - d + 0.6), _px(y - 0.02 - d - 0.6)), 150,
             _px(0.04), cv2.LINE_AA)
    cx, cy = _centre(page, 5)  # and one through oval 5
    cv2.line(img, (_px(cx - 0.9), _px(cy + 0.3)), (_px(cx + 0.9), _px(cy - 0.3)), 150, _px(0.04), cv2.LINE_AA)
    scores = score_targets(img, reg, page, reference=blank, reference_dpi=DPI)
    assert scores[5].damage_score == 1.0 and scores[5].damage_cause is not None
    assert [s.damage_score for i, s in enumerate(scores) if i != 5] == [0.0] * 7, [(s.damage_score, s.damage_cause) for s in scores]
