"""A fifth vendor ballot renderer, written apart from ``scanpipe.synth`` and from the other four.

The reader is judged on vendor ballots drawn by generators its authors did not write. This
module imports nothing from scanpipe and shares no drawing, marking or scanning code with
``scanpipe.synth``, :mod:`tests.foreign_renderer`, :mod:`tests.foreign_vendor`,
:mod:`tests.third_vendor` or :mod:`tests.fourth_vendor` (it borrows only the deck writer and the
command line of :mod:`tests.foreign_renderer`). It covers what those do not:

* an Osprey County, Arkansas general election (jurisdiction AR) on three frames:

  - **ES&S-like coded letter** (``EC-*``, 8.5 x 11 in): timing dashes down BOTH long sides and a
    row of bars along the BOTTOM whose positions ENCODE THE STYLE (a start pair, the style
    number in 12 bits, a 3-bit frame code, a 4-bit checksum, a stop bar; a 0 is an empty
    position). ``EC-0412`` and ``EC-0413`` carry the same contests and differ ONLY in that code
    and in the small printed "PCT 0412" / "PCT 0413" at the foot; ``EC-0520`` differs in two
    contests. Ovals LEFT of the names, party abbreviations right-aligned, a heavy rule over
    each contest and its "Vote for" line on a gray tint;
  - **ES&S-like long ballot with a stub** (``LB-1701``: 8.5 x 17 in, three columns;
    ``LB-1901`` / ``LB-1902``: 8.5 x 19 in, four narrow columns, differing only in the coded
    bottom row and the "PCT" number): the same coded frame below a perforated, numbered STUB
    (1.25 in: "No. 0000147" twice, a dashed tear line). The board's reference blank still has
    the stub and the layout's boxes are in its coordinates; every voted card has the stub torn
    off, so its image is shorter by the stub and its top edge is a ragged tear (a few
    hundredths of an inch either side of the perforation, sometimes leaving half dashes);
  - **Sequoia-like "complete the arrow"** (``SQ-0601`` / ``SQ-0602``, letter, differing in the
    precinct line): a heavy border round the body, timing dashes down the RIGHT edge only,
    serif type, and a broken arrow LEFT of each name pointing at it (tail, gap, head); the
    target box is the gap with 0.015 in either side.

* Voters: black or blue ballpoint, felt tip, pencil, light pencil; looping spiral fills,
  partial fills (55-80 %), checks and X's through the oval, light-pencil fills (mean darkness
  0.29-0.40 inside the oval; never on thresholded bilevel scans, where they would vanish, nor as
  checks, X's or arrow lines, which could pass for a faint trace), a line joining
  the arrow's gap, an X or a check in the gap: all ``vote``. A pencil fill erased with gray
  residue (mean darkness about 0.11-0.23 inside the oval, the printed oval lightened by the eraser;
  gray scans only), a loop round an empty oval ("circled target"), a loop round a candidate's
  NAME with the target untouched, and on arrow ballots a check beside the arrow outside the
  target (over the tail or after the name, at least 0.02 in from the box): ``ambiguous``, as
  contract section 7 sends a circled target or name, a heavy erasure and "a mark that could be
  either" to a person. A hesitation dot (0.02-0.04 in) in a target: ``no_vote`` (section 7: a
  dot). Write-in names with the target marked (``vote``) or left empty (``ambiguous``: section 3
  makes it ``unknown``); overvotes, undervotes, blank ballots. Contest outcomes: ``pending``
  when an option is ambiguous, else ``overvote`` or ``counted``.
* Scanner: 200 dpi mostly (150 or 300 sometimes), bilevel TIFF G4 thresholded or error-diffusion
  dithered (a gray tint becomes a stipple or vanishes), gray PNG, gray JPEG (quality 50-92);
  skew up to 3 degrees, 180-degree feeds, scale and stretch up to 1.5 % differing in x and y,
  a dark scanner backing round the sheet in a fifth of the scans (white with a faint edge
  shadow otherwise), lens blur and sensor noise, the dpi tag right, wrong or missing.

Layouts are what a board writes: the blank "scanned" cleanly at 200 dpi as ``reference`` (gray
PNG, the long ballots with their stub), target boxes in inches round the printed oval or the
arrow's gap, write-in areas over the write-in line; no fiducials, no QR box, no distinguish
boxes. Seeded: the same seed gives the same bytes.

    python -m tests.fifth_vendor OUT --cards 240 --seed 1203 --jobs 2   # a deck for bench_accuracy --deck OUT
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

MASTER = 300  # dpi of the printed and marked sheet
REF_DPI = 200
PROFILE = "fifth-vendor"
TINT = 0.17  # darkness of the gray screen behind "Vote for" lines
SUB = 16  # fixed-point factor (4 fraction bits) of the OpenCV drawing calls

FONT_DIRS = ("/usr/share/fonts/opentype/urw-base35", "/usr/share/fonts/truetype/liberation", "/usr/share/fonts/truetype/dejavu")
FONT_FILES = {
    "sans": ("NimbusSans-Regular.otf", "LiberationSans-Regular.ttf", "DejaVuSans.ttf"),
    "sans_b": ("NimbusSans-Bold.otf", "LiberationSans-Bold.ttf", "DejaVuSans-Bold.ttf"),
    "sans_i": ("NimbusSans-Italic.otf", "LiberationSans-Italic.ttf", "DejaVuSans-Oblique.ttf"),
    "narrow": ("NimbusSansNarrow-Regular.otf", "LiberationSansNarrow-Regular.ttf", "DejaVuSansCondensed.ttf"),
    "narrow_b": ("NimbusSansNarrow-Bold.otf", "LiberationSansNarrow-Bold.ttf", "DejaVuSansCondensed-Bold.ttf"),
    "narrow_i": ("NimbusSansNarrow-Oblique.otf", "LiberationSansNarrow-Italic.ttf", "DejaVuSansCondensed-Oblique.ttf"),
    "serif": ("C059-Roman.otf", "LiberationSerif-Regular.ttf", "DejaVuSerif.ttf"),
    "serif_b": ("C059-Bold.otf", "LiberationSerif-Bold.ttf", "DejaVuSerif-Bold.ttf"),
    "serif_i": ("C059-Italic.otf", "LiberationSerif-Italic.ttf", "DejaVuSerif-Italic.ttf"),
    "mono_b": ("NimbusMonoPS-Bold.otf", "LiberationMono-Bold.ttf", "DejaVuSansMono-Bold.ttf"),
    "script": ("Z003-MediumItalic.otf", "DejaVuSerif-Italic.ttf"),
    "print": ("URWGothic-BookOblique.otf", "DejaVuSans-Oblique.ttf"),
}


@lru_cache(maxsize=512)
def _face(key: str, px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for name in FONT_FILES[key]:
        for folder in FONT_DIRS:
            if Path(folder, name).is_file():
                return ImageFont.truetype(str(Path(folder, name)), max(4, px))
    return ImageFont.load_default(size=max(4, px))


def _width(s: str, key: str, size: float) -> float:
    """Inches that ``s`` takes in font ``key`` with an em of ``size`` inches."""
    return float(_face(key, 500).getlength(s)) * size / 500


def _lines(s: str, key: str, size: float, room: float) -> list[str]:
    out: list[str] = []
    for word in s.split():
        if out and _width(f"{out[-1]} {word}", key, size) <= room:
            out[-1] = f"{out[-1]} {word}"
        else:
            out.append(word)
    return out


def _q(v: float) -> float:
    return round(float(v), 4)


# --------------------------------------------------------------------------------------
# The election


@dataclass(frozen=True)
class Choice:
    id: str
    name: str
    party: str = ""
    write_in: bool = False


@dataclass(frozen=True)
class Contest:
    id: str
    title: str
    vote_for: int
    choices: tuple[Choice, ...]
    kind: str = "candidate"
    text: str = ""


def _ticket(prefix: str, people: list[tuple[str, str]], write_ins: int = 0) -> tuple[Choice, ...]:
    out = [Choice(f"{prefix}{i + 1}", n, p) for i, (n, p) in enumerate(people)]
    out += [Choice(f"{prefix}w{j + 1}", "Write-in", write_in=True) for j in range(write_ins)]
    return tuple(out)


def _issue(n: int, popular: str, text: str) -> Contest:
    return Contest(f"issue{n}", f"Issue No. {n}: {popular}", 1,
                   (Choice(f"is{n}-for", f"FOR Issue No. {n}"), Choice(f"is{n}-against", f"AGAINST Issue No. {n}")), "question", text)


CONTESTS: tuple[Contest, ...] = (
    Contest("pres", "President and Vice President", 1, _ticket("pr", [
        ("Corinne Haddad", "REP"), ("Marcus Ellery", "DEM"), ("Ingrid Solheim", "LIB"), ("Dwayne Whitfield", "GRN")], 1)),
    Contest("ussen", "United States Senator", 1, _ticket("us", [
        ("Harriet Coyle", "REP"), ("Julian Amadi", "DEM"), ("Roy Bettencourt", "LIB")], 1)),
    Contest("cong2", "U.S. Congress, District 2", 1, _ticket("c2", [("Nolan Fairbairn", "REP"), ("Tessa Okonjo", "DEM")], 1)),
    Contest("stsen14", "State Senate, District 14", 1, _ticket("ss", [("Gail Whitmore", "REP"), ("Arturo Benavides", "DEM")])),
    Contest("hd61", "State Representative, District 61", 1, _ticket("h1", [("Leland Marsh", "REP"), ("Priya Venkataraman", "DEM")], 1)),
    Contest("hd62", "State Representative, District 62", 1, _ticket("h2", [("Otis Calloway", "REP"), ("Renata Szabo", "DEM")], 1)),
    Contest("judge", "Circuit Judge, 6th Circuit, Division 4 (Nonpartisan)", 1, _ticket("jd", [
        ("Lorraine Epps", ""), ("Howard Kessler", ""), ("Yusuf Daniels", "")])),
    Contest("jp2", "Justice of the Peace, District 2", 1, _ticket("j2", [("Wendell Pruitt", "REP"), ("Carla Jimenez", "DEM")], 1)),
    Contest("jp5", "Justice of the Peace, District 5", 1, _ticket("j5", [("Morris Tidwell", "REP"), ("Beth Ann Crowder", "DEM")], 1)),
    Contest("council", "City Council, At Large", 3, _ticket("cc", [
        ("Abigail Norcross", ""), ("Terrence Vu", ""), ("Magdalena Ortiz", ""), ("Floyd Harrell", ""), ("Simone Achterberg", ""),
        ("Kwame Boateng", "")], 1)),
    Contest("school", "School Board, Zone 4", 2, _ticket("sb", [
        ("Eunice Calder", ""), ("Rafael Quintero", ""), ("Hollis Burke", ""), ("Naomi Feldstein", "")])),
    _issue(1, "Term Limits for County Officers", "An amendment to the Osprey County Code limiting the County Judge, the "
           "Sheriff and the Justices of the Peace to three consecutive four-year terms, counting terms begun after "
           "January 1, 2033, and providing that a person who has served three terms may again seek the office after four years."),
    _issue(2, "Road Improvement Sales Tax", "Levying a one-half percent (0.5%) local sales and use tax for ten years, the "
           "net collections to be used only for the repair, resurfacing and widening of county roads and bridges, with an "
           "annual public report of every project paid for from the tax."),
    _issue(3, "Consolidation of Water Districts", "Authorizing the Quorum Court to merge the Bell Creek, Cane Hill and "
           "Heron Bay rural water districts into one Osprey County Water Authority governed by a board of seven members, "
           "two appointed by each former district and one by the County Judge, and transferring their assets and debts."),
    _issue(4, "Library Board Elected", "Providing that the members of the Osprey County Library Board be elected by the "
           "voters of the county at the general election rather than appointed by the County Judge, beginning with the "
           "general election of 2034, and setting their terms at four years."),
    _issue(5, "Fire Protection Dues", "Authorizing the collection of annual fire protection dues of forty dollars ($40.00) "
           "per residence and eighty dollars ($80.00) per commercial property in the Redstone Fire Protection District, "
           "collected with county property taxes and paid to the district."),
    _issue(6, "Sunday Sales", "Permitting the retail sale of wine and beer for off-premises consumption on Sundays between "
           "the hours of ten o'clock in the morning and midnight within the unincorporated areas of Redstone Township."),
    Contest("millage", "Osprey County Library Millage", 1, (Choice("mil-for", "FOR a 1.0 mill increase"),
                                                           Choice("mil-against", "AGAINST a 1.0 mill increase")), "question",
            "A proposed increase of the county library tax from 1.0 mill to 2.0 mills on the assessed value of real and "
            "personal property, to pay for longer hours, a bookmobile and the repair of the Mill Pond branch."),
) + tuple(Contest(cid, title, 1, _ticket(pre, [(n, party) for n, party in zip(names, parties)], wi)) for cid, title, pre, names, parties, wi in (
    ("cjudge", "County Judge", "cj", ["Virgil Sloan", "Martha Quarles"], ["REP", "DEM"], 1),
    ("sheriff", "Sheriff", "sh", ["Dale Hutto", "Ramon Figueroa", "Curtis Lamb"], ["REP", "DEM", "LIB"], 1),
    ("prosatty", "Prosecuting Attorney, 6th Judicial District", "pa", ["Sybil Harrow", "Grant Okafor"], ["REP", "DEM"], 0),
    ("supreme3", "Associate Justice, Supreme Court, Position 3 (Nonpartisan)", "sj", ["Adele Fontaine", "Boyd Pennington"], ["", ""], 0),
    ("appeals", "Court of Appeals, District 4, Position 2 (Nonpartisan)", "ap", ["Lucius Graves", "Maren Tollefson"], ["", ""], 0),
    ("cclerk", "Circuit Clerk", "ck", ["Opal Dennison", "Hector Salas"], ["REP", "DEM"], 0),
    ("coclerk", "County Clerk", "co", ["Bonnie Kilgore", "Ezra Whitten"], ["REP", "DEM"], 0),
    ("assessor", "Assessor", "as", ["Royce Pendergrass", "Lena Moorhouse"], ["REP", "DEM"], 0),
    ("collector", "Collector", "cl", ["Faye Ashcraft", "Darnell Price"], ["REP", "DEM"], 0),
    ("treasurer", "Treasurer", "tr", ["Ward Ellison", "Clarice Bynum"], ["REP", "DEM"], 0),
    ("coroner", "Coroner", "cr", ["Amos Treadwell", "Ida Fairchild"], ["REP", "DEM"], 1),
    ("surveyor", "Surveyor", "sv", ["Milton Greer", "Paula Ridgeway"], ["REP", "DEM"], 0),
    ("mayor", "Mayor, City of Redstone", "my", ["Dorothy Vance", "Luis Aranda", "Perry Stokes"], ["", "", ""], 1),
    ("alder1", "Alderman, Ward 1, Position 1", "a1", ["Gus Whitmer", "Ramona Lyle"], ["", ""], 0),
    ("alder2", "Alderman, Ward 2, Position 1", "a2", ["Jerome Tibbs", "Henrietta Cobb"], ["", ""], 0),
    ("constable", "Constable, Redstone Township", "cn", ["Earl Mabry", "Duane Pickett"], ["REP", "DEM"], 1),
))
CONTEST = {c.id: c for c in CONTESTS}
CHOICE = {o.id: o for c in CONTESTS for o in c.choices}
PRECINCTS = {"0412": "Bell Creek 4-12", "0413": "Bell Creek 4-13", "0520": "Cane Hill 5-20", "0601": "Heron Bay 6-01",
             "0602": "Heron Bay 6-02", "0701": "Mill Pond 7-01", "0901": "Redstone 9-01", "0902": "Redstone 9-02"}
SERIAL = "0000147"  # the stub number of the board's blank


@dataclass(frozen=True)
class Style:
    frame: str  # "ec" | "lb" | "sq"
    size: tuple[float, float]
    number: str  # precinct number, printed and (ES&S-like frames) coded on the bottom row
    contests: tuple[str, ...]
    columns: int = 2
    stub: float = 0.0
    face: str = "sans"  # "sans" | "narrow"
    fs: float = 0.115  # name size, inches


_EC = ("pres", "ussen", "cong2", "hd61", "cjudge", "jp2", "issue1", "issue2")
_COUNTY = ("cjudge", "sheriff", "prosatty", "cclerk", "coclerk", "assessor", "collector", "treasurer", "coroner", "surveyor")
_LB19 = ("pres", "ussen", "cong2", "stsen14", "hd62", "supreme3", "appeals", "judge", "prosatty", "cjudge", "sheriff", "cclerk",
         "coclerk", "assessor", "collector", "treasurer", "coroner", "surveyor", "jp5", "constable", "mayor", "alder1", "alder2", "council",
         "school", "issue1", "issue2", "issue3", "issue4", "issue5", "issue6", "millage")
_SQ = ("pres", "ussen", "cong2", "stsen14", "cjudge", "council", "sheriff", "issue1", "issue2")
STYLES: dict[str, Style] = {
    "EC-0412": Style("ec", (8.5, 11.0), "0412", _EC),
    "EC-0413": Style("ec", (8.5, 11.0), "0413", _EC),
    "EC-0520": Style("ec", (8.5, 11.0), "0520", tuple("hd62" if c == "hd61" else "jp5" if c == "jp2" else c for c in _EC)),
    "LB-1701": Style("lb", (8.5, 17.0), "0701", ("pres", "ussen", "cong2", "stsen14", "hd61", "supreme3", "judge", *_COUNTY[:-2], "jp2",
                                                 "council", "school", "issue1", "issue2", "issue3", "issue4", "millage"), 3, 1.25, "sans",
                     0.105),
    "LB-1901": Style("lb", (8.5, 19.0), "0901", _LB19, 4, 1.25, "narrow", 0.108),
    "LB-1902": Style("lb", (8.5, 19.0), "0902", _LB19, 4, 1.25, "narrow", 0.108),
    "SQ-0601": Style("sq", (8.5, 11.0), "0601", _SQ),
    "SQ-0602": Style("sq", (8.5, 11.0), "0602", _SQ),
}
STYLE_WEIGHTS = {"EC-0412": 14, "EC-0413": 14, "EC-0520": 10, "LB-1701": 12, "LB-1901": 12, "LB-1902": 12, "SQ-0601": 14,
                 "SQ-0602": 12}
FRAME_CODE = {"ec": 5, "lb": 6}


# --------------------------------------------------------------------------------------
# The printed sheet: a plan of operations in inches, painted once per style


@dataclass
class Plan:
    sid: str
    size: tuple[float, float]
    shapes: list[tuple[Any, ...]] = field(default_factory=list)
    words: list[tuple[Any, ...]] = field(default_factory=list)
    targets: list[dict[str, Any]] = field(default_factory=list)
    geo: dict[str, dict[str, Any]] = field(default_factory=dict)  # option -> where its target and name are

    def block(self, x: float, y: float, w: float, h: float, level: float = 1.0) -> None:
        self.shapes.append(("poly", [(x, y), (x + w, y), (x + w, y + h), (x, y + h)], level))

    def poly(self, pts: list[tuple[float, float]], level: float = 1.0) -> None:
        self.shapes.append(("poly", pts, level))

    def ring(self, cx: float, cy: float, rx: float, ry: float, lw: float) -> None:
        self.shapes.append(("ring", cx, cy, rx, ry, lw))

    def rule(self, x0: float, y0: float, x1: float, y1: float, lw: float, level: float = 1.0) -> None:
        self.shapes.append(("rule", x0, y0, x1, y1, lw, level))

    def box(self, x: float, y: float, w: float, h: float, lw: float) -> None:
        for a, b in (((x, y), (x + w, y)), ((x + w, y), (x + w, y + h)), ((x + w, y + h), (x, y + h)), ((x, y + h), (x, y))):
            self.block(min(a[0], b[0]) - lw / 2, min(a[1], b[1]) - lw / 2, abs(b[0] - a[0]) + lw, abs(b[1] - a[1]) + lw)

    def say(self, x: float, y: float, s: str, key: str, size: float, anchor: str = "ls", level: float = 1.0) -> float:
        self.words.append((x, y, s, key, size, anchor, level))
        return _width(s, key, size)

    def target(self, contest: Contest, choice: Choice, box: list[float], geo: dict[str, Any], area: list[float] | None) -> None:
        t: dict[str, Any] = {"contest": contest.id, "option": choice.id, "box": [_q(v) for v in box]}
        if area is not None:
            t["write_in_area"] = [_q(v) for v in area]
        self.targets.append(t)
        self.geo[choice.id] = {**geo, "box": box}


def _vote_for(c: Contest) -> str:
    words = {1: "One", 2: "Two", 3: "Three"}
    return f"Vote for {words[c.vote_for]}" if c.kind == "candidate" else "Vote FOR or AGAINST"


def _style_bits(st: Style) -> list[int]:
    """The bottom row of an ES&S-like frame: start pair, style number (12 bits), frame (3 bits),
    checksum (4 bits), empty positions, stop bar; one entry per 0.25 in position."""
    no = int(st.number)
    body = [(no >> (11 - i)) & 1 for i in range(12)] + [(FRAME_CODE[st.frame] >> (2 - i)) & 1 for i in range(3)]
    check = (sum(body) * 7 + no) % 16
    bits = [1, 1] + body + [(check >> (3 - i)) & 1 for i in range(4)]
    slots = int((st.size[0] - 1.5) / 0.25) + 1
    return bits + [0] * (slots - len(bits) - 1) + [1]


def _ess_contest(p: Plan, c: Contest, x: float, y: float, w: float, st: Style) -> float:
    """One contest of the ES&S-like frames: heavy rule, bold title, tinted "Vote for" line,
    ovals left of the names, parties flush right. Returns its height."""
    reg, bold, ital = st.face, f"{st.face}_b", f"{st.face}_i"
    fs = st.fs
    y0 = y
    p.block(x, y, w, 0.028)
    y += 0.03
    for line in _lines(c.title, bold, fs * 1.08, w - 0.1):
        y += fs * 1.3
        p.say(x + 0.05, y, line, bold, fs * 1.08)
    y += 0.06
    band = fs * 1.5
    p.block(x, y, w, band, TINT)
    p.say(x + 0.05, y + band * 0.7, _vote_for(c), ital, fs * 0.88)
    y += band + 0.03
    if c.text:
        for line in _lines(c.text, reg, fs * 0.86, w - 0.1):
            y += fs * 1.12
            p.say(x + 0.05, y, line, reg, fs * 0.86)
        y += 0.07
    ow, oh = (0.2, 0.13) if st.frame == "ec" else (0.18, 0.12)
    pitch = 0.3 if st.frame == "ec" else 0.27
    for ch in c.choices:
        rh = pitch * (1.45 if ch.write_in else 1.0)
        cy = y + pitch / 2 + 0.01
        ox = x + 0.07
        nx = ox + ow + 0.1
        area = None
        if ch.write_in:
            ly = cy + oh / 2 + 0.03
            p.rule(nx, ly, x + w - 0.07, ly, 0.008)
            p.say(nx, ly + fs * 0.7, "write-in", ital, fs * 0.58, level=0.85)
            area = [nx, ly - 0.25, x + w - 0.07 - nx, 0.25]
            name = (nx, nx, cy)
        else:
            party_w = p.say(x + w - 0.07, cy, ch.party, reg, fs * 0.82, anchor="rm") if ch.party else 0.0
            tw = p.say(nx, cy, ch.name, reg, fs, anchor="lm")
            if nx + tw > x + w - 0.07 - party_w - 0.06:
                raise ValueError(f"{p.sid}: {ch.name!r} does not fit its column")
            name = (nx, nx + tw, cy)
        p.ring(ox + ow / 2, cy, ow / 2, oh / 2, 0.013)
        p.target(c, ch, [ox, cy - oh / 2, ow, oh], {"kind": "oval", "cx": ox + ow / 2, "cy": cy, "a": ow / 2, "b": oh / 2, "name": name},
                 area)
        y += rh
        p.rule(x + 0.05, y, x + w - 0.05, y, 0.005, 0.55)
    return y - y0 + 0.02


ARROW = {"tail": 0.24, "gap": 0.17, "shaft": 0.04, "head": 0.1}


def _arrow(p: Plan, x0: float, cy: float, gap: bool = True) -> tuple[float, float, float]:
    """A Sequoia-like arrow from ``x0`` pointing right: a tail with a short upright at its start,
    a gap (closed when ``gap`` is false, as the instructions draw it), a head. Returns (gap start,
    gap end, tip)."""
    t, g, s, hd = ARROW["tail"], ARROW["gap"], ARROW["shaft"], ARROW["head"]
    p.block(x0, cy - 0.045, 0.022, 0.09)
    p.block(x0, cy - 0.012, t if gap else t + g, 0.024)
    gx0, gx1 = x0 + t, x0 + t + g
    p.block(gx1, cy - 0.012, s + 0.01, 0.024)
    tip = gx1 + s + hd
    p.poly([(gx1 + s, cy - 0.06), (tip, cy), (gx1 + s, cy + 0.06)])
    return gx0, gx1, tip


def _sq_contest(p: Plan, c: Contest, x: float, y: float, w: float, st: Style) -> float:
    """One contest of the Sequoia-like frame: centred serif title, a rule, arrows left of the names."""
    fs = st.fs
    y0 = y
    for line in _lines(c.title.upper(), "serif_b", fs * 0.98, w - 0.15):
        y += fs * 1.3
        p.say(x + w / 2, y, line, "serif_b", fs * 0.98, anchor="ms")
    y += fs * 1.25
    p.say(x + w / 2, y, _vote_for(c), "serif_i", fs * 0.88, anchor="ms")
    y += 0.07
    p.rule(x + 0.3, y, x + w - 0.3, y, 0.008)
    if c.text:
        y += 0.03
        for line in _lines(c.text, "serif", fs * 0.84, w - 0.15):
            y += fs * 1.12
            p.say(x + 0.08, y, line, "serif", fs * 0.84)
        y += 0.04
    for ch in c.choices:
        rh = 0.4 if ch.write_in else 0.3
        cy = y + 0.16
        ax = x + 0.08
        gx0, gx1, tip = _arrow(p, ax, cy)
        nx = tip + 0.08
        area = None
        if ch.write_in:
            ly = cy + 0.08
            p.rule(nx, ly, x + w - 0.08, ly, 0.008)
            p.say(nx, ly + 0.08, "Write-in", "serif_i", fs * 0.6, level=0.85)
            area = [nx, ly - 0.25, x + w - 0.08 - nx, 0.25]
            name = (nx, nx, cy)
        else:
            tw = p.say(nx, cy, ch.name, "serif", fs, anchor="lm")
            if ch.party:
                p.say(x + w - 0.08, cy, {"REP": "Republican", "DEM": "Democrat", "LIB": "Libertarian", "GRN": "Green"}[ch.party],
                      "serif_i", fs * 0.78, anchor="rm")
            name = (nx, nx + tw, cy)
        box = [gx0 - 0.015, cy - 0.055, gx1 - gx0 + 0.03, 0.11]
        p.target(c, ch, box, {"kind": "arrow", "gx0": gx0, "gx1": gx1, "cy": cy, "tail": ax, "tip": tip, "name": name}, area)
        y += rh
    p.rule(x, y + 0.04, x + w, y + 0.04, 0.012)
    return y - y0 + 0.06


def _columns(p: Plan, st: Style, cols: list[tuple[float, float]], top: float, bottom: float) -> None:
    kit = _sq_contest if st.frame == "sq" else _ess_contest
    ci, y = 0, top
    for cid in st.contests:
        x, w = cols[ci]
        need = kit(Plan("measure", p.size), CONTEST[cid], x, 0.0, w, st)
        if y + need > bottom:
            ci, y = ci + 1, top
            if ci >= len(cols):
                raise ValueError(f"{p.sid}: {cid} does not fit")
            x, w = cols[ci]
        y += kit(p, CONTEST[cid], x, y, w, st) + 0.12


def _stub(p: Plan, w: float, stub: float) -> None:
    """The numbered stub above the perforation, as the board's blank still has it."""
    p.say(0.55, 0.42, "BALLOT STUB", "sans_b", 0.13)
    p.say(w - 0.55, 0.42, f"No. {SERIAL}", "mono_b", 0.15, anchor="rs")
    p.say(0.55, 0.66, "Osprey County, Arkansas  -  General Election  -  November 2, 2032", "sans", 0.095)
    p.say(0.55, 0.86, "Poll worker: remove this stub along the perforation before the ballot is handed to the voter.", "sans_i", 0.085)
    p.rule(4.9, 1.0, 6.6, 1.0, 0.008)
    p.say(4.9, 1.1, "Initials of poll worker", "sans", 0.065)
    p.say(w - 0.55, 1.05, f"No. {SERIAL}", "mono_b", 0.11, anchor="rs")
    x = 0.08
    while x < w - 0.1:
        p.block(x, stub - 0.007, 0.075, 0.014)
        x += 0.115
    p.say(w / 2, stub - 0.04, "- - - DETACH HERE - - -", "sans", 0.06, anchor="ms", level=0.8)


