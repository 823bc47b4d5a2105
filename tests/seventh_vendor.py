"""A seventh vendor ballot renderer, written apart from ``scanpipe.synth`` and from the other six.

The reader is judged on vendor ballots drawn by generators its authors did not write. This
module imports nothing from scanpipe and shares no drawing, marking or scanning code with
``scanpipe.synth``, :mod:`tests.foreign_renderer`, :mod:`tests.foreign_vendor`,
:mod:`tests.third_vendor`, :mod:`tests.fourth_vendor`, :mod:`tests.fifth_vendor` or
:mod:`tests.sixth_vendor` (it borrows only the deck writer and the command line of
:mod:`tests.foreign_renderer`). It covers what those do not:

* a Pelican County, Maryland gubernatorial general election (jurisdiction MD) on two frames:

  - **Ballot-on-demand letter** (``BD-0101``, ``BD-0102``, ``BD-0203``; 8.5 x 11 in,
    single-sided): timing dashes down BOTH long edges on a 1/4 in grid, three columns, ovals
    LEFT of the names, a vote-for-2 contest (County Council At Large) and a vote-for-3 contest
    (Board of Education), two long ballot QUESTIONS (a paragraph of 7-8 lines of small type,
    then "For" / "Against"). Every printed card carries its OWN ballot serial in the top right
    corner: "Ballot No. 0xxxxx" and below it a stripe code of this module's own (a start group,
    four bars a digit, most significant bit first, a wide bar for 1 and a narrow one for 0, an
    even-parity bar, a stop group; no standard symbology), so every card differs from its
    blank there; the reference blank carries a serial of its own (000417). ``BD-0101`` and
    ``BD-0102`` differ ONLY in the printed precinct line; ``BD-0203`` differs in one contest
    (County Council District 2 in place of District 1).
  - **Drop-out ink legal** (``DO-0301`` / ``DO-0302``; 8.5 x 14 in, differing only in the
    precinct line): black timing marks down both long edges and across the top; the ovals, the
    contest rules, column rules, write-in lines and the instruction box in a light red drop-out
    ink (RGB 240,152,152; contest header bands in a lighter tint, 251,224,224), the names and
    all text in black; three columns, ovals left of the names. A gray scan renders the red at
    about 165-190; a bilevel scan with a fixed threshold (118-142) drops it wholly, so such a
    card shows no oval outline at all while its reference does; error diffusion leaves a stipple.

* Voters: black or blue ballpoint, felt tip, pencil. The labels follow contract section 7 as
  written, target by target, by what is on the paper:

  - ``vote``: a full fill (hatched strokes, slightly past the outline), a partial fill (60-85 %
    of the oval's area inked, measured and stored as ``fill_fraction``), a check whose strokes
    run through the oval, an X through the oval; a write-in option whose oval is marked so,
    with or without a name written on its line (``write_in`` holds the name).
  - ``ambiguous``: a traced outline (the voter's pen runs round the oval's own printed outline,
    on it or up to 0.012 in outside it, 1.15-1.45 turns, the inside left empty: a circled
    target; never in felt tip, which would half fill it), a loop round an empty oval
    0.035-0.07 in outside its outline (circled target), a heavy pencil erasure whose gray
    residue stays (mean darkness about 0.11-0.25 over the oval, the printed oval a little
    lifted by the eraser; gray and colour scans only), a name written on a write-in line with
    the oval left empty (contract section 3: ``unknown``).
  - ``no_vote``: an empty target; a hesitation dot 0.02-0.04 in across inside a target (a dot);
    a line under a printed candidate's name kept at least 0.12 in from every target box
    (``underline``: a stray line that does not enter the target); initials in the bottom margin
    (listed under the entry's ``strays``, no target's label changes).
  - contests: vote-for-N contests get N marks, fewer, none or N+1 (an overvote: every marked
    option is still labelled ``vote``, as drawn); questions are voted, skipped or now and then
    both marked; blank ballots. A contest's outcome is ``pending`` when one of its options is
    ``ambiguous``, else ``overvote`` or ``counted``.

* Scanner (its own): 200 dpi mostly (150 or 300 sometimes), the dpi tag right, wrong (72 or 96)
  or missing, and the true resolution not exactly the tag (up to 1 % under, 0.6 % over: 198.5
  dpi tagged 200); skew up to 2.5 degrees; 180-degree feeds in a quarter of the sheets; ROLLER
  SLIP: the scale along the feed direction varies smoothly down the sheet (a slowly varying
  speed, at most +-1 % locally, the displacement against the best uniform scale at most
  0.04 in; 0.005-0.025 in as drawn, about all a +-1 % swing of speed gives over one sheet),
  and the sheet bows sideways (up to 0.02 in in the middle of its long edge, nothing at its
  ends); lens blur, light noise; bilevel TIFF G4 (fixed threshold or error diffusion), gray
  PNG or JPEG (quality 50-90), RGB JPEG or PNG; the whole sheet in the image with a small
  margin on a white (a faint edge shadow) or dark backing.

Layouts are what a board writes: per page the style's blank "scanned" as ``reference`` (the
letter frame: gray PNG at 200 dpi on this scanner, serial 000417 printed; the legal frame: the
blank scanned on ANOTHER scanner, a gray PNG at 300 dpi with a different tone curve, its
``reference_dpi`` 300), target boxes in inches (the printed oval with 0.012 in round it),
write-in areas over each write-in line; no fiducials, no QR box, no distinguish boxes. Entries
of ``expected.json`` have the sixth renderer's shape (one per card; single-sided, so ``page`` 1
and ``sides`` 1) plus ``serial``, ``dropout`` and ``strays``. Seeded: the same seed gives the
same bytes, and each card depends only on the seed and its index.

    python -m tests.seventh_vendor OUT --cards 240 --seed 1707 --jobs 2   # a deck for bench_accuracy --deck OUT
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
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from tests.foreign_renderer import deck_cli, write_deck

WORK = 300  # dpi of the printed and marked sheet
SS = 2  # supersampling of the print (drawn at 600 dpi, reduced) and of the voter's strokes
DRAW = WORK * SS
PROFILE = "seventh-vendor"
REF_SERIAL = "000417"

FONT_DIR = Path("/usr/share/fonts")
FONTS = {
    "sans": "opentype/urw-base35/NimbusSans-Regular.otf",
    "bold": "opentype/urw-base35/NimbusSans-Bold.otf",
    "italic": "opentype/urw-base35/NimbusSans-Italic.otf",
    "narrow": "opentype/urw-base35/NimbusSansNarrow-Regular.otf",
    "narrow_bold": "opentype/urw-base35/NimbusSansNarrow-Bold.otf",
    "narrow_italic": "opentype/urw-base35/NimbusSansNarrow-Oblique.otf",
    "gothic_bold": "opentype/urw-base35/URWGothic-Demi.otf",
    "hand": "opentype/urw-base35/Z003-MediumItalic.otf",
    "hand2": "opentype/urw-base35/URWBookman-LightItalic.otf",
}

BLACK = (0, 0, 0)
DROP = (240, 152, 152)  # drop-out red: ovals, rules
DROP_TINT = (251, 224, 224)  # drop-out red, header bands
GRAY_TINT = (226, 226, 226)


@lru_cache(maxsize=256)
def _face(key: str, px: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FONT_DIR / FONTS[key]), max(4, px))


def _width(s: str, key: str, size: float) -> float:
    """Printed width of ``s`` in inches at a type size of ``size`` inches."""
    return _face(key, round(size * DRAW)).getlength(s) / DRAW


def _wrap(s: str, key: str, size: float, room: float) -> list[str]:
    lines: list[str] = []
    for word in s.split():
        if lines and _width(f"{lines[-1]} {word}", key, size) <= room:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines


# --------------------------------------------------------------------------------------
# The election


@dataclass(frozen=True)
class Option:
    id: str
    name: str
    party: str = ""
    write_in: bool = False


@dataclass(frozen=True)
class Contest:
    id: str
    title: str
    vote_for: int
    options: tuple[Option, ...]
    text: str = ""
    kind: str = "candidate"


def _race(cid: str, title: str, people: list[tuple[str, str]], vote_for: int = 1, write_ins: int | None = None) -> Contest:
    opts = [Option(f"{cid}-{k + 1}", n, p) for k, (n, p) in enumerate(people)]
    opts += [Option(f"{cid}-wi{k + 1}", "Write-in", "", True) for k in range(vote_for if write_ins is None else write_ins)]
    return Contest(cid, title, vote_for, tuple(opts))


def _question(cid: str, title: str, text: str) -> Contest:
    return Contest(cid, title, 1, (Option(f"{cid}-for", "For"), Option(f"{cid}-against", "Against")), text, "question")


CONTESTS = (
    _race("gov", "Governor / Lt. Governor", [("Hollis Danforth / Rita Ocampo", "DEM"), ("Margaret Veil / Jon Stroud", "REP"),
                                             ("Oscar Lindahl / Bea Fennimore", "LIB"), ("Dee Okafor / Sam Whitlow", "GRN")]),
    _race("comp", "Comptroller", [("Lorraine Baptiste", "DEM"), ("Gideon Marsh", "REP")]),
    _race("ag", "Attorney General", [("Thaddeus Kwan", "DEM"), ("Ellen Carraway", "REP")]),
    _race("cong", "Representative in Congress, District 1", [("Priscilla Yoder", "DEM"), ("Warren Achebe", "REP"),
                                                              ("Lionel Estrada", "LIB")]),
    _race("exec", "County Executive", [("Constance Ruhl", "DEM"), ("Barnaby Tolliver", "REP")]),
    _race("cc1", "County Council, District 1", [("Harriet Oyelowo", "DEM"), ("Emmett Sand", "REP"), ("Quinn Daley", "UNA")]),
    _race("cc2", "County Council, District 2", [("Mateo Figueroa", "DEM"), ("Ruth Ann Bixby", "REP")]),
    _race("cc3", "County Council, District 3", [("Desmond Achterberg", "DEM"), ("Fay Lindqvist", "REP"), ("Ivo Petrakis", "GRN")]),
    _race("ccal", "County Council At Large", [("Naomi Treadwell", "DEM"), ("Kurt Vasquez", "DEM"), ("Lydia Moss", "REP"),
                                              ("Franklin Oduya", "REP"), ("Sunita Rao", "UNA")], vote_for=2),
    _race("sheriff", "Sheriff", [("Virgil Hatcher", "DEM"), ("Colleen Brandt", "REP")]),
    _race("boe", "Board of Education At Large", [("Amara Nwosu", ""), ("Peter Halvorsen", ""), ("Grace Tilghman", ""),
                                                 ("Wendell Ruiz", ""), ("June Ashby", "")], vote_for=3),
    _race("orph", "Judges of the Orphans' Court", [("Beatrice Molloy", "DEM"), ("Horace Quill", "DEM"), ("Nadia Farooq", "REP"),
                                                   ("Lester Pugh", "REP")], vote_for=3),
    _question("q1", "Question 1 - Constitutional Amendment (Ch. 412 of the Acts of 2029)",
              "Authorizes the General Assembly to provide by law that a vacancy in the office of Judge of the Orphans' Court of a "
              "county be filled by the Governor from a list of qualified persons submitted by the county's central committee of the "
              "political party of the judge who vacated the office, and requires that a person so appointed serve until a successor "
              "is elected at the next general election held more than one year after the vacancy occurs and qualifies."),
    _question("q2", "Question 2 - Pelican County Public School Bond",
              "To authorize Pelican County to borrow not more than $46,500,000 through the issuance of general obligation bonds for "
              "the planning, design, construction, renovation, expansion and equipping of public school facilities, including the "
              "replacement of Heron Bay Elementary School and the addition of classrooms at Tidewater Middle School, the bonds to be "
              "repaid from the general fund of the County over a period not to exceed thirty years."),
    _question("q3", "Question A - Charter Amendment (Budget Hearings)",
              "Amends Section 305 of the Pelican County Charter to require that the County Council hold at least two public "
              "hearings, one of them in the evening and one of them outside the county seat, before adopting the annual operating "
              "budget and capital improvements program, and to require that the proposed budget be published on the County's "
              "website and at every public library branch not less than twenty-one days before the first hearing."),
)
CONTEST = {c.id: c for c in CONTESTS}
PRECINCTS = {"P0101": ("01-01", "Marsh Creek"), "P0102": ("01-02", "Heron Bay"), "P0203": ("02-03", "Osprey Point"),
             "P0301": ("03-01", "Tidewater North"), "P0302": ("03-02", "Tidewater South")}
ELECTION = {"id": "pelican-30g", "name": "Pelican County Gubernatorial General Election 2030", "date": "2030-11-05",
            "jurisdiction": "MD"}


@dataclass(frozen=True)
class Style:
    frame: str  # "bd" (ballot on demand, letter) or "do" (drop-out ink, legal)
    precinct: str
    columns: tuple[tuple[str, ...], ...]


def _bd_columns(council: str) -> tuple[tuple[str, ...], ...]:
    return (("gov", "comp", "ag", "cong"), ("exec", council, "ccal", "sheriff"), ("boe", "q1", "q2"))


_DO_COLUMNS = (("gov", "comp", "ag", "cong", "sheriff"), ("exec", "cc3", "ccal", "orph"), ("boe", "q1", "q2", "q3"))
STYLES = {
    "BD-0101": Style("bd", "P0101", _bd_columns("cc1")),
    "BD-0102": Style("bd", "P0102", _bd_columns("cc1")),
    "BD-0203": Style("bd", "P0203", _bd_columns("cc2")),
    "DO-0301": Style("do", "P0301", _DO_COLUMNS),
    "DO-0302": Style("do", "P0302", _DO_COLUMNS),
}
STYLE_WEIGHTS = {"BD-0101": 19, "BD-0102": 18, "BD-0203": 17, "DO-0301": 23, "DO-0302": 23}


def _contests_of(sid: str) -> list[str]:
    return [c for col in STYLES[sid].columns for c in col]


# --------------------------------------------------------------------------------------
# Planning a page, in inches: the print as drawing operations, the layout's targets


@dataclass(frozen=True)
class Look:
    line: tuple[int, int, int]  # rules and ovals
    tint: tuple[int, int, int]  # contest header band
    body: str
    head: str
    note: str
    oval: tuple[float, float]
    oval_lw: float
    pitch: float  # a candidate's row
    wi_pitch: float  # a write-in row
    col_w: float
    name: float  # type size of names
    text: float  # type size of a question's wording
    lead: float


LOOKS = {
    "bd": Look(BLACK, GRAY_TINT, "sans", "bold", "italic", (0.20, 0.13), 0.011, 0.30, 0.38, 2.3, 0.1, 0.078, 0.112),
    "do": Look(DROP, DROP_TINT, "narrow", "gothic_bold", "narrow_italic", (0.22, 0.14), 0.013, 0.32, 0.40, 2.34, 0.11, 0.085, 0.118),
}
MARGIN = 0.012  # target box round the printed oval


@dataclass
class Page:
    size: tuple[float, float]
    ops: list[tuple[Any, ...]] = field(default_factory=list)
    targets: list[dict[str, Any]] = field(default_factory=list)
    ovals: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    names: dict[str, list[float]] = field(default_factory=dict)  # option -> the printed name's box
    bottom: float = 0.0  # the lowest printed content a voter's stray marks keep below

    def block(self, x: float, y: float, w: float, h: float, color: tuple[int, int, int] = BLACK) -> None:
        self.ops.append(("block", x, y, w, h, color))

    def rule(self, x0: float, y0: float, x1: float, y1: float, lw: float, color: tuple[int, int, int] = BLACK) -> None:
        self.ops.append(("rule", x0, y0, x1, y1, lw, color))

    def ring(self, x: float, y: float, w: float, h: float, lw: float, color: tuple[int, int, int], fill: bool = False) -> None:
        self.ops.append(("ring", x, y, w, h, lw, color, fill))

    def frame(self, x: float, y: float, w: float, h: float, lw: float, color: tuple[int, int, int]) -> None:
        self.ops.append(("frame", x, y, w, h, lw, color))

    def say(self, x: float, y: float, s: str, key: str, size: float, anchor: str = "ls") -> float:
        self.ops.append(("text", x, y, s, key, size, anchor))
        return _width(s, key, size)


def _vote_for(c: Contest, frame: str) -> str:
    if c.kind == "question":
        return "Vote for or against" if frame == "bd" else "Vote FOR or AGAINST the question"
    words = {1: "one", 2: "two", 3: "three"}
    return f"Vote for {words[c.vote_for]}" if c.vote_for == 1 else f"Vote for up to {words[c.vote_for]} ({c.vote_for})"


def _contest(p: Page, look: Look, frame: str, c: Contest, x0: float, y: float) -> float:
    """Print contest ``c`` in the column at ``x0`` from ``y`` down; the y below it."""
    wcol = look.col_w
    p.rule(x0, y, x0 + wcol, y, 0.022, look.line)
    title = _wrap(c.title, look.head, 0.1, wcol - 0.12)
    band = 0.07 + 0.135 * (len(title) + 1)
    p.block(x0, y + 0.011, wcol, band, look.tint)
    ty = y + 0.011 + 0.135
    for s in title:
        p.say(x0 + 0.06, ty, s, look.head, 0.1)
        ty += 0.135
    p.say(x0 + 0.06, ty, _vote_for(c, frame), look.note, 0.085)
    y += 0.011 + band + 0.04
    if c.text:
        for s in _wrap(c.text, look.body, look.text, wcol - 0.12):
            y += look.lead
            p.say(x0 + 0.06, y, s, look.body, look.text)
        y += 0.08
    ow, oh = look.oval
    for o in c.options:
        ox = x0 + 0.07
        if o.write_in:
            cy = y + 0.23
            line_y = cy + 0.075
            p.ring(ox, cy - oh / 2, ow, oh, look.oval_lw, look.line)
            p.rule(x0 + 0.36, line_y, x0 + wcol - 0.05, line_y, 0.008, look.line)
            p.say(x0 + 0.36, line_y + 0.065, "Write-in", look.note, 0.058)
            area = [x0 + 0.34, cy - 0.17, wcol - 0.39, line_y - (cy - 0.17)]
            y += look.wi_pitch
        else:
            cy = y + look.pitch / 2
            p.ring(ox, cy - oh / 2, ow, oh, look.oval_lw, look.line)
            room = wcol - 0.36 - (0.38 if o.party else 0.05)
            size = look.name
            while _width(o.name, look.body, size) > room:
                size *= 0.96
            w = p.say(x0 + 0.36, cy, o.name, look.body, size, anchor="lm")
            p.names[o.id] = [round(x0 + 0.36, 4), round(cy - 0.36 * size, 4), round(w, 4), round(0.72 * size, 4)]
            if o.party:
                p.say(x0 + wcol - 0.04, cy, o.party, look.body, 0.085, anchor="rm")
            area = None
            y += look.pitch
        p.ovals[o.id] = (ox, cy - oh / 2, ow, oh)
        t: dict[str, Any] = {"contest": c.id, "option": o.id,
                             "box": [round(v, 4) for v in (ox - MARGIN, cy - oh / 2 - MARGIN, ow + 2 * MARGIN, oh + 2 * MARGIN)]}
        if area is not None:
            t["write_in_area"] = [round(v, 4) for v in area]
        p.targets.append(t)
    return y + 0.14


SERIAL_BOX = (6.15, 0.3, 1.8, 0.62)  # where the ballot-on-demand printer puts each card's serial


def _bd_plan(sid: str) -> Page:
    st, look = STYLES[sid], LOOKS["bd"]
    p = Page((8.5, 11.0))
    for k in range(41):  # timing dashes down both long edges
        y = 0.5 + 0.25 * k
        p.block(0.2, y - 0.04, 0.16, 0.08)
        p.block(8.14, y - 0.04, 0.16, 0.08)
    number, name = PRECINCTS[st.precinct]
    p.say(0.6, 0.5, "OFFICIAL BALLOT", "bold", 0.18)
    p.say(0.6, 0.72, "Gubernatorial General Election  -  November 5, 2030", "sans", 0.11)
    p.say(0.6, 0.91, "Pelican County, Maryland", "sans", 0.11)
    p.say(0.6, 1.13, f"Precinct {number}  {name}", "bold", 0.12)
    p.say(7.95, 1.13, "Printed on demand", "italic", 0.08, anchor="rs")
    p.frame(0.6, 1.27, 7.3, 0.74, 0.01, BLACK)
    p.say(0.7, 1.43, "INSTRUCTIONS TO VOTERS", "bold", 0.095)
    w = p.say(0.7, 1.61, "Use a black or blue ink pen. To vote, fill in the oval to the LEFT of your choice completely, like this:",
              "sans", 0.09)
    p.ring(0.78 + w, 1.61 - 0.1, 0.2, 0.13, 0.011, BLACK, fill=True)
    p.say(0.7, 1.78, "To vote for a person whose name is not printed, fill in the oval and write the name on the line.", "sans", 0.09)
    p.say(0.7, 1.94, "If you make a mistake, ask an election judge for a new ballot. Do not erase.", "sans", 0.09)
    for x in (2.95, 5.45):
        p.rule(x, 2.15, x, 10.4, 0.008)
    for x0, col in zip((0.6, 3.1, 5.6), st.columns):
        y = 2.2
        for cid in col:
            y = _contest(p, look, "bd", CONTEST[cid], x0, y)
        assert y <= 10.45, (sid, cid, y)
    p.bottom = 10.45
    return p


def _do_plan(sid: str) -> Page:
    st, look = STYLES[sid], LOOKS["do"]
    p = Page((8.5, 14.0))
    for k in range(44):  # black timing marks down both long edges ...
        y = 0.65 + 0.3 * k
        p.block(0.12, y - 0.045, 0.22, 0.09)
        p.block(8.16, y - 0.045, 0.22, 0.09)
    for j in range(24):  # ... and across the top
        x = 0.75 + 0.3 * j
        p.block(x - 0.045, 0.12, 0.09, 0.22)
    number, name = PRECINCTS[st.precinct]
    p.say(4.25, 0.66, "OFFICIAL GENERAL ELECTION BALLOT", "gothic_bold", 0.17, anchor="ms")
    p.say(4.25, 0.88, "PELICAN COUNTY, MARYLAND  -  TUESDAY, NOVEMBER 5, 2030", "narrow", 0.11, anchor="ms")
    p.say(4.25, 1.09, f"{name.upper()}  -  PRECINCT {number}", "narrow_bold", 0.12, anchor="ms")
    p.frame(0.55, 1.22, 7.4, 0.8, 0.012, DROP)
    w = p.say(0.66, 1.41, "To vote, completely darken the oval to the LEFT of your choice with a black or blue pen, like this:",
              "narrow", 0.1)
    p.ring(0.74 + w, 1.41 - 0.105, 0.22, 0.14, 0.013, DROP)
    p.ring(0.74 + w + 0.02, 1.41 - 0.085, 0.18, 0.10, 0.01, BLACK, fill=True)
    p.say(0.66, 1.6, "To vote for a qualified write-in candidate, darken the oval and print the name on the line provided.",
          "narrow", 0.1)
    p.say(0.66, 1.79, "Do not mark outside the ovals. If you make a mistake, return this ballot and ask for a new one.",
          "narrow", 0.1)
    p.say(0.66, 1.96, "VOTE ALL THREE COLUMNS", "narrow_bold", 0.1)
    for x in (2.965, 5.495):
        p.rule(x, 2.15, x, 13.45, 0.01, DROP)
    for x0, col in zip((0.55, 3.08, 5.61), st.columns):
        y = 2.22
        for cid in col:
            y = _contest(p, look, "do", CONTEST[cid], x0, y)
        assert y <= 13.45, (sid, cid, y)
    p.bottom = 13.5
    return p


@lru_cache(maxsize=8)
def plan_of(sid: str) -> Page:
    return _bd_plan(sid) if STYLES[sid].frame == "bd" else _do_plan(sid)


# --------------------------------------------------------------------------------------
# Printing


def _print(p: Page) -> np.ndarray:
    """The blank print drawn at DRAW dpi and reduced to WORK dpi: RGB uint8."""
    k = DRAW
    img = Image.new("RGB", (round(p.size[0] * k), round(p.size[1] * k)), (255, 255, 255))
    d = ImageDraw.Draw(img)
    tints = [op for op in p.ops if op[0] == "block" and op[5] != BLACK]
    for op in tints + [op for op in p.ops if not (op[0] == "block" and op[5] != BLACK)]:
        kind = op[0]
        if kind == "block":
            _, x, y, w, h, color = op
            d.rectangle([round(x * k), round(y * k), round((x + w) * k) - 1, round((y + h) * k) - 1], fill=color)
        elif kind == "rule":
            _, x0, y0, x1, y1, lw, color = op
            d.line([(x0 * k, y0 * k), (x1 * k, y1 * k)], fill=color, width=max(1, round(lw * k)))
        elif kind == "frame":
            _, x, y, w, h, lw, color = op
            d.rectangle([x * k, y * k, (x + w) * k, (y + h) * k], outline=color, width=max(1, round(lw * k)))
        elif kind == "ring":
            _, x, y, w, h, lw, color, fill = op
            d.ellipse([x * k, y * k, (x + w) * k, (y + h) * k], outline=color, fill=color if fill else None, width=max(1, round(lw * k)))
        else:
            _, x, y, s, key, size, anchor = op
            d.text((x * k, y * k), s, font=_face(key, round(size * k)), fill=BLACK, anchor=anchor)
    return cv2.resize(np.asarray(img), None, fx=1 / SS, fy=1 / SS, interpolation=cv2.INTER_AREA)


@lru_cache(maxsize=8)
def blank_of(sid: str) -> np.ndarray:
    """The printed blank at WORK dpi (RGB uint8; the letter frame without its serial)."""
    out = _print(plan_of(sid))
    out.setflags(write=False)
    return out


def _stripes(serial: str) -> list[int]:
    """This printer's own stripe code: 1 a wide bar, 0 a narrow one (see the module docstring)."""
    digits = [int(ch) for ch in serial]
    bits = [1, 0, 1, 1]
    for dgt in digits:
        bits += [(dgt >> s) & 1 for s in (3, 2, 1, 0)]
    return bits + [sum(digits) % 2] + [1, 1, 0, 1]


