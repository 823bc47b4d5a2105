"""A vendor-like election: ballot styles drawn the way voting-system vendors print them.

Real boards rescan the county's own paper (ES&S, Hart, Dominion, Premier/Diebold): timing
marks along the edges, the vendor's own targets, no scanpipe fiducials and no card code. This
module writes such an election (``write_vendor_election``) so that every test and benchmark
run exercises the reader's vendor path. Four families, each a different print model:

==========  ============  ===========================================  ==============  ==========
family      sheet         frame                                        targets         reference
==========  ============  ===========================================  ==============  ==========
``ess``     8.5 x 11 in   dashes on the left, right and top edges; the  wide flat       bilevel
                          bottom row encodes the style number (bits)    ovals           TIFF G4
``hart``    8.5 x 14 in   bars on the left and right edges only         rounded boxes   gray PNG
``dom``     8.5 x 11 in   no timing marks: thin corner brackets         ovals           gray PNG
``prem``    8.5 x 11 in   dashes on the right edge and the top          broken arrows   gray PNG
                                                                        (the gap)
==========  ============  ===========================================  ==============  ==========

Styles of one family differ only in printed header text: ``E-D-11`` / ``E-R-11`` only in the
party line (and the bottom code), ``E-D-11`` / ``E-D-12`` in the precinct name (and the code),
``H-13`` / ``H-14`` and ``D-15`` / ``D-16`` only in the precinct name (no code at all). The
``D`` styles have two pages. Layouts are written as the contract has a board write them: the
style's blank scan as ``reference`` (rendered by the same renderer and scanned, the size and
resolution of the cards), target boxes, no fiducials, no ``qr``; only the ``dom`` family has
``distinguish`` boxes (around the precinct name). Write-in areas end just above the printed
line, except ``hart``'s, which include it (as a board's often do). The printed page
(:class:`VendorPage`) comes from :func:`vendor_page`, so the renderer prints exactly what
the layout says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2

ELECTION_ID = "vendor-2026"
REFERENCE_DPI = 200


@dataclass(frozen=True, slots=True)
class Family:
    """How one vendor prints a card."""

    key: str
    vendor: str  # a name for people
    size_in: tuple[float, float]
    target: str  # "oval" | "rounded" | "arrow"
    target_in: tuple[float, float]  # the target box: the oval's, or the arrow's gap
    timing: str  # "frame" (left, right, top) | "sides" (left, right) | "right_top" | "none"
    bottom_code: bool  # a bottom row of marks encodes the style number
    font: int  # Hershey font of the body text
    pitch_in: float  # option row pitch
    band: bool  # shaded contest header bands
    distinguish: bool  # the layout has a distinguish box around the precinct name
    write_in_covers_line: bool
    reference_format: str  # "tif_g4" | "png"
    outline_in: float


FAMILIES: dict[str, Family] = {
    "ess": Family("ess", "ES&S-like", (8.5, 11.0), "oval", (0.20, 0.10), "frame", True, cv2.FONT_HERSHEY_DUPLEX,
                  0.30, True, False, False, "tif_g4", 0.014),
    "hart": Family("hart", "Hart-like", (8.5, 14.0), "rounded", (0.24, 0.13), "sides", False, cv2.FONT_HERSHEY_COMPLEX,
                   0.36, True, False, True, "png", 0.016),
    "dom": Family("dom", "Dominion-like", (8.5, 11.0), "oval", (0.17, 0.12), "none", False, cv2.FONT_HERSHEY_SIMPLEX,
                  0.34, False, True, False, "png", 0.012),
    "prem": Family("prem", "Premier-like", (8.5, 11.0), "arrow", (0.14, 0.08), "right_top", False, cv2.FONT_HERSHEY_TRIPLEX,
                   0.32, False, False, False, "png", 0.025),
}

PRECINCTS = (
    ("P11", "Precinct 11 Ashford"), ("P12", "Precinct 12 Birchwood"), ("P13", "Precinct 13 Oak Grove"),
    ("P14", "Precinct 14 Mill Creek"), ("P15", "Precinct 15 Harbor Point"), ("P16", "Precinct 16 Stone Ridge"),
    ("P17", "Precinct 17 Fairview"),
)

CONTESTS: tuple[dict[str, Any], ...] = (
    {"id": "pres", "title": "President", "kind": "candidate", "vote_for": 1,
     "options": [{"id": "pres-a", "name": "Alma Ortiz"}, {"id": "pres-b", "name": "Bruce Lindqvist"},
                 {"id": "pres-c", "name": "Carmen Duval"}, {"id": "pres-w", "name": "Write-in", "write_in": True}]},
    {"id": "sen", "title": "United States Senator", "kind": "candidate", "vote_for": 1,
     "options": [{"id": "sen-a", "name": "Dmitri Novak"}, {"id": "sen-b", "name": "Elena Park"},
                 {"id": "sen-w", "name": "Write-in", "write_in": True}]},
    {"id": "board", "title": "Board of Education", "kind": "candidate", "vote_for": 3,
     "options": [{"id": "board-a", "name": "Farid Haddad"}, {"id": "board-b", "name": "Grace Whitfield"},
                 {"id": "board-c", "name": "Hiro Tanaka"}, {"id": "board-d", "name": "Ines Moreau"},
                 {"id": "board-e", "name": "Jonah Blake"}, {"id": "board-w", "name": "Write-in", "write_in": True}]},
    {"id": "sheriff", "title": "Sheriff", "kind": "candidate", "vote_for": 1,
     "options": [{"id": "sheriff-a", "name": "Kai Brennan"}, {"id": "sheriff-b", "name": "Lena Sorensen"}]},
    {"id": "qa", "title": "Question A", "kind": "question", "vote_for": 1,
     "options": [{"id": "qa-for", "name": "For"}, {"id": "qa-against", "name": "Against"}]},
    {"id": "qb", "title": "Question B", "kind": "question", "vote_for": 1,
     "options": [{"id": "qb-yes", "name": "Yes"}, {"id": "qb-no", "name": "No"}]},
)

QUESTION_TEXT = {
    "qa": ("Shall the county issue bonds of up to $40 million", "to repair roads and bridges?"),
    "qb": ("Shall the charter be amended to set the term", "of the county executive at four years?"),
}


@dataclass(frozen=True, slots=True)
class StyleSpec:
    family: str
    precinct: str
    party: str | None
    pages: tuple[tuple[tuple[str, ...], ...], ...]  # per page, columns of contest ids
    code: int | None = None  # the number the bottom row encodes (ess)


_ESS_PAGE = ((("pres", "sen"), ("board",), ("sheriff", "qa", "qb")),)
_HART_PAGE = ((("pres", "sen", "sheriff"), ("board", "qa", "qb")),)
_DOM_PAGES = ((("pres",), ("sen",), ("board",)), (("sheriff",), ("qa",), ("qb",)))
_PREM_PAGE = ((("pres", "sen"), ("board", "sheriff"), ("qa", "qb")),)

STYLES: dict[str, StyleSpec] = {
    "E-D-11": StyleSpec("ess", "P11", "DEMOCRATIC PARTY", _ESS_PAGE, code=11),
    "E-R-11": StyleSpec("ess", "P11", "REPUBLICAN PARTY", _ESS_PAGE, code=12),
    "E-D-12": StyleSpec("ess", "P12", "DEMOCRATIC PARTY", _ESS_PAGE, code=21),
    "H-13": StyleSpec("hart", "P13", None, _HART_PAGE),
    "H-14": StyleSpec("hart", "P14", None, _HART_PAGE),
    "D-15": StyleSpec("dom", "P15", None, _DOM_PAGES),
    "D-16": StyleSpec("dom", "P16", None, _DOM_PAGES),
    "A-17": StyleSpec("prem", "P17", None, _PREM_PAGE),
}

CODE_BITS = 12  # ess bottom row: a start mark, 12 bits (style number, low bit first), a stop mark
MARGIN_X_IN = 0.55  # printed content between these x (inches from the left) ...
CONTENT_TOP_IN = 3.05  # ... and below this y


# --------------------------------------------------------------------------------------
# The printed page


@dataclass(frozen=True, slots=True)
class Text:
    """A line of printed text: baseline-left point and cap height, inches; ``bold`` doubles
    the stroke; ``font`` is a Hershey font (None: the family's)."""

    text: str
    x_in: float
    y_in: float
    height_in: float
    bold: bool = False
    font: int | None = None


@dataclass(frozen=True, slots=True)
class VendorPage:
    """Everything printed on one page of a vendor-like style (inches)."""

    family: Family
    size_in: tuple[float, float]
    texts: tuple[Text, ...]
    rules_in: tuple[tuple[float, float, float, float, float], ...]  # x1, y1, x2, y2, width
    bands_in: tuple[tuple[float, float, float, float], ...]  # shaded boxes (gray 200)
    timing_in: tuple[tuple[float, float, float, float], ...]  # solid boxes
    brackets_in: tuple[tuple[float, float, int, int], ...]  # corner (x, y) and arm directions (+-1, +-1)
    targets: tuple[dict[str, Any], ...]  # layout targets (JSON-ready)
    write_in_lines_in: tuple[tuple[float, float, float, float], ...]
    example_in: tuple[float, float, float, float]  # the filled example target in the instructions
    precinct_box_in: tuple[float, float, float, float]


def _contest(cid: str) -> dict[str, Any]:
    return next(c for c in CONTESTS if c["id"] == cid)


def text_width_in(text: str, height_in: float, font: int, bold: bool = False) -> float:
    """The printed width of ``text`` at cap height ``height_in`` (the renderer's scale)."""
    return cv2.getTextSize(text, font, 1.0, 2 if bold else 1)[0][0] / 22.0 * height_in


def _fitted(text: str, height_in: float, max_w_in: float, font: int, bold: bool = False) -> float:
    """``height_in``, shrunk so that ``text`` fits in ``max_w_in``."""
    return min(height_in, height_in * max_w_in / max(1e-6, text_width_in(text, height_in, font, bold)))


def timing_marks(family: Family, code: int | None) -> list[tuple[float, float, float, float]]:
    """The family's timing marks (boxes, inches); ``code`` sets the bottom row (ess)."""
    w, h = family.size_in
    marks: list[tuple[float, float, float, float]] = []
    if family.timing == "frame":
        marks += [(round(0.30 + 0.25 * i, 3), 0.20, 0.14, 0.05) for i in range(32)]
        marks += [(0.10, round(0.50 + 0.25 * i, 3), 0.16, 0.06) for i in range(40)]
        marks += [(w - 0.26, round(0.50 + 0.25 * i, 3), 0.16, 0.06) for i in range(40)]
    elif family.timing == "sides":
        n = int((h - 1.0) / 0.3333) + 1
        marks += [(0.12, round(0.50 + 0.3333 * i, 3), 0.20, 0.08) for i in range(n)]
        marks += [(w - 0.32, round(0.50 + 0.3333 * i, 3), 0.20, 0.08) for i in range(n)]
    elif family.timing == "right_top":
        marks += [(round(0.45 + 0.25 * i, 3), 0.18, 0.07, 0.16) for i in range(30)]
        marks += [(w - 0.28, round(0.55 + 0.25 * i, 3), 0.18, 0.07) for i in range(40)]
    if family.bottom_code and code is not None:
        bits = [1] + [(code >> k) & 1 for k in range(CODE_BITS)] + [1]
        marks += [(round(0.30 + 0.5 * i, 3), h - 0.28, 0.30, 0.07) for i, bit in enumerate(bits) if bit]
    return marks


def _column(family: Family, x: float, width: float, contest_ids: tuple[str, ...], top: float
            ) -> tuple[list[dict[str, Any]], list[Text], list, list, list]:
    """One column of contests: targets, texts, rules, bands, write-in lines."""
    targets: list[dict[str, Any]] = []
    texts: list[Text] = []
    rules: list[tuple[float, float, float, float, float]] = []
    bands: list[tuple[float, float, float, float]] = []
    lines: list[tuple[float, float, float, float]] = []
    tw, th = family.target_in
    y = top
    for cid in contest_ids:
        contest = _contest(cid)
        box_top = y
        if family.band:
            bands.append((x, y, width, 0.50))
        title = contest["title"].upper() if family.key == "ess" else contest["title"]
        texts.append(Text(title, x + 0.08, y + 0.20, _fitted(title, 0.12, width - 0.16, family.font, True), bold=True))
        n = contest["vote_for"]
        texts.append(Text(f"Vote for {'One' if n == 1 else 'up to ' + str(n)}", x + 0.08, y + 0.40, 0.085))
        y += 0.62
        for line in QUESTION_TEXT.get(cid, ()):
            texts.append(Text(line, x + 0.08, y, _fitted(line, 0.075, width - 0.16, family.font)))
            y += 0.16
        target_x = x + (0.34 if family.target == "arrow" else 0.10)
        name_x = target_x + tw + (0.22 if family.target == "arrow" else 0.10)
        for opt in contest["options"]:
            box = [round(target_x, 3), round(y, 3), tw, th]
            target: dict[str, Any] = {"contest": cid, "option": opt["id"], "box": box}
            if opt.get("write_in"):
                line_y = round(y + th + 0.05, 3)
                right = x + width - 0.10
                lines.append((name_x, line_y, right, line_y))
                texts.append(Text("write-in", name_x, line_y + 0.11, 0.06))
                bottom = line_y + (0.05 if family.write_in_covers_line else -0.02)
                area_top = round(y - 0.14, 3)
                target["write_in_area"] = [round(name_x, 3), area_top, round(right - name_x, 3), round(bottom - area_top, 3)]
                y += 0.16
            else:
                texts.append(Text(opt["name"], name_x, y + th / 2 + 0.05, 0.10))
                if family.key == "ess" and contest["kind"] == "candidate":
                    texts.append(Text("NPA", x + width - 0.42, y + th / 2 + 0.05, 0.08))
            targets.append(target)
            y += family.pitch_in
        y += 0.06
        rules += [(x, box_top, x + width, box_top, 0.012), (x, y, x + width, y, 0.012),
                  (x, box_top, x, y, 0.012), (x + width, box_top, x + width, y, 0.012)]
        y += 0.12
    return targets, texts, rules, bands, lines


def _header(family: Family, spec: StyleSpec, precinct_name: str, page: int, pages: int) -> tuple[list[Text], tuple[float, float, float, float], list]:
    w = family.size_in[0]
    left = MARGIN_X_IN + 0.1
    title = "OFFICIAL PRIMARY BALLOT" if spec.party else "OFFICIAL BALLOT"
    texts = [Text(title, left, 0.85, _fitted(title, 0.15, 3.6, family.font, True), bold=True)]
    y = 1.12
    if spec.party:
        texts.append(Text(spec.party, left, y, 0.14, bold=True))
        y += 0.25
    texts += [Text("VENDOR COUNTY, MARYLAND", left, y, 0.11), Text("SEPTEMBER 15, 2026", left, y + 0.21, 0.10)]
    precinct_box = (w - 3.45, 0.62, 2.85, 0.30)
    name = precinct_name.upper() if family.key == "ess" else precinct_name
    texts.append(Text(name, precinct_box[0] + 0.06, precinct_box[1] + 0.23,
                      _fitted(name, 0.13, precinct_box[2] - 0.12, family.font, True), bold=True))
    texts.append(Text(f"Card {page} of {pages}", precinct_box[0] + 0.06, 1.15, 0.08))
    verb = "CONNECT THE ARROW POINTING TO YOUR CHOICE" if family.target == "arrow" else "COMPLETELY FILL IN THE OVAL"
    texts += [Text(f"TO VOTE, {verb}", MARGIN_X_IN + 0.15, 2.20, 0.10, bold=True),
              Text("Use a black or blue pen. If you make a mistake, ask for a new ballot.", MARGIN_X_IN + 0.15, 2.45, 0.085),
              Text("To vote for a write-in candidate, write the name on the line and mark the target.",
                   MARGIN_X_IN + 0.15, 2.66, 0.085)]
    rules = [(MARGIN_X_IN, 1.95, w - MARGIN_X_IN, 1.95, 0.02), (MARGIN_X_IN, 2.82, w - MARGIN_X_IN, 2.82, 0.02)]
    return texts, precinct_box, rules


def vendor_page(style_id: str, page: int, precinct_name: str) -> VendorPage:
    """The printed content of a vendor-like style's page and its layout targets."""
    spec = STYLES[style_id]
    family = FAMILIES[spec.family]
    w, h = family.size_in
    columns = spec.pages[page - 1]
    texts, precinct_box, rules = _header(family, spec, precinct_name, page, len(spec.pages))
    col_w = (w - 2 * MARGIN_X_IN - 0.15 * (len(columns) - 1)) / len(columns)
    targets: list[dict[str, Any]] = []
    bands: list[tuple[float, float, float, float]] = []
    lines: list[tuple[float, float, float, float]] = []
    for k, contest_ids in enumerate(columns):
        x = MARGIN_X_IN + k * (col_w + 0.15)
        t, tx, rl, bd, ln = _column(family, round(x, 3), round(col_w, 3), contest_ids, CONTENT_TOP_IN)
        targets += t
        texts += tx
        rules += rl
        bands += bd
        lines += ln
    texts.append(Text(f"Style {style_id}", MARGIN_X_IN, h - 0.55, 0.07))
    brackets: list[tuple[float, float, int, int]] = []
    if family.timing == "none":
        brackets = [(0.30, 0.30, 1, 1), (w - 0.30, 0.30, -1, 1), (0.30, h - 0.30, 1, -1), (w - 0.30, h - 0.30, -1, -1)]
    tw, th = family.target_in
    example = (MARGIN_X_IN + 5.55, 2.12, tw, th)
    return VendorPage(family, family.size_in, tuple(texts), tuple(rules), tuple(bands),
                      tuple(timing_marks(family, spec.code)), tuple(brackets), tuple(targets), tuple(lines),
                      example, precinct_box)


# --------------------------------------------------------------------------------------
# The definition


def precinct_name(pid: str) -> str:
    return next(name for p, name in PRECINCTS if p == pid)


def _layout_json(style_id: str) -> dict[str, Any]:
    spec = STYLES[style_id]
    family = FAMILIES[spec.family]
    ext = ".tif" if family.reference_format == "tif_g4" else ".png"
    pages = []
    for n in range(1, len(spec.pages) + 1):
        vp = vendor_page(style_id, n, precinct_name(spec.precinct))
        page: dict[str, Any] = {"page": n, "size": list(family.size_in),
                                "reference": f"{style_id}-p{n}{ext}", "reference_dpi": REFERENCE_DPI}
        if family.distinguish:
            page["distinguish"] = [list(vp.precinct_box_in)]
        page["targets"] = list(vp.targets)
        pages.append(page)
    return {"style": style_id, "pages": pages}


def election_json() -> dict[str, Any]:
    """The vendor-like ``election.json`` (contract section 2)."""
    styles = []
    for sid, spec in STYLES.items():
        on = {cid for page in spec.pages for column in page for cid in column}
        styles.append({"id": sid, "precincts": [spec.precinct], "contests": [c["id"] for c in CONTESTS if c["id"] in on],
                       "layout": f"layouts/{sid}.json"})
    return {
        "id": ELECTION_ID, "name": "Vendor County Primary 2026", "date": "2026-09-15", "jurisdiction": "MD",
        "precincts": [{"id": p, "name": name, "county": "Vendor"} for p, name in PRECINCTS],
        "contests": [dict(c) for c in CONTESTS],
        "ballot_styles": styles,
    }


def write_vendor_election(out_dir: Path) -> Path:
    """Write ``election.json``, ``layouts/<style>.json`` and each page's blank reference scan
    (rendered, then scanned: gray PNG or bilevel TIFF G4 at :data:`REFERENCE_DPI`). Fixed:
    the same bytes every time. Returns the ``election.json`` path."""
    from scanpipe.election import parse_election
    from scanpipe.synth.vendor_render import blank_scan

    out_dir = Path(out_dir)
    (out_dir / "layouts").mkdir(parents=True, exist_ok=True)
    definition = election_json()
    layouts = {f"layouts/{sid}.json": _layout_json(sid) for sid in STYLES}
    for rel, data in layouts.items():
        (out_dir / rel).write_text(json.dumps(data, indent=1) + "\n")
    path = out_dir / "election.json"
    path.write_text(json.dumps(definition, indent=1) + "\n")
    election = parse_election(definition, layouts, base=out_dir.resolve(), file=str(path.resolve()), check_files=False)
    for sid, spec in STYLES.items():
        for n in range(1, len(spec.pages) + 1):
            family = FAMILIES[spec.family]
            ext = ".tif" if family.reference_format == "tif_g4" else ".png"
            blank_scan(election, sid, n, out_dir / "layouts" / f"{sid}-p{n}{ext}", family.reference_format)
    return path
