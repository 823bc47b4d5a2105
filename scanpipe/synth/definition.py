"""A demo election definition with layouts, for synthetic ballots.

The model: one Maryland-style general election with five precincts and five contests
(governor with a write-in, a vote-for-2 council race, two For/Against questions and a judge
retention). Four ballot styles print the same contests on letter paper (8.5 x 11 in):

* ``S1`` (P01, P02) and ``S2`` (P03) are ours: four solid 0.25 in corner fiducials and a
  QR card code at the top right. ``S2`` has two pages; the back (page 2) carries the questions.
* ``V1`` (P04) and ``V2`` (P05) come from "another vendor": no fiducials and no card code, but
  timing marks along three edges and printed rules. They differ only in the printed precinct
  name, so their layout pages carry a blank ``reference`` scan (150 dpi PNG next to the layout)
  and a ``distinguish`` box around that name.

Targets sit in three columns, 0.22 x 0.14 in each, candidate names to their right. The layout
geometry lives here (:func:`page_geometry`) so the renderer prints exactly what the layout says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2

ELECTION_ID = "demo-2026"
PAGE_SIZE_IN = (8.5, 11.0)
TARGET_W_IN, TARGET_H_IN = 0.22, 0.14
ROW_PITCH_IN = 0.40
COLUMNS_X_IN = (0.75, 3.35, 5.95)
CONTENT_TOP_IN = 2.35
FIDUCIALS_IN = ([0.35, 0.35, 0.25, 0.25], [7.9, 0.35, 0.25, 0.25],
                [0.35, 10.4, 0.25, 0.25], [7.9, 10.4, 0.25, 0.25])
QR_IN = [6.6, 0.75, 1.2, 1.2]
PRECINCT_NAME_BOX_IN = [0.7, 1.42, 3.2, 0.32]
REFERENCE_DPI = 150

PRECINCTS = (
    ("P01", "Precinct 1 Northfield"), ("P02", "Precinct 2 Eastbrook"), ("P03", "Precinct 3 Riverside"),
    ("P04", "Precinct 4 Hillcrest"), ("P05", "Precinct 5 Lakeview"),
)

CONTESTS: tuple[dict[str, Any], ...] = (
    {"id": "gov", "title": "Governor", "kind": "candidate", "vote_for": 1,
     "options": [{"id": "gov-a", "name": "Ada Alvarez"}, {"id": "gov-b", "name": "Ben Brooks"},
                 {"id": "gov-c", "name": "Chloe Chen"}, {"id": "gov-w", "name": "Write-in", "write_in": True}]},
    {"id": "council", "title": "County Council", "kind": "candidate", "vote_for": 2,
     "options": [{"id": "council-a", "name": "Dara Diaz"}, {"id": "council-b", "name": "Eli Evans"},
                 {"id": "council-c", "name": "Fay Fischer"}, {"id": "council-d", "name": "Gus Grant"},
                 {"id": "council-e", "name": "Hana Hill"}]},
    {"id": "judge", "title": "Retain Judge Ivers?", "kind": "question", "vote_for": 1,
     "options": [{"id": "judge-yes", "name": "Yes"}, {"id": "judge-no", "name": "No"}]},
    {"id": "q1", "title": "Question 1", "kind": "question", "vote_for": 1,
     "options": [{"id": "q1-for", "name": "For"}, {"id": "q1-against", "name": "Against"}]},
    {"id": "q2", "title": "Question 2", "kind": "question", "vote_for": 1,
     "options": [{"id": "q2-for", "name": "For"}, {"id": "q2-against", "name": "Against"}]},
)

# style -> (precincts, pages as lists of (column, contest ids), vendor style?)
STYLES: dict[str, tuple[tuple[str, ...], tuple[tuple[tuple[str, ...], ...], ...], bool]] = {
    "S1": (("P01", "P02"), ((("gov",), ("council",), ("q1", "q2", "judge")),), False),
    "S2": (("P03",), ((("gov",), ("council",), ("judge",)), (("q1", "q2"), (), ())), False),
    "V1": (("P04",), ((("gov",), ("council",), ("q1", "q2", "judge")),), True),
    "V2": (("P05",), ((("gov",), ("council",), ("q1", "q2", "judge")),), True),
}


@dataclass(frozen=True, slots=True)
class PrintedText:
    """A line of printed text: baseline-left point in inches and cap height in inches."""

    text: str
    x_in: float
    y_in: float
    height_in: float


@dataclass(frozen=True, slots=True)
class PageGeometry:
    """Everything printed on one page besides codes: texts, rules and timing marks (inches)."""

    texts: tuple[PrintedText, ...]
    rules_in: tuple[tuple[float, float, float, float], ...]  # (x1, y1, x2, y2)
    timing_marks_in: tuple[tuple[float, float, float, float], ...]  # boxes
    write_in_lines_in: tuple[tuple[float, float, float, float], ...]


def _contest(cid: str) -> dict[str, Any]:
    return next(c for c in CONTESTS if c["id"] == cid)


def _column_targets(x: float, contest_ids: tuple[str, ...]) -> tuple[list[dict[str, Any]], list[PrintedText], list[tuple[float, float, float, float]]]:
    """Targets, texts and write-in lines of one column of contests starting at CONTENT_TOP_IN."""
    targets: list[dict[str, Any]] = []
    texts: list[PrintedText] = []
    lines: list[tuple[float, float, float, float]] = []
    y = CONTENT_TOP_IN
    for cid in contest_ids:
        contest = _contest(cid)
        texts.append(PrintedText(contest["title"], x, y, 0.13))
        vote_for = contest["vote_for"]
        texts.append(PrintedText(f"Vote for {'one' if vote_for == 1 else 'up to two'}", x, y + 0.22, 0.08))
        y += 0.50
        for opt in contest["options"]:
            box = [round(x + 0.05, 3), round(y, 3), TARGET_W_IN, TARGET_H_IN]
            target: dict[str, Any] = {"contest": cid, "option": opt["id"], "box": box}
            if opt.get("write_in"):
                area = [round(x + 0.40, 3), round(y - 0.10, 3), 1.95, 0.32]
                target["write_in_area"] = area
                line_y = round(y - 0.10 + 0.32 + 0.03, 3)
                lines.append((area[0], line_y, area[0] + area[2], line_y))
                texts.append(PrintedText("write-in", area[0], line_y + 0.13, 0.07))
                y += 0.22
            else:
                texts.append(PrintedText(opt["name"], x + 0.40, y + 0.115, 0.10))
            targets.append(target)
            y += ROW_PITCH_IN
        y += 0.30
    return targets, texts, lines


def _timing_marks() -> list[tuple[float, float, float, float]]:
    """Vendor timing marks: a row along the top edge and columns along both side edges."""
    marks = [(round(0.5 + 0.25 * i, 3), 0.30, 0.07, 0.18) for i in range(31)]
    marks += [(0.25, round(0.75 + 0.25 * i, 3), 0.18, 0.07) for i in range(40)]
    marks += [(8.07, round(0.75 + 0.25 * i, 3), 0.18, 0.07) for i in range(40)]
    return marks


def page_geometry(style_id: str, page: int, precinct_name: str) -> tuple[PageGeometry, list[dict[str, Any]]]:
    """The printed content of a style's page and its layout targets (JSON-ready)."""
    precincts, pages, vendor = STYLES[style_id]
    columns = pages[page - 1]
    texts = [
        PrintedText("OFFICIAL BALLOT", 0.75, 0.95, 0.20),
        PrintedText("Demo County General Election  November 3, 2026", 0.75, 1.25, 0.10),
        PrintedText(precinct_name, PRECINCT_NAME_BOX_IN[0] + 0.05, PRECINCT_NAME_BOX_IN[1] + 0.24, 0.14),
        PrintedText("Fill in the oval next to your choice completely. Use a dark pen.", 0.75, 1.98, 0.085),
        PrintedText(f"Page {page} of {len(pages)}", 0.75, 10.55, 0.08),
    ]
    targets: list[dict[str, Any]] = []
    lines: list[tuple[float, float, float, float]] = []
    for x, contest_ids in zip(COLUMNS_X_IN, columns):
        t, tx, ln = _column_targets(x, contest_ids)
        targets += t
        texts += tx
        lines += ln
    rules: list[tuple[float, float, float, float]] = [(0.7, 2.12, 7.8, 2.12), (0.7, 10.3, 7.8, 10.3)]
    if vendor:
        rules += [(3.2, 2.2, 3.2, 9.9), (5.8, 2.2, 5.8, 9.9)]
    timing = _timing_marks() if vendor else []
    return PageGeometry(tuple(texts), tuple(rules), tuple(timing), tuple(lines)), targets