def _ess_plan(sid: str, st: Style) -> Plan:
    w, h = st.size
    p = Plan(sid, st.size)
    top = st.stub
    if st.stub:
        _stub(p, w, st.stub)
    y = top + 0.3
    while y + 0.07 <= h - 0.8:
        p.block(0.16, y, 0.24, 0.07)
        p.block(w - 0.4, y, 0.24, 0.07)
        y += 0.25
    for i, bit in enumerate(_style_bits(st)):
        if bit:
            p.block(0.75 + i * 0.25 - 0.04, h - 0.62, 0.08, 0.22)
    cx = w / 2
    p.say(cx, top + 0.62, "OFFICIAL BALLOT", "sans_b", 0.21, anchor="ms")
    p.say(cx, top + 0.85, "GENERAL ELECTION  -  NOVEMBER 2, 2032", "sans_b", 0.14, anchor="ms")
    p.say(cx, top + 1.04, "OSPREY COUNTY, ARKANSAS", "sans", 0.12, anchor="ms")
    p.box(0.65, top + 1.16, w - 1.3, 0.5, 0.012)
    t1 = "INSTRUCTIONS TO THE VOTER: To vote, completely fill in the oval to the LEFT of your choice, like this:"
    tw = p.say(0.75, top + 1.33, t1, "sans", 0.088, anchor="lm")
    p.shapes.append(("disc", 0.75 + tw + 0.16, top + 1.33, 0.1, 0.065))
    p.say(0.75, top + 1.51, "Use a black or blue pen or a No. 2 pencil. To vote for a person not listed, fill in the oval and write "
                            "the name on the line.", "sans", 0.088, anchor="lm")
    gap = 0.14
    colw = (w - 1.3 - gap * (st.columns - 1)) / st.columns
    cols = [(0.65 + i * (colw + gap), colw) for i in range(st.columns)]
    for x, _ in cols[1:]:
        p.rule(x - gap / 2, top + 1.85, x - gap / 2, h - 0.85, 0.006, 0.7)
    _columns(p, st, cols, top + 1.85, h - 0.85)
    p.say(w - 0.65, h - 0.7, f"PCT {st.number}", "sans", 0.075, anchor="rs")
    return p


