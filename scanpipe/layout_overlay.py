"""The review overlay of a proposed layout: what was found and assigned, drawn on the page.

Pure: arrays in, a BGR array out (the CLI writes the PNG). Colours:

* green: a target assigned by name or by its write-in rule, with the option's name;
* orange: an assignment to check (confidence below
  :data:`scanpipe.layout_assign.REVIEW_BELOW`, taken from the printed order, or a target
  inferred where none was found);
* red: a target found but not assigned (``?``);
* blue: a write-in area.

The contest's title is written above the first target of each contest.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from scanpipe.imaging.targets import Rect
from scanpipe.layout_assign import REVIEW_BELOW, How, PageScan, Proposal
from scanpipe.types import Contest

GREEN = (40, 160, 40)
ORANGE = (0, 140, 255)
RED = (30, 30, 220)
BLUE = (200, 90, 20)
FONT = cv2.FONT_HERSHEY_SIMPLEX


def draw_overlay(gray: np.ndarray, scan: PageScan, proposal: Proposal, contests: Sequence[Contest]) -> np.ndarray:
    """The page with the proposal drawn on it (``H x W x 3`` uint8, BGR)."""
    canvas = cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR)
    scale = scan.dpi / 200.0
    by_id = {c.id: c for c in contests}
    placed = set()
    titled: set[str] = set()
    for a in proposal.assignments:
        if a.page != scan.page:
            continue
        if a.target is not None:
            placed.add(a.target)
        contest = by_id[a.contest]
        option = next(o for o in contest.options if o.id == a.option)
        check = a.confidence < REVIEW_BELOW or a.how in (How.ORDER, How.INFERRED)
        colour = ORANGE if check else GREEN
        box = a.box_px
        _box(canvas, box, colour, scale)
        _text(canvas, f"{option.name} {a.confidence:.2f}" + (" ?" if check else ""), (box[0], box[1] + box[3] + int(14 * scale)), colour, scale)
        if a.contest not in titled:
            titled.add(a.contest)
            _text(canvas, contest.title, (box[0], box[1] - int(8 * scale)), colour, scale * 1.2)
        rule = scan.write_in_rules.get(a.target) if a.target is not None else None
        if rule is not None and option.write_in:
            x, y, w, h = rule
            top = max(0, y + h - int(0.3 * scan.dpi))
            _box(canvas, (x, top, w, y + h - top), BLUE, scale)
    for index, target in enumerate(scan.targets):
        if index not in placed:
            _box(canvas, target.box_px, RED, scale)
            _text(canvas, "?", (target.box_px[0] - int(14 * scale), target.box_px[1] + target.box_px[3]), RED, scale * 1.4)
    return canvas


def _box(canvas: np.ndarray, box: Rect, colour: tuple[int, int, int], scale: float) -> None:
    x, y, w, h = box
    cv2.rectangle(canvas, (x - 2, y - 2), (x + w + 2, y + h + 2), colour, max(1, int(round(2 * scale))))


def _text(canvas: np.ndarray, text: str, origin: tuple[int, int], colour: tuple[int, int, int], scale: float) -> None:
    ascii_text = text.encode("ascii", "replace").decode("ascii")
    size = 0.55 * scale
    thickness = max(1, int(round(scale)))
    (w, h), base = cv2.getTextSize(ascii_text, FONT, size, thickness)
    x, y = max(0, origin[0]), max(h + 1, origin[1])
    cv2.rectangle(canvas, (x - 1, y - h - 2), (x + w + 1, y + base), (255, 255, 255), cv2.FILLED)
    cv2.putText(canvas, ascii_text, (x, y), FONT, size, colour, thickness, cv2.LINE_AA)
