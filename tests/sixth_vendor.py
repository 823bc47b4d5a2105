"""A sixth vendor ballot renderer, written apart from ``scanpipe.synth`` and from the other five.

The reader is judged on vendor ballots drawn by generators its authors did not write. This
module imports nothing from scanpipe and shares no drawing, marking or scanning code with
``scanpipe.synth``, :mod:`tests.foreign_renderer`, :mod:`tests.foreign_vendor`,
:mod:`tests.third_vendor`, :mod:`tests.fourth_vendor` or :mod:`tests.fifth_vendor` (it borrows
only the deck writer and the command line of :mod:`tests.foreign_renderer`). It covers what
those do not:

* a Gannet County, Maryland general election (jurisdiction MD) on two frames:

  - **Premier/Diebold AccuVote-OS-like duplex** (``AV-*``, 8.5 x 11 in, TWO-SIDED: page 1 the
    front, page 2 the back, each its own layout page and reference blank): timing dashes down
    the left AND right edges on a 1/6 in grid and a row of bars along the BOTTOM edge; wide
    elongated ovals (0.30 x 0.14 in) LEFT of the names with the candidate's ballot number
    PRINTED SMALL INSIDE each oval (printed ink in a target is never a mark); three columns on
    the front, two on the back (whose first column holds the voter instructions and a printed
    sample of a filled oval). The back's ovals sit exactly behind the front's, mirrored, so ink
    that shows through lands on targets. ``AV-0101`` and ``AV-0102`` differ only in the
    printed precinct line; ``AV-0203`` differs from them in one contest (its council district).
    A sheet is saved as one two-page TIFF (front then back; G4 or gray LZW) or as two
    single-page files (``-p1``, ``-p2``), and in some sheets the back was fed upside down
    (the back's page alone turned 180 degrees).
  - **Dominion-like hand-marked legal** (``DM-0301`` / ``DM-0302``, 8.5 x 14 in, differing
    only in the precinct split line): no timing marks; a heavy black border round the body,
    four solid corner squares just inside it, a ballot-ID line at the top, bilingual contest
    headers (English over Spanish, "Vote for one / Vote por uno") on a light tint, thin-outline
    ovals to the RIGHT of the names after the party, write-in lines. Half of these scans are
    cut by the scanner's auto-crop (0.05-0.15 in off one or two edges, never near a target);
    the rest show the sheet on a dark or white backing.

* Voters: black or blue ballpoint, felt-tip marker (heavy, and it shows through the sheet),
  pencil; full fills, partial fills (60-85 % of the oval), checks, X's, overfilled ovals
  spilling past the outline (all ``vote``); a filled oval crossed out with a scribble while
  another option of the contest is filled (the crossed one ``ambiguous``), a loop round an
  empty oval, a loop round a NAME, a heavy pencil erasure with its gray residue (gray and
  colour scans only) (all ``ambiguous``, contract section 7); a hesitation dot (0.02-0.04 in)
  and a faint graphite smear (``no_vote``: a dot, a faint trace); write-in names with the
  target filled (``vote``) or empty (``ambiguous``, contract section 3); overvotes,
  undervotes, blank ballots. Coffee-ring stains cross a few targets: every target keeps its
  true intent, and the entry lists them under ``stain_options`` (each such target also carries
  ``"damage": "stain"``) for a reader that sends them to a person.
* Bleed-through: on gray and colour scans of the duplex frame, felt-tip ink on one side shows
  faintly on the other, mirrored left-right and blurred (mean darkness 0.06-0.18 over a fully
  inked oval); an empty target it lands on stays ``no_vote`` (mark ``bleed_through``), and the
  entry lists the options it touched under ``bleed_options``.
* Scanner: 200 dpi mostly (150 or 300 sometimes), skew up to 3 degrees, 180-degree feeds,
  scale and stretch up to 1.5 % differing in x and y, bilevel TIFF G4 (thresholded, ordered or
  error-diffusion dithered), gray PNG, gray or RGB JPEG (quality 40-90), the dpi tag right,
  wrong or missing; lens blur, light noise, a lamp gradient across the sheet.

Layouts are what a board writes: per page the blank "scanned" cleanly at 200 dpi as
``reference`` (gray PNG), target boxes in inches round the printed oval, write-in areas over
the write-in line; no fiducials, no QR box, no distinguish boxes. ``--cards`` counts sheets:
a duplex sheet adds two entries to ``expected.json``. Seeded: the same seed gives the same bytes.

    python -m tests.sixth_vendor OUT --cards 240 --seed 1606 --jobs 2   # a deck for bench_accuracy --deck OUT
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

WORK = 300  # dpi of the printed and marked sheet
DRAW = 600  # dpi the blank is drawn at before it is reduced
REF_DPI = 200
PROFILE = "sixth-vendor"
SUB = 16  # fixed-point factor of the OpenCV drawing calls (shift=4)

FONT_FILES = {
    "sans": "truetype/liberation/LiberationSans-Regular.ttf",
    "bold": "truetype/liberation/LiberationSans-Bold.ttf",
    "italic": "truetype/liberation/LiberationSans-Italic.ttf",
    "narrow": "truetype/liberation/LiberationSansNarrow-Regular.ttf",
    "narrow_bold": "truetype/liberation/LiberationSansNarrow-Bold.ttf",
    "hand": "opentype/urw-base35/Z003-MediumItalic.otf",
    "hand2": "truetype/dejavu/DejaVuSerif-Italic.ttf",
}


@lru_cache(maxsize=128)
def _face(key: str, px: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(Path("/usr/share/fonts") / FONT_FILES[key]), max(4, px))


def _width(s: str, key: str, size: float) -> float:
    """Printed width of ``s`` in inches at a type size of ``size`` inches."""
    return _face(key, round(size * DRAW)).getlength(s) / DRAW


def _wrap(s: str, key: str, size: float, room: float) -> list[str]:
    lines: list[str] = []
    for word in s.split():
        if lines and _width(lines[-1] + " " + word, key, size) <= room:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


# --------------------------------------------------------------------------------------
# The election


@dataclass(frozen=True)
class Contest:
    id: str
    title: str
    spanish: str
    vote_for: int
    options: tuple[tuple[str, str, str], ...]  # (id, name, party)
    write_ins: int = 1
    text: str = ""  # a question's wording
    kind: str = "candidate"

    def choices(self) -> list[tuple[str, str, str, bool]]:
        wi = [(f"{self.id}-wi{i + 1}", "Write-in", "", True) for i in range(self.write_ins)]
        return [(o, n, p, False) for o, n, p in self.options] + wi


def _question(cid: str, title: str, spanish: str, text: str, yes: str = "For", no: str = "Against") -> Contest:
    return Contest(cid, title, spanish, 1, ((f"{cid}-for", yes, ""), (f"{cid}-against", no, "")), 0, text, "question")


CONTESTS = (
    Contest("pres", "President and Vice President", "Presidente y Vicepresidente", 1,
            (("pr1", "L. Whitcombe / E. Saari", "DEM"), ("pr2", "G. Marsh / T. Lindqvist", "REP"),
             ("pr3", "R. Okonjo / S. Bell", "LIB"), ("pr4", "P. Dunn / I. Cho", "GRN"))),
    Contest("ussen", "U.S. Senator", "Senador de los EE. UU.", 1,
            (("us1", "Naomi Achebe", "DEM"), ("us2", "Carl Brandt", "REP"), ("us3", "Wes Farrow", "UNA"))),
    Contest("cong1", "Representative in Congress, District 1", "Representante en el Congreso, Distrito 1", 1,
            (("cg1", "Dana Kirwan", "DEM"), ("cg2", "Hollis Pratt", "REP"))),
    Contest("cct", "County Council, Tern Point District", "Consejo del Condado, Distrito Tern Point", 1,
            (("ct1", "Mabel Ostrowski", "DEM"), ("ct2", "Theo Lachance", "REP"), ("ct3", "Yusuf Haddad", "UNA"))),
    Contest("ccs", "County Council, Saltmarsh District", "Consejo del Condado, Distrito Saltmarsh", 1,
            (("cs1", "Greta Voss", "DEM"), ("cs2", "Amos Tull", "REP"))),
    Contest("cch", "County Council, Heron Neck District", "Consejo del Condado, Distrito Heron Neck", 1,
            (("ch1", "Bea Mulroney", "DEM"), ("ch2", "Rex Oyelaran", "REP"))),
    Contest("school", "Board of Education, At Large", "Junta de Educación, En General", 2,
            (("sb1", "Ina Castellanos", ""), ("sb2", "Marcus Webb", ""), ("sb3", "Leah Nakamura", ""),
             ("sb4", "Otto Brennan", ""))),
    Contest("sheriff", "Sheriff", "Alguacil", 1, (("sf1", "Frank Delacroix", "DEM"), ("sf2", "June Halvorsen", "REP"))),
    Contest("treas", "County Treasurer", "Tesorero del Condado", 1, (("tr1", "Cyrus Bellamy", "DEM"), ("tr2", "Wanda Pike", "REP"))),
    Contest("town", "Gannet Town Commissioners", "Comisionados del Pueblo de Gannet", 3,
            (("tc1", "Abel Ferreira", ""), ("tc2", "Nell Morrow", ""), ("tc3", "Jin Park", ""), ("tc4", "Ravi Sethi", ""),
             ("tc5", "Opal Quince", "")), 2),
    _question("q1", "Question 1: Constitutional Amendment", "Pregunta 1: Enmienda Constitucional",
              "Requires that a judge of the Orphans' Court of Gannet County be admitted to practice law in this State."),
    _question("q2", "Question 2: Library Bond", "Pregunta 2: Bonos para Bibliotecas",
              "Authorizes the County to borrow up to $18,000,000 to build and equip a branch library in Saltmarsh."),
    _question("q3", "Question 3: Charter Amendment", "Pregunta 3: Enmienda a la Carta",
              "Moves the County Council's regular meeting from the second Tuesday to the first Monday of each month."),
)
CONTEST = {c.id: c for c in CONTESTS}
PRECINCTS = {"P0101": "Tern Point 1-01", "P0102": "Gull Harbor 1-02", "P0203": "Saltmarsh 2-03",
             "P0301": "Heron Neck 3-01 Split A", "P0302": "Heron Neck 3-01 Split B"}


@dataclass(frozen=True)
class Style:
    frame: str  # "av" or "dm"
    precinct: str
    pages: tuple[tuple[tuple[str, ...], ...], ...]  # per page, per column, the contests


_AV_BACK = (("town", "q1"), ("q2", "q3"))
_DM_COLS = (("pres", "ussen", "cong1", "cch"), ("school", "sheriff", "treas", "town"), ("q1", "q2", "q3"))
STYLES = {
    "AV-0101": Style("av", "P0101", ((("pres", "ussen", "cong1"), ("cct", "school"), ("sheriff", "treas")), _AV_BACK)),
    "AV-0102": Style("av", "P0102", ((("pres", "ussen", "cong1"), ("cct", "school"), ("sheriff", "treas")), _AV_BACK)),
    "AV-0203": Style("av", "P0203", ((("pres", "ussen", "cong1"), ("ccs", "school"), ("sheriff", "treas")), _AV_BACK)),
    "DM-0301": Style("dm", "P0301", (_DM_COLS,)),
    "DM-0302": Style("dm", "P0302", (_DM_COLS,)),
}
STYLE_WEIGHTS = {"AV-0101": 20, "AV-0102": 18, "AV-0203": 16, "DM-0301": 23, "DM-0302": 23}
ELECTION = {"id": "gannet-31g", "name": "Gannet County General Election 2031", "date": "2031-11-04", "jurisdiction": "MD"}


def _contests_of(sid: str) -> list[str]:
    return [c for page in STYLES[sid].pages for col in page for c in col]


# --------------------------------------------------------------------------------------
# Planning a page: drawing operations and the layout, in inches


@dataclass
class Plan:
    size: tuple[float, float]
    ops: list[tuple[Any, ...]] = field(default_factory=list)
    targets: list[dict[str, Any]] = field(default_factory=list)
    names: dict[str, list[float]] = field(default_factory=dict)  # option -> printed name box

    def text(self, x: float, y: float, s: str, key: str, size: float, anchor: str = "lm", level: int = 0) -> float:
        self.ops.append(("text", x, y, s, key, size, anchor, level))
        return _width(s, key, size)

    def rect(self, x: float, y: float, w: float, h: float, level: int = 0) -> None:
        self.ops.append(("rect", x, y, w, h, level))

    def line(self, x0: float, y0: float, x1: float, y1: float, lw: float) -> None:
        self.ops.append(("line", x0, y0, x1, y1, lw))

    def frame(self, x: float, y: float, w: float, h: float, lw: float) -> None:
        self.ops.append(("frame", x, y, w, h, lw))

    def oval(self, x: float, y: float, w: float, h: float, lw: float, filled: bool = False) -> None:
        self.ops.append(("oval", x, y, w, h, lw, filled))

    def name_box(self, option: str, x: float, cy: float, s: str, key: str, size: float) -> None:
        w = self.text(x, cy, s, key, size)
        self.names[option] = [round(x, 4), round(cy - 0.45 * size, 4), round(w, 4), round(0.9 * size, 4)]

    def target(self, cid: str, oid: str, box: list[float], area: list[float] | None = None) -> None:
        t: dict[str, Any] = {"contest": cid, "option": oid, "box": [round(v, 4) for v in box]}
        if area is not None:
            t["write_in_area"] = [round(v, 4) for v in area]
        self.targets.append(t)


AV_OVAL = (0.30, 0.14)
AV_COLS = {1: (0.55, 3.05, 5.55), 2: (2.55, 5.05)}  # the back's ovals sit behind the front's, mirrored
AV_COL_W = 2.4


def _gy(k: float) -> float:
    return 0.55 + k / 6


def _av_header(p: Plan, sid: str, page: int) -> None:
    for k in range(59):  # timing dashes, left and right
        p.rect(0.15, _gy(k) - 0.03, 0.22, 0.06)
        p.rect(8.13, _gy(k) - 0.03, 0.22, 0.06)
    for j in range(30):  # the bottom row of bars
        p.rect(0.6 + j * 0.25, 10.6, 0.1, 0.2)
    pct = PRECINCTS[STYLES[sid].precinct]
    p.text(0.6, 0.5, "OFFICIAL GENERAL ELECTION BALLOT", "bold", 0.16)
    p.text(0.6, 0.78, "GANNET COUNTY, MARYLAND  -  NOVEMBER 4, 2031", "sans", 0.1)
    p.text(0.6, 1.0, f"PRECINCT {pct.split()[-1]}  {pct.rsplit(' ', 1)[0].upper()}", "bold", 0.11)
    side = "FRONT" if page == 1 else "BACK"
    p.text(7.95, 0.5, f"CARD 1  {side}", "bold", 0.11, anchor="rm")
    p.text(7.95, 0.78, "Typ:01 Seq:0001 Spl:01", "sans", 0.08, anchor="rm")
    if page == 1:
        p.frame(0.55, 1.2, 7.4, 0.82, 0.012)
        p.text(0.65, 1.36, "INSTRUCTIONS TO VOTERS: Use a black or blue pen or a pencil.", "bold", 0.095)
        p.text(0.65, 1.56, "To vote, fill in the oval to the LEFT of your choice completely, like this:", "sans", 0.095)
        p.oval(5.55, 1.49, 0.3, 0.14, 0.012, filled=True)
        p.text(0.65, 1.76, "To vote for a person not listed, fill in the oval and write the name on the line.", "sans", 0.095)
        p.text(0.65, 1.94, "Do not make stray marks. Vote both sides of the card.", "sans", 0.095)
        seps = (3.0, 5.5)
    else:
        lines = ["INSTRUCTIONS", "", "Fill in the oval to the", "LEFT of your choice", "completely, like this:", "",
                 "", "If you make a mistake,", "ask an election judge", "for a new ballot.", "", "Do not cross out or",
                 "erase.", "", "VOTE BOTH SIDES"]
        for i, s in enumerate(lines):
            p.text(0.65, 2.3 + i * 0.22, s, "bold" if s.isupper() else "sans", 0.1)
        p.oval(0.75, 3.5, 0.3, 0.14, 0.012, filled=True)
        seps = (2.5, 5.0)
    for x in seps:
        p.line(x, 2.1, x, 10.2, 0.01)


def _av_contest(p: Plan, c: Contest, x0: float, k: int, number: list[int]) -> int:
    p.line(x0, _gy(k) - 0.1, x0 + AV_COL_W - 0.05, _gy(k) - 0.1, 0.02)
    for s in _wrap(c.title.upper(), "bold", 0.1, AV_COL_W - 0.1):
        p.text(x0 + 0.02, _gy(k), s, "bold", 0.1)
        k += 1
    say = "Vote for one" if c.vote_for == 1 else f"Vote for not more than {c.vote_for}"
    p.text(x0 + 0.02, _gy(k), say, "italic", 0.085)
    k += 1
    for s in _wrap(c.text, "sans", 0.082, AV_COL_W - 0.1):
        p.text(x0 + 0.02, _gy(k), s, "sans", 0.082)
        k += 1
    k += 1
    ow, oh = AV_OVAL
    for oid, name, party, write_in in c.choices():
        cy = _gy(k)
        ox = x0 + 0.05
        p.oval(ox, cy - oh / 2, ow, oh, 0.012)
        number[0] += 1
        p.text(ox + ow / 2, cy + 0.002, str(number[0]), "bold", 0.075, anchor="mm")
        if write_in:
            p.line(x0 + 0.45, cy + 0.06, x0 + AV_COL_W - 0.05, cy + 0.06, 0.008)
            p.text(x0 + 0.45, cy + 0.1, "Write-in", "sans", 0.06)
            p.target(c.id, oid, [ox, cy - oh / 2, ow, oh], [x0 + 0.42, cy - 0.2, AV_COL_W - 0.45, 0.25])
        else:
            p.name_box(oid, x0 + 0.45, cy, name, "sans", 0.105)
            if party:
                p.text(x0 + AV_COL_W - 0.05, cy, party, "sans", 0.085, anchor="rm")
            p.target(c.id, oid, [ox, cy - oh / 2, ow, oh])
        k += 2
    return k + 1


def _av_plan(sid: str, page: int) -> Plan:
    p = Plan((8.5, 11.0))
    _av_header(p, sid, page)
    number = [0 if page == 1 else 60]
    for x0, col in zip(AV_COLS[page], STYLES[sid].pages[page - 1], strict=True):
        k = 10
        for cid in col:
            k = _av_contest(p, CONTEST[cid], x0, k, number)
        assert k <= 58, (sid, page, cid, k)
    return p


DM_OVAL = (0.24, 0.15)
DM_COLS = (0.6, 3.05, 5.5)
DM_COL_W = 2.4


def _dm_contest(p: Plan, c: Contest, x0: float, y: float) -> float:
    lines = [(s, "narrow_bold", 0.11) for s in _wrap(c.title, "narrow_bold", 0.11, DM_COL_W - 0.12)]
    lines += [(s, "italic", 0.09) for s in _wrap(c.spanish, "italic", 0.09, DM_COL_W - 0.12)]
    say = ("Vote for one / Vote por uno" if c.vote_for == 1
           else f"Vote for up to {c.vote_for} / Vote por hasta {['', '', 'dos', 'tres'][c.vote_for]}")
    lines.append((say, "narrow", 0.085))
    h = 0.06 + 0.155 * len(lines)
    p.rect(x0, y, DM_COL_W, h, level=228)
    p.line(x0, y, x0 + DM_COL_W, y, 0.014)
    for i, (s, key, size) in enumerate(lines):
        p.text(x0 + 0.06, y + 0.11 + i * 0.155, s, key, size)
    y += h + 0.06
    for s in _wrap(c.text, "narrow", 0.09, DM_COL_W - 0.12):
        p.text(x0 + 0.06, y + 0.07, s, "narrow", 0.09)
        y += 0.15
    ow, oh = DM_OVAL
    spanish = {"For": "For / A favor", "Against": "Against / En contra"}
    for oid, name, party, write_in in c.choices():
        cy = y + 0.2
        ox = x0 + DM_COL_W - 0.36
        p.oval(ox, cy - oh / 2, ow, oh, 0.008)
        if write_in:
            p.line(x0 + 0.08, cy + 0.07, ox - 0.1, cy + 0.07, 0.008)
            p.text(x0 + 0.08, cy + 0.12, "Write-in / Voto por escrito", "narrow", 0.065)
            p.target(c.id, oid, [ox, cy - oh / 2, ow, oh], [x0 + 0.06, cy - 0.2, ox - x0 - 0.2, 0.26])
        else:
            p.name_box(oid, x0 + 0.08, cy, spanish.get(name, name), "narrow", 0.11)
            if party:
                p.text(x0 + 1.55, cy, party, "narrow", 0.09)
            p.target(c.id, oid, [ox, cy - oh / 2, ow, oh])
        y += 0.38
    return y + 0.22


def _dm_plan(sid: str) -> Plan:
    p = Plan((8.5, 14.0))
    p.frame(0.3, 0.3, 7.9, 13.4, 0.05)
    for x, y in ((0.4, 0.4), (7.88, 0.4), (0.4, 13.38), (7.88, 13.38)):
        p.rect(x, y, 0.22, 0.22)
    p.text(0.75, 0.62, "Ballot ID: GC31-1104-HN", "narrow", 0.09)
    p.text(4.25, 0.9, "OFFICIAL BALLOT / BOLETA OFICIAL", "narrow_bold", 0.17, anchor="mm")
    p.text(4.25, 1.17, "Gannet County, Maryland - General Election - November 4, 2031", "narrow", 0.11, anchor="mm")
    split = PRECINCTS[STYLES[sid].precinct].split()[-1]
    p.text(4.25, 1.42, f"Precinct 3-01  Split {split}  /  Precinto 3-01  División {split}", "narrow_bold", 0.11, anchor="mm")
    p.text(0.75, 1.75, "Instructions: Completely fill in the oval to the RIGHT of your choice with a black or blue pen.",
           "narrow", 0.095)
    p.text(0.75, 1.93, "Instrucciones: Rellene completamente el óvalo a la DERECHA de su opción con bolígrafo negro o azul.",
           "italic", 0.085)
    p.text(0.75, 2.13, "To vote for a write-in candidate, fill in the oval and print the name on the line.", "narrow", 0.095)
    p.line(0.5, 2.35, 8.0, 2.35, 0.02)
    for x in (2.99, 5.44):
        p.line(x, 2.45, x, 13.25, 0.008)
    for x0, col in zip(DM_COLS, STYLES[sid].pages[0], strict=True):
        y = 2.5
        for cid in col:
            y = _dm_contest(p, CONTEST[cid], x0, y)
        assert y <= 13.3, (sid, cid, y)
    return p


@lru_cache(maxsize=16)
def plan_of(sid: str, page: int) -> Plan:
    return _av_plan(sid, page) if STYLES[sid].frame == "av" else _dm_plan(sid)


def _draw(plan: Plan) -> Image.Image:
    """The blank page at DRAW dpi, gray (255 paper)."""
    k = DRAW
    img = Image.new("L", (round(plan.size[0] * k), round(plan.size[1] * k)), 255)
    d = ImageDraw.Draw(img)
    for op in sorted(plan.ops, key=lambda o: o[0] != "rect" or o[5] == 0):  # tints first
        kind = op[0]
        if kind == "rect":
            _, x, y, w, h, level = op
            d.rectangle([x * k, y * k, (x + w) * k - 1, (y + h) * k - 1], fill=level)
        elif kind == "frame":
            _, x, y, w, h, lw = op
            d.rectangle([x * k, y * k, (x + w) * k, (y + h) * k], outline=0, width=max(1, round(lw * k)))
        elif kind == "line":
            _, x0, y0, x1, y1, lw = op
            d.line([(x0 * k, y0 * k), (x1 * k, y1 * k)], fill=0, width=max(1, round(lw * k)))
        elif kind == "oval":
            _, x, y, w, h, lw, filled = op
            d.ellipse([x * k, y * k, (x + w) * k, (y + h) * k], outline=0, fill=0 if filled else None,
                      width=max(1, round(lw * k)))
        elif kind == "text":
            _, x, y, s, key, size, anchor, level = op
            d.text((x * k, y * k), s, font=_face(key, round(size * k)), fill=level, anchor=anchor)
    return img


@lru_cache(maxsize=8)
def blank_of(sid: str, page: int) -> np.ndarray:
    """The blank page at WORK dpi, uint8 gray."""
    big = np.asarray(_draw(plan_of(sid, page)))
    return cv2.resize(big, None, fx=WORK / DRAW, fy=WORK / DRAW, interpolation=cv2.INTER_AREA)


def _pages_of(sid: str) -> list[int]:
    return list(range(1, len(STYLES[sid].pages) + 1))


def write_election(out: Path) -> Path:
    """``election.json``, one layout per style and each page's blank scanned cleanly at 200 dpi."""
    (out / "layouts").mkdir(parents=True, exist_ok=True)
    used = sorted({STYLES[s].precinct for s in STYLES})
    definition = dict(ELECTION, precincts=[{"id": p, "name": PRECINCTS[p], "county": "Gannet"} for p in used],
                      contests=[{"id": c.id, "title": c.title, "kind": c.kind, "vote_for": c.vote_for,
                                 "options": [{"id": o, "name": n, **({"write_in": True} if w else {})}
                                             for o, n, _p, w in c.choices()]} for c in CONTESTS],
                      ballot_styles=[{"id": s, "precincts": [st.precinct], "contests": _contests_of(s),
                                      "layout": f"layouts/{s}.json"} for s, st in STYLES.items()])
    for sid in STYLES:
        pages = []
        for n in _pages_of(sid):
            plan = plan_of(sid, n)
            name = f"{sid}-p{n}.png" if len(STYLES[sid].pages) > 1 else f"{sid}.png"
            big = np.asarray(_draw(plan))
            ref = cv2.resize(big, None, fx=REF_DPI / DRAW, fy=REF_DPI / DRAW, interpolation=cv2.INTER_AREA)
            ref = cv2.GaussianBlur(ref, (0, 0), 0.5)
            Image.fromarray(ref).save(out / "layouts" / name, dpi=(REF_DPI, REF_DPI))
            pages.append({"page": n, "size": list(plan.size), "reference": name, "reference_dpi": REF_DPI,
                          "targets": plan.targets})
        (out / "layouts" / f"{sid}.json").write_text(json.dumps({"style": sid, "pages": pages}, indent=1))
    (out / "election.json").write_text(json.dumps(definition, indent=1))
    return out / "election.json"


