"""A layout proposed from a blank page drawn in the test: targets found, names read (OCR),
assigned by name; our own fiducials and QR recorded; what happens without OCR."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
import zxingcpp

import scanpipe.layout_from_blank as lfb
from scanpipe.errors import ConfigError
from scanpipe.imaging.page_text import OcrUnavailable
from scanpipe.layout_assign import How
from scanpipe.layout_from_blank import BlankPage, layout_document, proposal_report, propose_layout
from scanpipe.types import Contest, Option

DPI = 200.0
FIDUCIALS = [(0.25, 0.25, 0.25, 0.25), (5.0, 0.25, 0.25, 0.25), (0.25, 4.5, 0.25, 0.25), (5.0, 4.5, 0.25, 0.25)]
QR_TEXT = "SPB1|E=e|S=S1|PG=1"
CONTESTS = (
    Contest("gov", "Governor", "candidate", 1, (Option("gov-a", "Ada Alvarez"), Option("gov-b", "Ben Brooks"),
                                                 Option("gov-w", "Write-in", write_in=True))),
    Contest("q2", "Question 2", "question", 1, (Option("q2-yes", "Yes"), Option("q2-no", "No"))),
    Contest("q1", "Question 1", "question", 1, (Option("q1-yes", "Yes"), Option("q1-no", "No"))),
)


def px(v: float) -> int:
    return int(round(v * DPI))


def write(img: np.ndarray, text: str, x: float, y: float, size: float = 0.8) -> None:
    cv2.putText(img, text, (px(x), px(y)), cv2.FONT_HERSHEY_SIMPLEX, size, 20, 2, cv2.LINE_AA)


def target(img: np.ndarray, x: float, y: float, kind: str = "oval") -> tuple[float, float, float, float]:
    """An empty target of ``kind`` whose label goes at x + 0.35 in; its expected box in inches."""
    if kind == "oval":
        cv2.ellipse(img, (px(x + 0.11), px(y + 0.07)), (px(0.11) - 2, px(0.07) - 2), 0, 0, 360, 25, 2, cv2.LINE_AA)
        return x, y, 0.22, 0.14
    if kind == "box":
        cv2.rectangle(img, (px(x + 0.03), px(y)), (px(x + 0.19) - 1, px(y + 0.16) - 1), 25, -1)
        cv2.rectangle(img, (px(x + 0.03) + 2, px(y) + 2), (px(x + 0.19) - 3, px(y + 0.16) - 3), 245, -1)
        return x + 0.03, y, 0.16, 0.16
    # a Premier/Diebold arrow: tail, gap (the target), shaft and head, pointing at the name
    yc = px(y + 0.07)
    cv2.rectangle(img, (px(x - 0.25), yc - 2), (px(x) - 1, yc + 2), 25, -1)
    cv2.rectangle(img, (px(x + 0.18), yc - 2), (px(x + 0.24) - 1, yc + 2), 25, -1)
    cv2.fillPoly(img, [np.array([[px(x + 0.24), px(y)], [px(x + 0.24), px(y + 0.14)], [px(x + 0.31), yc]], np.int32)], 25)
    return x, y + 0.03, 0.18, 0.08  # the gap, a band three bars high (at least 0.08 in)


def blank_page(*, fiducials: bool = True, qr: bool = True, kind: str = "oval") -> tuple[np.ndarray, dict[str, tuple[float, float, float, float]]]:
    """Governor (two names and a write-in line) in the left column, Question 1 and 2 in the right."""
    img = np.full((px(5.0), px(5.5)), 245, np.uint8)
    if fiducials:
        for x, y, w, h in FIDUCIALS:
            cv2.rectangle(img, (px(x), px(y)), (px(x + w) - 1, px(y + h) - 1), 10, -1)
    if qr:
        code = np.array(zxingcpp.create_barcode(QR_TEXT, zxingcpp.BarcodeFormat.QRCode).to_image(scale=5, add_quiet_zones=False))
        img[px(0.3) : px(0.3) + code.shape[0], px(3.6) : px(3.6) + code.shape[1]] = code
    where = {}
    write(img, "Governor", 0.6, 1.4, 1.0)
    write(img, "Vote for one", 0.6, 1.65, 0.6)
    for k, (oid, name) in enumerate((("gov-a", "Ada Alvarez"), ("gov-b", "Ben Brooks"))):
        where[oid] = target(img, 0.6, 1.9 + 0.4 * k, kind)
        write(img, name, 0.95, 2.02 + 0.4 * k)
    where["gov-w"] = target(img, 0.6, 2.7, kind)
    cv2.line(img, (px(0.95), px(2.83)), (px(2.6), px(2.83)), 20, 2)
    write(img, "write-in", 0.95, 2.98, 0.5)
    y = 1.4
    for q in ("1", "2"):
        write(img, f"Question {q}", 3.0, y, 1.0)
        for k, answer in enumerate(("Yes", "No")):
            where[f"q{q}-{answer.lower()}"] = target(img, 3.0, y + 0.3 + 0.4 * k, kind)
            write(img, answer, 3.35, y + 0.42 + 0.4 * k)
        y += 1.4
    return img, where


@pytest.mark.parametrize("kind", ["oval", "box", "arrow"])
def test_targets_are_assigned_by_the_names_read_beside_them(kind: str) -> None:
    img, where = blank_page(fiducials=False, qr=False, kind=kind)
    blank = BlankPage(1, img, DPI, reference="S1-p1.png")
    proposal, scans = propose_layout([blank], CONTESTS)
    assert proposal.names_read and proposal.unassigned_targets == () and proposal.missing_options == ()
    assert {a.option: a.how for a in proposal.assignments} == {**{o: How.NAME for o in where if o != "gov-w"}, "gov-w": How.WRITE_IN}
    layout = layout_document(proposal, scans, [blank], style="S1", contests=CONTESTS)
    (page,) = layout["pages"]
    assert page["reference"] == "S1-p1.png" and page["reference_dpi"] == 200.0 and page["size"] == [5.5, 5.0]
    assert "fiducials" not in page and "qr" not in page
    for t in page["targets"]:
        assert t["box"] == pytest.approx(where[t["option"]], abs=0.015) and t["shape"] == kind
    area = next(t["write_in_area"] for t in page["targets"] if t["option"] == "gov-w")
    assert area == pytest.approx([0.95, 2.83 - 0.3, 1.65, 0.3], abs=0.02)
    assert all("write_in_area" not in t for t in page["targets"] if t["option"] != "gov-w")
    report = "\n".join(proposal_report(proposal, scans, CONTESTS))
    assert f"page 1: 7 targets found (7 {kind}{'es' if kind == 'box' else 's'}), 1 write-in rule(s)" in report and "Question 2  Yes" in report


def test_a_rule_beside_a_named_candidate_gives_it_no_write_in_area() -> None:
    """Calhoun's PDFs print a running mate's line ("Not Yet Designated") under a governor's
    name, which the rule finder took for a write-in line: the layout then carried a
    ``write_in_area`` on a named option and the election refused to load. Only an option the
    election calls a write-in gets one."""
    img, _ = blank_page(fiducials=False, qr=False)
    blank = BlankPage(1, img, DPI, reference="S1-p1.png")
    proposal, scans = propose_layout([blank], CONTESTS)
    assert any(a.option == "gov-w" and a.target in scans[0].write_in_rules for a in proposal.assignments)
    named = tuple(Contest(c.id, c.title, c.kind, c.vote_for, tuple(Option(o.id, o.name) for o in c.options)) for c in CONTESTS)
    (page,) = layout_document(proposal, scans, [blank], style="S1", contests=named)["pages"]
    assert all("write_in_area" not in t for t in page["targets"])
    (page,) = layout_document(proposal, scans, [blank], style="S1", contests=CONTESTS)["pages"]
    assert [t["option"] for t in page["targets"] if "write_in_area" in t] == ["gov-w"]


def test_our_own_fiducials_and_qr_are_recorded_and_a_page_needs_them_or_a_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lfb, "read_page_text", _no_ocr)
    img, _ = blank_page()
    blank = BlankPage(1, img, DPI)
    proposal, scans = propose_layout([blank], CONTESTS)
    (page,) = layout_document(proposal, scans, [blank], style="S1", contests=CONTESTS)["pages"]
    assert np.allclose(page["fiducials"], FIDUCIALS, atol=0.01)
    side = int(zxingcpp.create_barcode(QR_TEXT, zxingcpp.BarcodeFormat.QRCode).to_image(scale=1, add_quiet_zones=False).shape[0]) * 5 / DPI
    assert np.allclose(page["qr"], [3.6, 0.3, side, side], atol=0.02)
    bare, _ = blank_page(fiducials=False)
    with pytest.raises(ConfigError, match=r"^page 1: no corner fiducials of ours were found; record the blank as the page's reference$"):
        layout_document(*propose_layout([BlankPage(1, bare, DPI)], CONTESTS), [BlankPage(1, bare, DPI)], style="S1", contests=CONTESTS)


def _no_ocr(*_args: object, **_kwargs: object) -> tuple[()]:
    raise OcrUnavailable("No module named 'rapidocr_onnxruntime'")


def test_without_ocr_the_targets_are_still_found_and_the_report_says_names_were_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lfb, "read_page_text", _no_ocr)
    monkeypatch.setattr("scanpipe.imaging.page_text.ocr_available", lambda: False)
    img, where = blank_page(fiducials=False, qr=False)
    proposal, scans = propose_layout([BlankPage(1, img, DPI, reference="p1.png")], CONTESTS)
    assert not proposal.names_read and len(scans[0].targets) == 7
    # reading order: the left column, then the right one top to bottom (Question 1 before Question 2)
    in_print_order = (CONTESTS[0], CONTESTS[2], CONTESTS[1])
    proposal, scans = propose_layout([BlankPage(1, img, DPI, reference="p1.png")], in_print_order)
    assert {a.option for a in proposal.assignments} == set(where) and {a.how for a in proposal.assignments} == {How.ORDER}
    for a in proposal.assignments:
        x, y = where[a.option][:2]
        assert abs(scans[0].targets[a.target].box_px[0] - px(x)) <= 3 and abs(scans[0].targets[a.target].box_px[1] - px(y)) <= 3
    report = "\n".join(proposal_report(proposal, scans, in_print_order))
    assert "names were not read (OCR is not installed: pip install --no-deps 'rapidocr-onnxruntime>=1.4'" in report


def test_white_titles_in_black_bands_are_read_like_the_rest() -> None:
    """The OCR reads white on black as it is (measured: inverting dark bands first changed nothing)."""
    img, where = blank_page(fiducials=False, qr=False)
    for y in (1.2, 2.6):  # the two Question titles, printed white on black (ES&S, Dominion)
        band = img[px(y) : px(y + 0.28), px(2.9) : px(5.3)]
        band[:] = 255 - band
    proposal, _ = propose_layout([BlankPage(1, img, DPI, reference="p1.png")], CONTESTS)
    assert {a.option: a.contest for a in proposal.assignments} == {o: o.split("-")[0] for o in where}


def test_a_write_in_area_stops_under_the_name_printed_above_its_rule() -> None:
    rule = (100, 200, 400, 3)  # pixels at 200 dpi: the rule's top at 1.0 in
    assert lfb.write_in_area(rule, DPI) == (0.497, 0.713, 2.0, 0.3)
    assert lfb.write_in_area(rule, DPI, [(120, 150, 200, 30)]) == (0.497, 0.902, 2.0, 0.11)  # a name's box ends at 0.9 in
    assert lfb.write_in_area(rule, DPI, [(120, 150, 200, 45)]) == (0.497, 0.912, 2.0, 0.1)  # never under 0.1 in
    assert lfb.write_in_area(rule, DPI, [(600, 150, 200, 30)]) == (0.497, 0.713, 2.0, 0.3)  # beside it, not above it


def test_targets_printed_alike_get_one_size_and_a_larger_one_keeps_its_own() -> None:
    from scanpipe.layout_from_blank import one_size

    boxes = [(0.698, 4.8, 0.195, 0.125), (0.698, 5.04, 0.195, 0.115), (0.7, 6.0, 0.2, 0.12), (3.0, 2.0, 0.3, 0.2), (1.0, 1.0, 0.4, 0.1)]
    shapes = ["oval", "oval", "oval", "oval", "box"]
    got = one_size(boxes, shapes)
    median_w, median_h = 0.1975, 0.1225  # of the four ovals
    for before, after in zip(boxes[:3], got[:3]):
        assert after[2:] == pytest.approx((median_w, median_h), abs=0.001)
        assert (after[0] + after[2] / 2, after[1] + after[3] / 2) == pytest.approx((before[0] + before[2] / 2, before[1] + before[3] / 2), abs=0.001)
    assert got[3] == boxes[3] and got[4] == boxes[4]  # an oval printed larger; the only box
