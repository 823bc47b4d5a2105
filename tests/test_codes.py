"""Codes: decoding on drawn pages, the barcode-like detector, and the contract's parsers."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
import zxingcpp

from scanpipe.imaging.codes import (
    barcode_like_boxes,
    decode_codes,
    find_codes_fast,
    looks_like_barcode,
    parse_card_code,
    parse_machine_record,
    parse_pairing_label,
)
from scanpipe.types import (
    CardCode,
    CardKind,
    CodeSymbology,
    MachineRecord,
    PairingLabel,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CARD_TEXT = "SPB1|E=demo-2026|S=S1|P=P01|PG=1"


def symbol(text: str, fmt: zxingcpp.BarcodeFormat, module_px: int, height_px: int = 0) -> np.ndarray:
    img = np.array(zxingcpp.create_barcode(text, fmt).to_image(scale=1, add_quiet_zones=True))
    out = cv2.resize(img, (img.shape[1] * module_px, max(height_px, img.shape[0] * module_px)), interpolation=cv2.INTER_NEAREST)
    return out


def paste(page: np.ndarray, patch: np.ndarray, x: int, y: int, angle: float = 0.0) -> None:
    h, w = patch.shape
    side = int(np.hypot(h, w)) + 4
    canvas, mask = np.full((side, side), 255, np.uint8), np.zeros((side, side), np.uint8)
    oy, ox = (side - h) // 2, (side - w) // 2
    canvas[oy : oy + h, ox : ox + w], mask[oy : oy + h, ox : ox + w] = patch, 1
    turn = cv2.getRotationMatrix2D((side / 2, side / 2), angle, 1.0)
    canvas = cv2.warpAffine(canvas, turn, (side, side), borderValue=255)
    mask = cv2.warpAffine(mask, turn, (side, side)) > 0
    page[y : y + side, x : x + side][mask] = canvas[mask]


def text_page(width: int, height: int, seed: int = 1) -> np.ndarray:
    """Printed-looking page: text lines, oval outlines, rules."""
    rng = np.random.default_rng(seed)
    page = np.full((height, width), 240, np.uint8)
    scale = width / 1275
    for row in range(int(height / (40 * scale))):
        y = int((row + 1) * 40 * scale)
        cv2.putText(page, "Candidate For Office %03d lll|||" % row, (int(90 * scale), y), cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale, 25, max(1, int(scale)))
        cv2.ellipse(page, (int(50 * scale), y - int(6 * scale)), (int(16 * scale), int(10 * scale)), 0, 0, 360, 30, max(1, int(2 * scale)))
        if rng.random() < 0.3:
            cv2.line(page, (int(40 * scale), y + int(8 * scale)), (width - int(40 * scale), y + int(8 * scale)), 50, 1)
    return page


def test_decode_codes_gives_full_image_corners_for_a_region() -> None:
    page = np.full((400, 500), 245, np.uint8)
    qr = symbol(CARD_TEXT, zxingcpp.BarcodeFormat.QRCode, 4)
    page[200 : 200 + qr.shape[0], 300 : 300 + qr.shape[1]] = qr
    (code,) = decode_codes(page, region_px=(250, 150, 250, 250))
    assert (code.symbology, code.text) == (CodeSymbology.QR, CARD_TEXT)
    quiet = 4 * 4  # zxing's quiet zone is 4 modules wide (rounded: within a module)
    xs, ys = [p[0] for p in code.corners_px], [p[1] for p in code.corners_px]
    assert min(xs) == pytest.approx(300 + quiet, abs=4) and min(ys) == pytest.approx(200 + quiet, abs=4)
    assert decode_codes(page, formats=frozenset({CodeSymbology.CODE128})) == ()


@pytest.mark.parametrize("angle", [0.0, 90.0, 180.0, 33.0])
def test_find_codes_fast_reads_a_label_in_any_orientation(angle: float) -> None:
    page = text_page(1275, 1650)
    paste(page, symbol(CARD_TEXT, zxingcpp.BarcodeFormat.QRCode, 5), 1000, 100)
    paste(page, symbol("DUP-A0042-R1", zxingcpp.BarcodeFormat.Code128, 2, 60), 400, 900, angle)
    found = {(c.symbology, c.text) for c in find_codes_fast(page)}
    assert found == {(CodeSymbology.QR, CARD_TEXT), (CodeSymbology.CODE128, "DUP-A0042-R1")}


def test_find_codes_fast_on_a_300_dpi_page_uses_half_size_and_maps_back() -> None:
    page = np.full((3300, 2550), 240, np.uint8)
    qr = symbol(CARD_TEXT, zxingcpp.BarcodeFormat.QRCode, 12)
    page[240 : 240 + qr.shape[0], 1980 : 1980 + qr.shape[1]] = qr
    (code,) = find_codes_fast(page)
    cx, cy = np.mean(code.corners_px, axis=0)
    assert cx == pytest.approx(1980 + qr.shape[1] / 2, abs=6) and cy == pytest.approx(240 + qr.shape[0] / 2, abs=6)


def test_looks_like_barcode_sees_an_undecodable_label_but_not_text() -> None:
    page = text_page(1275, 1650)
    assert not looks_like_barcode(page)
    label = symbol("ORG-B77", zxingcpp.BarcodeFormat.Code128, 2, 60)
    label[:, label.shape[1] * 2 // 3 :] = 255  # the stop pattern and a third of the bars torn off
    paste(page, label, 500, 700, 12.0)
    assert find_codes_fast(page) == ()
    assert looks_like_barcode(page)
    assert looks_like_barcode(page, (450, 650, 500, 300))
    assert not looks_like_barcode(page, (0, 0, 1275, 600))


# --------------------------------------------------------------------------------------
# label finding: any angle, any dpi, bilevel scans, dense text; nothing on plain ballots


def bilevel(page: np.ndarray, dpi: int) -> np.ndarray:
    """A scanner's bilevel mode: a little optical blur, then error-diffusion dithering."""
    from PIL import Image

    blurred = cv2.GaussianBlur(page, (0, 0), 0.6 * dpi / 200)
    return np.array(Image.fromarray(blurred).convert("1").convert("L"))


