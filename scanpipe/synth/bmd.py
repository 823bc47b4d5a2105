"""Render a machine-printed record (BMD summary card / VVPAT record) for synthetic decks.

The model of the printed record: a letter-size card (8.5 x 11 in) with an ``SPV1`` QR
(contract section 4) at the top right and the human-readable selections printed as text
lines below a short header: each contest's title, then the chosen option names indented, or
``No selection``. The voter verified the *text*, not the code, so a record can be rendered
whose text disagrees with its code (``printed=`` other selections), which a recount must flag.

Text is Hershey (OpenCV) at a cap height of about 0.14 in, the size a thermal or laser BMD
printer uses; scanning goes through :func:`scanpipe.synth.scan.simulate_scan` like any card.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import cv2
import numpy as np

from scanpipe.synth.render import INK, PAPER, box_px, draw_modules, qr_modules
from scanpipe.types import Box, Election

CARD_SIZE_IN = (8.5, 11.0)
QR_BOX_IN: Box = (6.2, 0.5, 1.7, 1.7)
TEXT_LEFT_IN = 0.8
OPTION_INDENT_IN = 0.45
HEADER_TOP_IN = 0.8
BODY_TOP_IN = 2.7
TITLE_HEIGHT_IN = 0.15
OPTION_HEIGHT_IN = 0.14
LINE_PITCH_IN = 0.32
NO_SELECTION = "No selection"

Selections = Mapping[str, Sequence[str]]


def record_payload(election: Election, style_id: str, precinct_id: str | None, selections: Selections) -> str:
    """The ``SPV1`` payload: every contest of the style, in style order (empty when no choice)."""
    parts = []
    for cid in election.style(style_id).contests:
        contest = election.contest(cid)
        chosen = set(selections.get(cid, ()))
        parts.append(f"{cid}:" + ",".join(o.id for o in contest.options if o.id in chosen))
    return f"SPV1|E={election.id}|S={style_id}|P={precinct_id or ''}|V=" + ";".join(parts)


def printed_lines(election: Election, style_id: str, selections: Selections) -> list[tuple[str, bool]]:
    """The human-readable body: ``(text, is_title)`` per line, in style order."""
    lines: list[tuple[str, bool]] = []
    for cid in election.style(style_id).contests:
        contest = election.contest(cid)
        chosen = set(selections.get(cid, ()))
        lines.append((contest.title, True))
        names = [o.name for o in contest.options if o.id in chosen]
        lines.extend((n, False) for n in (names or [NO_SELECTION]))
    return lines


def _text(img: np.ndarray, text: str, x_in: float, y_in: float, height_in: float, dpi: float) -> None:
    height_px = height_in * dpi
    cv2.putText(img, text, (int(round(x_in * dpi)), int(round(y_in * dpi))), cv2.FONT_HERSHEY_SIMPLEX,
                height_px / 22.0, INK, max(1, int(round(height_px / 9.0))), cv2.LINE_AA)


def render_bmd_card(election: Election, style_id: str, precinct_id: str | None, selections: Selections, dpi: float, *,
                    printed: Selections | None = None) -> np.ndarray:
    """A printed record as an RGB uint8 array at ``dpi``.

    ``selections`` go into the QR; ``printed`` (default: the same) are printed as text.
    """
    w_in, h_in = CARD_SIZE_IN
    img = np.full((int(round(h_in * dpi)), int(round(w_in * dpi)), 3), PAPER, np.uint8)
    draw_modules(img, qr_modules(record_payload(election, style_id, precinct_id, selections)), box_px(QR_BOX_IN, dpi))
    precinct = next((p.name for p in election.precincts if p.id == precinct_id), precinct_id or "")
    header = ("OFFICIAL BALLOT SUMMARY", election.name, precinct, f"Ballot style {style_id}")
    for k, line in enumerate(header):
        _text(img, line, TEXT_LEFT_IN, HEADER_TOP_IN + k * LINE_PITCH_IN, TITLE_HEIGHT_IN if k == 0 else OPTION_HEIGHT_IN, dpi)
    y = BODY_TOP_IN
    for text, is_title in printed_lines(election, style_id, selections if printed is None else printed):
        if is_title and y > BODY_TOP_IN:
            y += LINE_PITCH_IN * 0.4
        x = TEXT_LEFT_IN + (0.0 if is_title else OPTION_INDENT_IN)
        _text(img, text, x, y, TITLE_HEIGHT_IN if is_title else OPTION_HEIGHT_IN, dpi)
        y += LINE_PITCH_IN
    return img