# --------------------------------------------------------------------------------------
# Marking: ink coverage drawn on patches at WORK dpi, multiplied into the sheet

INKS = {"ballpoint_black": ((0.16, 0.16, 0.19), 0.93), "ballpoint_blue": ((0.15, 0.22, 0.62), 0.92),
        "marker": ((0.06, 0.06, 0.08), 0.98), "pencil": ((0.22, 0.22, 0.25), 0.93),
        "graphite": ((0.22, 0.22, 0.25), 1.0), "coffee": ((0.62, 0.45, 0.27), 1.0)}
NIB = {"ballpoint_black": (0.012, 0.018), "ballpoint_blue": (0.012, 0.018), "marker": (0.035, 0.05), "pencil": (0.015, 0.022)}
PENS = {"ballpoint_black": 34, "ballpoint_blue": 26, "marker": 20, "pencil": 20}
HABITS = {"fill": 52, "partial": 12, "check": 14, "x": 12, "overfill": 10}
WRITE_NAMES = ["Dolores Pike", "Amos Whitlock", "J. R. Castillo", "Fern Oduya", "Lyle Baxter", "Oren Haskins",
               "Bea Arthur", "Kim Solberg", "Tad Wexler", "Rosa Delgado"]


class Sheet:
    """One printed side being marked: RGB reflectance and the felt-tip ink that soaks through."""

    def __init__(self, blank: np.ndarray) -> None:
        self.rgb = np.repeat((blank.astype(np.float32) / 255.0)[..., None], 3, axis=2)
        self.soak = np.zeros(blank.shape, np.float32)

    def lay(self, cov: np.ndarray, x0: int, y0: int, ink: str, alpha: float | None = None, soak: bool = False) -> None:
        color, a = INKS[ink]
        a = a if alpha is None else alpha
        h, w = self.soak.shape
        xa, ya, xb, yb = max(0, x0), max(0, y0), min(w, x0 + cov.shape[1]), min(h, y0 + cov.shape[0])
        c = cov[ya - y0:yb - y0, xa - x0:xb - x0] * a
        self.rgb[ya:yb, xa:xb] *= 1.0 - c[..., None] * (1.0 - np.asarray(color, np.float32))
        if soak:
            np.maximum(self.soak[ya:yb, xa:xb], c, out=self.soak[ya:yb, xa:xb])