def _stamp_serial(sheet: np.ndarray, serial: str) -> None:
    """Print a card's serial line and its stripes in the top right corner of ``sheet`` (float RGB at WORK)."""
    x, y, w, h = SERIAL_BOX
    k = DRAW
    img = Image.new("L", (round(w * k), round(h * k)), 0)
    d = ImageDraw.Draw(img)
    d.text((w * k - 0.05 * k, 0.18 * k), f"Ballot No. {serial}", font=_face("bold", round(0.11 * k)), fill=255, anchor="rs")
    narrow, wide, gap = 0.014, 0.034, 0.016
    bits = _stripes(serial)
    xr = w - 0.05
    xl = xr - sum(wide if b else narrow for b in bits) - gap * (len(bits) - 1)
    for b in bits:
        bw = wide if b else narrow
        d.rectangle([round(xl * k), round(0.27 * k), round((xl + bw) * k) - 1, round(0.55 * k) - 1], fill=255)
        xl += bw + gap
    cov = cv2.resize(np.asarray(img), None, fx=1 / SS, fy=1 / SS, interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
    x0, y0 = round(x * WORK), round(y * WORK)
    region = sheet[y0:y0 + cov.shape[0], x0:x0 + cov.shape[1]]
    region *= 1.0 - cov[..., None]


def _serial_of(seed: int, i: int) -> str:
    return f"0{10000 + (7919 * i + 104729 * seed) % 90000:05d}"  # distinct for every card of a deck (7919 is prime)


LUMA = np.array([0.299, 0.587, 0.114], np.float32)


def _reference(sid: str) -> tuple[np.ndarray, int]:
    """The blank as the board scanned it: the letter frame on this scanner (200 dpi), the legal
    frame on another one (300 dpi, its own tone curve)."""
    sheet = blank_of(sid).astype(np.float32) / 255.0
    if STYLES[sid].frame == "bd":
        _stamp_serial(sheet, REF_SERIAL)
        g = cv2.resize(sheet @ LUMA, (1700, 2200), interpolation=cv2.INTER_AREA)
        g = cv2.GaussianBlur(g, (0, 0), 0.5)
        return np.clip(255.0 * 0.955 * g + 0.5, 0, 255).astype(np.uint8), 200
    g = cv2.GaussianBlur(sheet @ LUMA, (0, 0), 0.6)
    return np.clip(21.0 + 225.0 * np.power(np.clip(g, 0, 1), 0.8) + 0.5, 0, 255).astype(np.uint8), 300


def write_election(out: Path) -> Path:
    """``election.json``, one layout per style and each style's reference blank."""
    out = Path(out)
    (out / "layouts").mkdir(parents=True, exist_ok=True)
    for sid in STYLES:
        p = plan_of(sid)
        ref, dpi = _reference(sid)
        Image.fromarray(ref).save(out / "layouts" / f"{sid}.png", "PNG", dpi=(dpi, dpi))
        page = {"page": 1, "size": list(p.size), "reference": f"{sid}.png", "reference_dpi": dpi, "targets": p.targets}
        (out / "layouts" / f"{sid}.json").write_text(json.dumps({"style": sid, "pages": [page]}, indent=1) + "\n")
    definition = dict(
        ELECTION,
        precincts=[{"id": pid, "name": f"{name} {number}", "county": "Pelican"} for pid, (number, name) in PRECINCTS.items()],
        contests=[{"id": c.id, "title": c.title, "kind": c.kind, "vote_for": c.vote_for,
                   "options": [{"id": o.id, "name": o.name, **({"write_in": True} if o.write_in else {})} for o in c.options]}
                  for c in CONTESTS],
        ballot_styles=[{"id": sid, "precincts": [st.precinct], "contests": _contests_of(sid), "layout": f"layouts/{sid}.json"}
                       for sid, st in STYLES.items()])
    (out / "election.json").write_text(json.dumps(definition, indent=1) + "\n")
    return out / "election.json"


# --------------------------------------------------------------------------------------
# The voter's hand: strokes drawn at 2x on a patch of paper, reduced to coverage at WORK dpi

INKS = {  # colour (reflectance), strength, nib width in inches
    "ballpoint_black": ((0.12, 0.12, 0.16), (0.86, 0.96), (0.011, 0.016)),
    "ballpoint_blue": ((0.12, 0.2, 0.6), (0.86, 0.95), (0.011, 0.016)),
    "felt_tip": ((0.06, 0.06, 0.08), (0.95, 1.0), (0.03, 0.042)),
    "pencil": ((0.2, 0.2, 0.22), (0.84, 0.94), (0.015, 0.022)),
}
PENS = {"ballpoint_black": 36, "ballpoint_blue": 27, "felt_tip": 16, "pencil": 21}
HABITS = {"fill": 55, "partial": 13, "check": 16, "x": 16}
WRITE_NAMES = ["Gus Pemberton", "Ida Blackwood", "R. T. Nakashima", "Mona Ferreira", "Cal Whitby", "Lena Rasmussen",
               "Donald Duck", "Ned Okonkwo", "Tilly Szabo", "Hal Greaves", "Vera Moncrief", "Abe Castellano"]


class Hand:
    """A square of paper round (cx, cy) inches, ``half`` inches either way, where one mark is
    drawn at SS times WORK dpi."""

    def __init__(self, cx: float, cy: float, half: float) -> None:
        self.x0, self.y0 = math.floor((cx - half) * WORK), math.floor((cy - half) * WORK)
        self.n = math.ceil(2 * half * WORK) + 2
        self.hi = np.zeros((self.n * SS, self.n * SS), np.uint8)
        self.masks: dict[tuple[float, ...], np.ndarray] = {}

    def _px(self, u: float, v: float) -> tuple[int, int]:
        return (round(((u * WORK - self.x0) * SS - 0.5) * 8), round(((v * WORK - self.y0) * SS - 0.5) * 8))

    def path(self, pts: list[tuple[float, float]], nib: float, rnd: random.Random) -> None:
        """A pen stroke through ``pts`` (inches), its width swelling and thinning a little."""
        phase, wave = rnd.uniform(0, 6.3), rnd.uniform(0.2, 0.6)
        for k in range(len(pts) - 1):
            press = 1.0 + 0.12 * math.sin(phase + wave * k)
            thick = max(1, round(nib * press * WORK * SS))
            cv2.line(self.hi, self._px(*pts[k]), self._px(*pts[k + 1]), 255, thick, cv2.LINE_AA, shift=3)

    def spot(self, u: float, v: float, r: float) -> None:
        cx, cy = self._px(u, v)
        cv2.circle(self.hi, (cx, cy), max(8, round(r * WORK * SS * 8)), 255, -1, cv2.LINE_AA, shift=3)

    def _mask(self, cx: float, cy: float, a: float, b: float, scale: int) -> np.ndarray:
        key = (cx, cy, a, b, scale)
        if key not in self.masks:
            self.masks[key] = self._ellipse(cx, cy, a, b, scale)
        return self.masks[key]

    def _ellipse(self, cx: float, cy: float, a: float, b: float, scale: int) -> np.ndarray:
        n = self.n * scale
        yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
        ux = (xx + 0.5) / (WORK * scale) + self.x0 / WORK
        vy = (yy + 0.5) / (WORK * scale) + self.y0 / WORK
        return ((ux - cx) / a) ** 2 + ((vy - cy) / b) ** 2 <= 1.0

    def share(self, cx: float, cy: float, a: float, b: float, hi: bool = True) -> float:
        """The share of the ellipse (inches) the ink covers (at least half dark)."""
        if hi:
            return float((self.hi[self._mask(cx, cy, a, b, SS)] >= 128).mean())
        return float((self.cover()[self._mask(cx, cy, a, b, 1)] >= 0.5).mean())

    def cover(self) -> np.ndarray:
        return cv2.resize(self.hi, (self.n, self.n), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0


def _lay(sheet: np.ndarray, cov: np.ndarray, x0: int, y0: int, pen: str, rnd: random.Random, rng: np.random.Generator,
         strength: float | None = None) -> None:
    """Multiply ink of ``pen`` with coverage ``cov`` (at sheet pixel x0, y0) into the sheet."""
    color, power, _ = INKS[pen]
    if pen == "pencil":
        cov = cov * cv2.GaussianBlur(rng.uniform(0.72, 1.0, cov.shape).astype(np.float32), (0, 0), 0.6)
    elif pen == "felt_tip":
        cov = np.minimum(1.0, cv2.GaussianBlur(cov, (0, 0), 0.6) * 1.2)
    else:
        cov = cov * cv2.GaussianBlur(rng.uniform(0.8, 1.0, cov.shape).astype(np.float32), (0, 0), 1.0)
    cov = cov * (rnd.uniform(*power) if strength is None else strength)
    h, w = sheet.shape[:2]
    xa, ya, xb, yb = max(0, x0), max(0, y0), min(w, x0 + cov.shape[1]), min(h, y0 + cov.shape[0])
    if xa >= xb or ya >= yb:
        return
    c = cov[ya - y0:yb - y0, xa - x0:xb - x0]
    sheet[ya:yb, xa:xb] *= 1.0 - c[..., None] * (1.0 - np.asarray(color, np.float32))


def _chords(cx: float, cy: float, a: float, b: float, angle: float, pitch: float, inset: float) -> list[tuple[tuple[float, float], ...]]:
    """Parallel chords of the ellipse at ``angle`` degrees, ``pitch`` apart, each cut short by ``inset``."""
    th = math.radians(angle)
    dx, dy = math.cos(th), math.sin(th)
    nx, ny = -dy, dx
    reach = math.hypot(a * nx, b * ny)
    out = []
    s = -reach + pitch / 2
    while s < reach:
        px, py = cx + s * nx, cy + s * ny
        ex, ey, fx, fy = (px - cx) / a, (py - cy) / b, dx / a, dy / b
        qa, qb, qc = fx * fx + fy * fy, 2 * (ex * fx + ey * fy), ex * ex + ey * ey - 1
        disc = qb * qb - 4 * qa * qc
        if disc > 0:
            r = math.sqrt(disc)
            t0, t1 = (-qb - r) / (2 * qa) + inset, (-qb + r) / (2 * qa) - inset
            if t1 > t0:
                out.append(((px + t0 * dx, py + t0 * dy), (px + t1 * dx, py + t1 * dy)))
        s += pitch
    return out


def _zigzag(chords: list[tuple[tuple[float, float], ...]], nib: float, rnd: random.Random) -> list[tuple[float, float]]:
    """The chords joined end to end, back and forth, the ends a little ragged."""
    pts = []
    for k, (p0, p1) in enumerate(chords):
        j = 0.25 * nib
        a = (p0[0] + rnd.uniform(-j, j), p0[1] + rnd.uniform(-j, j))
        b = (p1[0] + rnd.uniform(-j, j), p1[1] + rnd.uniform(-j, j))
        pts += [a, b] if k % 2 == 0 else [b, a]
    return pts


def _hatch(hand: Hand, chords: list[tuple[tuple[float, float], ...]], nib: float, rnd: random.Random) -> None:
    """One zigzag stroke over the chords, in order."""
    pts = _zigzag(chords, nib, rnd)
    if len(pts) >= 2:
        hand.path(pts, nib, rnd)


def _oval(page: Page, option: str) -> tuple[float, float, float, float]:
    ox, oy, ow, oh = page.ovals[option]
    return ox + ow / 2, oy + oh / 2, ow / 2, oh / 2


def _vote_mark(sheet: np.ndarray, page: Page, option: str, kind: str, pen: str, slant: float, rnd: random.Random,
               rng: np.random.Generator) -> dict[str, Any]:
    """Draw a clear vote of ``kind`` on the option's oval; extra truth fields (the kind may change)."""
    cx, cy, a, b = _oval(page, option)
    nib = rnd.uniform(*INKS[pen][2])
    extra: dict[str, Any] = {}
    for _ in range(4):
        hand = Hand(cx, cy, 0.3)
        if kind == "fill":
            f = rnd.uniform(1.0, 1.1)
            _hatch(hand, _chords(cx, cy, a * f, b * f, slant, 0.6 * nib, 0.3 * nib), nib, rnd)
            _hatch(hand, _chords(cx, cy, a * f * 0.92, b * f * 0.9, slant + rnd.uniform(-35, 35), 0.7 * nib, 0.3 * nib), nib, rnd)
        elif kind == "partial":
            want = rnd.uniform(0.62, 0.8)
            chords = _chords(cx, cy, a * 1.02, b * 1.02, slant, 0.6 * nib, 0.3 * nib)
            side = rnd.choice((1, -1))
            chords.sort(key=lambda ch: side * (ch[0][0] + ch[1][0]))
            pts = _zigzag(chords, nib, rnd)
            for j in range(len(pts) - 1):  # even segments are chords, odd ones the turns between them
                hand.path(pts[j:j + 2], nib, rnd)
                if j % 2 == 0 and hand.share(cx, cy, a, b) >= want:
                    break
            got = hand.share(cx, cy, a, b, hi=False)
            if not 0.6 <= got <= 0.85:
                continue
            extra["fill_fraction"] = round(got, 3)
        elif kind == "check":
            s = rnd.uniform(0.9, 1.25)
            p0 = (cx - 0.75 * a * s, cy - 0.1 * b)
            p1 = (cx - 0.2 * a * s + rnd.uniform(-0.1, 0.1) * a, cy + 0.8 * b)
            p2 = (cx + 1.2 * a * s, cy - 2.0 * b * s)
            bend = rnd.uniform(-0.15, 0.15) * a
            arm = [(p1[0] + (p2[0] - p1[0]) * t + bend * math.sin(math.pi * t), p1[1] + (p2[1] - p1[1]) * t) for t in np.linspace(0, 1, 9)]
            hand.path([p0, ((p0[0] + p1[0]) / 2, (p0[1] + p1[1]) / 2 + 0.1 * b), p1, *arm[1:]], nib, rnd)
        elif kind == "x":
            r = rnd.uniform(1.0, 1.3)
            for sgn in (1, -1):
                lean = rnd.uniform(-0.12, 0.12) * b
                q0 = (cx - a * r, cy - sgn * b * r * 1.15 + lean)
                q1 = (cx + a * r, cy + sgn * b * r * 1.15 - lean)
                mid = ((q0[0] + q1[0]) / 2 + rnd.uniform(-0.08, 0.08) * a, (q0[1] + q1[1]) / 2)
                hand.path([q0, mid, q1], nib, rnd)
        break
    else:
        kind = "fill"  # a partial fill that would not land in 60-85 %: the voter went on and filled it
        hand = Hand(cx, cy, 0.3)
        _hatch(hand, _chords(cx, cy, a * 1.04, b * 1.04, slant, 0.6 * nib, 0.3 * nib), nib, rnd)
        _hatch(hand, _chords(cx, cy, a * 0.95, b * 0.9, slant + 30, 0.7 * nib, 0.3 * nib), nib, rnd)
    _lay(sheet, hand.cover(), hand.x0, hand.y0, pen, rnd, rng)
    return {"mark": kind, **extra}


def _rect_gap(u: float, v: float, box: list[float]) -> float:
    x, y, w, h = box
    return math.hypot(max(x - u, 0.0, u - x - w), max(y - v, 0.0, v - y - h))


def _box_gap(p: list[float], q: list[float]) -> float:
    dx = max(q[0] - p[0] - p[2], p[0] - q[0] - q[2], 0.0)
    dy = max(q[1] - p[1] - p[3], p[1] - q[1] - q[3], 0.0)
    return math.hypot(dx, dy)


def _clear(pts: list[tuple[float, float]], boxes: list[list[float]], gap: float) -> bool:
    return all(_rect_gap(u, v, bx) >= gap for u, v in pts for bx in boxes)


def _loop(cx: float, cy: float, a: float, b: float, turns: float, wob: float, tilt: float, rnd: random.Random) -> list[tuple[float, float]]:
    start, phase, drift = rnd.uniform(0, 2 * math.pi), rnd.uniform(0, 6.3), rnd.uniform(-0.04, 0.04)
    c, s = math.cos(math.radians(tilt)), math.sin(math.radians(tilt))
    n = 140
    pts = []
    for k in range(n):
        t = start + 2 * math.pi * turns * k / (n - 1)
        r = 1 + wob * math.sin(2 * t + phase) + drift * k / n
        ex, ey = a * r * math.cos(t), b * r * math.sin(t)
        pts.append((cx + c * ex - s * ey, cy + s * ex + c * ey))
    return pts


def _defect(sheet: np.ndarray, page: Page, t: dict[str, Any], kind: str, pen: str, rnd: random.Random,
            rng: np.random.Generator) -> dict[str, Any] | None:
    """A mark on or by target ``t`` that is not a clear vote; its truth fields, or None when it
    cannot be drawn there."""
    option = t["option"]
    cx, cy, a, b = _oval(page, option)
    others = [o["box"] for o in page.targets if o["option"] != option]
    nib = rnd.uniform(*INKS[pen][2])
    hand = Hand(cx, cy, 0.3)
    if kind == "traced_outline":  # round the printed outline itself, the inside left empty
        d = rnd.uniform(0.003, 0.012)  # the pen rides on the printed line or just outside it, round and partly round again
        hand.path(_loop(cx, cy, a + d, b + d, rnd.uniform(1.15, 1.45), 0.035, rnd.uniform(-3, 3), rnd), nib, rnd)
        _lay(sheet, hand.cover(), hand.x0, hand.y0, pen, rnd, rng)
        return {"mark": kind, "intent": "ambiguous", "ink": pen}
    if kind == "circled_oval":
        m = rnd.uniform(0.035, 0.07)
        pts = _loop(cx, cy, a + m, b + m, rnd.uniform(1.05, 1.3), 0.04, rnd.uniform(-8, 8), rnd)
        if not _clear(pts, others, 0.03 + nib / 2):
            return None
        hand.path(pts, nib, rnd)
        _lay(sheet, hand.cover(), hand.x0, hand.y0, pen, rnd, rng)
        return {"mark": kind, "intent": "ambiguous", "ink": pen}
    if kind == "hesitation":
        d = rnd.uniform(0.02, 0.04)
        hand.spot(cx + rnd.uniform(-0.45, 0.45) * a, cy + rnd.uniform(-0.35, 0.35) * b, d / 2)
        _lay(sheet, hand.cover(), hand.x0, hand.y0, pen, rnd, rng, strength=1.0)
        return {"mark": kind, "intent": "no_vote", "ink": pen, "dot_in": round(d, 3)}
    if kind == "erasure":  # a pencil fill rubbed out: the gray residue stays, the print a little lifted
        _hatch(hand, _chords(cx, cy, a * 1.08, b * 1.08, rnd.uniform(55, 80), 0.012, 0.006), 0.02, rnd)
        cov = cv2.GaussianBlur(hand.cover(), (0, 0), 0.8)
        blots = cv2.GaussianBlur(rng.uniform(0.0, 1.0, cov.shape).astype(np.float32), (0, 0), 5.0)
        blots = np.clip((blots - blots.mean()) / (blots.std() + 1e-6) * 0.3 + 0.7, 0.25, 1.0)  # rubbed harder in places
        cov *= blots * cv2.GaussianBlur(rng.uniform(0.5, 1.0, cov.shape).astype(np.float32), (0, 0), 0.8) * rnd.uniform(0.32, 0.52)
        mask = cv2.GaussianBlur(hand._mask(cx, cy, a + 0.05, b + 0.04, 1).astype(np.float32), (0, 0), 3.0) * rnd.uniform(0.15, 0.35)
        y0, x0 = hand.y0, hand.x0
        region = sheet[y0:y0 + mask.shape[0], x0:x0 + mask.shape[1]]
        region += (1.0 - region) * mask[:region.shape[0], :region.shape[1], None]
        _lay(sheet, cov, x0, y0, "pencil", rnd, rng, strength=1.0)
        inside = hand._mask(cx, cy, a, b, 1)
        dark = float(cov[inside].mean()) * (1.0 - float(np.dot(LUMA, INKS["pencil"][0])))
        return {"mark": kind, "intent": "ambiguous", "ink": "pencil", "darkness": round(dark, 3)}
    if kind == "underline":  # a line under the printed name, kept off every target
        if option not in page.names:
            return None
        nx, ny, nw, nh = page.names[option]
        boxes = [o["box"] for o in page.targets]
        y = ny + nh + rnd.uniform(0.025, 0.045)
        xa = max(nx + rnd.uniform(-0.02, 0.05), t["box"][0] + t["box"][2] + 0.13 + nib / 2 + rnd.uniform(0.0, 0.1))
        xb = nx + nw + rnd.uniform(-0.06, 0.06)
        if xb - xa < 0.35:
            return None
        slope, bow = rnd.uniform(-0.02, 0.02), rnd.uniform(-0.012, 0.012)
        pts = [(xa + (xb - xa) * s, y + slope * (xb - xa) * s + bow * math.sin(math.pi * s)) for s in np.linspace(0, 1, 12)]
        gap = min(_rect_gap(u, v, bx) for u, v in pts for bx in boxes) - nib / 2
        if gap < 0.12:
            return None
        hand = Hand((xa + xb) / 2, y, (xb - xa) / 2 + 0.1)
        hand.path(pts, nib, rnd)
        _lay(sheet, hand.cover(), hand.x0, hand.y0, pen, rnd, rng)
        return {"mark": kind, "intent": "no_vote", "ink": pen, "clearance_in": round(gap, 3)}
    raise ValueError(kind)


def _scrawl(text: str, size: float, rnd: random.Random, heavy: bool) -> tuple[np.ndarray, int, float]:
    """Handwriting: every letter set on its own, tilted, scaled and lifted a little off a wandering
    baseline (a script, a light italic, or block capitals); coverage at WORK dpi, its baseline
    row and its width in inches."""
    k = WORK * SS
    hand = rnd.choice(("script", "italic", "capitals"))
    key = {"script": "hand", "italic": "hand2", "capitals": "narrow"}[hand]
    if hand == "capitals":
        text, size = text.upper(), size * 0.8
    px = round(size * k)
    font = _face(key, px)
    height = round(px * 2.4)
    width = round(font.getlength(text) * 1.25 + px)
    img = Image.new("L", (width, height), 0)
    base = height * 0.62
    x, drift, lean = px * 0.3, 0.0, rnd.gauss(0, 3)
    for ch in text:
        drift += rnd.gauss(0, 0.015 * px)
        adv = font.getlength(ch)
        if ch != " ":
            g = Image.new("L", (round(adv + px), round(px * 2)), 0)
            ImageDraw.Draw(g).text((px / 2, px * 1.4), ch, font=font, fill=255, anchor="ls")
            scale = rnd.uniform(0.9, 1.1)
            g = g.resize((max(1, round(g.width * scale)), max(1, round(g.height * scale))), Image.BILINEAR)
            g = g.rotate(lean + rnd.gauss(0, 4), resample=Image.BILINEAR, center=(px / 2 * scale, px * 1.4 * scale))
            at = (round(x - px / 2 * scale), round(base + drift - px * 1.4 * scale + rnd.gauss(0, 0.02 * px)))
            img.paste(255, at, g)
        x += adv * rnd.uniform(0.96, 1.1) + (0.05 * px if hand == "capitals" else 0)
    shear = rnd.uniform(-0.3, 0.05) if hand != "capitals" else rnd.uniform(-0.12, 0.08)
    img = img.transform(img.size, Image.AFFINE, (1, shear, -shear * base, 0, 1, 0), resample=Image.BILINEAR)
    if heavy:
        img = img.filter(ImageFilter.MaxFilter(5))
    elif hand == "capitals" or rnd.random() < 0.5:
        img = img.filter(ImageFilter.MaxFilter(3))
    cov = cv2.resize(np.asarray(img), (width // SS, height // SS), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
    cols = np.nonzero(cov.max(axis=0) > 0.05)[0]
    if len(cols):
        cov = cov[:, cols[0]:cols[-1] + 1]
    return cov, round(base / SS), cov.shape[1] / WORK


def _write_name(sheet: np.ndarray, area: list[float], pen: str, rnd: random.Random, rng: np.random.Generator) -> str:
    name = rnd.choice(WRITE_NAMES)
    x, y, w, h = area
    size = rnd.uniform(0.13, 0.17)
    cov, base, width = _scrawl(name, size, rnd, pen == "felt_tip")
    while width > w - 0.12:
        size *= 0.9
        cov, base, width = _scrawl(name, size, rnd, pen == "felt_tip")
    left = x + rnd.uniform(0.04, max(0.05, min(0.3, w - width - 0.06)))
    baseline = y + h - rnd.uniform(0.015, 0.035)
    _lay(sheet, cov, round(left * WORK), round(baseline * WORK) - base, pen, rnd, rng)
    return name


def _initials(sheet: np.ndarray, page: Page, pen: str, rnd: random.Random, rng: np.random.Generator) -> dict[str, Any]:
    """A voter's initials in the bottom margin, clear of every target."""
    letters = [rnd.choice("ABCDEFGHJKLMNPRSTW") for _ in range(rnd.randint(2, 3))]
    text = "".join(f"{ch}." for ch in letters) if rnd.random() < 0.4 else "".join(letters)
    cov, base, width = _scrawl(text, rnd.uniform(0.16, 0.22), rnd, pen == "felt_tip")
    left = rnd.uniform(1.0, page.size[0] - 1.0 - width)
    baseline = rnd.uniform(page.bottom + 0.22, page.size[1] - 0.12)
    rows = np.nonzero(cov.max(axis=1) > 0.05)[0]
    box = [left, baseline + (rows[0] - base) / WORK, width, (rows[-1] + 1 - rows[0]) / WORK]
    gap = min(_box_gap(box, o["box"]) for o in page.targets)
    assert gap >= 0.12, gap
    _lay(sheet, cov, round(left * WORK), round(baseline * WORK) - base, pen, rnd, rng)
    return {"kind": "initials", "text": text, "box": [round(v, 3) for v in box], "ink": pen}


def _choose(rnd: random.Random, weights: list[float], n: int) -> set[int]:
    pool, got = list(range(len(weights))), set()
    for _ in range(min(n, len(pool))):
        k = rnd.choices(pool, [weights[j] for j in pool])[0]
        pool.remove(k)
        got.add(k)
    return got


DEFECTS = {"traced_outline": 0.009, "circled_oval": 0.01, "hesitation": 0.014, "erasure": 0.011, "underline": 0.012}


def _vote(sheet: np.ndarray, page: Page, voter: dict[str, Any], rnd: random.Random, rng: np.random.Generator) -> list[dict[str, Any]]:
    pen = voter["pen"]
    groups: dict[str, list[dict[str, Any]]] = {}
    for t in page.targets:
        groups.setdefault(t["contest"], []).append(t)
    truth = []
    for cid, ts in groups.items():
        c = CONTEST[cid]
        r = rnd.random()
        if voter["blank"]:
            n = 0
        elif c.kind == "question":
            n = 2 if r < 0.03 else 0 if r < 0.25 else 1
        else:
            n = min(c.vote_for + 1, len(ts)) if r < 0.07 else rnd.randint(0, c.vote_for - 1) if r < 0.22 else c.vote_for
        chosen = _choose(rnd, [0.12 if "write_in_area" in t else 1.0 for t in ts], n)
        for k, t in enumerate(ts):
            e: dict[str, Any] = {"contest": cid, "option": t["option"], "mark": "none", "intent": "no_vote"}
            if k in chosen:
                kind = voter["habit"] if rnd.random() < 0.8 else rnd.choices(list(HABITS), list(HABITS.values()))[0]
                e.update(intent="vote", ink=pen, **_vote_mark(sheet, page, t["option"], kind, pen, voter["slant"], rnd, rng))
                if "write_in_area" in t and rnd.random() < 0.9:
                    e["write_in"] = _write_name(sheet, t["write_in_area"], pen, rnd, rng)
            elif not voter["blank"]:
                if "write_in_area" in t and rnd.random() < 0.03:
                    e.update(mark="write_in_only", intent="ambiguous", ink=pen, write_in=_write_name(sheet, t["write_in_area"], pen, rnd, rng))
                    truth.append(e)
                    continue
                roll, kind = rnd.random(), None
                for name, p in DEFECTS.items():
                    if name == "erasure" and not voter["gray"] or name == "traced_outline" and pen == "felt_tip":
                        continue
                    if roll < p:
                        kind = name
                        break
                    roll -= p
                if kind is not None:
                    got = _defect(sheet, page, t, kind, "pencil" if kind == "erasure" else pen, rnd, rng)
                    if got is not None:
                        e.update(got)
            truth.append(e)
    return truth


def _outcomes(truth: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for cid in dict.fromkeys(t["contest"] for t in truth):
        mine = [t for t in truth if t["contest"] == cid]
        votes = [t["option"] for t in mine if t["intent"] == "vote"]
        pending = any(t["intent"] == "ambiguous" for t in mine)
        out[cid] = {"votes": votes, "outcome": "pending" if pending else "overvote" if len(votes) > CONTEST[cid].vote_for else "counted"}
    return out


# --------------------------------------------------------------------------------------
# The scanner: roller slip along the feed, a bowed sheet, skew, a resolution off its tag

MODES = {"g4_threshold": 24, "g4_diffusion": 10, "gray_png": 22, "gray_jpg": 22, "rgb_jpg": 14, "rgb_png": 8}
EXT = {"g4_threshold": "tif", "g4_diffusion": "tif", "gray_png": "png", "gray_jpg": "jpg", "rgb_jpg": "jpg", "rgb_png": "png"}


def _scanner(rnd: random.Random) -> dict[str, Any]:
    mode = rnd.choices(list(MODES), list(MODES.values()))[0]
    dpi = rnd.choices((200, 150, 300), (70, 12, 18))[0]
    tag = rnd.choices(("right", "wrong", "missing"), (70, 17, 13))[0]
    eps = rnd.uniform(-0.01, 0.006)
    dark = rnd.random() < 0.28
    paper = rnd.uniform(0.93, 0.98)
    rgb = mode.startswith("rgb")
    return {
        "mode": mode, "dpi": dpi, "dpi_tag": dpi if tag == "right" else None if tag == "missing" else rnd.choice((72, 96)),
        "true_dpi": [round(dpi * (1 + eps + rnd.uniform(-0.0015, 0.0015)), 3), round(dpi * (1 + eps), 3)],
        "angle": round(rnd.uniform(-1.0, 1.0) if rnd.random() < 0.65 else rnd.uniform(-2.5, 2.5), 3),
        "flip": rnd.random() < 0.25,
        "waves": [(rnd.uniform(0.7, 1.6), rnd.uniform(0, 2 * math.pi), 1.0)]  # wavelengths in sheet lengths
        + [(rnd.uniform(0.3, 0.6), rnd.uniform(0, 2 * math.pi), rnd.uniform(0.05, 0.2)) for _ in range(2)],
        "slip_in": rnd.uniform(0.015, 0.04), "slip_rate": rnd.uniform(0.006, 0.01),
        "bow_in": round(rnd.choice((-1, 1)) * rnd.uniform(0.004, 0.02), 4),
        "margins_in": [round(rnd.uniform(0.08, 0.3) if dark else rnd.uniform(0.04, 0.2), 3) for _ in range(4)],
        "backing": "dark" if dark else "white", "backing_level": rnd.uniform(0.05, 0.2) if dark else rnd.uniform(0.9, 0.97),
        "paper": [paper, paper * rnd.uniform(0.985, 1.0), paper * rnd.uniform(0.95, 0.99)] if rgb else [paper] * 3,
        "gamma": round(rnd.uniform(0.92, 1.08), 3), "lens": round(rnd.uniform(0.35, 0.8), 3), "noise": round(rnd.uniform(0.8, 2.5), 3),
        "threshold": rnd.randint(118, 142), "jpeg_quality": rnd.randint(50, 90) if mode.endswith("jpg") else None,
    }


def _feed(sc: dict[str, Any], length: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Where each inch down the fed sheet lands: (v, v + slip(v)) tabulated, the largest slip
    against a uniform scale and the largest local change of speed."""
    v = np.linspace(0.0, length, 1201)
    d = sum(amp * np.sin(2 * np.pi * v / (wl * length) + ph) for wl, ph, amp in sc["waves"])
    d = d - np.polyval(np.polyfit(v, d, 1), v)
    rate = np.gradient(d, v)
    d = d * min(sc["slip_in"] / np.abs(d).max(), sc["slip_rate"] / np.abs(rate).max())
    rate = np.gradient(d, v)
    return v, v + d, float(np.abs(d).max()), float(np.abs(rate).max())


def _scan(sheet: np.ndarray, sc: dict[str, Any], rng: np.random.Generator) -> tuple[Image.Image, dict[str, Any]]:
    """Feed the marked sheet (float RGB reflectance at WORK dpi) through the scanner."""
    h_in, w_in = sheet.shape[0] / WORK, sheet.shape[1] / WORK
    if sc["flip"]:
        sheet = sheet[::-1, ::-1]
    rgb = sc["mode"].startswith("rgb")
    img = np.ascontiguousarray(sheet * np.asarray(sc["paper"], np.float32) if rgb else (sheet @ LUMA) * np.float32(sc["paper"][0]))
    dpi = sc["dpi"]
    bw, bh = round(w_in * dpi), round(h_in * dpi)
    base = cv2.resize(img, (bw, bh), interpolation=cv2.INTER_AREA) if dpi != WORK else img
    vg, vd, slip, rate = _feed(sc, h_in)
    tdx, tdy = sc["true_dpi"]
    bow = sc["bow_in"]
    th = math.radians(sc["angle"])
    c, s = math.cos(th), math.sin(th)
    pc, qc = w_in * tdx / 2, h_in * tdy / 2

    def forward(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = (u + bow * np.sin(np.pi * v / h_in)) * tdx - pc
        q = np.interp(v, vg, vd) * tdy - qc
        return c * p - s * q, s * p + c * q

    t = np.linspace(0, 1, 60)
    eu = np.concatenate([t * w_in, t * w_in, np.zeros_like(t), np.full_like(t, w_in)])
    ev = np.concatenate([np.zeros_like(t), np.full_like(t, h_in), t * h_in, t * h_in])
    xs, ys = forward(eu, ev)
    ml, mt, mr, mb = (m * dpi for m in sc["margins_in"])
    ox, oy = ml - xs.min(), mt - ys.min()
    W, H = math.ceil(xs.max() - xs.min() + ml + mr), math.ceil(ys.max() - ys.min() + mt + mb)
    step = 8  # the smooth inverse map on a coarse grid, interpolated (one grid point beyond each edge)
    gx = (np.arange(W // step + 3) - 0.5) * step - 0.5
    gy = (np.arange(H // step + 3) - 0.5) * step - 0.5
    X, Y = np.meshgrid(gx, gy)
    xr, yr = X - ox, Y - oy
    p, q = c * xr + s * yr + pc, -s * xr + c * yr + qc
    z = q / tdy  # beyond the sheet's ends the feed goes on at the speed it had there
    v = np.where(z < vd[0], z - (vd[0] - vg[0]), np.where(z > vd[-1], z - (vd[-1] - vg[-1]), np.interp(z, vd, vg)))
    u = p / tdx - bow * np.sin(np.pi * v / h_in)
    size = (len(gx) * step, len(gy) * step)
    mapx = cv2.resize((u * dpi - 0.5).astype(np.float32), size, interpolation=cv2.INTER_LINEAR)[step:step + H, step:step + W]
    mapy = cv2.resize((v * dpi - 0.5).astype(np.float32), size, interpolation=cv2.INTER_LINEAR)[step:step + H, step:step + W]
    back = float(sc["backing_level"])
    out = cv2.remap(base, mapx, mapy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(back, back, back) if rgb else back)
    if sc["backing"] == "white":  # the sheet's edge throws a faint shadow on the lid
        on = cv2.remap(np.ones((bh, bw), np.float32), mapx, mapy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        shade = np.clip(cv2.GaussianBlur(on, (0, 0), 1.5) - on, 0, 1) * 0.6
        out = out * (1.0 - (shade[..., None] if rgb else shade))
    out = cv2.GaussianBlur(out, (0, 0), sc["lens"])
    out = out + rng.standard_normal(out.shape, dtype=np.float32) * np.float32(sc["noise"] / 255.0)
    u8 = np.clip(255.0 * np.power(np.clip(out, 0, 1), sc["gamma"]) + 0.5, 0, 255).astype(np.uint8)
    if sc["mode"] == "g4_threshold":
        image = Image.fromarray(u8 > sc["threshold"])
    elif sc["mode"] == "g4_diffusion":  # the scanner stretches its paper to white, then diffuses the error
        white = 255.0 * (sc["paper"][0] * 0.985) ** sc["gamma"]
        image = Image.fromarray(np.clip(u8.astype(np.float32) * (255.0 / white) + 0.5, 0, 255).astype(np.uint8)).convert("1")
    else:
        image = Image.fromarray(u8)
    meta = {"size_px": [W, H], "rotation_deg": sc["angle"], "rotated_180": sc["flip"], "true_dpi": sc["true_dpi"],
            "slip_max_in": round(slip, 4), "slip_rate_max": round(rate, 4), "bow_in": bow, "margins_in": sc["margins_in"],
            "backing": sc["backing"], "paper": [round(x, 3) for x in sc["paper"]], "gamma": sc["gamma"], "lens": sc["lens"],
            "noise": sc["noise"], "threshold": sc["threshold"] if sc["mode"] == "g4_threshold" else None}
    return image, meta


def _encode(image: Image.Image, sc: dict[str, Any]) -> bytes:
    kw: dict[str, Any] = {} if sc["dpi_tag"] is None else {"dpi": (sc["dpi_tag"], sc["dpi_tag"])}
    buf = io.BytesIO()
    ext = EXT[sc["mode"]]
    if ext == "tif":
        image.save(buf, "TIFF", compression="group4", **kw)
    elif ext == "png":
        image.save(buf, "PNG", compress_level=3, **kw)  # zlib level 3: noisy scans take 3-4 times longer at the default 6
    else:
        image.save(buf, "JPEG", quality=sc["jpeg_quality"], **kw)
    return buf.getvalue()


# --------------------------------------------------------------------------------------
# Cards and the deck


def make_card(out: Path, seed: int, i: int) -> dict[str, Any]:
    """Print, mark, scan and write card ``i`` of the deck; its truth entry."""
    cv2.setNumThreads(1)
    rnd = random.Random(f"seventh-vendor/{seed}/{i}")
    rng = np.random.default_rng([seed % 2**32, i, 7])
    sid = rnd.choices(list(STYLE_WEIGHTS), list(STYLE_WEIGHTS.values()))[0]
    st = STYLES[sid]
    page = plan_of(sid)
    sc = _scanner(rnd)
    pen = rnd.choices(list(PENS), list(PENS.values()))[0]
    habit = rnd.choices(list(HABITS), list(HABITS.values()))[0]
    voter = {"pen": pen, "habit": habit, "blank": rnd.random() < 0.04, "gray": not sc["mode"].startswith("g4"),
             "slant": rnd.choice((rnd.uniform(60, 85), rnd.uniform(95, 120), rnd.uniform(-15, 20)))}
    sheet = blank_of(sid).astype(np.float32) * np.float32(1 / 255)
    serial = _serial_of(seed, i) if st.frame == "bd" else None
    if serial:
        _stamp_serial(sheet, serial)
    truth = _vote(sheet, page, voter, rnd, rng)
    strays = [_initials(sheet, page, pen, rnd, rng)] if not voter["blank"] and rnd.random() < 0.1 else []
    image, meta = _scan(sheet, sc, rng)
    del sheet
    fmt = EXT[sc["mode"]]
    name = f"cards/{i + 1:04d}.{fmt}"
    (Path(out) / "cards").mkdir(parents=True, exist_ok=True)
    (Path(out) / name).write_bytes(_encode(image, sc))
    return {"file": name, "page_of_file": 1, "style": sid, "page": 1, "precinct": st.precinct, "kind": "ballot", "frame": st.frame,
            "size_in": list(page.size), "sides": 1, "rotated_180": sc["flip"], "dpi": sc["dpi"], "dpi_tag": sc["dpi_tag"],
            "format": fmt, "mode": sc["mode"], "color": sc["mode"].startswith("rgb"), "jpeg_quality": sc["jpeg_quality"],
            "expect": "read", "pen": pen, "habit": habit, "blank": voter["blank"], "stain_options": [], "bleed_options": [],
            "cropped": False, "serial": serial, "dropout": st.frame == "do", "strays": strays, "targets": truth,
            "contests": _outcomes(truth), "scan": meta}


def make_deck(out: Path, *, cards: int, seed: int, jobs: int = 1) -> Path:
    """The election with its reference blanks, ``cards`` cards marked and scanned, and ``expected.json``.
    Each card depends only on ``(seed, its index)``, so ``jobs`` processes give the same deck."""
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)  # no OpenCV worker threads in this process before the pool forks
    try:
        return write_deck(Path(out), write_election, make_card, cards=cards, seed=seed, jobs=jobs, profile=PROFILE)
    finally:
        cv2.setNumThreads(threads)


def main(argv: list[str] | None = None) -> int:
    return deck_cli(make_deck, "a general-election deck (ballot-on-demand letter with per-card serials, drop-out ink legal; roller "
                               "slip and bowed sheets) by a seventh, independent renderer", argv)


if __name__ == "__main__":
    raise SystemExit(main())
