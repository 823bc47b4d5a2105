"""Targets found on tiny blank pages drawn in the test: ovals, boxes and arrows of several
vendors' shapes among things that are not targets (text, timing marks, a QR code, rules)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
import zxingcpp

from scanpipe.imaging.targets import FoundTarget, TargetShape, find_targets, find_write_in_lines

DPI = 200.0


def px(inches: float) -> int:
    return int(round(inches * DPI))


def page(w_in: float = 4.0, h_in: float = 3.0) -> np.ndarray:
    return np.full((px(h_in), px(w_in)), 250, np.uint8)


def ellipse(img: np.ndarray, x: float, y: float, w: float, h: float, stroke: int = 2) -> tuple[int, int, int, int]:
    """An elliptic oval whose outline's outer edge is the box (x, y, w, h) in inches."""
    cx, cy = px(x + w / 2), px(y + h / 2)
    a, b = px(w / 2) - stroke // 2 - 1, px(h / 2) - stroke // 2 - 1
    cv2.ellipse(img, (cx, cy), (a, b), 0, 0, 360, 25, stroke, cv2.LINE_AA)
    return px(x), px(y), px(w), px(h)


def stadium(img: np.ndarray, x: float, y: float, w: float, h: float, stroke: int = 3) -> tuple[int, int, int, int]:
    """A rounded oval (Calhoun/Cedar style): a filled stadium with a paper stadium inside."""
    def filled(x0: int, y0: int, x1: int, y1: int, colour: int) -> None:
        r = (y1 - y0) // 2
        cv2.rectangle(img, (x0 + r, y0), (x1 - r, y1), colour, -1)
        cv2.circle(img, (x0 + r, y0 + r), r, colour, -1)
        cv2.circle(img, (x1 - r, y0 + r), r, colour, -1)

    x0, y0, x1, y1 = px(x), px(y), px(x + w) - 1, px(y + h) - 1
    filled(x0, y0, x1, y1, 20)
    filled(x0 + stroke, y0 + stroke, x1 - stroke, y1 - stroke, 250)
    return x0, y0, x1 - x0 + 1, y1 - y0 + 1


def box(img: np.ndarray, x: float, y: float, w: float, h: float, stroke: int = 2) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = px(x), px(y), px(x + w) - 1, px(y + h) - 1
    cv2.rectangle(img, (x0, y0), (x1, y1), 20, -1)
    cv2.rectangle(img, (x0 + stroke, y0 + stroke), (x1 - stroke, y1 - stroke), 250, -1)
    return x0, y0, x1 - x0 + 1, y1 - y0 + 1


def arrow(img: np.ndarray, x: float, y: float, *, tail: float, gap: float, shaft: float, head: float,
          head_h: float, bar: int, pointing: str = "right", feathers: bool = False) -> tuple[int, int]:
    """A broken arrow starting at x (inches), centred on y; returns the gap's (first, last) column."""
    yc = px(y)
    top, bottom = yc - bar // 2, yc - bar // 2 + bar - 1
    parts = [px(x), px(x + tail), px(x + tail + gap), px(x + tail + gap + shaft)]
    if pointing == "left":  # mirror: the head on the left, the tail on the right
        total = tail + gap + shaft + head
        parts = [px(x + head), px(x + head + shaft), px(x + head + shaft + gap), px(x + total)]
        cv2.rectangle(img, (parts[0], top), (parts[1] - 1, bottom), 20, -1)  # shaft of the head
        tip = np.array([[px(x), yc], [parts[0], yc - px(head_h / 2)], [parts[0], yc + px(head_h / 2)]], np.int32)
        cv2.fillPoly(img, [tip], 20)
        cv2.rectangle(img, (parts[2], top), (parts[3] - 1, bottom), 20, -1)  # the tail
        if feathers:
            cv2.line(img, (parts[3] - 1, yc), (parts[3] + px(0.06), yc - px(0.05)), 20, 3)
            cv2.line(img, (parts[3] - 1, yc), (parts[3] + px(0.06), yc + px(0.05)), 20, 3)
        return parts[1], parts[2] - 1
    cv2.rectangle(img, (parts[0], top), (parts[1] - 1, bottom), 20, -1)  # the tail
    cv2.rectangle(img, (parts[2], top), (parts[3] - 1, bottom), 20, -1)  # shaft of the head
    tip = np.array([[parts[3], yc - px(head_h / 2)], [parts[3], yc + px(head_h / 2)], [px(x + tail + gap + shaft + head), yc]], np.int32)
    cv2.fillPoly(img, [tip], 20)
    return parts[1], parts[2] - 1