class Pad:
    """A square of paper round a target, in WORK pixels, where one mark is drawn."""

    def __init__(self, box: list[float], margin: float = 0.4) -> None:
        x, y, w, h = box
        self.x0, self.y0 = int((x - margin) * WORK), int((y - margin) * WORK)
        self.cov = np.zeros((int((h + 2 * margin) * WORK) + 2, int((w + 2 * margin) * WORK) + 2), np.uint8)
        self.cx, self.cy = (x + w / 2) * WORK - self.x0, (y + h / 2) * WORK - self.y0
        self.a, self.b = w / 2 * WORK, h / 2 * WORK

    def stroke(self, pts: list[tuple[float, float]], width: float) -> None:
        arr = np.round(np.asarray(pts, np.float64) * SUB).astype(np.int32)
        cv2.polylines(self.cov, [arr], False, 255, max(1, round(width * WORK)), cv2.LINE_AA, shift=4)

    def dot(self, x: float, y: float, r: float) -> None:
        cv2.circle(self.cov, (round(x * SUB), round(y * SUB)), max(1, round(r * SUB)), 255, -1, cv2.LINE_AA, shift=4)

    def ellipse_mask(self, sa: float = 1.0, sb: float = 1.0) -> np.ndarray:
        yy, xx = np.mgrid[0:self.cov.shape[0], 0:self.cov.shape[1]]
        return ((xx - self.cx) / (self.a * sa)) ** 2 + ((yy - self.cy) / (self.b * sb)) ** 2 <= 1.0

    def coverage(self, pen: str, rng: np.random.Generator) -> np.ndarray:
        c = self.cov.astype(np.float32) / 255.0
        if pen in ("pencil", "graphite"):
            grain = cv2.GaussianBlur(rng.uniform(0.65, 1.0, c.shape).astype(np.float32), (0, 0), 0.7)
            c = c * grain
        elif pen == "marker":
            c = cv2.GaussianBlur(c, (0, 0), 0.8)
        else:
            c = c * rng.uniform(0.85, 1.0, c.shape).astype(np.float32)
        return np.clip(c, 0, 1)

    def inked_share(self) -> float:
        inside = self.ellipse_mask()
        return float((self.cov[inside] > 127).mean())