def label_page(dpi: int, angle: float, text: str, *, seed: int = 1) -> np.ndarray:
    """A page of dense text lines with a 13-mil Code 128 sticker pasted over the text."""
    page = text_page(int(8.5 * dpi), int(11 * dpi), seed=seed)
    module = max(2, round(0.013 * dpi))
    paste(page, symbol(text, zxingcpp.BarcodeFormat.Code128, module, int(0.4 * dpi)), int(2.2 * dpi), int(4.0 * dpi), angle)
    return page


@pytest.mark.parametrize(("dpi", "angle", "bilevel_scan"), [
    (150, 0.0, False), (150, 90.0, False), (150, 200.0, True), (150, 315.0, False),
    (200, 17.0, False), (200, 90.0, True), (200, 133.0, False), (200, 270.0, True), (200, 352.0, False),
    (300, 45.0, False), (300, 180.0, True), (300, 241.0, False), (300, 90.0, False),
])
def test_find_labels_reads_a_sticker_at_any_angle_among_dense_text(dpi: int, angle: float, bilevel_scan: bool) -> None:
    from scanpipe.imaging.codes import find_labels

    page = label_page(dpi, angle, "ORG-Q7731-R2", seed=dpi + int(angle))
    if bilevel_scan:
        page = bilevel(page, dpi)
    (code,) = find_labels(page, dpi=dpi)
    assert (code.symbology, code.text) == (CodeSymbology.CODE128, "ORG-Q7731-R2")
    cx, cy = np.mean(code.corners_px, axis=0)  # corners come back in page pixels, on the sticker
    assert abs(cx - 2.2 * dpi - 1.1 * dpi) < 1.0 * dpi and abs(cy - 4.0 * dpi - 1.1 * dpi) < 1.0 * dpi