def distractors(img: np.ndarray) -> None:
    """Things on every ballot that are not targets."""
    cv2.putText(img, "BOB DOO 0 80 AB", (px(0.2), px(2.85)), cv2.FONT_HERSHEY_SIMPLEX, 1.6, 20, 5)  # bold glyph holes
    cv2.putText(img, "Vote for one: Ada Bo Odom 2026", (px(0.2), px(2.45)), cv2.FONT_HERSHEY_SIMPLEX, 0.7, 20, 2)
    cv2.putText(img, "B", (px(3.2), px(2.3)), cv2.FONT_HERSHEY_SIMPLEX, 2.0, 20, 3, cv2.LINE_AA)  # a header's thin B: two bowls
    for k in range(12):  # a row of timing marks
        cv2.rectangle(img, (px(0.1 + 0.32 * k), px(0.05)), (px(0.3 + 0.32 * k), px(0.11)), 15, -1)
    for k in range(8):  # a dashed rule
        cv2.rectangle(img, (px(0.2 + 0.25 * k), px(2.1)), (px(0.35 + 0.25 * k), px(2.12)), 15, -1)
    cv2.ellipse(img, (px(3.5), px(2.6)), (px(0.1), px(0.06)), 0, 0, 360, 20, -1)  # "fill the oval like this"


def assert_found(found: tuple[FoundTarget, ...], shape: TargetShape, expected: tuple[int, int, int, int], tol: int = 3) -> None:
    near = [t for t in found if t.shape == shape and max(abs(a - b) for a, b in zip(t.box_px, expected)) <= tol]
    assert len(near) == 1, (shape, expected, found)


def with_qr_and_box(img: np.ndarray) -> None:
    cv2.rectangle(img, (px(0.15), px(0.3)), (px(3.8), px(1.9)), 20, 2)  # a contest box around the targets
    qr = np.array(zxingcpp.create_barcode("SPB1|E=e|S=S1|PG=1", zxingcpp.BarcodeFormat.QRCode).to_image(scale=4, add_quiet_zones=False))
    img[px(0.8) : px(0.8) + qr.shape[0], px(3.0) : px(3.0) + qr.shape[1]] = qr


@pytest.mark.parametrize("draw", [
    [(TargetShape.OVAL, lambda img: ellipse(img, 0.3, 0.4, 0.22, 0.13)),  # ES&S / Dominion style ellipse
     (TargetShape.OVAL, lambda img: stadium(img, 0.9, 0.4, 0.22, 0.13)),  # rounded oval (Calhoun, Cedar)
     (TargetShape.OVAL, lambda img: ellipse(img, 1.5, 0.4, 0.22, 0.13, stroke=1))],  # hairline, anti-aliased (a PDF)
    [(TargetShape.BOX, lambda img: box(img, 0.4, 0.5, 0.16, 0.16)),  # a square check box
     (TargetShape.BOX, lambda img: box(img, 1.2, 0.5, 0.34, 0.17, stroke=3))],  # a wide rectangle
], ids=["ovals", "boxes"])
def test_targets_of_several_vendors_shapes_are_found_and_nothing_else(draw) -> None:  # noqa: ANN001
    img = page()
    distractors(img)
    drawn = [(shape, paint(img)) for shape, paint in draw]
    with_qr_and_box(img)
    found = find_targets(img, DPI)
    for shape, expected in drawn:
        assert_found(found, shape, expected)
    assert len(found) == len(drawn), found


def test_a_lone_candidate_of_another_size_and_kind_is_dropped() -> None:
    img = page()
    ovals = [ellipse(img, 0.3 + 0.5 * k, 0.4, 0.22, 0.13) for k in range(3)]
    box(img, 0.3, 1.2, 0.11, 0.12)  # box-like, half the width of the page's ovals (a glyph's hole at a small size)
    found = find_targets(img, DPI)
    for expected in ovals:
        assert_found(found, TargetShape.OVAL, expected)
    assert len(found) == 3