def _scribble(pad: Pad, a: float, b: float, width: float, rnd: random.Random, cut: float | None = None) -> None:
    """Back-and-forth strokes filling an ellipse of half-axes ``a``, ``b`` (pixels) round the
    target's centre, stopping at x = ``cut`` when given."""
    wpx = width * WORK
    rows = max(3, int(2 * b / (0.6 * wpx)) + 1)
    pts = []
    for i in range(rows + 1):
        yy = pad.cy - b + 2 * b * i / rows + rnd.uniform(-0.25, 0.25) * wpx
        half = a * math.sqrt(max(0.0, 1 - ((yy - pad.cy) / b) ** 2)) - 0.35 * wpx
        xa, xb = pad.cx - half * rnd.uniform(0.92, 1.02), pad.cx + half * rnd.uniform(0.92, 1.02)
        if cut is not None:
            xb = min(xb, cut)
        if xb <= xa:
            continue
        pts += [(xa, yy), (xb, yy)] if i % 2 == 0 else [(xb, yy), (xa, yy)]
    if len(pts) >= 2:
        pad.stroke(pts, width)


def _fill(pad: Pad, width: float, rnd: random.Random, scale: tuple[float, float] = (1.0, 1.0)) -> None:
    _scribble(pad, pad.a * scale[0], pad.b * scale[1], width, rnd)
    _scribble(pad, pad.a * scale[0] * 0.85, pad.b * scale[1] * 0.8, width, rnd)