def test_a_torn_sideways_sticker_in_text_is_seen_but_not_read() -> None:
    from scanpipe.imaging.codes import find_labels

    dpi = 200
    page = text_page(int(8.5 * dpi), int(11 * dpi), seed=5)
    label = symbol("DUP-T55", zxingcpp.BarcodeFormat.Code128, 3, int(0.35 * dpi))
    label[:, label.shape[1] * 3 // 5 :] = 255
    paste(page, label, 700, 900, 90.0)
    assert find_labels(page, dpi=dpi) == ()
    assert looks_like_barcode(page)


def demo_cards(dpi: int) -> list[np.ndarray]:
    """Blank printed cards of every demo style (ours with fiducials and QR; vendor's with
    timing marks), as gray pages."""
    import tempfile
    from pathlib import Path

    from scanpipe.election import load_election
    from scanpipe.synth.definition import write_demo_election
    from scanpipe.synth.render import render_card

    with tempfile.TemporaryDirectory() as tmp:
        election = load_election(write_demo_election(Path(tmp)))
    pages = []
    for style in election.ballot_styles:
        for lp in style.layout.pages:
            rgb = render_card(election, style.id, lp.page, style.precincts[0], dpi)
            pages.append(cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))
    return pages


@pytest.mark.parametrize("dpi", [150, 300])
def test_no_label_is_seen_on_plain_ballots(dpi: int) -> None:
    from scanpipe.imaging.codes import find_labels, label_candidates

    for page in demo_cards(dpi):
        for scan in (page, bilevel(page, dpi)):
            assert find_labels(scan, dpi=dpi) == ()
            assert not looks_like_barcode(scan)
            assert not looks_like_barcode(scan, dpi=dpi)  # the full check, not the cached one
            assert len(label_candidates(scan, dpi)) <= 1  # at most a header word's stems


