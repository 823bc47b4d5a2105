"""Calibration from a blank scan drawn in the test."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
import zxingcpp

from scanpipe.errors import ConfigError
from scanpipe.layout_from_blank import layout_from_blank

DPI = 150.0
FIDUCIALS = [(0.25, 0.25, 0.25, 0.25), (3.5, 0.25, 0.25, 0.25), (0.25, 4.5, 0.25, 0.25), (3.5, 4.5, 0.25, 0.25)]
# two columns of ovals, deliberately listed out of reading order
OVALS = [(2.3, 2.4), (0.7, 2.9), (0.7, 1.9), (2.3, 1.9), (0.7, 2.4), (2.35, 3.4)]
QR_TEXT = "SPB1|E=e|S=S1|PG=1"
QR_MODULES = int(zxingcpp.create_barcode(QR_TEXT, zxingcpp.BarcodeFormat.QRCode).to_image(scale=1, add_quiet_zones=False).shape[0])
CONTESTS = [("gov", ["gov-a", "gov-b", "gov-w"]), ("q1", ["q1-for", "q1-against", "q1-x"])]


def blank_page(*, fiducials: bool = True, ovals=OVALS) -> np.ndarray:
    img = np.full((int(5 * DPI), int(4 * DPI)), 240, np.uint8)
    if fiducials:
        for x, y, w, h in FIDUCIALS:
            cv2.rectangle(img, (int(x * DPI), int(y * DPI)), (int((x + w) * DPI) - 1, int((y + h) * DPI) - 1), 10, -1)
    for x, y in ovals:
        centre = (int((x + 0.11) * DPI), int((y + 0.07) * DPI))
        cv2.ellipse(img, centre, (int(0.11 * DPI), int(0.07 * DPI)), 0, 0, 360, 30, 2, cv2.LINE_AA)
        cv2.putText(img, "OPTION 0", (int((x + 0.3) * DPI), int((y + 0.12) * DPI)), cv2.FONT_HERSHEY_SIMPLEX, 0.5, 20, 1)
    qr = np.array(zxingcpp.create_barcode(QR_TEXT, zxingcpp.BarcodeFormat.QRCode).to_image(scale=5, add_quiet_zones=False))
    img[105 : 105 + qr.shape[0], 400 : 400 + qr.shape[1]] = qr
    return img


def test_ovals_are_assigned_in_reading_order() -> None:
    layout = layout_from_blank(blank_page(), DPI, style="S1", page=1, contests_in_reading_order=CONTESTS)
    (page,) = layout["pages"]
    assert layout["style"] == "S1" and page["page"] == 1 and page["size"] == [4.0, 5.0]
    assert [(t["contest"], t["option"]) for t in page["targets"]] == [(c, o) for c, opts in CONTESTS for o in opts]
    expected = [(0.7, 1.9), (0.7, 2.4), (0.7, 2.9), (2.3, 1.9), (2.3, 2.4), (2.35, 3.4)]
    assert np.allclose([t["box"][:2] for t in page["targets"]], expected, atol=0.02)
    for t in page["targets"]:
        assert t["box"][2] == pytest.approx(0.22, abs=0.03) and t["box"][3] == pytest.approx(0.14, abs=0.03)
    assert np.allclose(page["fiducials"], FIDUCIALS, atol=0.01)
    qr_side = QR_MODULES * 5 / DPI
    assert np.allclose(page["qr"], [400 / DPI, 105 / DPI, qr_side, qr_side], atol=0.02)
    assert "reference" not in page


def test_count_mismatch_names_found_and_expected() -> None:
    with pytest.raises(ConfigError, match=r"^style S1 page 1: found 5 ovals on the blank scan but the contests list 6 options$"):
        layout_from_blank(blank_page(ovals=OVALS[:5]), DPI, style="S1", page=1, contests_in_reading_order=CONTESTS)


def test_no_fiducials_needs_a_reference() -> None:
    with pytest.raises(ConfigError, match="no corner fiducials"):
        layout_from_blank(blank_page(fiducials=False), DPI, style="S1", page=1, contests_in_reading_order=CONTESTS)
    layout = layout_from_blank(
        blank_page(fiducials=False), DPI, style="S1", page=2, contests_in_reading_order=CONTESTS,
        size_in=(4.0, 5.0), reference_path="S1-p2.png",
    )
    (page,) = layout["pages"]
    assert "fiducials" not in page
    assert page["reference"] == "S1-p2.png" and page["reference_dpi"] == 150.0
    assert len(page["targets"]) == 6