def _partial(pad: Pad, width: float, rnd: random.Random) -> float:
    """Fill the left part of the oval until 60-85 % of it is inked; the share inked."""
    want = rnd.uniform(0.62, 0.82)
    lo, hi = pad.cx - pad.a, pad.cx + pad.a
    mask = pad.ellipse_mask()
    xs = np.nonzero(mask)[1]
    cut = float(np.quantile(xs, want))
    for _ in range(3):
        pad.cov[:] = 0
        _scribble(pad, pad.a * 1.02, pad.b * 1.02, width, rnd, cut=cut)
        _scribble(pad, pad.a * 0.85, pad.b * 0.8, width, rnd, cut=cut)
        got = pad.inked_share()
        if 0.6 <= got <= 0.85:
            return got
        cut = max(lo, min(hi, cut - (got - want) * 2 * pad.a))
    return pad.inked_share()


def _check(pad: Pad, width: float, rnd: random.Random) -> None:
    a, b = pad.a, pad.b
    s = rnd.uniform(0.9, 1.2)
    pad.stroke([(pad.cx - 0.55 * a * s, pad.cy - 0.1 * b), (pad.cx - 0.15 * a * s, pad.cy + 0.85 * b * s),
                (pad.cx + 0.75 * a * s, pad.cy - 1.9 * b * s)], width)


def _cross(pad: Pad, width: float, rnd: random.Random) -> None:
    a, b = pad.a * rnd.uniform(0.9, 1.15), pad.b * rnd.uniform(1.0, 1.4)
    j = rnd.uniform(-0.1, 0.1) * b
    pad.stroke([(pad.cx - a, pad.cy - b + j), (pad.cx + a, pad.cy + b)], width)
    pad.stroke([(pad.cx - a, pad.cy + b), (pad.cx + a * 0.95, pad.cy - b - j)], width)


def _overfill(pad: Pad, width: float, rnd: random.Random) -> None:
    _fill(pad, width, rnd, (rnd.uniform(1.15, 1.35), rnd.uniform(1.3, 1.6)))
    for _ in range(rnd.randint(1, 2)):  # ink spilling out past the outline, sideways
        side = rnd.choice((-1, 1))
        reach = pad.a + rnd.uniform(0.03, 0.07) * WORK
        pad.stroke([(pad.cx, pad.cy + rnd.uniform(-0.5, 0.5) * pad.b),
                    (pad.cx + side * reach, pad.cy + rnd.uniform(-1.2, 1.2) * pad.b)], width * 1.3)


def _loop(pad: Pad, cx: float, cy: float, a: float, b: float, width: float, rnd: random.Random, power: float = 2.0) -> None:
    """A hand-drawn loop (super-ellipse of exponent ``power``) round (cx, cy), ends overlapping."""
    start = rnd.uniform(0, 2 * math.pi)
    turn = rnd.uniform(2.05, 2.2) * math.pi
    wob = rnd.uniform(0.0, 0.04)
    pts = []
    for i in range(90):
        t = start + turn * i / 89
        c, s = math.cos(t), math.sin(t)
        r = 1 + wob * math.sin(3 * t + start)
        pts.append((cx + a * r * math.copysign(abs(c) ** (2 / power), c), cy + b * r * math.copysign(abs(s) ** (2 / power), s)))
    pad.stroke(pts, width)


def _write(sheet: Sheet, area: list[float], pen: str, rnd: random.Random, rng: np.random.Generator) -> str:
    name = rnd.choice(WRITE_NAMES)
    x, y, w, h = area
    size = rnd.uniform(0.14, 0.18)
    font = _face(rnd.choice(("hand", "hand2")), round(size * WORK))
    img = Image.new("L", (int(w * WORK), int((h + 0.12) * WORK)), 0)
    ImageDraw.Draw(img).text((0.06 * WORK, (h - 0.03) * WORK), name, font=font, fill=255, anchor="ls")
    cov = np.asarray(img).astype(np.float32) / 255.0
    if pen == "marker":
        cov = cv2.dilate(cov, np.ones((3, 3), np.uint8))
    sheet.lay(cov * rng.uniform(0.85, 1.0, cov.shape).astype(np.float32), int(x * WORK), int(y * WORK), pen,
              soak=pen == "marker")
    return name


def _clear_of(loop: np.ndarray, x0: int, y0: int, boxes: list[list[float]], gap: float) -> bool:
    """No ink of ``loop`` (a coverage pad at x0, y0) within ``gap`` inches of any box."""
    for bx, by, bw, bh in boxes:
        xa, ya = int((bx - gap) * WORK) - x0, int((by - gap) * WORK) - y0
        xb, yb = int((bx + bw + gap) * WORK) - x0 + 1, int((by + bh + gap) * WORK) - y0 + 1
        xa, ya, xb, yb = max(0, xa), max(0, ya), min(loop.shape[1], xb), min(loop.shape[0], yb)
        if xa < xb and ya < yb and loop[ya:yb, xa:xb].max() > 0:
            return False
    return True


VOTE_MARKS = {"fill", "partial", "check", "x", "overfill"}