def test_looks_like_barcode_after_find_labels_reuses_the_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    from scanpipe.imaging import codes

    page = label_page(150, 30.0, "DUP-X1")
    assert [c.text for c in codes.find_labels(page, dpi=150)] == ["DUP-X1"]

    def no_second_scan(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the page was scanned again")

    monkeypatch.setattr(codes, "label_candidates", no_second_scan)
    assert looks_like_barcode(page)
    blank = text_page(1275, 1650)
    with pytest.raises(AssertionError, match="scanned again"):
        looks_like_barcode(blank)  # another image: a real scan


# --------------------------------------------------------------------------------------
# parsers


def test_card_code_parses_and_ignores_unknown_keys() -> None:
    assert parse_card_code(CARD_TEXT) == CardCode("demo-2026", "S1", "P01", 1)
    assert parse_card_code("SPB1|E=e|S=S2|P=P9|PG=2|X=new") == CardCode("e", "S2", "P9", 2)
    assert parse_card_code("SPB1|S=S2|E=e") == CardCode("e", "S2", None, 1)


@pytest.mark.parametrize(
    "text",
    ["", "SPB2|E=e|S=S1", "SPV1|E=e|S=S1|V=", "SPB1|E=e", "SPB1|S=S1", "SPB1|E=e|S=S1|PG=0", "SPB1|E=e|S=S1|PG=x",
     "SPB1|E=e|S=S 1", "SPB1|E=e|S=S1|E=f", "SPB1|E=e|S=S1|junk", "spb1|E=e|S=S1", "SPB1|E=é|S=S1"],
)
def test_card_code_rejects(text: str) -> None:
    assert parse_card_code(text) is None


def test_machine_record_parses_selections_in_order() -> None:
    record = parse_machine_record("SPV1|E=e|S=S1|P=P01|V=gov:gov-a;council:c1,c2;q1:")
    assert record == MachineRecord("e", "S1", "P01", (("gov", ("gov-a",)), ("council", ("c1", "c2")), ("q1", ())))
    assert parse_machine_record("SPV1|E=e|S=S1|V=|Z=1") == MachineRecord("e", "S1", None, ())


@pytest.mark.parametrize(
    "text",
    ["SPV1|E=e|S=S1", "SPV1|E=e|S=S1|V=gov", "SPV1|E=e|S=S1|V=gov:a;gov:b", "SPV1|E=e|S=S1|V=gov:a,a",
     "SPV1|E=e|S=S1|V=gov:a,,b", "SPV1|E=e|S=S1|V=:a", "SPB1|E=e|S=S1|V=gov:a", "SPV1|S=S1|V=gov:a"],
)
def test_machine_record_rejects(text: str) -> None:
    assert parse_machine_record(text) is None


def test_pairing_labels() -> None:
    assert parse_pairing_label("DUP-A0042") == PairingLabel(CardKind.DUPLICATE, "A0042", "A0042", None)
    assert parse_pairing_label("ORG-A0042-R12") == PairingLabel(CardKind.ORIGINAL, "A0042-R12", "A0042", 12)
    assert parse_pairing_label("DUP-" + "Z" * 16 + "-R999") is not None


@pytest.mark.parametrize(
    "text",
    ["DUP-", "DUP-a0042", "DUP-A0042-R", "DUP-A0042-R1000", "DUP-" + "Z" * 17, "XXX-A1", "DUP_A1", " DUP-A1",
     "DUP-A1\n", "DUP-A1-R1-R2", "dup-A1", "DUP-A-1"],
)
def test_pairing_label_rejects(text: str) -> None:
    assert parse_pairing_label(text) is None


def test_find_card_code_reads_the_qr_in_its_layout_box_upright_and_turned() -> None:
    from scanpipe.imaging.codes import find_card_code

    dpi = 150
    page = text_page(1275, 1650)
    qr = symbol(CARD_TEXT, zxingcpp.BarcodeFormat.QRCode, 4)
    page[120 : 120 + qr.shape[0], 1000 : 1000 + qr.shape[1]] = qr  # box at ~(6.67, 0.8) in
    box = (1000 / dpi, 120 / dpi, qr.shape[1] / dpi, qr.shape[0] / dpi)
    for image in (page, cv2.rotate(page, cv2.ROTATE_180)):
        code = find_card_code(image, [box], (8.5, 11.0), dpi)
        assert code is not None and code.text == CARD_TEXT
    assert find_card_code(text_page(1275, 1650), [box], (8.5, 11.0), dpi) is None


def test_a_speckled_scans_text_is_no_sticker_but_a_sticker_on_it_is() -> None:
    """A bilevel scan of coloured stock thresholded near its paper speckles every inch; under
    the specks, bold printed text alternated like bars (a card of the fourth renderer, seed 41,
    read as ``label_unreadable`` and held from the count). Its specks taken out, it is text; a
    damaged sticker on the same speckled page stays barcode-like."""
    from scanpipe.imaging.codes import speckle_made

    crop = cv2.imread(str(FIXTURES / "scans" / "speckled_text_300dpi.png"), cv2.IMREAD_GRAYSCALE)
    page = np.full((4178, 2659), 255, np.uint8)  # the card's size; the crop where the card had it
    page[2794: 2794 + crop.shape[0], 1514: 1514 + crop.shape[1]] = crop
    assert looks_like_barcode(page, dpi=300)  # the fixture still makes the false patch
    (box,) = barcode_like_boxes(page, dpi=300)
    assert speckle_made(page, box, 300)
    assert not speckle_made(cv2.medianBlur(page, 3), box, 300)  # a patch without specks is never dropped
    label = symbol("DUP-T55", zxingcpp.BarcodeFormat.Code128, 4, int(0.35 * 300))
    label[:, label.shape[1] * 3 // 5:] = 255  # torn: it does not decode
    sticker = page.copy()
    paste(sticker, label, 600, 800)
    specks = np.random.default_rng(3).random(sticker.shape) < 0.03
    sticker[specks] = 0  # the page's specks over the sticker too
    boxes = [b for b in barcode_like_boxes(sticker, dpi=300) if b[1] < 1500]
    assert boxes and not any(speckle_made(sticker, b, 300) for b in boxes)
