"""A voter's mark on the "blank" (a voted card given as the style's reference) hides the
same mark on every card read against it: ``init`` refuses such a reference unless told the
marks are print (``--accept-blank-marks``, logged), and the reader sends those targets to a
person; a stamp's letters across targets, and true blanks, are no marks."""

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
from scanpipe.errors import ConfigError
from scanpipe.imaging.blank_marks import marked_on_blank
from scanpipe.interpret import InterpretContext, interpret_file, load_references
from scanpipe.store.repository import Store
from scanpipe.types import CardHints, Election, MarkStatus, ReadCard
from scanpipe.workflow import load_election_file

STYLE = "H-13"


def _reference(election: Election) -> tuple[np.ndarray, float, list[tuple[float, float, float, float]]]:
    page = election.style(STYLE).layout.pages[0]
    assert page.reference is not None and page.reference_dpi is not None
    gray = np.array(Image.open(page.reference).convert("L"))
    return gray, page.reference_dpi, [t.box_in for t in page.targets]


def _px(box: tuple[float, float, float, float], dpi: float) -> tuple[int, int, int, int]:
    x, y, w, h = box
    return int(round(x * dpi)), int(round(y * dpi)), int(round(w * dpi)), int(round(h * dpi))


def _fill(gray: np.ndarray, box: tuple[float, float, float, float], dpi: float) -> None:
    x, y, w, h = _px(box, dpi)
    cv2.ellipse(gray, (x + w // 2, y + h // 2), (w // 2 - 2, h // 2 - 2), 0, 0, 360, 25, -1)


def _check(gray: np.ndarray, box: tuple[float, float, float, float], dpi: float) -> None:
    x, y, w, h = _px(box, dpi)
    cv2.polylines(gray, [np.array([(x + w // 5, y + h // 2), (x + w // 2, y + h - 2), (x + w + w // 2, y - h // 2)], np.int32)],
                  False, 30, 4)


def test_a_true_blank_shows_no_mark(vendor_election: Election) -> None:
    for style in vendor_election.ballot_styles:
        for page in style.layout.pages:
            assert page.reference is not None and page.reference_dpi is not None
            gray = np.array(Image.open(page.reference).convert("L"))
            assert not marked_on_blank(gray, page.reference_dpi, [t.box_in for t in page.targets]).any(), (style.id, page.page)


def test_fills_and_checks_on_the_blank_are_marks(vendor_election: Election) -> None:
    gray, dpi, boxes = _reference(vendor_election)
    _fill(gray, boxes[1], dpi)
    _check(gray, boxes[5], dpi)
    flags = marked_on_blank(gray, dpi, boxes)
    assert list(np.flatnonzero(flags)) == [1, 5]


def test_a_stamp_across_targets_is_print(vendor_election: Election) -> None:
    gray, dpi, boxes = _reference(vendor_election)
    for k in (2, 7):  # a stamp's thick stroke, far longer than a target, through two of them
        x, y, w, h = _px(boxes[k], dpi)
        cx, cy = x + w // 2, y + h // 2
        cv2.line(gray, (cx - 8 * w, cy + 4 * w), (cx + 8 * w, cy - 4 * w), 40, max(6, h // 2))
    assert not marked_on_blank(gray, dpi, boxes).any()


@pytest.fixture
def voted_blank_dir(vendor_dir: Path, tmp_path: Path) -> tuple[Path, str]:
    """A copy of the vendor election whose STYLE blank has a check through its second target
    (a fill, printed over most of the inside, the reader already takes for print over the
    target; a check leaves most of it paper)."""
    out = tmp_path / "election"
    shutil.copytree(vendor_dir, out)
    election = load_election(out / "election.json")
    gray, dpi, boxes = _reference(election)
    _check(gray, boxes[1], dpi)
    layout_path = election.style(STYLE).layout.path
    assert layout_path is not None
    Image.fromarray(gray).save(out / "voted-blank.png", dpi=(dpi, dpi))
    layout = json.loads(Path(layout_path).read_text())
    layout["pages"][0]["reference"] = str(out / "voted-blank.png")
    Path(layout_path).write_text(json.dumps(layout))
    return out, election.style(STYLE).layout.pages[0].targets[1].option


def test_init_refuses_a_voted_blank_and_loads_it_when_told(voted_blank_dir: tuple[Path, str], tmp_path: Path) -> None:
    folder, option = voted_blank_dir
    store = Store.open(f"sqlite:///{tmp_path / 'db.sqlite'}")
    store.migrate()
    with pytest.raises(ConfigError) as refused:
        load_election_file(store, folder / "election.json")
    text = str(refused.value)
    assert f"{STYLE} page 1" in text and option in text and "calibrate blank" in text and "--accept-blank-marks" in text
    assert not store.elections()  # nothing loaded
    loaded = load_election_file(store, folder / "election.json", accept_blank_marks=True)
    assert loaded.changed
    (event,) = store.events("blank_marks_accepted")
    assert option in json.dumps(event.detail)


def test_a_target_marked_on_the_blank_goes_to_a_person(voted_blank_dir: tuple[Path, str], tmp_path: Path) -> None:
    folder, option = voted_blank_dir
    election = load_election(folder / "election.json")
    context = InterpretContext(election, load_thresholds(), load_references(election, cache=tmp_path / "learned"))
    gray, dpi, _boxes = _reference(election)  # the voted blank itself, as a card: its mark hidden by its own
    path = tmp_path / "card.png"
    Image.fromarray(gray).save(path, dpi=(dpi, dpi))
    (read,) = interpret_file(str(path), context, CardHints(), "b")
    result = read.interpretation
    assert isinstance(result, ReadCard) and result.style == STYLE
    status = {r.score.option: r for r in result.targets}
    assert status[option].status is MarkStatus.UNKNOWN and status[option].score.damage_score == 1.0
    assert all(r.status is MarkStatus.NO for o, r in status.items() if o != option)