def _vote_mark(sheet: Sheet, t: dict[str, Any], kind: str, pen: str, rnd: random.Random, rng: np.random.Generator) -> dict[str, Any]:
    pad = Pad(t["box"])
    width = rnd.uniform(*NIB[pen])
    extra: dict[str, Any] = {}
    if kind == "fill":
        _fill(pad, width, rnd)
    elif kind == "partial":
        extra["fill_fraction"] = round(_partial(pad, width, rnd), 3)
    elif kind == "check":
        _check(pad, width, rnd)
    elif kind == "x":
        _cross(pad, width, rnd)
    elif kind == "overfill":
        _overfill(pad, width, rnd)
    sheet.lay(pad.coverage(pen, rng), pad.x0, pad.y0, pen, soak=pen == "marker")
    return extra


def _defect(sheet: Sheet, plan: Plan, t: dict[str, Any], kind: str, pen: str, rnd: random.Random,
            rng: np.random.Generator) -> dict[str, Any] | None:
    """Draw a mark that is not a clear vote on target ``t``; its truth fields, or None when it
    cannot be drawn there."""
    others = [o["box"] for o in plan.targets if o["option"] != t["option"]]
    width = rnd.uniform(*NIB[pen])
    if kind == "circled_oval":
        pad = Pad(t["box"])
        m = rnd.uniform(0.05, 0.08) * WORK
        _loop(pad, pad.cx, pad.cy, pad.a + m, pad.b + m, width, rnd)
        if not _clear_of(pad.cov, pad.x0, pad.y0, others, 0.03):  # the loop keeps off the oval by construction
            return None
        sheet.lay(pad.coverage(pen, rng), pad.x0, pad.y0, pen, soak=pen == "marker")
        return {"intent": "ambiguous"}
    if kind == "circled_name":
        if t["option"] not in plan.names:
            return None
        nx, ny, nw, nh = plan.names[t["option"]]
        pad = Pad([nx, ny, nw, nh], margin=0.3)
        cx, cy = pad.cx, pad.cy
        _loop(pad, cx, cy, (nw / 2 + rnd.uniform(0.03, 0.045)) * WORK, (nh / 2 + rnd.uniform(0.045, 0.07)) * WORK, width, rnd, 4.0)
        if not _clear_of(pad.cov, pad.x0, pad.y0, [*others, t["box"]], 0.02):
            return None
        sheet.lay(pad.coverage(pen, rng), pad.x0, pad.y0, pen, soak=pen == "marker")
        return {"intent": "ambiguous"}
    pad = Pad(t["box"])
    if kind == "hesitation":
        d = rnd.uniform(0.02, 0.04)
        pad.dot(pad.cx + rnd.uniform(-0.5, 0.5) * pad.a, pad.cy + rnd.uniform(-0.4, 0.4) * pad.b, d / 2 * WORK)
        sheet.lay(pad.coverage(pen, rng), pad.x0, pad.y0, pen)
        return {"intent": "no_vote", "dot_in": round(d, 3)}
    if kind == "faint_trace":
        _scribble(pad, pad.a * 0.9, pad.b * 0.8, 0.02, rnd, cut=pad.cx + rnd.uniform(-0.3, 0.4) * pad.a)
        alpha = rnd.uniform(0.05, 0.09)
        cov = cv2.GaussianBlur(pad.coverage("graphite", rng), (0, 0), 1.5)
        sheet.lay(cov, pad.x0, pad.y0, "graphite", alpha=alpha)
        return {"intent": "no_vote", "darkness": round(alpha * 0.77 * float(cov[pad.ellipse_mask()].mean()), 3)}
    if kind == "erasure":
        _fill(pad, 0.02, rnd, (1.05, 1.1))
        alpha = rnd.uniform(0.22, 0.38)
        cov = cv2.GaussianBlur(pad.coverage("graphite", rng), (0, 0), 1.6)
        lift = cv2.GaussianBlur(pad.ellipse_mask(1.25, 1.4).astype(np.float32), (0, 0), 2.0) * rnd.uniform(0.3, 0.5)
        h, w = lift.shape
        region = sheet.rgb[pad.y0:pad.y0 + h, pad.x0:pad.x0 + w]
        region += (1.0 - region) * lift[:region.shape[0], :region.shape[1], None]  # the eraser lifts some print too
        sheet.lay(cov, pad.x0, pad.y0, "graphite", alpha=alpha)
        return {"intent": "ambiguous", "darkness": round(alpha * 0.77 * float(cov[pad.ellipse_mask()].mean()), 3)}
    if kind == "crossed_out":
        _fill(pad, width, rnd)
        peaks = rnd.randint(5, 8)
        xs = np.linspace(pad.cx - pad.a * 1.5, pad.cx + pad.a * 1.5, peaks * 2 + 1)
        pts = [(float(x), pad.cy + (1 if i % 2 else -1) * pad.b * rnd.uniform(1.2, 1.6)) for i, x in enumerate(xs)]
        pad.stroke(pts, width * 1.2)
        sheet.lay(pad.coverage(pen, rng), pad.x0, pad.y0, pen, soak=pen == "marker")
        return {"intent": "ambiguous"}
    raise ValueError(kind)


def _stain(sheet: Sheet, plan: Plan, rnd: random.Random, rng: np.random.Generator) -> list[str]:
    """A coffee ring crossing a target; the options whose boxes it touches."""
    t = rnd.choice(plan.targets)
    x, y, w, h = t["box"]
    r = rnd.uniform(0.45, 0.85)
    phi = rnd.uniform(0, 2 * math.pi)
    cx, cy = x + w / 2 - r * math.cos(phi), y + h / 2 - r * math.sin(phi)
    rim = rnd.uniform(0.025, 0.05)
    size = int(2 * (r + 0.2) * WORK)
    x0, y0 = int((cx - r - 0.2) * WORK), int((cy - r - 0.2) * WORK)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    d = np.hypot(xx + x0 - cx * WORK, yy + y0 - cy * WORK) / WORK
    wob = cv2.GaussianBlur(rng.normal(0, 1, (size, size)).astype(np.float32), (0, 0), 12) * 8
    d = d + 0.01 * wob
    cov = rnd.uniform(0.3, 0.5) * np.exp(-(((d - r) / rim) ** 2)) + (d < r) * rnd.uniform(0.05, 0.1)
    cov = cov * (0.8 + 0.2 * np.clip(wob, -1, 1))
    sheet.lay(np.clip(cov, 0, 1).astype(np.float32), x0, y0, "coffee")
    touched = []
    for o in plan.targets:
        bx, by, bw, bh = o["box"]
        nx, ny = min(max(cx, bx), bx + bw), min(max(cy, by), by + bh)
        if math.hypot(nx - cx, ny - cy) <= r + 2 * rim:
            touched.append(o["option"])
    return touched