def _sq_plan(sid: str, st: Style) -> Plan:
    w, h = st.size
    p = Plan(sid, st.size)
    y = 0.45
    while y + 0.08 <= h - 0.4:
        p.block(w - 0.42, y, 0.26, 0.08)
        y += 1 / 3
    cx = (w - 0.5) / 2 + 0.05
    p.say(cx, 0.72, "OFFICIAL GENERAL ELECTION BALLOT", "serif_b", 0.2, anchor="ms")
    p.say(cx, 0.95, "Osprey County, Arkansas  -  November 2, 2032", "serif", 0.13, anchor="ms")
    p.say(cx, 1.16, f"Precinct {st.number}  -  {PRECINCTS[st.number]}", "serif_b", 0.12, anchor="ms")
    tw = p.say(0.6, 1.42, "TO VOTE, COMPLETE THE ARROW POINTING TO YOUR CHOICE WITH ONE LINE, LIKE THIS:", "serif", 0.088, anchor="lm")
    _arrow(p, 0.6 + tw + 0.12, 1.42, gap=False)
    p.say(0.6, 1.6, "To vote for a person whose name is not printed, complete the arrow and write the name on the line.",
          "serif", 0.088, anchor="lm")
    left, right, top, bottom = 0.5, w - 0.65, 1.75, h - 0.45
    p.box(left, top, right - left, bottom - top, 0.035)
    mid = (left + right) / 2
    p.rule(mid, top, mid, bottom, 0.012)
    colw = mid - left - 0.14
    _columns(p, st, [(left + 0.07, colw), (mid + 0.07, colw)], top + 0.08, bottom - 0.05)
    return p


