"""A third vendor ballot renderer, written apart from ``scanpipe.synth`` and from the other two.

The reader is judged on vendor ballots drawn by generators its authors did not write. This
module imports nothing from scanpipe and shares no drawing, marking or scanning code with
``scanpipe.synth``, :mod:`tests.foreign_renderer` or :mod:`tests.foreign_vendor` (it borrows
only the deck writer and the command line of :mod:`tests.foreign_renderer`). It prints two
vendor conventions those do not cover:

* a **grid** frame, as VotingWorks / AccuVote-style hand-marked ballots print it: a letter
  sheet with timing marks on all four edges (0.1875 x 0.0625 in dashes, every 0.25 in along
  the top and bottom, every 1/6 in down the sides), three columns of thinly ruled contest
  boxes under filled black title bars with reversed (white) text, and thin 0.2 x 0.13 in ovals
  LEFT of the names, centred exactly on the timing-mark grid. Styles ``G-104``, ``G-107N``
  and ``G-107S`` differ only in the printed precinct line (``G-104`` / ``G-107N``) or in one
  contest's candidates (``G-107N`` / ``G-107S``, council district 3 or 4); ``GD-201`` is a
  two-sided sheet (page 1 front, page 2 back) of the same frame;
* an **arrow** frame, as ES&S / Sequoia "connect the arrow" ballots print it: a legal sheet
  with one column of long dashes down the LEFT edge and one row of short bars across the TOP,
  three columns of contests under thick rules, and a broken arrow RIGHT of each name (a
  feathered tail, a gap, a head); the target is the gap, which the voter joins with a line.
  Styles ``A-305`` and ``A-104M`` (an absentee ballot).

Layouts are what a board writes: per page the blank sheet "scanned" cleanly at 200 dpi as the
``reference`` (bilevel TIFF G4 for the grid frame, gray PNG for the arrow frame), target boxes
in inches (the oval, or the arrow's gap, with a small margin), write-in areas, nothing else.

Marks by this renderer's own hand (OpenCV strokes on a 400-dpi print, ink multiplied into
the paper): solid fills, partial fills (63-85 % of the oval), checks and X's crossing the
target, pencil (graphite, lighter but clearly a vote), felt-tip that bleeds past the oval, a
line joining the arrow (2-4 px at 200 dpi), pencil and felt-tip lines; blanks, undervotes,
overvotes; write-in names (a name on the line with the target left empty is ``ambiguous``: the
contract makes it ``unknown``); clutter that is clearly no vote (a stray dot >= 0.15 in from every
target box, initials in a margin); and, rarely, a circled candidate NAME (target untouched),
labelled ``ambiguous`` as the contract has a person decide it (its contest ``pending``).

The scanner is its own too: mostly 200 dpi (150 or 300 sometimes), skew up to 2.5 degrees, a
180-degree feed in a quarter of the sheets, scale and stretch up to 1.5 %, yellowish or
grayish paper in colour scans, sometimes a dark scanner background showing around a sheet
smaller than the image (10-40 px on one or two sides), light noise and dust, and bilevel TIFF
G4 (threshold, ordered dither or error diffusion), gray PNG/JPEG or RGB JPEG/PNG, with the dpi
tag right, wrong (72, 96, 300) or missing. A two-sided sheet gives two files (``-p1``,
``-p2``) or, bilevel, one two-page TIFF. Seeded: the same seed gives the same files.

    python -m tests.third_vendor OUT --cards 200 --seed 5 --jobs 2   # a deck for bench_accuracy --deck OUT

``--cards`` counts sheets, as ``scanpipe.synth`` does: ``expected.json`` has one entry per card
(side), so a two-sided sheet adds two.
"""

from __future__ import annotations

import io
import json
import math
import random
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from tests.foreign_renderer import deck_cli, write_deck

MASTER = 400  # dpi of the printed sheet (marks are drawn at this resolution, then "scanned")
REF_DPI = 200  # the board's blank scans
PROFILE = "third-vendor"

# --------------------------------------------------------------------------------------
# The election

PRECINCTS = (("104", "Millbrook 1-04"), ("107N", "Stonebridge 1-07 North"), ("107S", "Stonebridge 1-07 South"),
             ("201", "Ferris Hill 2-01"), ("305", "Quarry Lake 3-05"))


@dataclass(frozen=True)
class Opt:
    id: str
    name: str  # as election.json names it
    line1: str = ""  # printed: first line (the name)
    line2: str = ""  # printed: running mate
    party: str = ""
    write_in: bool = False


@dataclass(frozen=True)
class Race:
    id: str
    title: str
    kind: str
    vote_for: int
    options: tuple[Opt, ...]
    text: str = ""  # a question's wording


def _cand(oid: str, name: str, party: str = "", mate: str = "") -> Opt:
    return Opt(oid, f"{name} and {mate}" if mate else name, name, f"and {mate}" if mate else "", party)


def _wi(oid: str) -> Opt:
    return Opt(oid, "Write-in", write_in=True)


RACES: tuple[Race, ...] = (
    Race("gov", "Governor / Lieutenant Governor", "candidate", 1, (
        _cand("gov-1", "Rosalind Achterberg", "Democratic", "Teo Malouf"),
        _cand("gov-2", "Garrett Lindahl", "Republican", "Priscilla Onuoha"),
        _cand("gov-3", "Yusuf Demir", "Libertarian", "Carla Benedetti"),
        _cand("gov-4", "Hollis Wren", "Green", "Anjali Varma"), _wi("gov-wi"))),
    Race("comp", "Comptroller", "candidate", 1, (
        _cand("comp-1", "Desmond Farrow", "Democratic"), _cand("comp-2", "Ilse Marchetti", "Republican"),
        _cand("comp-3", "Kwame Asante-Boateng", "Unaffiliated"), _wi("comp-wi"))),
    Race("ag", "Attorney General", "candidate", 1, (
        _cand("ag-1", "Beatriz Valdivia", "Democratic"), _cand("ag-2", "Norbert Kessler", "Republican"), _wi("ag-wi"))),
    Race("sen12", "State Senator, District 12", "candidate", 1, (
        _cand("s12-1", "Mirela Dragomir", "Democratic"), _cand("s12-2", "Chauncey Pruitt", "Republican"), _wi("s12-wi"))),
    Race("sen14", "State Senator, District 14", "candidate", 1, (
        _cand("s14-1", "Oluwaseun Adebayo", "Democratic"), _cand("s14-2", "Fern Castellano", "Republican"),
        _cand("s14-3", "Tobias Grinberg", "Green"), _wi("s14-wi"))),
    Race("hod12", "House of Delegates, District 12", "candidate", 3, (
        _cand("h-1", "Annika Soderberg", "Democratic"), _cand("h-2", "Marcus Delacroix", "Democratic"),
        _cand("h-3", "Nkechi Eze", "Democratic"), _cand("h-4", "Walter Brandt", "Republican"),
        _cand("h-5", "Consuelo Ibarra", "Republican"), _cand("h-6", "Ezra Halloran", "Republican"), _wi("h-wi"))),
    Race("cc3", "County Council, District 3", "candidate", 1, (
        _cand("cc3-1", "Lorraine Whitfield", "Democratic"), _cand("cc3-2", "Arturo Benavides", "Republican"), _wi("cc3-wi"))),
    Race("cc4", "County Council, District 4", "candidate", 1, (
        _cand("cc4-1", "Siobhan Gallagher", "Democratic"), _cand("cc4-2", "Ravi Chandrasekaran", "Republican"), _wi("cc4-wi"))),
    Race("boe", "Board of Education, At Large", "candidate", 2, (
        _cand("boe-1", "Thandiwe Mokoena"), _cand("boe-2", "Gunnar Eklund"), _cand("boe-3", "Paulette Okafor-Reid"),
        _cand("boe-4", "Jasper Nakamura"))),
    Race("judge", "Court of Special Appeals", "question", 1, (Opt("judge-y", "Yes", "Yes"), Opt("judge-n", "No", "No")),
         "Shall Judge Miriam T. Oyelaran be continued in office for another ten-year term?"),
    Race("qa", "Question A: Public Library Bond", "question", 1, (Opt("qa-for", "For", "For"), Opt("qa-against", "Against", "Against")),
         "To authorize Alder County to borrow up to $24,000,000 to renovate and expand the Millbrook and Ferris Hill branch libraries."),
    Race("qb", "Question B: Charter Amendment", "question", 1, (Opt("qb-for", "For", "For"), Opt("qb-against", "Against", "Against")),
         "To limit members of the County Council to three consecutive four-year terms."),
    Race("qc", "Question C: Ferris Hill Park District", "question", 1, (Opt("qc-for", "For", "For"), Opt("qc-against", "Against", "Against")),
         "To create a special taxing district for the upkeep of Ferris Hill Park."),
)
RACE = {r.id: r for r in RACES}