def test_broken_arrows_are_found_pointing_either_way_and_the_gap_is_the_target() -> None:
    img = page()
    distractors(img)
    right = arrow(img, 0.3, 0.6, tail=0.25, gap=0.22, shaft=0.15, head=0.1, head_h=0.14, bar=6)  # Premier / Diebold
    left = arrow(img, 2.0, 1.2, tail=0.3, gap=0.3, shaft=0.1, head=0.12, head_h=0.16, bar=8, pointing="left", feathers=True)  # Sequoia
    found = find_targets(img, DPI)
    arrows = sorted((t for t in found if t.shape is TargetShape.ARROW), key=lambda t: t.box_px[1])
    assert [t.shape for t in found] == [TargetShape.ARROW, TargetShape.ARROW]
    for target, (first, last), (y, head_h, bar) in zip(arrows, (right, left), ((0.6, 0.14, 6), (1.2, 0.16, 8))):
        x, top, w, h = target.box_px
        assert (x, x + w - 1) == (first, last)
        assert abs(top + h / 2 - px(y)) <= 1.5 and h == min(px(head_h), max(3 * bar, px(0.08)))


def test_an_oval_printed_over_a_grey_sample_stamp_is_found() -> None:
    img = page()
    expected = [ellipse(img, 0.5 + 0.6 * k, 1.0, 0.2, 0.12, stroke=1) for k in range(4)]
    band = np.zeros_like(img, bool)
    cv2.line(band.view(np.uint8), (px(0.3), px(2.0)), (px(2.6), px(0.2)), 1, px(0.3))  # the stamp's stroke
    img[band] = (img[band].astype(np.float32) * 140 / 250).astype(np.uint8)  # grey ink multiplies what is under it
    found = find_targets(img, DPI)
    for e in expected:
        assert_found(found, TargetShape.OVAL, e)
    assert len(found) == 4


def test_an_outline_a_light_scan_broke_by_one_pixel_is_still_found() -> None:
    img = page()
    expected = stadium(img, 1.0, 1.0, 0.2, 0.12, stroke=2)
    img[px(1.0) : px(1.0) + 2, px(1.1)] = 250  # a one-pixel break in the top of the outline
    assert_found(find_targets(img, DPI), TargetShape.OVAL, expected)


def test_sizes_far_from_the_pages_own_target_size_are_dropped() -> None:
    img = page()
    for k in range(4):
        stadium(img, 0.3 + 0.5 * k, 0.5, 0.2, 0.1)
    stadium(img, 0.3, 1.5, 0.45, 0.28, stroke=4)  # the shape of a target, twice the size of the page's targets
    found = find_targets(img, DPI)
    assert len(found) == 4 and all(t.box_px[1] == px(0.5) for t in found)


def test_write_in_rules_go_to_the_target_beside_them() -> None:
    img = page(4.0, 2.0)
    plain = ellipse(img, 0.4, 0.3, 0.22, 0.14)
    write_in = ellipse(img, 0.4, 0.7, 0.22, 0.14)
    cv2.line(img, (px(0.75), px(0.82)), (px(3.2), px(0.82)), 20, 2)  # the write-in rule, at the oval's lower half
    cv2.line(img, (px(0.2), px(1.2)), (px(3.8), px(1.2)), 20, 2)  # the contest box's border: starts left of the oval
    last = ellipse(img, 0.4, 1.0, 0.22, 0.14)
    found = find_targets(img, DPI)
    by_y = sorted(range(len(found)), key=lambda i: found[i].box_px[1])
    assert [found[i].box_px[1] for i in by_y] == pytest.approx([plain[1], write_in[1], last[1]], abs=3)
    rules = find_write_in_lines(img, DPI, found)
    assert list(rules) == [by_y[1]]
    x, y, w, h = rules[by_y[1]]
    assert abs(x - px(0.75)) <= 4 and abs(x + w - px(3.2)) <= 4 and abs(y - px(0.82)) <= 2