@lru_cache(maxsize=16)
def plan_of(sid: str) -> Plan:
    st = STYLES[sid]
    return _sq_plan(sid, st) if st.frame == "sq" else _ess_plan(sid, st)


def _fix(v: float) -> int:
    return int(round(v * MASTER * SUB))


@lru_cache(maxsize=3)
def _ink(sid: str) -> np.ndarray:
    """The style's print as darkness (0 paper .. 255 solid ink) at MASTER dpi, read-only."""
    p = plan_of(sid)
    W, H = round(p.size[0] * MASTER), round(p.size[1] * MASTER)
    ink = np.zeros((H, W), np.uint8)
    for op in p.shapes:
        if op[0] == "poly":
            cv2.fillPoly(ink, [np.array([[_fix(a), _fix(b)] for a, b in op[1]], np.int32)], round(255 * op[2]), cv2.LINE_AA, 4)
        elif op[0] == "ring":
            _, cx, cy, rx, ry, lw = op
            cv2.ellipse(ink, (_fix(cx), _fix(cy)), (_fix(rx - lw / 2), _fix(ry - lw / 2)), 0, 0, 360, 255, max(1, round(lw * MASTER)),
                        cv2.LINE_AA, 4)
        elif op[0] == "disc":
            _, cx, cy, rx, ry = op
            cv2.ellipse(ink, (_fix(cx), _fix(cy)), (_fix(rx), _fix(ry)), 0, 0, 360, 255, -1, cv2.LINE_AA, 4)
        else:
            _, x0, y0, x1, y1, lw, level = op
            cv2.line(ink, (_fix(x0), _fix(y0)), (_fix(x1), _fix(y1)), round(255 * level), max(1, round(lw * MASTER)), cv2.LINE_AA, 4)
    canvas = Image.fromarray(ink)
    pen = ImageDraw.Draw(canvas)
    for x, y, s, key, size, anchor, level in p.words:
        pen.text((x * MASTER, y * MASTER), s, font=_face(key, round(size * MASTER)), fill=round(255 * level), anchor=anchor)
    out = np.asarray(canvas).copy()
    out.setflags(write=False)
    return out