@dataclass(frozen=True)
class Style:
    frame: str  # "grid" | "arrow"
    precincts: tuple[str, ...]
    head: tuple[str, str]  # the printed precinct line(s)
    pages: tuple[tuple[tuple[str, ...], ...], ...]  # grid: per page, per column, contest ids; arrow: one page, one flow


_G_COLS = (("gov", "comp", "ag"), ("sen12", "hod12", "judge"), ("cc3", "boe", "qa", "qb"))
STYLES: dict[str, Style] = {
    "G-104": Style("grid", ("104",), ("Precinct 1-04", "Millbrook"), (_G_COLS,)),
    "G-107N": Style("grid", ("107N",), ("Precinct 1-07", "Stonebridge"), (_G_COLS,)),
    # G-107N but for one contest's candidates (a split precinct: council district 4)
    "G-107S": Style("grid", ("107S",), ("Precinct 1-07", "Stonebridge"),
                    ((_G_COLS[0], _G_COLS[1], ("cc4", "boe", "qa", "qb")),)),
    "GD-201": Style("grid", ("201",), ("Precinct 2-01", "Ferris Hill"),
                    ((("gov", "comp"), ("ag", "sen14", "cc4"), ("hod12", "boe")), (("judge",), ("qa", "qb"), ("qc",)))),
    "A-305": Style("arrow", ("305",), ("PRECINCT 3-05  \u2014  QUARRY LAKE", ""),
                   (((("gov", "comp", "ag", "sen14", "hod12", "cc4", "boe", "judge", "qa", "qb", "qc")),),)),
    "A-104M": Style("arrow", ("104",), ("ABSENTEE BALLOT  \u2014  PRECINCT 1-04  \u2014  MILLBROOK", ""),
                    (((("gov", "comp", "ag", "sen12", "hod12", "cc3", "boe", "judge", "qa", "qb")),),)),
}
STYLE_WEIGHTS = {"G-104": 16, "G-107N": 16, "G-107S": 16, "GD-201": 18, "A-305": 17, "A-104M": 17}
SIZES = {"grid": (8.5, 11.0), "arrow": (8.5, 14.0)}


def _style_contests(sid: str) -> list[str]:
    on = {c for page in STYLES[sid].pages for col in page for c in col}
    return [r.id for r in RACES if r.id in on]


# --------------------------------------------------------------------------------------
# Type and the printed page plan (inches; drawn by `paint`)

FONT_FILES = {
    "sans": ("LiberationSans-Regular.ttf", "DejaVuSans.ttf"),
    "sans_b": ("LiberationSans-Bold.ttf", "DejaVuSans-Bold.ttf"),
    "narrow": ("LiberationSansNarrow-Regular.ttf", "DejaVuSansCondensed.ttf"),
    "narrow_b": ("LiberationSansNarrow-Bold.ttf", "DejaVuSansCondensed-Bold.ttf"),
    "narrow_i": ("LiberationSansNarrow-Italic.ttf", "DejaVuSansCondensed-Oblique.ttf"),
    "serif": ("LiberationSerif-Regular.ttf", "DejaVuSerif.ttf"),
    "serif_b": ("LiberationSerif-Bold.ttf", "DejaVuSerif-Bold.ttf"),
    "hand": ("LiberationSerif-BoldItalic.ttf", "DejaVuSerif-BoldItalic.ttf"),
}
FONT_DIRS = ("/usr/share/fonts/truetype/liberation", "/usr/share/fonts/liberation", "/usr/share/fonts/truetype/liberation2",
             "/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu")


