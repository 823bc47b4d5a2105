"""The codes of a vendor election's pages: its pages are told by their blanks, so the whole
page is searched for a QR symbol (the costliest code search) only where a quick look at half
size shows one (a machine-printed record, read by its code at once) or the page is not read as
a ballot (a record whose code the quick look missed is still read by it) (issue 8, speed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from scanpipe import interpret
from scanpipe.classify import load_thresholds
from scanpipe.imaging import codes
from scanpipe.interpret import InterpretContext, interpret_file, load_references
from scanpipe.synth.bmd import render_bmd_card
from scanpipe.synth.vendor import STYLES
from scanpipe.synth.vendor_render import render_vendor_card
from scanpipe.types import CardHints, CardKind, CodeSymbology, Election, MachinePrintedCard, ReadCard, Reason, UnreadableCard

STYLE = "A-17"


@pytest.fixture(scope="module")
def context(vendor_election: Election) -> InterpretContext:
    return InterpretContext(vendor_election, load_thresholds(), load_references(vendor_election, cache=False))


@pytest.fixture
def qr_searches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the whole-page QR searches."""
    calls: list[int] = []
    search: Callable[[np.ndarray], tuple[codes.DecodedCode, ...]] = codes._fast_qr

    def counted(gray: np.ndarray) -> tuple[codes.DecodedCode, ...]:
        calls.append(1)
        return search(gray)

    monkeypatch.setattr(codes, "_fast_qr", counted)
    return calls


def _written(rgb: np.ndarray, path: Path) -> str:
    cv2.imwrite(str(path), cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))
    return str(path)


def test_a_vendor_ballot_read_by_its_blank_needs_no_whole_page_qr_search(context: InterpretContext, vendor_election: Election,
                                                                         qr_searches: list[int], tmp_path: Path) -> None:
    path = _written(render_vendor_card(vendor_election, STYLE, 1, STYLES[STYLE].precinct, 200), tmp_path / "card.png")
    (card,) = interpret_file(path, context, CardHints(), "t")
    assert isinstance(card.interpretation, ReadCard) and card.interpretation.style == STYLE
    assert qr_searches == []


def test_a_batch_stating_its_style_still_searches_the_whole_page(context: InterpretContext, vendor_election: Election,
                                                                 qr_searches: list[int], tmp_path: Path) -> None:
    path = _written(render_vendor_card(vendor_election, STYLE, 1, STYLES[STYLE].precinct, 200), tmp_path / "card.png")
    (card,) = interpret_file(path, context, CardHints(style=STYLE), "t")
    assert isinstance(card.interpretation, ReadCard) and card.interpretation.style == STYLE
    assert qr_searches == [1]