def _precinct_name(pid: str) -> str:
    return next(name for p, name in PRECINCTS if p == pid)


def _layout_json(style_id: str) -> dict[str, Any]:
    precincts, pages, vendor = STYLES[style_id]
    out_pages = []
    for n in range(1, len(pages) + 1):
        _, targets = page_geometry(style_id, n, _precinct_name(precincts[0]))
        page: dict[str, Any] = {"page": n, "size": list(PAGE_SIZE_IN)}
        if vendor:
            page["reference"] = f"{style_id}-p{n}.png"
            page["reference_dpi"] = REFERENCE_DPI
            page["distinguish"] = [PRECINCT_NAME_BOX_IN]
        else:
            page["fiducials"] = [list(b) for b in FIDUCIALS_IN]
            page["qr"] = QR_IN
        page["targets"] = targets
        out_pages.append(page)
    return {"style": style_id, "pages": out_pages}


def election_json() -> dict[str, Any]:
    """The demo ``election.json`` content (contract section 2)."""
    styles = []
    for sid, (precincts, pages, _) in STYLES.items():
        contest_ids = [cid for page in pages for column in page for cid in column]
        ordered = [c["id"] for c in CONTESTS if c["id"] in contest_ids]
        styles.append({"id": sid, "precincts": list(precincts), "contests": ordered, "layout": f"layouts/{sid}.json"})
    return {
        "id": ELECTION_ID, "name": "Demo County General 2026", "date": "2026-11-03", "jurisdiction": "MD",
        "precincts": [{"id": p, "name": name, "county": "Demo"} for p, name in PRECINCTS],
        "contests": [dict(c) for c in CONTESTS],
        "ballot_styles": styles,
    }