@lru_cache(maxsize=256)
def _font(key: str, px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for name in FONT_FILES[key]:
        for folder in FONT_DIRS:
            if Path(folder, name).is_file():
                return ImageFont.truetype(str(Path(folder, name)), px)
    return ImageFont.load_default(size=px)


def _text_w(key: str, size: float, s: str) -> float:
    """Width of ``s`` in inches at ``size`` inches."""
    return _font(key, round(size * MASTER)).getlength(s) / MASTER


def _wrap(s: str, key: str, size: float, width: float) -> list[str]:
    lines, cur = [], ""
    for word in s.split():
        trial = f"{cur} {word}".strip()
        if cur and _text_w(key, size, trial) > width:
            lines.append(cur)
            cur = word
        else:
            cur = trial
    return lines + ([cur] if cur else [])


Box = tuple[float, float, float, float]


@dataclass
class Page:
    frame: str
    style: str
    number: int
    size: tuple[float, float]
    ops: list[tuple[Any, ...]] = field(default_factory=list)
    targets: list[dict[str, Any]] = field(default_factory=list)  # layout entries, print order
    names: dict[str, Box] = field(default_factory=dict)  # option -> printed name (x, y, w, h)
    ovals: dict[str, tuple[float, float]] = field(default_factory=dict)  # option -> oval centre
    gaps: dict[str, tuple[float, float, float]] = field(default_factory=dict)  # option -> (gap x0, gap x1, y)
    lefts: dict[str, float] = field(default_factory=dict)  # option -> x where the arrow's tail starts
    free: list[Box] = field(default_factory=list)  # empty paper where clutter may go

    def text(self, x: float, y: float, s: str, key: str, size: float, fill: int = 0, anchor: str = "lm") -> None:
        self.ops.append(("text", x, y, s, key, size, fill, anchor))

    @property
    def contests(self) -> list[str]:
        return list(dict.fromkeys(t["contest"] for t in self.targets))


def _r3(v: float) -> float:
    return round(v + 0.0, 3)


# ---- the grid frame

GRID_X = tuple(0.25 + 0.25 * j for j in range(33))  # timing-mark centres along the top and bottom
GRID_R = 1.0 / 6.0  # timing-mark pitch down the sides
GRID_ROWS = 64
GRID_MARK = (0.1875, 0.0625)
GRID_COL_X = (0.45, 2.95, 5.45)  # contest boxes: 2.40 in wide; ovals at x = left + 0.30 (grid columns 2, 12, 22)
GRID_COL_W = 2.40
OVAL_AB = (0.10, 0.065)  # semi-axes of the printed oval (0.2 x 0.13 in)
OVAL_BOX = (0.22, 0.15)  # the layout's target box: the oval and 0.01 in around it


def _option_label(pg: Page, opt: Opt, nx: float, cy: float, fonts: tuple[str, str, str], steps: tuple[float, float]) -> int:
    """An option's name at (nx, cy), its second line and party under it (``fonts``: name,
    second line, party; ``steps``: down to the next line after the name, after the second);
    records the name's extent and returns the grid rows the option takes."""
    bold, regular, party = fonts
    pg.text(nx, cy, opt.line1, bold, 0.105)
    wide = _text_w(bold, 0.105, opt.line1)
    below = cy + steps[0]
    if opt.line2:
        pg.text(nx, below, opt.line2, regular, 0.095)
        wide = max(wide, _text_w(regular, 0.095, opt.line2))
        below += steps[1]
    if opt.party:
        pg.text(nx, below, opt.party, party, 0.08)
    pg.names[opt.id] = (nx, cy - 0.06, wide, 0.12 + (steps[0] if opt.line2 else 0.0))
    return 3 if opt.line2 else 2


def _gy(i: int) -> float:
    return 0.25 + i * GRID_R


def _grid_page(sid: str, n: int) -> Page:
    style = STYLES[sid]
    w, h = SIZES["grid"]
    pg = Page("grid", sid, n, (w, h))
    mw, mh = GRID_MARK
    for i in range(GRID_ROWS):
        xs = GRID_X if i in (0, GRID_ROWS - 1) else (GRID_X[0], GRID_X[-1])
        for x in xs:
            pg.ops.append(("rect", x - mw / 2, _gy(i) - mh / 2, x + mw / 2, _gy(i) + mh / 2, 0))
    pages = len(style.pages)
    if n == 1:
        pg.text(0.45, 0.52, "Official Ballot for General Election", "sans_b", 0.17)
        pg.text(0.45, 0.75, "Alder County, State of Maryland", "sans", 0.11)
        pg.text(0.45, 0.92, "Tuesday, November 6, 2029", "sans", 0.11)
        pg.ops.append(("frame", 0.45, 1.07, 7.85, 1.93, 0.01))
        pg.text(0.56, 1.19, "Instructions", "sans_b", 0.10)
        first = "To vote, completely fill in the oval next to your choice, like this:"
        pg.text(0.56, 1.39, first, "sans", 0.085)
        ex = 0.56 + _text_w("sans", 0.085, first) + 0.2
        pg.ops.append(("disc", ex, 1.39, *OVAL_AB))
        pg.text(0.56, 1.58, "To vote for a person whose name is not printed, fill in the oval next to \u201cwrite-in\u201d "
                "and print the name on the line.", "sans", 0.085)
        pg.text(0.56, 1.77, "Use a black or blue pen. If you make a mistake, ask a poll worker for a new ballot.", "sans", 0.085)
        top = 2.07
        pg.free.append((4.0, 0.42, 1.9, 0.52))
    else:
        pg.text(0.45, 0.52, f"Official Ballot for General Election \u2014 Side {n}", "sans_b", 0.15)
        pg.text(0.45, 0.75, "Alder County, State of Maryland  \u00b7  Tuesday, November 6, 2029", "sans", 0.10)
        pg.ops.append(("line", 0.45, 1.0, 7.85, 1.0, 0.01))
        top = 1.15
        pg.free.append((5.3, 0.42, 0.8, 0.45))
    pg.text(7.85, 0.54, style.head[0], "sans_b", 0.15, anchor="rm")
    pg.text(7.85, 0.77, style.head[1], "sans", 0.12, anchor="rm")
    pg.text(0.45, 10.5, "Alder County  \u00b7  General Election  \u00b7  November 6, 2029", "sans", 0.075)
    more = "  \u00b7  Turn the ballot over" if n < pages else ("  \u00b7  Thank you for voting" if n == pages else "")
    pg.text(7.85, 10.5, f"Page {n} of {pages}{more}", "sans", 0.075, anchor="rm")
    for k, column in enumerate(style.pages[n - 1]):
        y = top
        for cid in column:
            y = _grid_contest(pg, RACE[cid], GRID_COL_X[k], y) + 0.1
        if y > 10.38:
            raise ValueError(f"{sid} page {n} column {k + 1} runs to {y:.2f} in")
        if 10.3 - y > 0.5:
            pg.free.append((GRID_COL_X[k] + 0.15, y + 0.1, GRID_COL_W - 0.3, 10.3 - y - 0.15))
    return pg


def _grid_contest(pg: Page, race: Race, xl: float, y0: float) -> float:
    """One ruled contest box from ``y0`` down; returns its bottom."""
    xr = xl + GRID_COL_W
    title = _wrap(race.title, "sans_b", 0.12, GRID_COL_W - 0.16)
    bar = 0.1 + 0.165 * len(title)
    pg.ops.append(("rect", xl, y0, xr, y0 + bar, 0))
    for i, line in enumerate(title):
        pg.text(xl + 0.08, y0 + 0.05 + 0.0825 + 0.165 * i, line, "sans_b", 0.12, fill=255)
    y = y0 + bar + 0.11
    vote = "Vote for 1" if race.vote_for == 1 else f"Vote for up to {race.vote_for}"
    pg.text(xl + 0.08, y, vote, "sans_b", 0.09)
    y += 0.07
    for line in _wrap(race.text, "sans", 0.085, GRID_COL_W - 0.16):
        y += 0.125
        pg.text(xl + 0.08, y, line, "sans", 0.085)
    i = math.ceil((y + 0.2 - 0.25) / GRID_R - 1e-9)
    cx = xl + 0.30
    for opt in race.options:
        cy = _gy(i)
        pg.ops.append(("oval", cx, cy, *OVAL_AB, 0.011))
        target: dict[str, Any] = {"contest": race.id, "option": opt.id,
                                  "box": [_r3(cx - OVAL_BOX[0] / 2), _r3(cy - OVAL_BOX[1] / 2), *OVAL_BOX]}
        pg.ovals[opt.id] = (cx, cy)
        nx = cx + 0.22
        rows = 2
        if opt.write_in:
            pg.ops.append(("line", nx, cy + 0.075, xr - 0.12, cy + 0.075, 0.008))
            pg.text(nx, cy + 0.13, "write-in", "sans", 0.07, fill=70)
            target["write_in_area"] = [_r3(nx), _r3(cy - 0.15), _r3(xr - 0.12 - nx), 0.215]
        else:
            rows = _option_label(pg, opt, nx, cy, ("sans_b", "sans", "sans"), (0.14, 0.135))
        pg.targets.append(target)
        i += rows
    bottom = _gy(i) - 0.06
    pg.ops.append(("frame", xl, y0, xr, bottom, 0.01))
    return bottom


# ---- the arrow frame

ARROW_ROW0 = 0.55  # top of the first left-edge dash
ARROW_PITCH = 0.1875
ARROW_ROWS = 71
ARROW_COL_X = (0.8, 3.25, 5.7)
ARROW_COL_W = 2.35
ARROW_GAP = 0.26
ARROW_BOTTOM = 13.45


def _ay(r: int) -> float:
    """Centre of left-edge dash ``r``: option rows sit on them."""
    return ARROW_ROW0 + 0.03125 + r * ARROW_PITCH


def _arrow_shape(ops: list[tuple[Any, ...]], tip: float, cy: float, joined: bool = False) -> tuple[float, float, float]:
    """A broken arrow ending at ``tip``: returns (tail start, gap start, gap end)."""
    hb = tip - 0.12
    sh0 = hb - 0.10
    gx0 = sh0 - ARROW_GAP
    tx0 = gx0 - 0.22
    ops.append(("line", tx0, cy, (sh0 if joined else gx0), cy, 0.028))
    for fx in (tx0, tx0 + 0.055):
        ops.append(("line", fx, cy, fx - 0.05, cy - 0.045, 0.018))
        ops.append(("line", fx, cy, fx - 0.05, cy + 0.045, 0.018))
    ops.append(("line", sh0, cy, hb + 0.01, cy, 0.028))
    ops.append(("poly", ((hb, cy - 0.065), (tip, cy), (hb, cy + 0.065)), 0))
    return tx0, gx0, sh0


def _arrow_page(sid: str) -> Page:
    style = STYLES[sid]
    w, h = SIZES["arrow"]
    pg = Page("arrow", sid, 1, (w, h))
    for r in range(ARROW_ROWS):
        y = ARROW_ROW0 + r * ARROW_PITCH
        pg.ops.append(("rect", 0.15, y, 0.525, y + 0.0625, 0))
    for m in range(30):
        x = 0.875 + 0.25 * m
        pg.ops.append(("rect", x, 0.15, x + 0.0625, 0.3375, 0))
    mid = 0.8 + (ARROW_COL_X[-1] + ARROW_COL_W - 0.8) / 2
    pg.text(mid, 0.72, "OFFICIAL BALLOT", "serif_b", 0.22, anchor="mm")
    pg.text(mid, 0.99, "GENERAL ELECTION  \u00b7  NOVEMBER 6, 2029", "serif", 0.13, anchor="mm")
    pg.text(mid, 1.19, "ALDER COUNTY, MARYLAND", "serif", 0.13, anchor="mm")
    pg.ops.append(("frame", 0.8, 1.36, 8.05, 1.68, 0.02))
    pg.text(mid, 1.52, style.head[0], "serif_b", 0.14, anchor="mm")
    pg.text(0.8, 1.85, "INSTRUCTIONS TO VOTERS", "narrow_b", 0.10)
    first = "To vote, COMPLETE THE ARROW pointing to your choice with one straight line, like this:"
    pg.text(0.8, 2.03, first, "narrow", 0.095)
    ex = 0.8 + _text_w("narrow", 0.095, first) + 0.85
    _arrow_shape(pg.ops, ex, 2.03, joined=True)
    pg.text(0.8, 2.2, "Use a black or blue pen. To vote for a person whose name is not printed, complete the arrow and "
            "write the name on the line.", "narrow", 0.095)
    pg.ops.append(("line", 0.8, 2.36, 8.05, 2.36, 0.03))
    pg.free.append((6.55, 0.55, 1.4, 0.6))
    col, y = 0, 2.5
    for cid in style.pages[0][0]:
        sub = Page("arrow", sid, 1, (w, h))
        bottom = _arrow_contest(sub, RACE[cid], ARROW_COL_X[col], y)
        if bottom > ARROW_BOTTOM:
            if y > 2.5 + 0.5 and ARROW_BOTTOM - y > 0.5:
                pg.free.append((ARROW_COL_X[col] + 0.15, y + 0.05, ARROW_COL_W - 0.3, ARROW_BOTTOM - y - 0.1))
            col, y = col + 1, 2.5
            if col >= len(ARROW_COL_X):
                raise ValueError(f"{sid}: contests do not fit")
            sub = Page("arrow", sid, 1, (w, h))
            bottom = _arrow_contest(sub, RACE[cid], ARROW_COL_X[col], y)
        pg.ops += sub.ops
        pg.targets += sub.targets
        pg.names.update(sub.names)
        pg.gaps.update(sub.gaps)
        pg.lefts.update(sub.lefts)
        y = bottom + 0.04
    if ARROW_BOTTOM - y > 0.6:
        pg.free.append((ARROW_COL_X[col] + 0.15, y + 0.1, ARROW_COL_W - 0.3, ARROW_BOTTOM - y - 0.2))
    for x in (ARROW_COL_X[1] - 0.05, ARROW_COL_X[2] - 0.05):
        pg.ops.append(("line", x, 2.45, x, ARROW_BOTTOM, 0.01))
    pg.text(mid, 13.62, "Alder County Board of Elections  \u00b7  General Election 2029  \u00b7  Vote in every column",
            "narrow", 0.08, anchor="mm")
    return pg


def _arrow_contest(pg: Page, race: Race, xl: float, y0: float) -> float:
    xr = xl + ARROW_COL_W
    pg.ops.append(("line", xl, y0, xr, y0, 0.025))
    title = _wrap(race.title.upper(), "narrow_b", 0.115, ARROW_COL_W - 0.1)
    for i, line in enumerate(title):
        pg.text(xl + 0.05, y0 + 0.13 + 0.155 * i, line, "narrow_b", 0.115)
    y = y0 + 0.13 + 0.155 * (len(title) - 1) + 0.16
    words = {1: "ONE", 2: "TWO", 3: "THREE"}
    vote = "Vote for ONE" if race.vote_for == 1 else f"Vote for no more than {words[race.vote_for]}"
    pg.text(xl + 0.05, y, vote, "narrow_i", 0.09)
    for line in _wrap(race.text, "narrow", 0.09, ARROW_COL_W - 0.1):
        y += 0.13
        pg.text(xl + 0.05, y, line, "narrow", 0.09)
    r = math.ceil((y + 0.17 - ARROW_ROW0 - 0.03125) / ARROW_PITCH - 1e-9)
    for opt in race.options:
        cy = _ay(r)
        tx0, gx0, gx1 = _arrow_shape(pg.ops, xr - 0.06, cy)
        target: dict[str, Any] = {"contest": race.id, "option": opt.id,
                                  "box": [_r3(gx0 - 0.02), _r3(cy - 0.06), _r3(gx1 - gx0 + 0.04), 0.12]}
        pg.gaps[opt.id] = (gx0, gx1, cy)
        pg.lefts[opt.id] = tx0 - 0.05
        nx = xl + 0.1
        rows = 2
        if opt.write_in:
            pg.ops.append(("line", nx, cy + 0.06, tx0 - 0.14, cy + 0.06, 0.008))
            pg.text(nx, cy + 0.115, "Write-in", "narrow", 0.07, fill=70)
            target["write_in_area"] = [_r3(nx), _r3(cy - 0.16), _r3(tx0 - 0.14 - nx), 0.21]
        else:
            rows = _option_label(pg, opt, nx, cy, ("narrow_b", "narrow", "narrow_i"), (0.135, 0.13))
        pg.targets.append(target)
        r += rows
    return _ay(r) - 0.12


@lru_cache(maxsize=None)
def page_plan(sid: str, n: int) -> Page:
    return _grid_page(sid, n) if STYLES[sid].frame == "grid" else _arrow_page(sid)


def paint(pg: Page, dpi: int) -> np.ndarray:
    """The printed sheet as gray pixels at ``dpi``."""
    w, h = pg.size
    img = Image.new("L", (round(w * dpi), round(h * dpi)), 255)
    d = ImageDraw.Draw(img)

    def px(v: float) -> float:
        return v * dpi

    for op in pg.ops:
        kind = op[0]
        if kind == "rect":
            _, x0, y0, x1, y1, fill = op
            d.rectangle([px(x0), px(y0), px(x1) - 1, px(y1) - 1], fill=fill)
        elif kind == "frame":
            _, x0, y0, x1, y1, lw = op
            d.rectangle([px(x0), px(y0), px(x1), px(y1)], outline=0, width=max(1, round(lw * dpi)))
        elif kind == "line":
            _, x0, y0, x1, y1, lw = op
            d.line([(px(x0), px(y0)), (px(x1), px(y1))], fill=0, width=max(1, round(lw * dpi)))
        elif kind == "oval":
            _, cx, cy, a, b, lw = op
            d.ellipse([px(cx - a), px(cy - b), px(cx + a), px(cy + b)], outline=0, width=max(1, round(lw * dpi)))
        elif kind == "disc":
            _, cx, cy, a, b = op
            d.ellipse([px(cx - a), px(cy - b), px(cx + a), px(cy + b)], fill=0)
        elif kind == "poly":
            _, pts, fill = op
            d.polygon([(px(x), px(y)) for x, y in pts], fill=fill)
        elif kind == "text":
            _, x, y, s, key, size, fill, anchor = op
            d.text((px(x), px(y)), s, font=_font(key, round(size * dpi)), fill=fill, anchor=anchor)
    return np.asarray(img)


@lru_cache(maxsize=None)
def _printed(sid: str, n: int) -> np.ndarray:
    """The blank sheet at the print resolution (cached per process; never written to)."""
    out = paint(page_plan(sid, n), MASTER)
    out.setflags(write=False)
    return out


# --------------------------------------------------------------------------------------
# The definition a board writes


def _reference_name(sid: str, n: int) -> str:
    ext = ".tif" if STYLES[sid].frame == "grid" else ".png"
    return f"{sid}{ext}" if len(STYLES[sid].pages) == 1 else f"{sid}-p{n}{ext}"


def write_election(out: Path) -> Path:
    """``election.json``, each style's layout, and each page's blank scanned at 200 dpi (the reference)."""
    out = Path(out)
    (out / "layouts").mkdir(parents=True, exist_ok=True)
    contests = []
    for race in RACES:
        options = []
        for o in race.options:
            options.append({"id": o.id, "name": o.name, **({"write_in": True} if o.write_in else {})})
        contests.append({"id": race.id, "title": race.title, "kind": race.kind, "vote_for": race.vote_for, "options": options})
    styles = []
    for sid, style in STYLES.items():
        pages = []
        for n in range(1, len(style.pages) + 1):
            pg = page_plan(sid, n)
            w, h = pg.size
            blank = cv2.resize(np.asarray(_printed(sid, n)), (round(w * REF_DPI), round(h * REF_DPI)), interpolation=cv2.INTER_AREA)
            ref = _reference_name(sid, n)
            if style.frame == "grid":
                Image.fromarray(np.where(blank >= 160, 255, 0).astype(np.uint8)).convert("1", dither=Image.Dither.NONE).save(
                    out / "layouts" / ref, "TIFF", compression="group4", dpi=(REF_DPI, REF_DPI))
            else:
                Image.fromarray(blank).save(out / "layouts" / ref, "PNG", dpi=(REF_DPI, REF_DPI))
            pages.append({"page": n, "size": list(pg.size), "reference": ref, "reference_dpi": REF_DPI, "targets": pg.targets})
        (out / "layouts" / f"{sid}.json").write_text(json.dumps({"style": sid, "pages": pages}, indent=1) + "\n")
        styles.append({"id": sid, "precincts": list(style.precincts), "contests": _style_contests(sid), "layout": f"layouts/{sid}.json"})
    election = {"id": "alder-29", "name": "Alder County General Election 2029", "date": "2029-11-06", "jurisdiction": "MD",
                "precincts": [{"id": p, "name": name, "county": "Alder"} for p, name in PRECINCTS],
                "contests": contests, "ballot_styles": styles}
    (out / "election.json").write_text(json.dumps(election, indent=1) + "\n")
    return out / "election.json"


# --------------------------------------------------------------------------------------
# The voter's hand

PENS = {"black": (28, 28, 34), "blue": (30, 55, 160)}
FELT = {"black": (12, 12, 18), "blue": (18, 35, 135)}
GRAPHITE = (62, 62, 68)
OVAL_KINDS = {"fill": 34, "partial": 12, "check": 12, "x": 12, "pencil": 14, "felt_tip": 16}
ARROW_KINDS = {"arrow_line": 60, "arrow_pencil": 15, "arrow_felt": 13, "x": 6, "check": 6}
WRITE_INS = ("Marion Tolliver", "Grace Ndiaye", "Pat Kowalczyk", "Juan Ortega", "L. Abernathy", "Sun Wei", "Bea Kettering")


class Pad:
    """A square of the print around a point, where one mark's ink (alpha) is drawn."""

    def __init__(self, cx: float, cy: float, half: float = 0.5) -> None:
        self.px0 = round((cx - half) * MASTER)
        self.py0 = round((cy - half) * MASTER)
        n = round(2 * half * MASTER)
        self.m = np.zeros((n, n), np.uint8)

    def pts(self, pts: Any) -> np.ndarray:
        a = np.asarray(pts, np.float64) * MASTER - (self.px0, self.py0)
        return np.round(a * 16).astype(np.int32).reshape(-1, 1, 2)

    def stroke(self, pts: Any, width: float) -> None:
        cv2.polylines(self.m, [self.pts(pts)], False, 255, max(1, round(width * MASTER)), cv2.LINE_AA, 4)

    def fill(self, pts: Any) -> None:
        cv2.fillPoly(self.m, [self.pts(pts)], 255, cv2.LINE_AA, 4)

    def grid(self) -> tuple[np.ndarray, np.ndarray]:
        """Inch coordinates of every pad pixel centre."""
        n = self.m.shape[0]
        ys, xs = np.mgrid[0:n, 0:n].astype(np.float32)
        return (xs + self.px0 + 0.5) / MASTER, (ys + self.py0 + 0.5) / MASTER

    def alpha(self) -> np.ndarray:
        return self.m.astype(np.float32) / 255.0


def _lay_ink(sheet: np.ndarray, pad: Pad, alpha: np.ndarray, colour: tuple[int, int, int]) -> None:
    """Ink multiplies the paper (what a pen's dye does): ``sheet`` RGB uint8, changed in place."""
    hh, ww = sheet.shape[:2]
    ah, aw = alpha.shape
    x0, y0 = max(0, pad.px0), max(0, pad.py0)
    x1, y1 = min(ww, pad.px0 + aw), min(hh, pad.py0 + ah)
    if x1 <= x0 or y1 <= y0:
        return
    a = np.clip(alpha[y0 - pad.py0:y1 - pad.py0, x0 - pad.px0:x1 - pad.px0], 0, 1)[..., None]
    absorb = 1.0 - np.asarray(colour, np.float32) / 255.0
    region = sheet[y0:y1, x0:x1].astype(np.float32)
    sheet[y0:y1, x0:x1] = np.clip(region * (1.0 - a * absorb) + 0.5, 0, 255).astype(np.uint8)


def _ellipse_pts(cx: float, cy: float, a: float, b: float, rot: float, rng: np.random.Generator, wobble: float = 0.0,
                 n: int = 56) -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    rad = 1 + wobble * np.convolve(rng.normal(0, 1, n + 6), np.ones(7) / 7, "valid")[:n]
    x, y = a * rad * np.cos(t), b * rad * np.sin(t)
    c, s = math.cos(rot), math.sin(rot)
    return np.stack([cx + c * x - s * y, cy + s * x + c * y], 1)


def _grain(shape: tuple[int, int], rng: np.random.Generator, sigma: float) -> np.ndarray:
    g = cv2.GaussianBlur(rng.random(shape, dtype=np.float32), (0, 0), sigma)
    lo, hi = float(g.min()), float(g.max())
    return (g - lo) / max(1e-6, hi - lo)


def _oval_mark(kind: str, cx: float, cy: float, rng: np.random.Generator) -> tuple[Pad, np.ndarray]:
    """One vote on an oval centred at (cx, cy): the pad and its alpha."""
    a, b = OVAL_AB
    pad = Pad(cx, cy)
    ox, oy = cx + rng.uniform(-0.006, 0.006), cy + rng.uniform(-0.005, 0.005)
    if kind in ("fill", "pencil"):
        pad.fill(_ellipse_pts(ox, oy, a * rng.uniform(0.98, 1.07), b * rng.uniform(0.97, 1.12), rng.uniform(-0.1, 0.1), rng, 0.03))
        for _ in range(int(rng.integers(1, 3))):  # the strokes that overshoot the outline a little
            y = cy + rng.uniform(-0.6, 0.6) * b
            pad.stroke([(cx - a * 0.9, y), (cx + a * rng.uniform(0.95, 1.15), y + rng.uniform(-0.01, 0.01))], 0.02)
        alpha = pad.alpha()
        if kind == "fill":
            streaks = _hatch(pad, cx, cy, rng, 0.012, 0.05)
            return pad, alpha * rng.uniform(0.93, 1.0) * (1 - 0.12 * streaks)
        return pad, alpha * rng.uniform(0.74, 0.86) * (1 - 0.08 * _grain(alpha.shape, rng, 1.2))
    if kind == "felt_tip":
        pad.fill(_ellipse_pts(ox, oy, a * rng.uniform(1.1, 1.28), b * rng.uniform(1.15, 1.38), rng.uniform(-0.15, 0.15), rng, 0.05))
        for _ in range(int(rng.integers(3, 7))):  # ink wicking into the paper at the edge
            t = rng.uniform(0, 2 * np.pi)
            bx, by = ox + a * 1.2 * math.cos(t), oy + b * 1.25 * math.sin(t)
            r = rng.uniform(0.008, 0.017)
            pad.fill(_ellipse_pts(bx, by, r, r * rng.uniform(0.7, 1.0), 0.0, rng, 0.0, 16))
        alpha = cv2.GaussianBlur(pad.alpha(), (0, 0), 0.005 * MASTER)
        return pad, np.clip(alpha * 1.15, 0, 1)
    if kind == "partial":
        xs, ys = pad.grid()
        theta = rng.uniform(0, 2 * np.pi)
        proj = (xs - cx) * math.cos(theta) + (ys - cy) * math.sin(theta)
        inner = ((xs - cx) / (a - 0.006)) ** 2 + ((ys - cy) / (b - 0.006)) ** 2 <= 1
        share = rng.uniform(0.63, 0.85)
        cut = float(np.quantile(proj[inner], share))
        region = (((xs - cx) / (a * 1.04)) ** 2 + ((ys - cy) / (b * 1.06)) ** 2 <= 1) & (proj <= cut)
        pad.m[region] = 255
        # a ragged edge: the pen going back and forth across the cut
        nx, ny = -math.sin(theta), math.cos(theta)
        zig = []
        for k, s in enumerate(np.linspace(-1.1, 1.1, 9)):
            d = cut + (0.012 if k % 2 else -0.02)
            zig.append((cx + d * math.cos(theta) + s * a * nx, cy + d * math.sin(theta) + s * a * ny))
        inside = [(x, y) for x, y in zig if ((x - cx) / (a * 1.1)) ** 2 + ((y - cy) / (b * 1.15)) ** 2 <= 1]
        if len(inside) > 1:
            pad.stroke(inside, 0.016)
        return pad, pad.alpha() * rng.uniform(0.9, 1.0) * (1 - 0.1 * _hatch(pad, cx, cy, rng, 0.01, 0.04))
    width = rng.uniform(0.02, 0.03)
    if kind == "check":
        p0 = (ox - a * rng.uniform(0.5, 0.85), oy - b * rng.uniform(-0.1, 0.35))
        p1 = (ox - a * rng.uniform(-0.1, 0.25), oy + b * rng.uniform(0.65, 1.0))
        p2 = (ox + a * rng.uniform(1.0, 1.5), oy - b * rng.uniform(1.6, 2.6))
        bend = (p1[0] + (p2[0] - p1[0]) * 0.5 + rng.uniform(-0.01, 0.01), p1[1] + (p2[1] - p1[1]) * 0.5 + rng.uniform(-0.012, 0.0))
        pad.stroke([p0, p1, bend, p2], width)
    else:  # x
        sx, sy = a * rng.uniform(0.9, 1.3), b * rng.uniform(1.0, 1.6)
        pad.stroke([(ox - sx, oy - sy), (ox + sx * rng.uniform(0.9, 1.1), oy + sy)], width)
        pad.stroke([(ox - sx * rng.uniform(0.9, 1.1), oy + sy), (ox + sx, oy - sy * rng.uniform(0.85, 1.1))], width)
    return pad, pad.alpha() * rng.uniform(0.9, 1.0)


def _hatch(pad: Pad, cx: float, cy: float, rng: np.random.Generator, width: float, pitch: float) -> np.ndarray:
    """Pen-stroke streaks (0..1) across the mark, to lighten it a little where strokes did not overlap."""
    tmp = Pad(cx, cy)
    ang = rng.uniform(-0.6, 0.6)
    c, s = math.cos(ang), math.sin(ang)
    for k in np.arange(-0.15, 0.15, pitch):
        tmp.stroke([(cx - 0.2 * c - k * s, cy - 0.2 * s + k * c), (cx + 0.2 * c - k * s, cy + 0.2 * s + k * c)], width)
    return tmp.alpha()


def _arrow_mark(kind: str, gx0: float, gx1: float, cy: float, rng: np.random.Generator) -> tuple[Pad, np.ndarray]:
    """One vote on a broken arrow: a line across the gap (or an X / a check over it)."""
    mid = (gx0 + gx1) / 2
    pad = Pad(mid, cy)
    gap = gx1 - gx0
    if kind.startswith("arrow_"):
        width = {"arrow_line": rng.uniform(0.012, 0.02), "arrow_pencil": rng.uniform(0.016, 0.022),
                 "arrow_felt": rng.uniform(0.025, 0.04)}[kind]
        x0, x1 = gx0 - rng.uniform(0.0, 0.05), gx1 + rng.uniform(0.0, 0.05)
        y0, y1 = cy + rng.uniform(-0.012, 0.012), cy + rng.uniform(-0.012, 0.012)
        sag = rng.uniform(-0.008, 0.008)
        pts = [(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t + sag * math.sin(math.pi * t)) for t in np.linspace(0, 1, 7)]
        pad.stroke(pts, width)
        alpha = pad.alpha()
        if kind == "arrow_pencil":
            return pad, alpha * rng.uniform(0.86, 0.96) * (1 - 0.08 * _grain(alpha.shape, rng, 1.0))
        if kind == "arrow_felt":
            return pad, np.clip(cv2.GaussianBlur(alpha, (0, 0), 0.004 * MASTER) * 1.15, 0, 1)
        return pad, alpha * rng.uniform(0.92, 1.0)
    width = rng.uniform(0.018, 0.028)
    if kind == "x":
        hx, hy = gap * rng.uniform(0.3, 0.45), rng.uniform(0.06, 0.09)
        pad.stroke([(mid - hx, cy - hy), (mid + hx, cy + hy)], width)
        pad.stroke([(mid - hx, cy + hy), (mid + hx, cy - hy)], width)
    else:  # check
        p0 = (gx0 + gap * rng.uniform(0.1, 0.25), cy - rng.uniform(0.0, 0.03))
        p1 = (gx0 + gap * rng.uniform(0.35, 0.5), cy + rng.uniform(0.045, 0.07))
        p2 = (gx1 + rng.uniform(-0.02, 0.04), cy - rng.uniform(0.1, 0.16))
        pad.stroke([p0, p1, p2], width)
    return pad, pad.alpha() * rng.uniform(0.9, 1.0)


def _handwriting(sheet: np.ndarray, text: str, x: float, base: float, size: float, colour: tuple[int, int, int],
                 rng: np.random.Generator) -> Box:
    """Write ``text`` by hand from ``x`` with its baseline at ``base`` (inches); returns the inked box."""
    px = round(size * MASTER)
    w_in = _text_w("hand", size, text) * 1.25 + 0.2
    pad_w, pad_h = round(w_in * MASTER), round(size * 2.2 * MASTER)
    layer = Image.new("L", (pad_w, pad_h), 0)
    d = ImageDraw.Draw(layer)
    pen_x, drift = 0.05 * MASTER, 0.0
    for ch in text:
        fpx = max(6, round(px * rng.uniform(0.9, 1.1)))
        drift = float(np.clip(drift + rng.normal(0, 0.004 * MASTER), -0.02 * MASTER, 0.02 * MASTER))
        d.text((pen_x, pad_h * 0.65 + drift), ch, font=_font("hand", fpx), fill=255, anchor="ls")
        pen_x += _font("hand", fpx).getlength(ch) * rng.uniform(0.95, 1.08)
    alpha = cv2.GaussianBlur(np.asarray(layer, np.float32) / 255.0, (0, 0), 0.6) * rng.uniform(0.93, 1.0)
    pad = Pad(0, 0, 0)
    pad.px0, pad.py0 = round(x * MASTER - 0.05 * MASTER), round(base * MASTER - pad_h * 0.65)
    _lay_ink(sheet, pad, alpha, colour)
    return (x, base - size * 1.05, pen_x / MASTER, size * 1.4)


def _box_dist(px: float, py: float, box: list[float]) -> float:
    x, y, w, h = box
    dx = max(x - px, 0.0, px - (x + w))
    dy = max(y - py, 0.0, py - (y + h))
    return math.hypot(dx, dy)


def _rect_dist(a: Box, box: list[float]) -> float:
    ax, ay, aw, ah = a
    x, y, w, h = box
    dx = max(x - (ax + aw), 0.0, ax - (x + w))
    dy = max(y - (ay + ah), 0.0, ay - (y + h))
    return math.hypot(dx, dy)


def _stray_dot(pg: Page, box: list[float], rng: np.random.Generator) -> tuple[float, float, float] | None:
    """A dot 0.18-0.4 in from this target and >= 0.15 in from every target box of the page."""
    x, y, w, h = box
    for _ in range(30):
        t = rng.uniform(0, 2 * np.pi)
        reach = rng.uniform(0.18, 0.4)
        px = x + w / 2 + (w / 2 + reach) * math.cos(t)
        py = y + h / 2 + (h / 2 + reach) * math.sin(t)
        r = rng.uniform(0.012, 0.022)
        if not (0.6 < px < pg.size[0] - 0.6 and 0.6 < py < pg.size[1] - 0.6):
            continue
        if min(_box_dist(px, py, t_["box"]) for t_ in pg.targets) - r >= 0.15:
            return px, py, r
    return None


def _circle_name(pg: Page, option: str, rng: np.random.Generator) -> list[tuple[float, float]] | None:
    """A loop around the printed name that stays off every target (None where it cannot)."""
    nx, ny, nw, nh = pg.names[option]
    mx, my = rng.uniform(0.035, 0.06), rng.uniform(0.03, 0.05)
    ca, cb = nw / 2 + mx, nh / 2 + my
    while (nw / 2 / ca) ** 4 + (nh / 2 / cb) ** 4 > 0.85:
        ca, cb = ca * 1.04, cb * 1.04
    cx, cy = nx + nw / 2, ny + nh / 2
    t0 = rng.uniform(0, 2 * np.pi)
    t = np.linspace(t0, t0 + 2 * np.pi + rng.uniform(0.25, 0.6), 90)
    wob = 1 + 0.04 * np.sin(3 * t + rng.uniform(0, 6)) + np.linspace(0, rng.uniform(-0.06, 0.06), t.size)
    c, s = np.cos(t), np.sin(t)
    xs = cx + ca * wob * np.sign(c) * np.abs(c) ** 0.5
    ys = cy + cb * wob * np.sign(s) * np.abs(s) ** 0.5
    loop = list(zip(xs.tolist(), ys.tolist()))
    right_limit = pg.lefts.get(option)
    if right_limit is not None and max(xs) > right_limit - 0.06:
        return None
    for tt in pg.targets:
        if min(_box_dist(x, y, tt["box"]) for x, y in loop) < 0.04:
            return None
    return loop


def _pick(rnd: random.Random, weights: list[float], n: int) -> set[int]:
    """``n`` distinct indices drawn with these weights (write-in lines are chosen less often)."""
    left, out = list(range(len(weights))), set()
    for _ in range(min(n, len(weights))):
        j = rnd.choices(left, weights=[weights[k] for k in left])[0]
        out.add(j)
        left.remove(j)
    return out


def _choose_kind(rnd: random.Random, kinds: dict[str, int], habit: str) -> str:
    if rnd.random() < 0.7:
        return habit
    return rnd.choices(list(kinds), weights=list(kinds.values()))[0]


def mark_page(sheet: np.ndarray, pg: Page, rnd: random.Random, rng: np.random.Generator, voter: dict[str, Any]) -> tuple[
        list[dict[str, Any]], list[dict[str, Any]]]:
    """Choose and draw every mark of one side; returns its truth targets and the clutter drawn."""
    arrow = pg.frame == "arrow"
    kinds = ARROW_KINDS if arrow else OVAL_KINDS
    habit = voter["arrow_habit"] if arrow else voter["oval_habit"]
    pen = voter["pen"]
    truth: list[dict[str, Any]] = []
    clutter: list[dict[str, Any]] = []
    for cid in pg.contests:
        race = RACE[cid]
        mine = [t for t in pg.targets if t["contest"] == cid]
        r = rnd.random()
        if voter["blank"]:
            n = 0
        elif r < 0.06:
            n = min(len(mine), race.vote_for + 1)
        elif r < 0.19:
            n = rnd.randint(0, race.vote_for - 1)
        else:
            n = race.vote_for
        chosen = _pick(rnd, [0.15 if t.get("write_in_area") else 1.0 for t in mine], n)
        for j, t in enumerate(mine):
            opt = next(o for o in race.options if o.id == t["option"])
            entry: dict[str, Any] = {"contest": cid, "option": opt.id, "mark": "none", "ink": None, "intent": "no_vote"}
            if j in chosen:
                kind = "pencil" if pen == "pencil" and not arrow else "arrow_pencil" if pen == "pencil" else _choose_kind(rnd, kinds, habit)
                graphite = kind in ("pencil", "arrow_pencil")
                ink = "graphite" if graphite else voter["ink"]
                colour = GRAPHITE if graphite else FELT[ink] if kind in ("felt_tip", "arrow_felt") else PENS[ink]
                if arrow:
                    pad, alpha = _arrow_mark(kind, *pg.gaps[opt.id], rng)
                else:
                    pad, alpha = _oval_mark(kind, *pg.ovals[opt.id], rng)
                _lay_ink(sheet, pad, alpha, colour)
                entry.update(mark=kind, ink=ink, intent="vote")
                if opt.write_in and rnd.random() < 0.75:
                    _write_in(sheet, t["write_in_area"], voter, rnd, rng)
                    entry["write_in"] = True
            elif not voter["blank"]:
                u = rnd.random()
                if opt.write_in and u < 0.012:  # a name written, the target left empty: a person decides
                    _write_in(sheet, t["write_in_area"], voter, rnd, rng)
                    entry.update(write_in=True, intent="ambiguous", ink=voter["ink"])
                elif not opt.write_in and u < 0.012:
                    loop = _circle_name(pg, opt.id, rng)
                    if loop is not None:
                        pad = Pad(*pg.names[opt.id][:2], half=1.6)
                        pad.stroke(loop, rng.uniform(0.014, 0.022))
                        ink = "graphite" if pen == "pencil" else voter["ink"]
                        _lay_ink(sheet, pad, pad.alpha() * rng.uniform(0.85, 1.0), GRAPHITE if ink == "graphite" else PENS[ink])
                        entry.update(mark="circled", circled="name", ink=ink, intent="ambiguous")
                elif u < 0.05:
                    dot = _stray_dot(pg, t["box"], rng)
                    if dot is not None:
                        px, py, rad = dot
                        pad = Pad(px, py, half=0.1)
                        pad.fill(_ellipse_pts(px, py, rad, rad * rng.uniform(0.7, 1.0), rng.uniform(0, 3), rng, 0.08, 20))
                        ink = "graphite" if pen == "pencil" else voter["ink"]
                        _lay_ink(sheet, pad, pad.alpha(), GRAPHITE if ink == "graphite" else PENS[ink])
                        dist = min(_box_dist(px, py, tt["box"]) for tt in pg.targets) - rad
                        entry.update(mark="stray_dot", ink=ink, clutter_in=[_r3(px), _r3(py)], clearance_in=_r3(dist))
            truth.append(entry)
    if not voter["blank"] and pg.free and rnd.random() < 0.12:
        zone = pg.free[rnd.randrange(len(pg.free))]
        text = rnd.choice(["JR", "M.K.", "ab", "T.W.", "LP", "S.O.", "dk"])
        size = rnd.uniform(0.12, 0.16)
        x = zone[0] + rnd.uniform(0, max(0.0, zone[2] - 0.6))
        base = zone[1] + size * 1.2 + rnd.uniform(0, max(0.0, zone[3] - size * 1.6))
        ink = voter["ink"] if pen != "pencil" else "graphite"
        box = _handwriting(sheet, text, x, base, size, GRAPHITE if ink == "graphite" else PENS[ink], rng)
        clearance = min(_rect_dist(box, t["box"]) for t in pg.targets)
        clutter.append({"kind": "initials", "text": text, "box_in": [_r3(v) for v in box], "clearance_in": _r3(clearance)})
    return truth, clutter


def _write_in(sheet: np.ndarray, area: list[float], voter: dict[str, Any], rnd: random.Random, rng: np.random.Generator) -> None:
    x, y, w, h = area
    size = rnd.uniform(0.11, 0.14)
    name = rnd.choice(WRITE_INS)
    while _text_w("hand", size, name) * 1.15 > w - 0.15 and size > 0.08:
        size *= 0.92
    colour = GRAPHITE if voter["pen"] == "pencil" else PENS[voter["ink"]]
    _handwriting(sheet, name, x + rnd.uniform(0.03, 0.12), y + h - rnd.uniform(0.015, 0.035), size, colour, rng)


def _dust(sheet: np.ndarray, pg: Page, rng: np.random.Generator) -> int:
    """Specks of dust on the glass, never near a target."""
    count = 0
    for _ in range(int(rng.integers(0, 6))):
        px, py = rng.uniform(0.5, pg.size[0] - 0.5), rng.uniform(0.5, pg.size[1] - 0.5)
        if min(_box_dist(px, py, t["box"]) for t in pg.targets) < 0.25:
            continue
        r = rng.uniform(0.003, 0.008)
        pad = Pad(px, py, half=0.05)
        pad.fill(_ellipse_pts(px, py, r, r, 0.0, rng, 0.1, 12))
        _lay_ink(sheet, pad, pad.alpha() * rng.uniform(0.6, 0.95), (40, 40, 40))
        count += 1
    return count


def _outcomes(truth: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for cid in dict.fromkeys(t["contest"] for t in truth):
        race = RACE[cid]
        mine = [t for t in truth if t["contest"] == cid]
        votes = [o.id for o in race.options if any(t["option"] == o.id and t["intent"] == "vote" for t in mine)]
        if any(t["intent"] == "ambiguous" for t in mine):
            outcome = "pending"
        elif len(votes) > race.vote_for:
            outcome = "overvote"
        else:
            outcome = "counted"
        out[cid] = {"votes": votes, "outcome": outcome}
    return out


# --------------------------------------------------------------------------------------
# The scanner

MODES = {"threshold": 22, "ordered": 11, "diffusion": 11, "gray_png": 22, "gray_jpg": 5, "rgb_jpg": 24, "rgb_png": 5}
BAYER8 = np.array([[0, 32, 8, 40, 2, 34, 10, 42], [48, 16, 56, 24, 50, 18, 58, 26], [12, 44, 4, 36, 14, 46, 6, 38],
                   [60, 28, 52, 20, 62, 30, 54, 22], [3, 35, 11, 43, 1, 33, 9, 41], [51, 19, 59, 27, 49, 17, 57, 25],
                   [15, 47, 7, 39, 13, 45, 5, 37], [63, 31, 55, 23, 61, 29, 53, 21]], np.float32)


def scanner_for(rnd: random.Random) -> dict[str, Any]:
    """One sheet's scanner settings (both sides of a sheet share them)."""
    mode = rnd.choices(list(MODES), weights=list(MODES.values()))[0]
    dpi = rnd.choices([200, 150, 300], weights=[70, 15, 15])[0]
    colour = mode.startswith("rgb")
    if colour:
        paper = rnd.choice([(rnd.randint(246, 254), rnd.randint(240, 249), rnd.randint(214, 232)),  # yellowish
                            (g := rnd.randint(228, 242), g + rnd.randint(-2, 2), g - rnd.randint(0, 5))])  # grayish
    else:
        g = rnd.randint(232, 252)
        paper = (g, g, g)
    dark = rnd.random() < 0.22
    sides: dict[str, int] = {}
    if dark:
        pick = rnd.choice([("left",), ("right",), ("top",), ("bottom",), ("left", "top"), ("right", "bottom"),
                           ("top", "bottom"), ("left", "right"), ("right", "top")])
        sides = {s: rnd.randint(10, 40) for s in pick}
    angle = rnd.uniform(-1.0, 1.0) if rnd.random() < 0.6 else rnd.uniform(-2.5, 2.5)
    tag = rnd.choices(["right", "wrong", "missing"], weights=[65, 25, 10])[0]
    return {
        "mode": mode, "dpi": dpi, "color": colour, "paper": paper, "dark_background": dark, "border_px": sides,
        "background": rnd.randint(28, 70) if dark else rnd.randint(246, 255),
        "angle": angle, "scale": (rnd.uniform(0.985, 1.015), rnd.uniform(0.985, 1.015)),
        "shift_in": (rnd.uniform(-0.04, 0.04), rnd.uniform(-0.04, 0.04)),
        "optics": rnd.uniform(0.3, 0.9), "noise": rnd.uniform(1.0, 3.5), "flip": rnd.random() < 0.25,
        "threshold": rnd.randint(135, 170), "jpeg_quality": rnd.randint(72, 93),
        "dpi_tag": dpi if tag == "right" else None if tag == "missing" else rnd.choice([t for t in (72, 96, 300) if t != dpi]),
    }


def scan_side(sheet: np.ndarray, size: tuple[float, float], sc: dict[str, Any], side: int, rng: np.random.Generator) -> tuple[
        Image.Image, dict[str, Any]]:
    """"Scan" one printed, marked side (RGB uint8 at MASTER dpi) with the sheet's scanner."""
    dpi = sc["dpi"]
    angle = sc["angle"] if side == 1 else -sc["angle"] + rng.uniform(-0.15, 0.15)
    sx, sy = sc["scale"]
    shx, shy = sc["shift_in"] if side == 1 else (-sc["shift_in"][0], sc["shift_in"][1])
    src = sheet if sc["color"] else cv2.cvtColor(sheet, cv2.COLOR_RGB2GRAY)
    paper = np.asarray(sc["paper"], np.float32)
    ramp = np.arange(256, dtype=np.float32)[:, None] * paper[None, :] / 255.0
    if sc["color"]:
        src = cv2.LUT(sheet, np.round(ramp).astype(np.uint8).reshape(1, 256, 3))
    else:
        src = cv2.LUT(src, np.round(ramp[:, 0]).astype(np.uint8))
    sigma = math.hypot(0.42 * MASTER / dpi, sc["optics"] * MASTER / 200)
    src = cv2.GaussianBlur(src, (0, 0), sigma)
    w_in, h_in = size
    b = sc["border_px"]
    width = round(w_in * dpi) + b.get("left", 0) + b.get("right", 0)
    height = round(h_in * dpi) + b.get("top", 0) + b.get("bottom", 0)
    th = math.radians(angle)
    rot = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])
    lin = dpi / MASTER * rot @ np.diag([sx, sy])
    centre_src = np.array([w_in * MASTER / 2, h_in * MASTER / 2])
    centre_out = np.array([w_in * dpi / 2 + b.get("left", 0) + shx * dpi, h_in * dpi / 2 + b.get("top", 0) + shy * dpi])
    matrix = np.hstack([lin, (centre_out - lin @ centre_src)[:, None]])
    bg = sc["background"]
    out = cv2.warpAffine(src, matrix, (width, height), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                         borderValue=(bg, bg, bg) if sc["color"] else bg)
    noisy = out.astype(np.float32) + rng.standard_normal(out.shape, dtype=np.float32) * np.float32(sc["noise"])
    out = np.clip(noisy + 0.5, 0, 255).astype(np.uint8)
    if sc["flip"]:
        out = np.ascontiguousarray(out[::-1, ::-1])
    mode = sc["mode"]
    meta = {"rotation_deg": round(angle, 3), "scale": [round(sx, 5), round(sy, 5)], "shift_in": [round(shx, 4), round(shy, 4)],
            "blur_sigma_px": round(sigma * dpi / MASTER, 3), "noise_sigma": round(sc["noise"], 3),
            "paper": list(sc["paper"]), "background": "dark" if sc["dark_background"] else "white",
            "border_px": dict(b), "size_px": [width, height]}
    if mode in ("threshold", "ordered", "diffusion"):
        white = float(np.percentile(out[::3, ::3], 92))
        level = out.astype(np.float32) * (255.0 / max(white, 1.0))
        if mode == "threshold":
            meta["threshold"] = sc["threshold"]
            bits = level >= sc["threshold"]
        else:
            tone = np.clip((level - 35.0) * 255.0 / (235.0 - 35.0), 0, 255)
            if mode == "ordered":
                tile = np.tile((BAYER8 + 0.5) * (255.0 / 64.0), (height // 8 + 1, width // 8 + 1))[:out.shape[0], :out.shape[1]]
                bits = tone > tile
            else:
                img = Image.fromarray(tone.astype(np.uint8)).convert("1", dither=Image.Dither.FLOYDSTEINBERG)
                return img, meta
        return Image.fromarray(np.where(bits, 255, 0).astype(np.uint8)).convert("1", dither=Image.Dither.NONE), meta
    return Image.fromarray(out, "RGB" if sc["color"] else "L"), meta


FORMATS = {"threshold": "tif", "ordered": "tif", "diffusion": "tif", "gray_png": "png", "gray_jpg": "jpg", "rgb_jpg": "jpg",
           "rgb_png": "png"}


def _save(images: list[Image.Image], sc: dict[str, Any]) -> bytes:
    fmt = FORMATS[sc["mode"]]
    extra: dict[str, Any] = {} if sc["dpi_tag"] is None else {"dpi": (sc["dpi_tag"], sc["dpi_tag"])}
    buf = io.BytesIO()
    if fmt == "tif":
        more = {"save_all": True, "append_images": images[1:]} if len(images) > 1 else {}
        images[0].save(buf, "TIFF", compression="group4", **more, **extra)
    elif fmt == "png":
        images[0].save(buf, "PNG", **extra)
    else:
        images[0].save(buf, "JPEG", quality=sc["jpeg_quality"], **extra)
    return buf.getvalue()


# --------------------------------------------------------------------------------------
# Sheets and the deck


def make_sheet(out: Path, seed: int, i: int) -> list[dict[str, Any]]:
    """Print, mark, scan and write sheet ``i`` (one or two cards); their truth entries."""
    cv2.setNumThreads(1)
    rnd = random.Random(f"third-vendor:{seed}:{i}")
    rng = np.random.default_rng([seed % 2**32, i, 3])
    sid = rnd.choices(list(STYLE_WEIGHTS), weights=list(STYLE_WEIGHTS.values()))[0]
    style = STYLES[sid]
    precinct = rnd.choice(style.precincts)
    pen = rnd.choices(["black", "blue", "pencil"], weights=[52, 36, 12])[0]
    voter = {"pen": pen, "ink": "black" if pen == "pencil" else pen, "blank": rnd.random() < 0.04,
             "oval_habit": rnd.choices(list(OVAL_KINDS), weights=list(OVAL_KINDS.values()))[0],
             "arrow_habit": rnd.choices(list(ARROW_KINDS), weights=list(ARROW_KINDS.values()))[0]}
    sc = scanner_for(rnd)
    pages = len(style.pages)
    sides = []
    for n in range(1, pages + 1):
        pg = page_plan(sid, n)
        sheet = cv2.cvtColor(np.asarray(_printed(sid, n)), cv2.COLOR_GRAY2RGB)
        truth, clutter = mark_page(sheet, pg, rnd, rng, voter)
        dust = _dust(sheet, pg, rng)
        image, meta = scan_side(sheet, pg.size, sc, n, rng)
        del sheet
        meta["dust_specks"] = dust
        sides.append((n, image, meta, truth, clutter))
    fmt = FORMATS[sc["mode"]]
    stem = f"cards/{i + 1:04d}"
    (Path(out) / "cards").mkdir(parents=True, exist_ok=True)
    one_file = pages > 1 and fmt == "tif" and rnd.random() < 0.35
    names = {}
    if one_file:
        (Path(out) / f"{stem}.tif").write_bytes(_save([s[1] for s in sides], sc))
        names = {n: (f"{stem}.tif", n) for n, *_ in sides}
    else:
        for n, image, *_ in sides:
            name = f"{stem}{f'-p{n}' if pages > 1 else ''}.{fmt}"
            (Path(out) / name).write_bytes(_save([image], sc))
            names[n] = (name, 1)
    entries = []
    for n, _image, meta, truth, clutter in sides:
        name, page_of_file = names[n]
        entries.append({
            "file": name, "page_of_file": page_of_file, "style": sid, "page": n, "precinct": precinct, "kind": "ballot",
            "frame": style.frame, "rotated_180": sc["flip"], "dpi": sc["dpi"], "dpi_tag": sc["dpi_tag"], "format": fmt,
            "mode": sc["mode"], "color": sc["color"], "jpeg_quality": sc["jpeg_quality"] if fmt == "jpg" else None,
            "expect": "read", "pen": pen, "blank": voter["blank"], "targets": truth, "contests": _outcomes(truth),
            "clutter": clutter, "scan": meta})
    return entries


def make_deck(out: Path, *, cards: int, seed: int, jobs: int = 1) -> Path:
    """The election with its blanks, ``cards`` sheets marked and scanned, and ``expected.json``
    (one entry per card, i.e. per side: a two-sided sheet gives two)."""
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)  # no OpenCV worker threads in this process before the pool forks (a forked pool would hang)
    try:
        # make_sheet gives a list per sheet (a two-sided sheet is two cards): flattened below
        path = write_deck(Path(out), write_election, make_sheet, cards=cards, seed=seed, jobs=jobs, profile=PROFILE)  # type: ignore[arg-type]
    finally:
        cv2.setNumThreads(threads)
    data = json.loads(path.read_text())
    data["cards"] = [entry for sheet in data["cards"] for entry in sheet]
    path.write_text(json.dumps(data, indent=1))
    return path


def main(argv: list[str] | None = None) -> int:
    return deck_cli(make_deck, "a vendor-style deck (grid and arrow frames) drawn by a third, independent renderer", argv)


if __name__ == "__main__":
    raise SystemExit(main())