@pytest.mark.parametrize("quick_look", [True, False])
def test_a_machine_printed_record_in_a_vendor_election_is_still_read_by_its_code(
        quick_look: bool, context: InterpretContext, vendor_election: Election, qr_searches: list[int], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    contest = vendor_election.contest(vendor_election.style(STYLE).contests[0])
    selections = {contest.id: [contest.options[0].id]}
    path = _written(render_bmd_card(vendor_election, STYLE, STYLES[STYLE].precinct, selections, 200), tmp_path / "record.png")
    assert codes.shows_qr(cv2.imread(path, cv2.IMREAD_GRAYSCALE))
    if not quick_look:  # a code the quick look misses: found once no blank reads the page
        monkeypatch.setattr(interpret, "shows_qr", lambda gray: False)
    styles_tried: list[int] = []
    find_style = interpret._find_style
    monkeypatch.setattr(interpret, "_find_style", lambda *a, **k: styles_tried.append(1) or find_style(*a, **k))
    (card,) = interpret_file(path, context, CardHints(), "t")
    assert isinstance(card.interpretation, MachinePrintedCard), card.interpretation
    assert card.interpretation.record.style == STYLE
    assert any(c.symbology is CodeSymbology.QR for c in card.codes)
    assert qr_searches == ([1] if quick_look else [1, 1])  # missed by the quick look: found by the whole search, then read with it
    assert styles_tried == ([] if quick_look else [1])  # seen at once: no search for its style


def test_the_quick_look_finds_no_qr_on_vendor_ballots(vendor_election: Election) -> None:
    for style_id in ("A-17", "E-D-11", "H-13", "D-15"):
        gray = cv2.cvtColor(render_vendor_card(vendor_election, style_id, 1, STYLES[style_id].precinct, 200), cv2.COLOR_RGB2GRAY)
        assert not codes.shows_qr(gray)


# ---------------------------------------------------------------------------------------
# The vendor's own barcodes (a Hart ballot's Interleaved 2 of 5, a Code 128 sheet code) are
# printed on the blank too: no pairing label, and no reason to hold every card for a person

I2OF5 = {"0": "NNWWN", "1": "WNNNW", "2": "NWNNW", "3": "WWNNN", "4": "NNWNW", "5": "WNWNN", "6": "NWWNN", "7": "NNNWW",
         "8": "WNNWN", "9": "NWNWN"}
HART = "H-13"


def _draw_i2of5(gray: np.ndarray, x_in: float, y_in: float, digits: str, *, vertical: bool, dpi: float = 200.0) -> None:
    """Interleaved 2 of 5 (narrow 0.015 in, wide three times), bars 0.3 in long."""
    bars = "NNNN" + "".join(a + b for x, y in zip(digits[::2], digits[1::2], strict=True) for a, b in zip(I2OF5[x], I2OF5[y], strict=True)) + "WNN"
    at, x, y = 0, int(x_in * dpi), int(y_in * dpi)
    for k, width in enumerate(3 * (3 if c == "W" else 1) for c in bars):
        if k % 2 == 0:
            if vertical:
                gray[y + at: y + at + width, x: x + int(0.3 * dpi)] = 0
            else:
                gray[y: y + int(0.3 * dpi), x + at: x + at + width] = 0
        at += width


def _draw_code128(gray: np.ndarray, x_in: float, y_in: float, text: str, dpi: float = 200.0) -> None:
    import zxingcpp

    if hasattr(zxingcpp, "create_barcode"):  # zxing-cpp 2.3 and later
        symbol = np.asarray(zxingcpp.write_barcode_to_image(zxingcpp.create_barcode(text, zxingcpp.BarcodeFormat.Code128), add_quiet_zones=False))
    else:
        symbol = np.asarray(zxingcpp.write_barcode(zxingcpp.BarcodeFormat.Code128, text, width=0, height=50, quiet_zone=0))
    symbol = cv2.resize(symbol, (symbol.shape[1] * 2, 60), interpolation=cv2.INTER_NEAREST)
    x, y = int(x_in * dpi), int(y_in * dpi)
    gray[y: y + symbol.shape[0], x: x + symbol.shape[1]] = np.minimum(gray[y: y + symbol.shape[0], x: x + symbol.shape[1]], symbol)


VENDOR_CODE_AT = {"i2of5": (0.6, 9.5), "code128": (3.0, 12.0)}  # inches: free paper below the contests


def _vendor_code(gray: np.ndarray, kind: str, text: str) -> None:
    x, y = VENDOR_CODE_AT[kind]
    if kind == "i2of5":
        _draw_i2of5(gray, x, y, text, vertical=True)
    else:
        _draw_code128(gray, x, y, f"HART{text}")


@pytest.fixture(scope="module", params=["i2of5", "code128"])
def coded(request: pytest.FixtureRequest, vendor_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, InterpretContext]:
    """The vendor election with the Hart-like style's blank printing a barcode of its own."""
    import shutil

    from scanpipe.election import load_election

    root = tmp_path_factory.mktemp("coded") / "election"
    shutil.copytree(vendor_dir, root)
    blank_path = root / "layouts" / f"{HART}-p1.png"
    blank = cv2.imread(str(blank_path), cv2.IMREAD_GRAYSCALE)
    _vendor_code(blank, request.param, "0123456789")
    cv2.imwrite(str(blank_path), blank)
    election = load_election(root / "election.json")
    return request.param, InterpretContext(election, load_thresholds(), load_references(election, cache=False))


def _hart_card(context: InterpretContext, kind: str, serial: str, tmp_path: Path, *, turned: bool = False,
               sticker: bool = False, over: bool = False) -> str:
    gray = cv2.cvtColor(render_vendor_card(context.election, HART, 1, STYLES[HART].precinct, 200), cv2.COLOR_RGB2GRAY)
    _vendor_code(gray, kind, serial)
    if sticker:  # a damaged sticker (bars that decode as no Code 128) in the margin
        _draw_i2of5(gray, 5.2, 10.3, "4711", vertical=False)
    if over:  # a damaged sticker stuck over the vendor's barcode: a white label, other bars
        x, y = VENDOR_CODE_AT[kind]
        gray[int((y - 0.1) * 200): int((y + 1.4) * 200), int((x - 0.1) * 200): int((x + 2.2) * 200)] = 250
        _draw_i2of5(gray, x, y + 0.1, "47110815", vertical=False)
    path = tmp_path / "card.png"
    cv2.imwrite(str(path), np.ascontiguousarray(np.rot90(gray, 2)) if turned else gray)
    return str(path)


@pytest.mark.parametrize("turned", [False, True])
def test_a_barcode_the_blank_prints_is_the_vendors_not_a_label(coded: tuple[str, InterpretContext], turned: bool, tmp_path: Path) -> None:
    kind, context = coded
    for serial in ("0123456789", "9876543210"):  # the blank's code, and a sheet's own serial where the blank prints its code
        (card,) = interpret_file(_hart_card(context, kind, serial, tmp_path, turned=turned), context, CardHints(), "t")
        assert isinstance(card.interpretation, ReadCard) and card.interpretation.style == HART
        assert card.interpretation.registration.rotated_180 is turned
        assert Reason.LABEL_UNREADABLE not in card.interpretation.reasons, card.interpretation.reasons
        assert card.kind is CardKind.BALLOT and card.label is None


def test_a_damaged_sticker_beside_the_vendors_barcode_is_still_held(coded: tuple[str, InterpretContext], tmp_path: Path) -> None:
    kind, context = coded
    (card,) = interpret_file(_hart_card(context, kind, "0123456789", tmp_path, sticker=True), context, CardHints(), "t")
    assert isinstance(card.interpretation, ReadCard)
    assert Reason.LABEL_UNREADABLE in card.interpretation.reasons and card.kind is CardKind.UNKNOWN


def test_a_damaged_sticker_over_the_vendors_barcode_is_still_held(coded: tuple[str, InterpretContext], tmp_path: Path) -> None:
    """A label hides the blank's print under it: it is no vendor's print, wherever it lies. The
    card is held either way: its label unreadable, or (where the covered barcode was much of
    the blank's print in that square inch) its style unknown."""
    from scanpipe.pipeline import needs_person

    kind, context = coded
    (card,) = interpret_file(_hart_card(context, kind, "0123456789", tmp_path, over=True), context, CardHints(), "t")
    result = card.interpretation
    assert needs_person(card)
    if isinstance(result, ReadCard):
        assert result.style == HART and Reason.LABEL_UNREADABLE in result.reasons and card.kind is CardKind.UNKNOWN
    else:
        assert isinstance(result, UnreadableCard) and result.reason is Reason.UNKNOWN_STYLE, result


def test_a_barcode_the_blank_does_not_print_is_held(context: InterpretContext, vendor_election: Election, tmp_path: Path) -> None:
    """The same card against the election whose blank prints no barcode: it may be a sticker."""
    gray = cv2.cvtColor(render_vendor_card(vendor_election, HART, 1, STYLES[HART].precinct, 200), cv2.COLOR_RGB2GRAY)
    _vendor_code(gray, "i2of5", "0123456789")
    cv2.imwrite(str(tmp_path / "card.png"), gray)
    (card,) = interpret_file(str(tmp_path / "card.png"), context, CardHints(), "t")
    assert isinstance(card.interpretation, ReadCard) and card.interpretation.style == HART
    assert Reason.LABEL_UNREADABLE in card.interpretation.reasons and card.kind is CardKind.UNKNOWN


@pytest.mark.parametrize("profile", ["clean", "typical", "hardest"])
@pytest.mark.parametrize("dpi", [150, 200, 300])
def test_the_quick_look_sees_a_scanned_records_code(profile: str, dpi: int, vendor_election: Election) -> None:
    from scanpipe.synth.scan import PROFILES, simulate_scan

    contest = vendor_election.contest(vendor_election.style(STYLE).contests[0])
    rng = np.random.default_rng(dpi)
    for k in range(3):
        rgb = render_bmd_card(vendor_election, STYLE, STYLES[STYLE].precinct, {contest.id: [contest.options[k % len(contest.options)].id]}, dpi)
        image, _ = simulate_scan(rgb, PROFILES[profile], rng, dpi=dpi, fmt="png", flip180=bool(k % 2), color=False)
        assert codes.shows_qr(image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2GRAY))


def test_a_batch_stating_duplicates_and_their_serial_gets_it_past_the_vendors_barcode(coded: tuple[str, InterpretContext], tmp_path: Path) -> None:
    kind, context = coded
    hints = CardHints(kind=CardKind.DUPLICATE, serial="A17")
    (card,) = interpret_file(_hart_card(context, kind, "0123456789", tmp_path), context, hints, "t")
    assert isinstance(card.interpretation, ReadCard) and Reason.NO_SERIAL not in card.interpretation.reasons
    assert card.kind is CardKind.DUPLICATE and card.label is not None and card.label.serial == "A17"