def _mark_page(sheet: Sheet, plan: Plan, voter: dict[str, Any], rnd: random.Random, rng: np.random.Generator) -> list[dict[str, Any]]:
    pen, habit, gray = voter["pen"], voter["habit"], voter["gray"]
    truth: list[dict[str, Any]] = []
    by_contest: dict[str, list[dict[str, Any]]] = {}
    for t in plan.targets:
        by_contest.setdefault(t["contest"], []).append(t)
    for cid, ts in by_contest.items():
        c = CONTEST[cid]
        r = rnd.random()
        n = 0 if voter["blank"] else (min(c.vote_for + 1, len(ts)) if r < 0.06 else rnd.randint(0, c.vote_for - 1) if r < 0.2
                                      else c.vote_for)
        chosen = set(rnd.sample(range(len(ts)), n))
        crossed = None
        if not voter["blank"] and c.vote_for == 1 and n == 1 and rnd.random() < 0.015:
            crossed = rnd.choice([i for i in range(len(ts)) if i not in chosen and "write_in_area" not in ts[i]])
        for i, t in enumerate(ts):
            entry: dict[str, Any] = {"contest": cid, "option": t["option"], "mark": "none", "intent": "no_vote"}
            if i in chosen:
                kind = habit if rnd.random() < 0.75 else rnd.choice(sorted(HABITS))
                entry.update(mark=kind, intent="vote", ink=pen, **_vote_mark(sheet, t, kind, pen, rnd, rng))
                if "write_in_area" in t:
                    entry["write_in"] = _write(sheet, t["write_in_area"], pen, rnd, rng)
            elif i == crossed:
                entry.update(mark="crossed_out", ink=pen, **(_defect(sheet, plan, t, "crossed_out", pen, rnd, rng) or {}))
            elif not voter["blank"]:
                if "write_in_area" in t and rnd.random() < 0.035:
                    entry.update(mark="write_in_only", intent="ambiguous", ink=pen,
                                 write_in=_write(sheet, t["write_in_area"], pen, rnd, rng))
                    truth.append(entry)
                    continue
                roll = rnd.random()
                kind = None
                for k, p in (("circled_oval", 0.008), ("circled_name", 0.009), ("hesitation", 0.012),
                             ("faint_trace", 0.008 if voter["mode"] != "g4_ordered" and voter["mode"] != "g4_diffusion" else 0),
                             ("erasure", 0.009 if gray else 0.0)):
                    if roll < p:
                        kind = k
                        break
                    roll -= p
                if kind is not None:
                    got = _defect(sheet, plan, t, kind, "pencil" if kind in ("erasure",) else pen, rnd, rng)
                    if got is not None:
                        entry.update(mark=kind, ink="pencil" if kind in ("erasure", "faint_trace") else pen, **got)
            truth.append(entry)
    return truth


def _bleed(onto: Sheet, soak: np.ndarray, plan: Plan, truth: list[dict[str, Any]], rnd: random.Random) -> list[str]:
    """Felt-tip ink of the other side (``soak``) showing through onto ``onto``: mirrored
    left-right, blurred; the options it touched."""
    if soak.max() <= 0:
        return []
    strength = rnd.uniform(0.08, 0.2)
    seen = cv2.GaussianBlur(np.ascontiguousarray(soak[:, ::-1]), (0, 0), 0.02 * WORK) * strength
    onto.lay(seen, 0, 0, "marker", alpha=1.0)
    touched = []
    by_option = {t["option"]: t for t in truth}
    for t in plan.targets:
        x, y, w, h = (round(v * WORK) for v in t["box"])
        dark = float(seen[y:y + h, x:x + w].mean()) * 0.92
        if dark >= 0.01:
            touched.append(t["option"])
            e = by_option[t["option"]]
            e["bleed_darkness"] = round(dark, 3)
            if e["mark"] == "none":
                e["mark"] = "bleed_through"
    return touched


# --------------------------------------------------------------------------------------
# Scanning


BAYER = np.array([[0, 32, 8, 40, 2, 34, 10, 42], [48, 16, 56, 24, 50, 18, 58, 26], [12, 44, 4, 36, 14, 46, 6, 38],
                  [60, 28, 52, 20, 62, 30, 54, 22], [3, 35, 11, 43, 1, 33, 9, 41], [51, 19, 59, 27, 49, 17, 57, 25],
                  [15, 47, 7, 39, 13, 45, 5, 37], [63, 31, 55, 23, 61, 29, 53, 21]], np.float32)
MODES = {"g4_threshold": 20, "g4_ordered": 7, "g4_diffusion": 9, "gray_png": 22, "gray_jpg": 26, "rgb_jpg": 16}