# --------------------------------------------------------------------------------------
# The board's definition


def write_election(out: Path) -> Path:
    """``election.json``, one layout per style and its blank "scanned" at 200 dpi (stub included)."""
    out = Path(out)
    (out / "layouts").mkdir(parents=True, exist_ok=True)
    styles = []
    for sid, st in STYLES.items():
        p = plan_of(sid)
        w, h = p.size
        lum = 248.0 * (1.0 - _ink(sid).astype(np.float32) / 255.0)
        blank = cv2.resize(lum, (round(w * REF_DPI), round(h * REF_DPI)), interpolation=cv2.INTER_AREA)
        Image.fromarray(np.clip(blank + 0.5, 0, 255).astype(np.uint8)).save(out / "layouts" / f"{sid}.png", "PNG", dpi=(REF_DPI, REF_DPI))
        page = {"page": 1, "size": [w, h], "reference": f"{sid}.png", "reference_dpi": REF_DPI, "targets": p.targets}
        (out / "layouts" / f"{sid}.json").write_text(json.dumps({"style": sid, "pages": [page]}, indent=1) + "\n")
        styles.append({"id": sid, "precincts": [f"P{st.number}"], "contests": list(st.contests), "layout": f"layouts/{sid}.json"})
    contests = [{"id": c.id, "title": c.title, "kind": c.kind, "vote_for": c.vote_for,
                 "options": [{"id": o.id, "name": o.name, **({"write_in": True} if o.write_in else {})} for o in c.choices]}
                for c in CONTESTS]
    election = {"id": "osprey-32g", "name": "Osprey County General Election 2032", "date": "2032-11-02", "jurisdiction": "AR",
                "precincts": [{"id": f"P{n}", "name": name, "county": "Osprey"} for n, name in PRECINCTS.items()],
                "contests": contests, "ballot_styles": styles}
    (out / "election.json").write_text(json.dumps(election, indent=1) + "\n")
    return out / "election.json"


# --------------------------------------------------------------------------------------
# The voter's hand: coverage (0..1) built by stamping a round nib along a path in a local patch


INKS = {"ballpoint_black": (0.84, 0.92), "ballpoint_blue": (0.68, 0.78), "felt": (0.9, 0.96), "pencil": (0.64, 0.78),
        "light_pencil": (0.36, 0.5)}
VOTER_INKS = {"ballpoint_black": 34, "ballpoint_blue": 28, "felt": 10, "pencil": 18, "light_pencil": 10}
NIB = {"ballpoint_black": (0.016, 0.026), "ballpoint_blue": (0.016, 0.026), "felt": (0.032, 0.048), "pencil": (0.02, 0.03),
       "light_pencil": (0.02, 0.03)}
OVAL_HABITS = {"fill": 58, "partial": 12, "check": 16, "x": 14}
ARROW_HABITS = {"arrow_line": 78, "arrow_x": 11, "arrow_check": 11}
NAMES = ["Dolores Pike", "Amos Whitlock", "J. R. Castillo", "Fern Oduya", "Lyle Baxter", "Mickey Mouse", "Oren Haskins",
         "Rosa Delgado", "Buck Tanner", "Ivy Mancuso", "Theo Granger", "Nell Carrow"]


def _blur_noise(shape: tuple[int, int], rng: np.random.Generator, sigma: float) -> np.ndarray:
    """Gaussian-filtered white noise of unit spread, features about ``sigma`` px wide."""
    n = cv2.GaussianBlur(rng.standard_normal(shape).astype(np.float32), (0, 0), max(0.3, sigma))
    return n / (float(n.std()) + 1e-6)