def write_demo_election(out_dir: Path, *, seed: int = 0) -> Path:
    """Write ``election.json``, ``layouts/<style>.json`` and vendor reference scans.

    The definition is fixed (``seed`` is accepted for API symmetry and does not change it,
    so decks generated with different seeds share one definition). Returns the
    ``election.json`` path.
    """
    from scanpipe.election import parse_election
    from scanpipe.synth.render import render_card

    out_dir = Path(out_dir)
    (out_dir / "layouts").mkdir(parents=True, exist_ok=True)
    definition = election_json()
    layouts = {f"layouts/{sid}.json": _layout_json(sid) for sid in STYLES}
    for rel, data in layouts.items():
        (out_dir / rel).write_text(json.dumps(data, indent=1) + "\n")
    path = out_dir / "election.json"
    path.write_text(json.dumps(definition, indent=1) + "\n")
    election = parse_election(definition, layouts, base=out_dir.resolve(), file=str(path.resolve()), check_files=False)
    for sid, (precincts, pages, vendor) in STYLES.items():
        if not vendor:
            continue
        for n in range(1, len(pages) + 1):
            rgb = render_card(election, sid, n, precincts[0], REFERENCE_DPI, card_code=False)
            gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
            from scanpipe.synth.scan import save_scan

            save_scan(out_dir / "layouts" / f"{sid}-p{n}.png", gray, "png", dpi=REFERENCE_DPI)
    return path


def name_box_in(target_box: list[float] | tuple[float, ...], name: str) -> tuple[float, float, float, float]:
    """Where an option's printed name sits, right of its target (inches)."""
    width_units = cv2.getTextSize(name, cv2.FONT_HERSHEY_SIMPLEX, 1.0, 1)[0][0]
    return (target_box[0] + 0.38, target_box[1] - 0.01, width_units / 22.0 * 0.10 + 0.04, 0.16)