def _scan_page(sheet: Sheet, sc: dict[str, Any], rotated: bool, crop: dict[str, float], rnd: random.Random,
               rng: np.random.Generator) -> tuple[Image.Image, dict[str, Any]]:
    dpi, mode = sc["dpi"], sc["mode"]
    img = sheet.rgb * np.asarray(sc["paper"], np.float32)
    if mode != "rgb_jpg":
        img = img @ np.asarray([0.299, 0.587, 0.114], np.float32)
    fx, fy = dpi / WORK * sc["stretch"][0], dpi / WORK * sc["stretch"][1]
    img = cv2.resize(img, None, fx=fx, fy=fy, interpolation=cv2.INTER_AREA)
    h, w = img.shape[:2]
    angle = rnd.uniform(-1.0, 1.0) if rnd.random() < 0.6 or crop else rnd.uniform(-3.0, 3.0)
    if crop:
        angle = max(-1.2, min(1.2, angle))
    m = cv2.getRotationMatrix2D((w / 2, h / 2), angle + (180 if rotated else 0), 1.0)
    corners = np.array([[0, 0, 1], [w, 0, 1], [0, h, 1], [w, h, 1]], np.float64) @ m.T
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    margins = {}
    for side in ("left", "top", "right", "bottom"):
        margins[side] = -crop[side] if side in crop else (rnd.uniform(0.08, 0.3) if sc["backing"] == "dark" else rnd.uniform(0.0, 0.12))
    px = {k: round(v * dpi) for k, v in margins.items()}
    m[0, 2] += px["left"] - lo[0]
    m[1, 2] += px["top"] - lo[1]
    size = (int(math.ceil(hi[0] - lo[0])) + px["left"] + px["right"], int(math.ceil(hi[1] - lo[1])) + px["top"] + px["bottom"])
    back = 0.1 if sc["backing"] == "dark" else 0.97
    out = cv2.warpAffine(img, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                         borderValue=(back, back, back) if img.ndim == 3 else back)
    along_x = sc["lamp"][1] == "x"
    ramp = 1 - sc["lamp"][0] * np.linspace(0, 1, out.shape[1 if along_x else 0], dtype=np.float32)
    ramp = ramp[None, :] if along_x else ramp[:, None]
    out = out * (ramp if out.ndim == 2 else ramp[..., None])
    if sc["blur"] > 0.2:
        out = cv2.GaussianBlur(out, (0, 0), sc["blur"])
    out = out + rng.normal(0, sc["noise"], out.shape).astype(np.float32)
    u8 = np.clip(out * 255 + 0.5, 0, 255).astype(np.uint8)
    if mode.startswith("g4"):
        white = 255 * min(sc["paper"]) * (1 - sc["lamp"][0]) * 0.97  # the scanner's white level, under the lamp's fall-off
        g = np.clip(u8.astype(np.float32) * 255 / white, 0, 255)
        if mode == "g4_threshold":
            image = Image.fromarray(g > sc["threshold"]).convert("1")
        elif mode == "g4_ordered":
            tile = np.tile(BAYER, (g.shape[0] // 8 + 1, g.shape[1] // 8 + 1))[:g.shape[0], :g.shape[1]]
            image = Image.fromarray(g > (tile + 0.5) * 4).convert("1")
        else:
            image = Image.fromarray(g.astype(np.uint8)).convert("1")
    else:
        image = Image.fromarray(u8)
    to_px = np.diag([fx * WORK, fy * WORK])
    meta = {"rotation_deg": round(angle, 3), "rotated_180": rotated, "margins_in": {k: round(v, 3) for k, v in margins.items()},
            "size_px": list(image.size), "inch_to_px": np.round(np.hstack([m[:, :2] @ to_px, m[:, 2:]]), 4).tolist()}
    return image, meta


def _save(images: list[Image.Image], fmt: str, sc: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    kw: dict[str, Any] = {"dpi": (sc["dpi_tag"], sc["dpi_tag"])} if sc["dpi_tag"] else {}
    if fmt == "tif":
        comp = "group4" if images[0].mode == "1" else "tiff_lzw"
        images[0].save(buf, "TIFF", compression=comp, save_all=len(images) > 1, append_images=images[1:], **kw)
    elif fmt == "png":
        images[0].save(buf, "PNG", **kw)
    else:
        images[0].save(buf, "JPEG", quality=sc["jpeg_quality"], **kw)
    return buf.getvalue()


def _pick(rnd: random.Random, weights: dict[str, int]) -> str:
    keys = sorted(weights)
    return rnd.choices(keys, [weights[k] for k in keys])[0]


def _outcomes(truth: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for t in truth:
        out.setdefault(t["contest"], {"votes": [], "ambiguous": False})
        out[t["contest"]]["votes"] += [t["option"]] if t["intent"] == "vote" else []
        out[t["contest"]]["ambiguous"] |= t["intent"] == "ambiguous"
    return {cid: {"votes": v["votes"], "outcome": "pending" if v["ambiguous"] else
                  "overvote" if len(v["votes"]) > CONTEST[cid].vote_for else "counted"} for cid, v in out.items()}


def make_card(out: Path, seed: int, i: int) -> list[dict[str, Any]]:
    """Print, mark, scan and write sheet ``i`` of the deck; its truth entries (one per side)."""
    rnd = random.Random(seed * 1_000_003 + i * 7919 + 6)
    rng = np.random.default_rng([seed, i, 6])
    sid = _pick(rnd, STYLE_WEIGHTS)
    st = STYLES[sid]
    dpi = rnd.choices((200, 150, 300), (72, 10, 18))[0]
    mode = _pick(rnd, MODES)
    gray = not mode.startswith("g4")
    sc: dict[str, Any] = {
        "dpi": dpi, "mode": mode, "dpi_tag": rnd.choices([dpi, None, rnd.choice([72, 96, 300 if dpi != 300 else 600])], (70, 15, 15))[0],
        "jpeg_quality": rnd.randint(40, 90) if mode.endswith("jpg") else None,
        "stretch": [round(1 + rnd.uniform(-0.015, 0.015), 5), round(1 + rnd.uniform(-0.015, 0.015), 5)],
        "paper": [round(rnd.uniform(0.95, 0.985), 3)] * 3 if mode != "rgb_jpg" else
        [round(rnd.uniform(0.95, 0.985), 3), round(rnd.uniform(0.94, 0.975), 3), round(rnd.uniform(0.9, 0.95), 3)],
        "backing": "dark" if rnd.random() < 0.3 else "white", "lamp": [round(rnd.uniform(0, 0.08 if gray else 0.03), 3), rnd.choice("xy")],
        "blur": round(rnd.uniform(0.2, 1.0), 2), "noise": round(rnd.uniform(0.003, 0.012), 4),
        "threshold": rnd.randint(120, 150)}
    voter = {"pen": _pick(rnd, PENS), "habit": _pick(rnd, HABITS), "blank": rnd.random() < 0.04, "gray": gray, "mode": mode}
    pages = _pages_of(sid)
    sheets = {n: Sheet(blank_of(sid, n)) for n in pages}
    truths = {n: _mark_page(sheets[n], plan_of(sid, n), voter, rnd, rng) for n in pages}
    stains: dict[int, list[str]] = {n: [] for n in pages}
    if rnd.random() < 0.1:
        n = rnd.choice(pages)
        stains[n] = _stain(sheets[n], plan_of(sid, n), rnd, rng)
        for t in truths[n]:
            if t["option"] in stains[n]:
                t["damage"] = "stain"
    bleeds: dict[int, list[str]] = {n: [] for n in pages}
    if len(pages) == 2 and gray:
        soaked = {n: sheets[n].soak.copy() for n in pages}
        for n, other in ((1, 2), (2, 1)):
            bleeds[n] = _bleed(sheets[n], soaked[other], plan_of(sid, n), truths[n], rnd)
    crop: dict[str, float] = {}
    if st.frame == "dm" and rnd.random() < 0.5:
        crop = {s: round(rnd.uniform(0.05, 0.15), 3) for s in rnd.sample(["left", "top", "right", "bottom"], rnd.randint(1, 2))}
    upright = rnd.random() < 0.78
    back_flipped = len(pages) == 2 and rnd.random() < 0.3
    images, metas = [], []
    for n in pages:
        rotated = (not upright) != (n == 2 and back_flipped)
        image, meta = _scan_page(sheets[n], sc, rotated, crop, rnd, rng)
        images.append(image)
        metas.append(meta)
    fmt = "tif" if mode.startswith("g4") else "png" if mode == "gray_png" else "jpg"
    (out / "cards").mkdir(parents=True, exist_ok=True)
    if len(pages) == 2 and (fmt == "tif" and rnd.random() < 0.7 or fmt == "png" and rnd.random() < 0.35):
        fmt = "tif"
        names = [(f"cards/{i + 1:04d}.tif", 1), (f"cards/{i + 1:04d}.tif", 2)]
        (out / names[0][0]).write_bytes(_save(images, "tif", sc))
    elif len(pages) == 2:
        names = [(f"cards/{i + 1:04d}-p{n}.{fmt}", 1) for n in pages]
        for (name, _), image in zip(names, images, strict=True):
            (out / name).write_bytes(_save([image], fmt, sc))
    else:
        names = [(f"cards/{i + 1:04d}.{fmt}", 1)]
        (out / names[0][0]).write_bytes(_save(images, fmt, sc))
    entries = []
    for n, (name, page_of_file), meta in zip(pages, names, metas, strict=True):
        scan = {k: sc[k] for k in ("stretch", "paper", "backing", "lamp", "blur", "noise")}
        scan.update(meta, crop_in=crop, threshold=sc["threshold"] if mode == "g4_threshold" else None)
        entries.append({
            "file": name, "page_of_file": page_of_file, "style": sid, "page": n, "precinct": st.precinct, "kind": "ballot",
            "frame": st.frame, "size_in": list(plan_of(sid, n).size), "sides": len(pages), "rotated_180": meta["rotated_180"],
            "dpi": dpi, "dpi_tag": sc["dpi_tag"], "format": fmt, "mode": mode if fmt != "tif" or not gray else "gray_tif_lzw",
            "color": mode == "rgb_jpg", "jpeg_quality": sc["jpeg_quality"], "expect": "read", "pen": voter["pen"],
            "habit": voter["habit"], "blank": voter["blank"], "stain_options": stains[n], "bleed_options": bleeds[n],
            "cropped": bool(crop), "targets": truths[n], "contests": _outcomes(truths[n]), "scan": scan})
    return entries


def make_deck(out: Path, *, cards: int, seed: int, jobs: int = 1) -> Path:
    """Write the election, ``cards`` sheets and ``expected.json`` (one entry per side); its path.
    Each sheet depends only on ``(seed, its index)``, so ``jobs`` processes give the same deck."""
    path = write_deck(Path(out), write_election, make_card, cards=cards, seed=seed, jobs=jobs, profile=PROFILE)
    data = json.loads(path.read_text())
    data["cards"] = [e for sheet in data["cards"] for e in sheet]
    path.write_text(json.dumps(data, indent=1))
    return path


def main(argv: list[str] | None = None) -> int:
    return deck_cli(make_deck, "a deck drawn by the sixth, independent vendor renderer", argv)


if __name__ == "__main__":
    raise SystemExit(main())