class Patch:
    """A rectangle of the sheet (inches ``x0, y0, x1, y1``) holding one mark's coverage."""

    def __init__(self, x0: float, y0: float, x1: float, y1: float) -> None:
        self.px, self.py = int(math.floor(x0 * MASTER)), int(math.floor(y0 * MASTER))
        self.cov: np.ndarray = np.zeros((int(math.ceil((y1 - y0) * MASTER)) + 2, int(math.ceil((x1 - x0) * MASTER)) + 2), np.float32)

    def _xy(self, x: float, y: float) -> tuple[int, int]:
        return int(round((x * MASTER - self.px) * SUB)), int(round((y * MASTER - self.py) * SUB))

    def nib(self, path: list[tuple[float, float]] | np.ndarray, width: float, weight: float = 1.0) -> None:
        """Drag a round nib of ``width`` inches along ``path`` (inches), stamping it every few tenths of its width."""
        pts = np.asarray(path, np.float64).reshape(-1, 2)
        seg = np.hypot(*np.diff(pts, axis=0).T)
        run = np.concatenate([[0.0], np.cumsum(seg)])
        step = max(width * 0.22, 0.6 / MASTER)
        at = np.linspace(0.0, run[-1], max(2, int(run[-1] / step) + 2))
        xs, ys = np.interp(at, run, pts[:, 0]), np.interp(at, run, pts[:, 1])
        stamp = np.zeros(self.cov.shape, np.uint8)
        r = max(SUB // 2, int(round(width / 2 * MASTER * SUB)))
        for x, y in zip(xs, ys):
            cv2.circle(stamp, self._xy(x, y), r, 255, -1, cv2.LINE_AA, 4)
        self.cov = np.maximum(self.cov, stamp.astype(np.float32) * np.float32(weight / 255.0))

    def spot(self, x: float, y: float, r: float) -> None:
        stamp = np.zeros(self.cov.shape, np.uint8)
        cv2.circle(stamp, self._xy(x, y), max(SUB, int(round(r * MASTER * SUB))), 255, -1, cv2.LINE_AA, 4)
        self.cov = np.maximum(self.cov, stamp.astype(np.float32) / 255.0)

    def texture(self, ink: str, rng: np.random.Generator) -> None:
        if ink in ("pencil", "light_pencil"):  # graphite catches on the paper's tooth
            tooth = np.clip(0.84 + 0.16 * _blur_noise(self.cov.shape, rng, 0.7), 0.45, 1.0)
            self.cov *= tooth.astype(np.float32)
        elif ink == "felt":  # wet ink spreads a little into the paper
            self.cov = np.clip(cv2.GaussianBlur(self.cov, (0, 0), 0.006 * MASTER) * 1.3, 0, 1)
        else:  # a ballpoint's pressure varies along the stroke
            self.cov *= np.clip(0.9 + 0.1 * _blur_noise(self.cov.shape, rng, 3.0), 0.6, 1.0).astype(np.float32)

    def inside(self, cx: float, cy: float, a: float, b: float) -> np.ndarray:
        yy, xx = np.mgrid[0:self.cov.shape[0], 0:self.cov.shape[1]].astype(np.float32)
        return ((xx + self.px + 0.5) / MASTER - cx) ** 2 / a ** 2 + ((yy + self.py + 0.5) / MASTER - cy) ** 2 / b ** 2 <= 1.0

    def lay(self, sheet: np.ndarray, darkness: float) -> None:
        H, W = sheet.shape
        x0, y0 = max(0, self.px), max(0, self.py)
        x1, y1 = min(W, self.px + self.cov.shape[1]), min(H, self.py + self.cov.shape[0])
        c = self.cov[y0 - self.py:y1 - self.py, x0 - self.px:x1 - self.px]
        sheet[y0:y1, x0:x1] *= 1.0 - np.float32(darkness) * c


def _around(g: dict[str, Any], margin: float) -> Patch:
    x, y, w, h = g["box"]
    return Patch(x - margin, y - margin, x + w + margin, y + h + margin)


def _spiral_fill(pt: Patch, cx: float, cy: float, a: float, b: float, width: float, rnd: random.Random) -> None:
    """A looping fill: an inward spiral whose rings lie closer than the nib, spilling a little over the edge."""
    over = rnd.uniform(0.03, 0.14)
    turns = max(2, math.ceil(a * (1 + over) / (0.7 * width)))
    t = np.linspace(0.0, 2 * math.pi * turns, 90 * turns)
    shrink = 1.0 + over - (1.0 + over - 0.12) * t / t[-1]
    ph = rnd.uniform(0, 2 * math.pi)
    wob = 1.0 + 0.03 * np.sin(3 * t + rnd.uniform(0, 6.3))
    xs = cx + rnd.uniform(-0.008, 0.008) + a * shrink * wob * np.cos(t + ph)
    ys = cy + rnd.uniform(-0.006, 0.006) + b * shrink * wob * np.sin(t + ph) * rnd.choice([1, -1])
    pt.nib(np.stack([xs, ys], 1), width)


def _check(pt: Patch, x: float, y: float, size: float, width: float, rnd: random.Random) -> None:
    """A check whose bottom vertex is at (x, y): a short down-stroke and a long up-stroke."""
    down = (x - size * rnd.uniform(0.35, 0.5), y - size * rnd.uniform(0.3, 0.45))
    up = (x + size * rnd.uniform(0.6, 0.85), y - size * rnd.uniform(0.75, 1.0))
    bend = ((x + up[0]) / 2 + rnd.uniform(-0.008, 0.008), (y + up[1]) / 2 + rnd.uniform(-0.008, 0.008))
    pt.nib([down, (x, y), bend, up], width)


def _cross(pt: Patch, cx: float, cy: float, rx: float, ry: float, width: float, rnd: random.Random) -> None:
    for sgn in (1, -1):
        j = [rnd.uniform(-0.2, 0.2) for _ in range(4)]
        pt.nib([(cx - rx * (1 + j[0]), cy - sgn * ry * (1 + j[1])), (cx + rx * (1 + j[2]), cy + sgn * ry * (1 + j[3]))], width)


def _loop(pt: Patch, cx: float, cy: float, rx: float, ry: float, width: float, rnd: random.Random) -> None:
    """A hand-drawn circle round something: a little more than one turn, never closing exactly."""
    start = rnd.uniform(0, 2 * math.pi)
    t = np.linspace(start, start + 2 * math.pi * rnd.uniform(1.05, 1.2), 240)
    grow = 1.0 + 0.04 * (t - start) / (2 * math.pi)
    wob = 1.0 + 0.025 * np.sin(2 * t + rnd.uniform(0, 6.3))
    pt.nib(np.stack([cx + rx * grow * wob * np.cos(t), cy + ry * grow * wob * np.sin(t)], 1), width)


def _vote_mark(sheet: np.ndarray, g: dict[str, Any], kind: str, ink: str, rnd: random.Random, rng: np.random.Generator) -> None:
    width = rnd.uniform(*NIB[ink])
    pt = _around(g, 0.3)
    if g["kind"] == "oval":
        cx, cy, a, b = g["cx"], g["cy"], g["a"], g["b"]
        if kind in ("fill", "partial"):
            _spiral_fill(pt, cx, cy, a, b, width, rnd)
            if kind == "partial":  # stopped part way: keep the left or right 55-80 %
                cut, left = rnd.uniform(0.55, 0.8), rnd.random() < 0.6
                xs = (np.arange(pt.cov.shape[1], dtype=np.float32) + pt.px) / MASTER
                edge = (cx - a + 2 * a * cut) if left else (cx + a - 2 * a * cut)
                rag = 0.012 * _blur_noise((pt.cov.shape[0], 1), rng, 4.0)
                keep = (xs[None, :] <= edge + rag) if left else (xs[None, :] >= edge + rag)
                pt.cov *= keep.astype(np.float32)
        elif kind == "check":
            _check(pt, cx - a * rnd.uniform(0.0, 0.3), cy + b * rnd.uniform(0.4, 0.8), rnd.uniform(0.13, 0.19), width, rnd)
        else:
            _cross(pt, cx, cy, a * rnd.uniform(0.95, 1.3), b * rnd.uniform(1.0, 1.5), width, rnd)
    else:
        gx0, gx1, cy = g["gx0"], g["gx1"], g["cy"]
        if kind == "arrow_line":
            x0, x1 = gx0 - rnd.uniform(0.02, 0.06), gx1 + rnd.uniform(0.0, 0.05)
            sag = rnd.uniform(-0.012, 0.012)
            tilt = rnd.uniform(-0.018, 0.018)
            xs = np.linspace(x0, x1, 20)
            u = (xs - x0) / (x1 - x0)
            pt.nib(np.stack([xs, cy + tilt * (u - 0.5) + sag * 4 * u * (1 - u)], 1), width)
        elif kind == "arrow_x":
            _cross(pt, (gx0 + gx1) / 2, cy, (gx1 - gx0) * rnd.uniform(0.35, 0.5), rnd.uniform(0.05, 0.08), width, rnd)
        else:
            _check(pt, (gx0 + gx1) / 2 - rnd.uniform(0.0, 0.03), cy + rnd.uniform(0.01, 0.04), rnd.uniform(0.14, 0.2), width, rnd)
    pt.texture(ink, rng)
    pt.lay(sheet, rnd.uniform(*INKS[ink]))


def _circle_name(sheet: np.ndarray, g: dict[str, Any], ink: str, rnd: random.Random, rng: np.random.Generator) -> None:
    x0, x1, cy = g["name"]
    left, right = x0 - rnd.uniform(0.025, 0.045), x1 + rnd.uniform(0.04, 0.1)  # the loop keeps clear of the target on the left
    pt = Patch(left - 0.1, cy - 0.25, right + 0.1, cy + 0.25)
    _loop(pt, (left + right) / 2, cy + rnd.uniform(-0.01, 0.01), (right - left) / 2 / 1.075, rnd.uniform(0.08, 0.1),
          rnd.uniform(*NIB[ink]), rnd)
    pt.texture(ink, rng)
    pt.lay(sheet, rnd.uniform(*INKS[ink]))


def _circle_oval(sheet: np.ndarray, g: dict[str, Any], ink: str, rnd: random.Random, rng: np.random.Generator) -> None:
    pt = _around(g, 0.3)
    d = rnd.uniform(0.07, 0.095)
    _loop(pt, g["cx"], g["cy"], g["a"] + d, g["b"] + d, rnd.uniform(*NIB[ink]), rnd)
    pt.texture(ink, rng)
    pt.lay(sheet, rnd.uniform(*INKS[ink]))


def _check_beside(sheet: np.ndarray, g: dict[str, Any], ink: str, rnd: random.Random, rng: np.random.Generator) -> str:
    """A check by an arrow but outside its target: over the tail, or after the printed name."""
    width = rnd.uniform(*NIB[ink])
    bx = g["box"][0]
    if rnd.random() < 0.5 or g["name"][1] - g["name"][0] < 0.05:
        size = rnd.uniform(0.12, 0.16)
        vx = min(g["tail"] + rnd.uniform(0.04, 0.08), bx - 0.03 - width / 2 - size * 0.85)  # its up-stroke ends short of the box
        where = "tail"
    else:
        size = rnd.uniform(0.13, 0.18)
        vx = g["name"][1] + 0.08 + size * 0.5
        where = "after_name"
    vy = g["cy"] + rnd.uniform(0.02, 0.05)
    pt = Patch(vx - 0.3, vy - 0.3, vx + 0.3, vy + 0.1)
    _check(pt, vx, vy, size, width, rnd)
    pt.texture(ink, rng)
    pt.lay(sheet, rnd.uniform(*INKS[ink]))
    return where


def _hesitate(sheet: np.ndarray, g: dict[str, Any], ink: str, rnd: random.Random) -> float:
    x, y, w, h = g["box"]
    d = rnd.uniform(0.02, 0.04)
    pt = _around(g, 0.05)
    pt.spot(x + w * rnd.uniform(0.35, 0.65), y + h * rnd.uniform(0.35, 0.65), d / 2)
    pt.lay(sheet, max(0.75, rnd.uniform(*INKS[ink])))  # the pen rested: a dot is dark whatever the pen
    return d


def _erase(sheet: np.ndarray, g: dict[str, Any], paper: float, rnd: random.Random, rng: np.random.Generator) -> float:
    """A pencil fill rubbed out: the eraser lightens the print it passed over and leaves a gray smear.
    Returns the residue's mean darkness inside the oval."""
    cx, cy, a, b = g["cx"], g["cy"], g["a"], g["b"]
    scrub = _around(g, 0.3)
    ys, xs = np.mgrid[0:scrub.cov.shape[0], 0:scrub.cov.shape[1]].astype(np.float32)
    ex, ey = (xs + scrub.px) / MASTER - cx, (ys + scrub.py) / MASTER - cy
    rub = np.exp(-((ex / (a + 0.06)) ** 2 + (ey / (b + 0.05)) ** 2) ** 2).astype(np.float32) * np.float32(rnd.uniform(0.12, 0.3))
    H, W = sheet.shape
    x0, y0 = max(0, scrub.px), max(0, scrub.py)
    x1, y1 = min(W, scrub.px + rub.shape[1]), min(H, scrub.py + rub.shape[0])
    r = rub[y0 - scrub.py:y1 - scrub.py, x0 - scrub.px:x1 - scrub.px]
    sheet[y0:y1, x0:x1] += (np.float32(paper) - sheet[y0:y1, x0:x1]) * r
    res = _around(g, 0.3)
    _spiral_fill(res, cx, cy, a, b, rnd.uniform(0.022, 0.03), rnd)
    sx = rnd.uniform(0.012, 0.03) * MASTER
    res.cov = cv2.GaussianBlur(res.cov, (0, 0), sx, sigmaY=sx * rnd.uniform(0.25, 0.6))
    res.cov *= np.clip(0.7 + 0.3 * _blur_noise(res.cov.shape, rng, 5.0), 0.2, 1.3).astype(np.float32)
    want = rnd.uniform(0.11, 0.24)
    mean = float(res.cov[res.inside(cx, cy, a, b)].mean())
    res.cov = np.clip(res.cov * np.float32(want / max(mean, 1e-6)), 0, 1)
    res.lay(sheet, 1.0)
    return float(res.cov[res.inside(cx, cy, a, b)].mean())


def _write_in(sheet: np.ndarray, area: list[float], ink: str, rnd: random.Random, rng: np.random.Generator) -> str:
    """A name on the write-in line: glyph by glyph, each a little off the baseline and spacing."""
    x, y, w, h = area
    name = rnd.choice(NAMES)
    key = rnd.choice(["script", "print"])
    size = rnd.uniform(0.14, 0.19) if key == "script" else rnd.uniform(0.11, 0.14)
    while _width(name, key, size) * 1.15 > w - 0.1 and size > 0.06:
        size *= 0.9
    font = _face(key, round(size * MASTER))
    canvas = Image.new("L", (round((w + 0.1) * MASTER), round((h + 0.15) * MASTER)), 0)
    d = ImageDraw.Draw(canvas)
    pen, base = 0.05 * MASTER, (h - 0.03) * MASTER
    drift = rnd.uniform(-0.03, 0.03)
    for ch in name:
        d.text((pen, base + rnd.uniform(-0.01, 0.01) * MASTER + drift * pen), ch, font=font, fill=255, anchor="ls")
        pen += font.getlength(ch) * rnd.uniform(1.0, 1.12)
    cov = np.asarray(canvas, np.float32) / 255.0
    if ink == "felt":
        cov = np.clip(cv2.dilate(cov, np.ones((3, 3), np.uint8)), 0, 1)
    pt = Patch(x, y, x + w + 0.1, y + h + 0.15)
    pt.cov[:cov.shape[0], :cov.shape[1]] = cov[:pt.cov.shape[0], :pt.cov.shape[1]]
    pt.texture(ink, rng)
    pt.lay(sheet, rnd.uniform(*INKS[ink]))
    return name


def _choose(rnd: random.Random, weights: list[float], n: int) -> set[int]:
    pool = list(range(len(weights)))
    got: set[int] = set()
    while pool and len(got) < n:
        j = rnd.choices(pool, weights=[weights[i] for i in pool])[0]
        got.add(j)
        pool.remove(j)
    return got


def vote_card(sheet: np.ndarray, p: Plan, st: Style, voter: dict[str, Any], sc: dict[str, Any], rnd: random.Random,
              rng: np.random.Generator) -> list[dict[str, Any]]:
    """Every mark of one voter on one card; the truth, one entry per target."""
    ink, arrows = voter["ink"], st.frame == "sq"
    habits = ARROW_HABITS if arrows else OVAL_HABITS
    gray = sc["mode"] in ("gray_png", "gray_jpg")
    truth: list[dict[str, Any]] = []
    for cid in st.contests:
        c = CONTEST[cid]
        mine = [t for t in p.targets if t["contest"] == cid]
        r = rnd.random()
        n = 0 if voter["blank"] else min(len(mine), c.vote_for + rnd.randint(1, 2)) if r < 0.05 else \
            rnd.randint(0, c.vote_for - 1) if r < 0.17 else c.vote_for
        chosen = _choose(rnd, [0.12 if CHOICE[t["option"]].write_in else 1.0 for t in mine], n)
        erased = None
        if gray and not voter["blank"] and ink in ("pencil", "light_pencil") and rnd.random() < min(0.3, 2.5 / len(st.contests)) and not arrows:
            free = [j for j, t in enumerate(mine) if j not in chosen and not CHOICE[t["option"]].write_in]
            erased = rnd.choice(free) if free else None
        for j, t in enumerate(mine):
            ch = CHOICE[t["option"]]
            g = p.geo[ch.id]
            e: dict[str, Any] = {"contest": cid, "option": ch.id, "mark": "none", "intent": "no_vote"}
            if j in chosen:
                u = rnd.random()
                if not ch.write_in and u < 0.012:
                    _circle_name(sheet, g, ink, rnd, rng)
                    e.update(mark="circled_name", ink=ink, intent="ambiguous")
                elif not ch.write_in and not arrows and u < 0.024:
                    _circle_oval(sheet, g, ink, rnd, rng)
                    e.update(mark="circled_oval", ink=ink, intent="ambiguous")
                elif arrows and u < 0.045:
                    e.update(mark="check_beside", ink=ink, intent="ambiguous", where=_check_beside(sheet, g, ink, rnd, rng))
                else:
                    kind = voter["habit"] if rnd.random() < 0.7 else rnd.choices(list(habits), weights=list(habits.values()))[0]
                    kind = "fill" if ink == "light_pencil" else kind  # a light check or X could pass for a stray trace
                    _vote_mark(sheet, g, kind, ink, rnd, rng)
                    e.update(mark="light_pencil" if ink == "light_pencil" and kind == "fill" else kind, ink=ink, intent="vote")
                if ch.write_in and rnd.random() < 0.85:
                    e["write_in"] = _write_in(sheet, t["write_in_area"], ink, rnd, rng)
            elif voter["blank"]:
                pass
            elif j == erased:
                level = _erase(sheet, g, sc["paper"], rnd, rng)
                e.update(mark="erasure", ink="pencil", intent="ambiguous", residue=round(level, 3))
            elif rnd.random() < 0.012:
                e.update(mark="hesitation", ink=ink, intent="no_vote", dot_in=round(_hesitate(sheet, g, ink, rnd), 3))
            elif ch.write_in and rnd.random() < 0.05:
                e.update(mark="write_in_only", ink=ink, intent="ambiguous", write_in=_write_in(sheet, t["write_in_area"], ink, rnd, rng))
            truth.append(e)
    return truth


def _outcomes(truth: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for cid in dict.fromkeys(t["contest"] for t in truth):
        mine = [t for t in truth if t["contest"] == cid]
        votes = [t["option"] for t in mine if t["intent"] == "vote"]
        pending = any(t["intent"] == "ambiguous" for t in mine)
        out[cid] = {"votes": votes, "outcome": "pending" if pending else "overvote" if len(votes) > CONTEST[cid].vote_for else "counted"}
    return out


# --------------------------------------------------------------------------------------
# The scanner

MODES = {"g4_threshold": 24, "g4_dither": 14, "gray_png": 32, "gray_jpg": 30}
EXT = {"g4_threshold": "tif", "g4_dither": "tif", "gray_png": "png", "gray_jpg": "jpg"}


def scanner_for(rnd: random.Random) -> dict[str, Any]:
    mode = rnd.choices(list(MODES), weights=list(MODES.values()))[0]
    dpi = rnd.choices([200, 150, 300], weights=[70, 12, 18])[0]
    tag = rnd.choices(["right", "wrong", "missing"], weights=[70, 18, 12])[0]
    dark = rnd.random() < 0.2
    return {
        "mode": mode, "dpi": dpi,
        "dpi_tag": dpi if tag == "right" else None if tag == "missing" else rnd.choice([v for v in (72, 96, 100, 300, 600) if v != dpi]),
        "angle": rnd.uniform(-1.0, 1.0) if rnd.random() < 0.6 else rnd.uniform(-3.0, 3.0), "flip": rnd.random() < 0.22,
        "stretch": (rnd.uniform(0.988, 1.012), rnd.uniform(0.985, 1.015)),
        "margins": [rnd.uniform(0.03, 0.2) for _ in range(4)],  # left, top, right, bottom, inches of backing
        "backing": "dark" if dark else "white", "backing_level": rnd.uniform(12, 48) if dark else rnd.uniform(228, 250),
        "paper": rnd.uniform(236, 251), "lens": rnd.uniform(0.35, 0.85), "noise": rnd.uniform(1.0, 3.5),
        "threshold": rnd.uniform(0.5, 0.62), "jpeg_quality": rnd.randint(50, 92),
    }


def _tear(sheet: np.ndarray, stub: float, rnd: random.Random, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """Tear the stub off along its perforation: the sheet from just above the tear down, and the
    paper's coverage (0 above the ragged edge). Returns (sheet, paper, inches cut from the top)."""
    W = sheet.shape[1]
    top = int((stub - 0.06) * MASTER)
    part = sheet[top:]
    xs = np.arange(W, dtype=np.float32) / MASTER
    edge = stub + rnd.uniform(-0.012, 0.018) + rnd.uniform(-0.012, 0.012) * np.sin(xs / rnd.uniform(0.8, 2.5) + rnd.uniform(0, 6.3))
    edge = edge + 0.01 * _blur_noise((1, W), rng, 12.0)[0] + 0.003 * _blur_noise((1, W), rng, 1.2)[0]
    rows = (np.arange(part.shape[0], dtype=np.float32)[:, None] + top) / MASTER
    paper = np.clip((rows - edge[None, :]) * MASTER + 0.5, 0, 1).astype(np.float32)
    return part, paper, top / MASTER


def scan(sheet: np.ndarray, st: Style, sc: dict[str, Any], rnd: random.Random, rng: np.random.Generator) -> tuple[Image.Image, dict[str, Any]]:
    """Feed the marked sheet (luminance at MASTER dpi) through the scanner; the image and what it did."""
    meta: dict[str, Any] = {}
    if st.stub:
        sheet, paper, cut = _tear(sheet, st.stub, rnd, rng)
        meta.update(stub_torn=True, cropped_top_in=round(cut, 4))
    else:
        paper = np.ones(sheet.shape, np.float32)
    dpi, (sx, sy) = sc["dpi"], sc["stretch"]
    h_in, w_in = sheet.shape[0] / MASTER, sheet.shape[1] / MASTER
    tw, th = round(w_in * dpi * sx), round(h_in * dpi * sy)
    small = cv2.resize(sheet, (tw, th), interpolation=cv2.INTER_AREA)
    cover = cv2.resize(paper, (tw, th), interpolation=cv2.INTER_AREA)
    phi = math.radians(sc["angle"] + (180.0 if sc["flip"] else 0.0))
    c, s = math.cos(phi), math.sin(phi)
    bw, bh = tw * abs(c) + th * abs(s), tw * abs(s) + th * abs(c)
    ml, mt, mr, mb = (m * dpi for m in sc["margins"])
    W, H = int(math.ceil(bw + ml + mr)), int(math.ceil(bh + mt + mb))
    ox, oy = ml + bw / 2, mt + bh / 2
    M = np.array([[c, -s, ox - c * tw / 2 + s * th / 2], [s, c, oy - s * tw / 2 - c * th / 2]])
    img: np.ndarray = cv2.warpAffine(small, M, (W, H), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    on = np.clip(cv2.warpAffine(cover, M, (W, H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0), 0, 1)
    back = np.float32(sc["backing_level"])
    img = img * on + back * (1 - on)
    if sc["backing"] == "white":  # the sheet's edge throws a thin shadow on the lid
        img -= 70 * np.abs(on - cv2.GaussianBlur(on, (0, 0), 1.2)).astype(np.float32)
    img = cv2.GaussianBlur(img, (0, 0), sc["lens"]) + rng.standard_normal(img.shape, dtype=np.float32) * np.float32(sc["noise"])
    meta.update(size_px=[W, H], rotation_deg=round(sc["angle"], 3), rotated_180=sc["flip"], stretch=[round(v, 4) for v in sc["stretch"]],
                backing=sc["backing"], margins_in=[round(m, 3) for m in sc["margins"]],
                inch_to_px=[[round(float(v), 4) for v in row] for row in M * np.array([dpi * sx, dpi * sy, 1.0])])
    white = sc["paper"] * 0.95  # the scanner's white point, a little under the paper
    if sc["mode"] == "g4_threshold":
        thr = sc["threshold"] * sc["paper"]
        meta["threshold"] = round(thr, 1)
        return Image.fromarray(np.where(img >= thr, 255, 0).astype(np.uint8)).convert("1", dither=Image.Dither.NONE), meta
    if sc["mode"] == "g4_dither":  # the scanner stretches paper to white, then diffuses the error
        norm = np.clip(img * np.float32(255.0 / white) + 0.5, 0, 255).astype(np.uint8)
        return Image.fromarray(norm).convert("1", dither=Image.Dither.FLOYDSTEINBERG), meta
    return Image.fromarray(np.clip(img + 0.5, 0, 255).astype(np.uint8), "L"), meta


def _encode(image: Image.Image, sc: dict[str, Any]) -> bytes:
    extra: dict[str, Any] = {} if sc["dpi_tag"] is None else {"dpi": (sc["dpi_tag"], sc["dpi_tag"])}
    buf = io.BytesIO()
    ext = EXT[sc["mode"]]
    if ext == "tif":
        image.save(buf, "TIFF", compression="group4", **extra)
    elif ext == "png":
        image.save(buf, "PNG", **extra)
    else:
        image.save(buf, "JPEG", quality=sc["jpeg_quality"], **extra)
    return buf.getvalue()


# --------------------------------------------------------------------------------------
# Cards and the deck


def make_card(out: Path, seed: int, i: int) -> dict[str, Any]:
    """Print, mark, tear, scan and write card ``i``; its truth entry."""
    cv2.setNumThreads(1)
    rnd = random.Random(f"fifth-vendor/{seed}/{i}")
    rng = np.random.default_rng([seed % 2**32, i, 5])
    sid = rnd.choices(list(STYLE_WEIGHTS), weights=list(STYLE_WEIGHTS.values()))[0]
    st = STYLES[sid]
    sc = scanner_for(rnd)
    ink = rnd.choices(list(VOTER_INKS), weights=list(VOTER_INKS.values()))[0]
    if ink == "light_pencil" and (sc["mode"] == "g4_threshold" or st.frame == "sq"):
        ink = "pencil"  # a threshold would drop a light fill; a light thin line could pass for a trace
    habits = ARROW_HABITS if st.frame == "sq" else OVAL_HABITS
    habit = "fill" if ink == "light_pencil" else rnd.choices(list(habits), weights=list(habits.values()))[0]
    voter = {"ink": ink, "habit": habit, "blank": rnd.random() < 0.03}
    p = plan_of(sid)
    sheet = np.float32(sc["paper"]) * (1.0 - _ink(sid).astype(np.float32) / np.float32(255.0))
    truth = vote_card(sheet, p, st, voter, sc, rnd, rng)
    image, meta = scan(sheet, st, sc, rnd, rng)
    del sheet
    name = f"cards/{i + 1:04d}.{EXT[sc['mode']]}"
    (Path(out) / "cards").mkdir(parents=True, exist_ok=True)
    (Path(out) / name).write_bytes(_encode(image, sc))
    return {"file": name, "page_of_file": 1, "style": sid, "page": 1, "precinct": f"P{st.number}", "kind": "ballot", "frame": st.frame,
            "size_in": list(st.size), "stub_in": st.stub, "rotated_180": sc["flip"], "dpi": sc["dpi"], "dpi_tag": sc["dpi_tag"],
            "format": EXT[sc["mode"]], "mode": sc["mode"], "color": False,
            "jpeg_quality": sc["jpeg_quality"] if sc["mode"] == "gray_jpg" else None, "expect": "read", "pen": ink, "habit": habit,
            "blank": voter["blank"], "targets": truth, "contests": _outcomes(truth), "scan": meta}


def make_deck(out: Path, *, cards: int, seed: int, jobs: int = 1) -> Path:
    """The election with its blanks, ``cards`` cards marked and scanned, and ``expected.json``."""
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)  # no OpenCV worker threads in this process before the pool forks
    try:
        return write_deck(Path(out), write_election, make_card, cards=cards, seed=seed, jobs=jobs, profile=PROFILE)
    finally:
        cv2.setNumThreads(threads)


def main(argv: list[str] | None = None) -> int:
    return deck_cli(make_deck, "a general-election deck (ES&S-like coded and stubbed long frames, Sequoia-like arrows) by a fifth, "
                               "independent renderer", argv)


if __name__ == "__main__":
    raise SystemExit(main())
