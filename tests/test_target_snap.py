"""Target boxes snapped to what the blank prints (issue 8: a layout as the contract writes it
must be enough, and layouts written by other hands draw their boxes a little loose or off).

Before the snapping, the real sets read with every box 0.03 in too large sent 19% of clear
targets to a person, with boxes 0.02 in off 8.6%, and with boxes 30% too small every Calhoun
card stopped with an internal error (``python scripts/bench_real.py`` on such layouts)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from scanpipe.classify import load_thresholds
from scanpipe.election import load_election
from scanpipe.imaging.marks import _geometry
from scanpipe.imaging.target_snap import snap_boxes
from scanpipe.interpret import InterpretContext, interpret_file, load_references
from scanpipe.synth.vendor_render import draw_target
from scanpipe.types import CardHints, ReadCard

DPI = 200.0
FIX = Path(__file__).resolve().parents[1] / "fixtures" / "realballots"


def _page(arrows: bool = False, stamp: bool = False, stroke: int = 2) -> tuple[np.ndarray, list[tuple[float, float, float, float]]]:
    """A blank at 200 dpi: two columns of six targets (oval outlines 0.2 x 0.12 in, or arrows
    to complete: a tail and a head with the gap between them as the target), a name printed
    beside each; the boxes as the layout tools write them (pixel centres at integers)."""
    gray = np.full((1400, 1700), 250, np.uint8)
    truth = []
    for col in range(2):
        for row in range(6):
            x, y = 150 + col * 800, 200 + row * 160
            if arrows:  # the Premier-like family's broken arrow: gap 0.14 x 0.08 in, tail and head 0.25 and 0.17 in
                box = (x / DPI, y / DPI, 0.14, 0.08)
                rgb = np.repeat(gray[..., None], 3, axis=2)
                draw_target(rgb, "arrow", box, DPI, 0.025)
                gray[:] = rgb[..., 0]
                truth.append(box)
            else:
                cv2.ellipse(gray, (x + 20, y + 12), (20 - (stroke + 1) // 2, 12 - (stroke + 1) // 2), 0, 0, 360, 20, stroke)
                ys, xs = np.nonzero(gray[y - 5: y + 35, x - 5: x + 50] < 128)
                x0, y0 = x - 5 + xs.min(), y - 5 + ys.min()
                truth.append(((x0 - 0.5) / DPI, (y0 - 0.5) / DPI, (xs.max() - xs.min() + 1) / DPI, (ys.max() - ys.min() + 1) / DPI))
            cv2.putText(gray, f"CANDIDATE {col}{row}", (x + 80, y + 22), cv2.FONT_HERSHEY_SIMPLEX, 0.8, 20, 2)
    if stamp:  # a stamp's broad stroke across the first oval
        cv2.line(gray, (100, 170), (260, 260), 60, 9)
    return gray, truth


def _edges(box: tuple[float, float, float, float]) -> np.ndarray:
    x, y, w, h = box
    return np.array([x, y, x + w, y + h])


LOOSE = {
    "loose": lambda b: (b[0] - 0.03, b[1] - 0.03, b[2] + 0.06, b[3] + 0.06),
    "tight": lambda b: (b[0] + 0.15 * b[2], b[1] + 0.15 * b[3], 0.7 * b[2], 0.7 * b[3]),
    "shifted": lambda b: (b[0] + 0.02, b[1] - 0.015, b[2], b[3]),
}


def test_a_layout_drawn_from_the_blank_is_kept_exactly() -> None:
    gray, truth = _page()
    assert snap_boxes(gray, DPI, truth) == tuple(truth)
    nudged = [(x + 0.004, y - 0.003, w, h) for x, y, w, h in truth]  # within a pixel or so: a tool's rounding
    assert snap_boxes(gray, DPI, nudged) == tuple(nudged)


@pytest.mark.parametrize("how", sorted(LOOSE))
def test_boxes_drawn_off_snap_to_the_printed_ovals(how: str) -> None:
    gray, truth = _page()
    snapped = snap_boxes(gray, DPI, [LOOSE[how](b) for b in truth])
    for got, want in zip(snapped, truth, strict=True):
        assert np.abs(_edges(got) - _edges(want)).max() <= 1.01 / DPI, (how, got, want)


def test_a_thick_outline_insets_the_box_onto_its_stroke() -> None:
    """Ovals printed with a 6 px stroke (a thresholded scan's flat ovals), the model's 2.4: a
    loose layout snaps to the printed box inset by half the difference (0.009 in a side), so
    the model's outline lies on the middle of the stroke."""
    gray, printed = _page(stroke=6)
    snapped = snap_boxes(gray, DPI, [LOOSE["loose"](b) for b in printed])
    for got, want in zip(snapped, printed, strict=True):
        inset = _edges(got) - _edges(want)
        assert np.abs(inset * [1, 1, -1, -1] - 0.009).max() <= 1.01 / DPI, (got, want)


def test_an_oval_a_stamp_crosses_moves_with_its_page() -> None:
    """The stamp joins the first oval to its stroke (no piece of an oval's size there): that
    box moves by the page's offset, measured on the others."""
    gray, truth = _page(stamp=True)
    snapped = snap_boxes(gray, DPI, [LOOSE["loose"](b) for b in truth])
    assert np.abs(_edges(snapped[0]) - _edges(truth[0])).max() <= 1.01 / DPI


def test_a_broken_arrow_boxed_whole_snaps_to_its_gap() -> None:
    """An arrow's target is the gap between its tail and its head (nothing there encloses
    paper: no piece is taken for an oval). A layout boxing each whole arrow, tail to head,
    reads the gap (as high as the arrowhead: how high a gap's box is, the print does not say);
    one boxing the gap is kept as it is. Before, the whole-arrow boxes of the vendor deck of
    seed 838383's Premier-like style sent 15.2% of the deck's clear targets to a person (1.6%
    with the gaps; ``bench_accuracy.py`` on the deck with that style's layout rewritten)."""
    gray, truth = _page(arrows=True)
    assert snap_boxes(gray, DPI, truth) == tuple(truth)
    whole = [(x - 0.25, y + h / 2 - 0.06, w + 0.42, 0.12) for x, y, w, h in truth]
    for got, want in zip(snap_boxes(gray, DPI, whole), truth, strict=True):
        assert np.abs(_edges(got)[[0, 2]] - _edges(want)[[0, 2]]).max() <= 1.01 / DPI, (got, want)  # the gap's ends
        assert abs((got[1] + got[3] / 2) - (want[1] + want[3] / 2)) <= 1.01 / DPI and got[3] <= 0.12
    loose = [LOOSE["loose"](b) for b in truth]
    for got, want in zip(snap_boxes(gray, DPI, loose), truth, strict=True):
        assert np.abs(_edges(got)[[0, 2]] - _edges(want)[[0, 2]]).max() <= 1.01 / DPI, (got, want)


def test_a_small_target_has_a_geometry() -> None:
    """A box a few pixels tall left a group of the outline's bins empty: every card of such a
    layout stopped with an internal error."""
    for w, h in ((0.14, 0.05), (0.06, 0.06), (0.2, 0.04)):
        geo = _geometry(w, h)
        assert geo.outline[2].sum() > 0 and geo.ring[2].sum() > 0


def _readings(folder: Path, card: Path) -> list[tuple[str, str]]:
    election = load_election(folder / "election.json")
    context = InterpretContext(election, load_thresholds(), load_references(election, cache=False))
    [result] = interpret_file(str(card), context, CardHints(), "test")
    assert isinstance(result.interpretation, ReadCard), result.interpretation
    return [(t.score.option, t.status.value) for t in result.interpretation.targets]


@pytest.mark.parametrize("how", ["loose", "tight"])
def test_a_real_card_reads_the_same_under_a_loose_layout(tmp_path: Path, how: str) -> None:
    """A real Cedar County card (gray JPEG, 200 dpi) read against layouts whose every box is
    drawn 0.03 in loose or 30% small reads as against the layouts checked by eye, but for one
    light fill at the definite level sent to a person (without the snapping, 8 and 2 of its 22
    targets read otherwise)."""
    source = FIX / "cedar2008primary"
    folder = tmp_path / "cedar"
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("voted"))
    for f in (folder / "layouts").glob("*.json"):
        layout = json.loads(f.read_text())
        for page in layout["pages"]:
            for target in page["targets"]:
                target["box"] = [round(v, 4) for v in LOOSE[how](tuple(target["box"]))]
        f.write_text(json.dumps(layout))
    card = source / "voted" / "20120608170620594_0002.jpg"
    loose, checked = _readings(folder, card), _readings(source, card)
    assert [o for o, _ in loose] == [o for o, _ in checked]
    differ = [(a, b) for a, b in zip(loose, checked, strict=True) if a != b]
    assert all(a[1] == "unknown" for a, _ in differ), differ  # never read otherwise: at most for a person
    assert len(differ) <= 1, differ  # a mark at the definite level may go either side by a tenth of a pixel
