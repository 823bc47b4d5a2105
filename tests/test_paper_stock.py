"""Cards that differ from their blank the way paper and scanners make them differ, with no
mark on them: nothing for a person (found by the fourth independent renderer, issue 8).

* coloured stock (a primary's salmon or green paper) on a white scanner backing that shows
  round the sheet: the page's paper is the sheet's, not the backing's, so the sheet is not
  "stained" all over;
* a bilevel card whose blank prints light grey rules and tints: the threshold prints them
  black on the card, which is print, not ink drawn round the names.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from scanpipe.classify import load_thresholds
from scanpipe.election import load_election
from scanpipe.interpret import InterpretContext, interpret_file, load_references
from scanpipe.types import CardHints, Election, MarkStatus, ReadCard

STYLE = "H-13"


def _blank(election: Election) -> tuple[np.ndarray, float]:
    page = election.style(STYLE).layout.pages[0]
    assert page.reference is not None and page.reference_dpi is not None
    return np.array(Image.open(page.reference).convert("L")), page.reference_dpi


def _read(path: Path, election: Election, cache: Path) -> ReadCard:
    context = InterpretContext(election, load_thresholds(), load_references(election, cache=cache))
    (card,) = interpret_file(str(path), context, CardHints(), "b")
    assert isinstance(card.interpretation, ReadCard), card.interpretation
    return card.interpretation


def _every_target_no_vote(result: ReadCard) -> None:
    assert [r.status for r in result.targets] == [MarkStatus.NO] * len(result.targets), \
        [(r.score.option, r.why) for r in result.targets if r.status is not MarkStatus.NO]


@pytest.mark.parametrize("stock", [200, 185])  # salmon, green: their gray level on a gray scan
def test_coloured_stock_on_a_white_backing(vendor_election: Election, tmp_path: Path, stock: int) -> None:
    gray, dpi = _blank(vendor_election)
    sheet = np.minimum(gray.astype(np.float32) * stock / 255.0, 255).astype(np.uint8)  # the stock darkens the paper
    margin = int(0.3 * dpi)
    bed = np.full((gray.shape[0] + 2 * margin, gray.shape[1] + 2 * margin), 250, np.uint8)  # the scanner's white backing
    bed[margin: margin + gray.shape[0], margin: margin + gray.shape[1]] = sheet
    turn = cv2.getRotationMatrix2D((bed.shape[1] / 2, bed.shape[0] / 2), 0.8, 1.0)
    bed = cv2.warpAffine(bed, turn, (bed.shape[1], bed.shape[0]), borderValue=250)
    path = tmp_path / "stock.png"
    Image.fromarray(bed).save(path, dpi=(dpi, dpi))
    result = _read(path, vendor_election, tmp_path / "learned")
    assert result.style == STYLE
    _every_target_no_vote(result)


def test_light_rules_a_bilevel_card_prints_black(vendor_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "election"
    shutil.copytree(vendor_dir, out)
    election = load_election(out / "election.json")
    gray, dpi = _blank(election)
    page = election.style(STYLE).layout.pages[0]
    for t in page.targets:  # light grey rules between the options, as some vendors print them
        x, y, w, h = (v * dpi for v in t.box_in)
        for edge in (y - 0.08 * dpi, y + h + 0.08 * dpi):
            cv2.line(gray, (int(x - 0.1 * dpi), int(edge)), (int(x + 2.6 * dpi), int(edge)), 205, 2)
    Image.fromarray(gray).save(out / "tinted-blank.png", dpi=(dpi, dpi))
    layout_path = election.style(STYLE).layout.path
    assert layout_path is not None
    layout = json.loads(Path(layout_path).read_text())
    layout["pages"][0]["reference"] = str(out / "tinted-blank.png")
    Path(layout_path).write_text(json.dumps(layout))
    election = load_election(out / "election.json")
    card = np.where(gray < 215, 0, 255).astype(np.uint8)  # thresholded high: the grey rules come out black
    path = tmp_path / "bilevel.tif"
    Image.fromarray(card).convert("1").save(path, compression="group4", dpi=(dpi, dpi))
    result = _read(path, election, tmp_path / "learned")
    assert result.style == STYLE
    _every_target_no_vote(result)


def _lid_shadow(sheet: np.ndarray, dpi: float, depth: float = 0.12, reach_in: float = 0.8) -> np.ndarray:
    """The sheet darkened along its left edge as a scanner's lid shades it: ``depth`` at the
    edge, falling off over ``reach_in``, down the whole height."""
    x_in = np.arange(sheet.shape[1], dtype=np.float32) / dpi
    shade = 1.0 - depth * np.exp(-x_in / reach_in)
    return np.clip(sheet.astype(np.float32) * shade[None, :], 0, 255).astype(np.uint8)


def test_a_lids_shadow_along_an_edge_is_no_stain_but_a_stain_in_it_still_is(vendor_election: Election, tmp_path: Path) -> None:
    """A shadow along the sheet's left edge darkens every target near it: the page's paper
    there, not a stain (a plane fitted to the page does not follow it). A stain over a target
    inside the shadow is still one."""
    gray, dpi = _blank(vendor_election)
    sheet = _lid_shadow(np.minimum(gray.astype(np.float32) * 200 / 255.0, 255).astype(np.uint8), dpi)
    path = tmp_path / "shadow.png"
    Image.fromarray(sheet).save(path, dpi=(dpi, dpi))
    result = _read(path, vendor_election, tmp_path / "learned")
    assert result.style == STYLE
    _every_target_no_vote(result)
    nearest = min(vendor_election.style(STYLE).layout.pages[0].targets, key=lambda t: t.box_in[0])  # by the shadowed edge
    x, y, w, h = nearest.box_in
    stain = np.zeros(sheet.shape, np.float32)
    cv2.ellipse(stain, (int((x + w / 2) * dpi), int((y + h / 2) * dpi)), (int(0.3 * dpi), int(0.22 * dpi)), 0, 0, 360, 1.0, -1)
    stained = (sheet.astype(np.float32) * (1.0 - 0.16 * cv2.GaussianBlur(stain, (0, 0), 0.03 * dpi))).astype(np.uint8)
    Image.fromarray(stained).save(path, dpi=(dpi, dpi))
    result = _read(path, vendor_election, tmp_path / "learned")
    (near,) = [r for r in result.targets if r.score.option == nearest.option]
    assert near.status is MarkStatus.UNKNOWN and near.score.damage_score >= load_thresholds().damage, near
