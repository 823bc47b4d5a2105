"""A fourth vendor ballot renderer, written apart from ``scanpipe.synth`` and from the other three.

The reader is judged on vendor ballots drawn by generators its authors did not write. This
module imports nothing from scanpipe and shares no drawing, marking or scanning code with
``scanpipe.synth``, :mod:`tests.foreign_renderer`, :mod:`tests.foreign_vendor` or
:mod:`tests.third_vendor` (it borrows only the deck writer and the command line of
:mod:`tests.foreign_renderer`). It covers what those do not:

* three frames of a party primary (Kestrel County, jurisdiction MD), each with several styles:
  an **ImageCast-like** frame (``IC-*``: letter or legal; four solid corner squares or L-shaped
  corner marks, one row of timing marks across the top only, ovals LEFT of the names in two
  columns, contest headers on a tint of a second ink, a 2-D-code-like block of black and white
  cells in the bottom-left corner that is part of the blank: ``IC-D-0101`` and ``IC-D-0102``
  share it and differ only in the printed precinct line); a **Hart-like** frame (``HT-*``:
  rectangular target BOXES right of the names after dotted leaders, timing marks down both
  sides only, a 1-D barcode-like stripe pattern at the bottom that differs per style,
  ``HT-D-0201`` / ``HT-D-0202`` differing in one contest's candidates); a **three-column legal**
  frame (``LG-*``: long contests that run on into the next column under a "(continued)"
  heading, corner triangles on top and timing marks along the bottom only; ``LG-D-0301`` /
  ``LG-D-0302`` differ only in the precinct line). Contest headers, targets or the party line
  are printed in a second ink (blue or red), which a gray scan renders lighter.
* Paper: white or coloured stock (pink, green, blue, salmon), scanned in colour, in gray, or
  bilevel, where a fixed threshold near the coloured paper's level turns it into speckle.
* Voters: blue or black ballpoint, red pen, felt tip, pencil; fills, partial fills, checks,
  X's, a single slash through the target (all ``vote``); yellow highlighter over a target,
  an erased pencil mark whose gray residue is clearly visible (both ``ambiguous``: a person
  must look; never on bilevel scans, where they would vanish or turn solid); a hesitation dot
  inside a target (0.026-0.044 in) and an erasure that left only a faint trace (``no_vote``,
  as contract §7 reads a dot or a faint trace); write-in names
  with the target filled (``vote``) or empty (``ambiguous``); overvotes, undervotes, blanks.
* Scanner: 150, 200, 240 or 300 dpi with the tag right, wrong or missing; skew up to 3 degrees
  (the whole sheet in the image, on a white or dark backing), 180-degree feeds, scale and
  stretch up to 2 % differing in x and y, a lid shadow along one edge, a lamp gradient, JPEG at
  quality 35-60 for many colour and gray scans, a 1-3 px dark or light streak down the whole
  image in a few percent of cards (a crossed empty target stays ``no_vote``; the card's
  entry lists the crossed options under ``streak_options``), hole punches or a staple in a
  margin away from targets and timing marks; bilevel TIFF G4, gray or RGB PNG, gray or RGB JPEG.

Layouts are what a board writes: the blank printed on white paper "scanned" cleanly at 200 dpi
as ``reference`` (gray PNG; bilevel TIFF G4 for the Hart-like frame), target boxes in inches
(the printed oval or box), write-in areas. Seeded: the same seed gives the same bytes.

    python -m tests.fourth_vendor OUT --cards 200 --seed 41 --jobs 2   # a deck for bench_accuracy --deck OUT
"""

from __future__ import annotations

import io
import json
import math
import random
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from statistics import NormalDist
from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from tests.foreign_renderer import deck_cli, write_deck

MASTER = 300  # dpi of the printed, marked sheet
SS = 2  # supersampling of the print
REF_DPI = 200
PROFILE = "fourth-vendor"
BLACK_INK = (20, 20, 24)
SPOTS = {"blue": (30, 72, 172), "red": (212, 38, 48)}
PAPERS = {"white": (248, 247, 243), "pink": (250, 206, 216), "green": (206, 236, 199), "blue": (198, 219, 243),
          "salmon": (251, 188, 160)}
STOCK = {"D": {"white": 30, "green": 25, "blue": 30, "salmon": 15}, "R": {"white": 30, "pink": 40, "salmon": 30}}

FONT_DIRS = ("/usr/share/fonts/opentype/urw-base35", "/usr/share/fonts/truetype/liberation", "/usr/share/fonts/truetype/dejavu")
FONTS = {
    "sans": ("NimbusSans-Regular.otf", "LiberationSans-Regular.ttf", "DejaVuSans.ttf"),
    "sans_b": ("NimbusSans-Bold.otf", "LiberationSans-Bold.ttf", "DejaVuSans-Bold.ttf"),
    "sans_i": ("NimbusSans-Italic.otf", "LiberationSans-Italic.ttf", "DejaVuSans-Oblique.ttf"),
    "narrow": ("NimbusSansNarrow-Regular.otf", "LiberationSansNarrow-Regular.ttf", "DejaVuSansCondensed.ttf"),
    "narrow_b": ("NimbusSansNarrow-Bold.otf", "LiberationSansNarrow-Bold.ttf", "DejaVuSansCondensed-Bold.ttf"),
    "narrow_i": ("NimbusSansNarrow-Oblique.otf", "LiberationSansNarrow-Italic.ttf", "DejaVuSansCondensed-Oblique.ttf"),
    "gothic": ("URWGothic-Book.otf", "LiberationSans-Regular.ttf", "DejaVuSans.ttf"),
    "gothic_b": ("URWGothic-Demi.otf", "LiberationSans-Bold.ttf", "DejaVuSans-Bold.ttf"),
    "hand": ("Z003-MediumItalic.otf", "DejaVuSerif-Italic.ttf"),
    "hand2": ("URWBookman-LightItalic.otf", "LiberationSerif-Italic.ttf", "DejaVuSerif-Italic.ttf"),
}


@lru_cache(maxsize=256)
def _font(key: str, px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for name in FONTS[key]:
        for folder in FONT_DIRS:
            if Path(folder, name).is_file():
                return ImageFont.truetype(str(Path(folder, name)), px)
    return ImageFont.load_default(size=px)


def _tw(s: str, key: str, size: float) -> float:
    """Width in inches of ``s`` set in ``key`` at an em of ``size`` inches."""
    return float(_font(key, 400).getlength(s)) * size / 400


def _wrap(s: str, key: str, size: float, width: float) -> list[str]:
    lines: list[str] = []
    cur = ""
    for word in s.split():
        t = f"{cur} {word}".strip()
        if cur and _tw(t, key, size) > width:
            lines.append(cur)
            cur = word
        else:
            cur = t
    return lines + ([cur] if cur else [])


def _r(v: float) -> float:
    return round(float(v), 4)


# --------------------------------------------------------------------------------------
# The election


@dataclass(frozen=True)
class Cand:
    id: str
    name: str
    home: str = ""
    write_in: bool = False


@dataclass(frozen=True)
class Race:
    id: str
    title: str
    vote_for: int
    cands: tuple[Cand, ...]
    kind: str = "candidate"
    text: str = ""


def _slate(prefix: str, names: list[str], homes: list[str] | None = None, write_ins: int = 0) -> tuple[Cand, ...]:
    out = [Cand(f"{prefix}-{i + 1}", n, homes[i] if homes else "") for i, n in enumerate(names)]
    out += [Cand(f"{prefix}-wi" if write_ins == 1 else f"{prefix}-wi{j + 1}", "Write-in", write_in=True) for j in range(write_ins)]
    return tuple(out)


TOWNS = ["Alden Mills", "Brisco", "Cold Spring", "Dunmore", "Eastgate", "Fallow Creek", "Greer"]
RACES: tuple[Race, ...] = (
    Race("d-pres", "President of the United States", 1, _slate("dp", ["Eleanor Vasquez-Hart", "Raymond Oduya", "Lillian Marsh", "Theodore Kaplan"])),
    Race("d-sen", "United States Senator", 1, _slate("ds", ["Margarethe Osei", "Benedict Alvarado", "Shirin Farahani"], write_ins=1)),
    Race("d-rep6", "Representative in Congress, District 6", 1, _slate("d6", ["Cornelius Abernathy", "Ines Solberg"], write_ins=1)),
    Race("d-rep8", "Representative in Congress, District 8", 1, _slate("d8", ["Dorothea Kwan", "Lamar Pettiford", "Anneliese Brandt"], write_ins=1)),
    Race("d-conv", "Delegates to the Democratic National Convention, District 6", 6, _slate("dv", [
        "Agnes Thornbury", "Caleb Nwosu", "Delphine Arceneaux", "Emmett Fairclough", "Fatima Idrissi", "Gideon Halvorsen",
        "Harriet Mbeki", "Ignatius Pope", "Juniper Castellanos", "Kofi Mensah-Bonsu", "Leona Whitcombe", "Mortimer Diaz"])),
    Race("d-cc", "Democratic State Central Committee", 5, _slate("dc", [
        "Nadia Brightwater", "Osgood Pelletier", "Philippa Nakashima", "Quentin Achebe", "Rosalie Dunbar", "Silas Okwuosa",
        "Tamsin Greaves", "Ulrich Fonseca", "Vivienne Larkspur"], [TOWNS[i % 7] for i in range(9)], write_ins=1)),
    Race("r-pres", "President of the United States", 1, _slate("rp", ["Harlan Whitaker", "Celeste Dumont", "Roderick Vance"])),
    Race("r-sen", "United States Senator", 1, _slate("rs", ["Prudence Ashgrove", "Victor Lindqvist", "Oscar Beaumont", "Winifred Tate"], write_ins=1)),
    Race("r-rep6", "Representative in Congress, District 6", 1, _slate("r6", ["Barnaby Holt", "Genevieve Ruiz"], write_ins=1)),
    Race("r-conv", "Delegates to the Republican National Convention, District 6", 4, _slate("rv", [
        "Alastair Penrose", "Bettina Kowalczyk", "Cyrus Ambrose", "Dagny Halstead", "Everett Quayle", "Felicity Orr",
        "Gordon Yamamoto", "Hester Blackwood"])),
    Race("r-cc", "Republican Central Committee", 6, _slate("rc", [
        "Imogen Castellane", "Jasper Thorne", "Katarina Voss", "Leopold Ainsworth", "Marisol Ferreira", "Nathaniel Crewe",
        "Ottilie Sandoval", "Percival Marsh", "Rowena Caldwell", "Stellan Okafor"], [TOWNS[(i + 3) % 7] for i in range(10)])),
    Race("judge", "Judge of the Circuit Court, Circuit 4", 2, _slate("jg", ["Miriam Ashby-Cole", "Reginald Obi", "Patricia Lindgren", "Samuel Etxeberria"])),
    Race("boe", "Board of Education, At Large", 2, _slate("be", ["Yolanda Pierce", "Augustin Ferraro", "Beatrix Holm", "Desmond Achterberg", "Lucinda Moreau"])),
    Race("q1", "Question 1: Charter Amendment", 1, (Cand("q1-for", "For the Charter Amendment"), Cand("q1-against", "Against the Charter Amendment")),
         "question", "Amends the County Charter to require the County Executive to submit a balanced six-year capital budget every year."),
    Race("q2", "Question 2: Public Safety Bond", 1, (Cand("q2-for", "For the Bond"), Cand("q2-against", "Against the Bond")),
         "question", "Authorizes the County to borrow up to $38,000,000 to build a fire and rescue station in Cold Spring and renovate two others."),
)
RACE = {r.id: r for r in RACES}
CAND = {c.id: c for r in RACES for c in r.cands}
PRECINCTS = {"01-001": "Alden Mills", "01-002": "Alden Mills East", "02-001": "Brisco Heights", "02-002": "Brisco Landing",
             "03-001": "Cold Spring", "03-002": "Cold Spring North"}
PARTY = {"D": "Democratic", "R": "Republican"}


@dataclass(frozen=True)
class Style:
    frame: str  # "ic" | "hart" | "long"
    size: tuple[float, float]
    precinct: str
    party: str
    races: tuple[str, ...]
    spot: str  # the second ink
    spot_targets: bool = False  # targets printed in the second ink
    corners: str = "square"  # IC frame: "square" or "L"


_D_IC = ("d-pres", "d-sen", "d-rep6", "judge", "d-cc", "boe")
_D_HT = ("d-pres", "d-sen", "d-rep6", "boe", "d-conv")
_D_LG = ("d-pres", "d-sen", "d-rep8", "judge", "d-conv", "d-cc", "boe", "q1", "q2")
STYLES: dict[str, Style] = {
    "IC-D-0101": Style("ic", (8.5, 11.0), "01-001", "D", _D_IC, "blue"),
    "IC-D-0102": Style("ic", (8.5, 11.0), "01-002", "D", _D_IC, "blue"),
    "IC-R-0101": Style("ic", (8.5, 14.0), "01-001", "R", ("r-pres", "r-sen", "r-rep6", "judge", "r-cc", "boe", "q1", "q2"), "red", True, "L"),
    "HT-D-0201": Style("hart", (8.5, 11.0), "02-001", "D", _D_HT, "blue"),
    "HT-D-0202": Style("hart", (8.5, 11.0), "02-002", "D", tuple("d-rep8" if r == "d-rep6" else r for r in _D_HT), "blue"),
    "HT-R-0201": Style("hart", (8.5, 11.0), "02-001", "R", ("r-pres", "r-sen", "r-rep6", "boe", "r-conv"), "red", True),
    "LG-D-0301": Style("long", (8.5, 14.0), "03-001", "D", _D_LG, "blue"),
    "LG-D-0302": Style("long", (8.5, 14.0), "03-002", "D", _D_LG, "blue"),
    "LG-R-0301": Style("long", (8.5, 14.0), "03-001", "R", ("r-pres", "r-sen", "r-rep6", "judge", "r-cc", "r-conv", "boe", "q1", "q2"), "red", True),
}
STYLE_WEIGHTS = {"IC-D-0101": 13, "IC-D-0102": 11, "IC-R-0101": 12, "HT-D-0201": 11, "HT-D-0202": 10, "HT-R-0201": 10,
                 "LG-D-0301": 12, "LG-D-0302": 10, "LG-R-0301": 11}


# --------------------------------------------------------------------------------------
# The printed page: drawing operations in inches, painted with Pillow


@dataclass
class Page:
    sid: str
    size: tuple[float, float]
    ops: list[tuple[Any, ...]] = field(default_factory=list)
    targets: list[dict[str, Any]] = field(default_factory=list)
    shapes: dict[str, tuple[str, float, float, float, float]] = field(default_factory=dict)  # option -> kind, cx, cy, w, h
    names: dict[str, tuple[float, float, float]] = field(default_factory=dict)  # option -> x0, x1, cy of its printed name
    holes: list[tuple[float, float]] = field(default_factory=list)  # where a punch goes (centres, 0.25 in holes)
    staple: tuple[float, float, float] = (0.0, 0.0, 0.0)  # x, y, angle in degrees
    continued: int = 0

    def rect(self, x: float, y: float, w: float, h: float, layer: str = "k", amt: float = 1.0) -> None:
        self.ops.append(("rect", layer, x, y, w, h, amt))

    def outline(self, x: float, y: float, w: float, h: float, lw: float, layer: str = "k") -> None:
        self.ops.append(("frame", layer, x, y, w, h, lw))

    def line(self, x0: float, y0: float, x1: float, y1: float, lw: float, layer: str = "k", amt: float = 1.0) -> None:
        self.ops.append(("line", layer, x0, y0, x1, y1, lw, amt))

    def poly(self, pts: list[tuple[float, float]], layer: str = "k", amt: float = 1.0) -> None:
        self.ops.append(("poly", layer, pts, amt))

    def disc(self, x: float, y: float, r: float, layer: str = "k") -> None:
        self.ops.append(("disc", layer, x - r, y - r, 2 * r, 2 * r))

    def text(self, x: float, y: float, s: str, key: str = "sans", size: float = 0.12, layer: str = "k", anchor: str = "ls",
             amt: float = 1.0) -> float:
        self.ops.append(("text", layer, x, y, s, key, size, anchor, amt))
        return _tw(s, key, size)

    def target(self, race: Race, cand: Cand, kind: str, x: float, y: float, w: float, h: float, lw: float, layer: str,
               area: list[float] | None = None) -> None:
        self.ops.append(("oval" if kind == "oval" else "frame", layer, x, y, w, h, lw))
        t: dict[str, Any] = {"contest": race.id, "option": cand.id, "box": [_r(x), _r(y), _r(w), _r(h)]}
        if area is not None:
            t["write_in_area"] = [_r(v) for v in area]
        self.targets.append(t)
        self.shapes[cand.id] = (kind, x + w / 2, y + h / 2, w, h)


def _vote_for(race: Race, style: str) -> str:
    if race.vote_for == 1:
        return "Vote for One" if style == "ic" else "Vote for not more than 1" if style == "hart" else "Vote for 1"
    if style == "hart":
        return f"Vote for not more than {race.vote_for}"
    return f"Vote for up to {race.vote_for}"


class _IcKit:
    """ImageCast-like contests: tinted header band, ovals left of the names, a ruled box round each contest."""

    tail = 0.14

    def __init__(self, st: Style) -> None:
        self.layer = "spot" if st.spot_targets else "k"

    def head(self, pg: Page, race: Race, x: float, y: float, w: float, cont: bool, draw: bool) -> float:
        lines = _wrap(race.title, "sans_b", 0.125, w - 0.2)
        band = 0.1 + 0.16 * len(lines) + 0.15
        text = _wrap(race.text, "sans", 0.105, w - 0.2) if race.text else []
        if draw:
            pg.rect(x, y, w, band, "spot", 0.2)
            for i, s in enumerate(lines):
                pg.text(x + 0.1, y + 0.22 + 0.16 * i, s, "sans_b", 0.125, "spot")
            pg.text(x + 0.1, y + band - 0.06, _vote_for(race, "ic"), "sans_i", 0.095)
            for i, s in enumerate(text):
                pg.text(x + 0.1, y + band + 0.16 + 0.145 * i, s, "sans", 0.105)
        return band + (0.08 + 0.145 * len(text) if text else 0.0)

    def row(self, pg: Page, race: Race, cand: Cand, x: float, y: float, w: float, draw: bool) -> float:
        h = 0.42 if cand.home else 0.37 if cand.write_in else 0.3
        if draw:
            cy = y + 0.16
            area = [x + 0.42, cy - 0.2, w - 0.55, 0.29] if cand.write_in else None
            pg.target(race, cand, "oval", x + 0.14, cy - 0.06, 0.2, 0.12, 0.014, self.layer, area)
            if cand.write_in:
                pg.line(x + 0.45, cy + 0.09, x + w - 0.15, cy + 0.09, 0.008)
                pg.text(x + 0.45, cy + 0.19, "write-in", "sans_i", 0.075, amt=0.8)
            else:
                tw = pg.text(x + 0.45, cy, cand.name, "sans", 0.12, anchor="lm")
                pg.names[cand.id] = (x + 0.45, x + 0.45 + tw, cy)
                if cand.home:
                    pg.text(x + 0.45, cy + 0.16, cand.home, "sans", 0.088, anchor="lm", amt=0.85)
            pg.line(x + 0.06, y + h, x + w - 0.06, y + h, 0.006, amt=0.5)
        return h

    def close(self, pg: Page, x: float, y0: float, y1: float, w: float) -> float:
        pg.outline(x, y0, w, y1 - y0 + 0.04, 0.012)
        return y1 + 0.04 + self.tail

    def more(self, pg: Page, x: float, y: float, w: float) -> None:
        raise ValueError(f"{pg.sid}: the ImageCast-like frame does not split contests")


class _HartKit(_IcKit):
    """Hart-like contests: a thick rule, the title in the second ink, names with dotted leaders to a box on the right."""

    tail = 0.12

    def head(self, pg: Page, race: Race, x: float, y: float, w: float, cont: bool, draw: bool) -> float:
        lines = _wrap(race.title, "gothic_b", 0.13, w - 0.1)
        text = _wrap(race.text, "sans", 0.1, w - 0.1) if race.text else []
        base = 0.12 + 0.17 * len(lines)
        if draw:
            pg.rect(x, y, w, 0.035)
            for i, s in enumerate(lines):
                pg.text(x + 0.04, y + 0.22 + 0.17 * i, s, "gothic_b", 0.13, "spot")
            pg.text(x + 0.04, y + base + 0.1, _vote_for(race, "hart"), "sans", 0.09)
            for i, s in enumerate(text):
                pg.text(x + 0.04, y + base + 0.28 + 0.14 * i, s, "sans", 0.1)
        return base + 0.17 + (0.14 * len(text) + 0.06 if text else 0.0)

    def row(self, pg: Page, race: Race, cand: Cand, x: float, y: float, w: float, draw: bool) -> float:
        h = 0.38 if cand.home or cand.write_in else 0.3
        if draw:
            cy = y + 0.15
            bx = x + w - 0.42
            area = None
            if cand.write_in:
                area = [x + 0.05, cy - 0.19, bx - 0.17 - x, 0.29]
                pg.line(x + 0.08, cy + 0.1, bx - 0.12, cy + 0.1, 0.008)
                pg.text(x + 0.08, cy + 0.2, "Write-in", "sans_i", 0.075, amt=0.8)
            else:
                tw = pg.text(x + 0.06, cy, cand.name, "gothic", 0.12, anchor="lm")
                pg.names[cand.id] = (x + 0.06, x + 0.06 + tw, cy)
                if cand.home:
                    pg.text(x + 0.06, cy + 0.15, cand.home, "sans", 0.085, anchor="lm", amt=0.85)
                dx = x + 0.06 + tw + 0.08
                while dx < bx - 0.1:
                    pg.disc(dx, cy + 0.035, 0.007)
                    dx += 0.055
            pg.target(race, cand, "box", bx, cy - 0.07, 0.3, 0.14, 0.016, self.layer, area)
        return h

    def close(self, pg: Page, x: float, y0: float, y1: float, w: float) -> float:
        return y1 + self.tail


class _LongKit(_IcKit):
    """Three-column legal contests: the title in the second ink over a rule, ovals left, run-on into the next column."""

    tail = 0.16

    def head(self, pg: Page, race: Race, x: float, y: float, w: float, cont: bool, draw: bool) -> float:
        lines = _wrap(race.title + (" (continued)" if cont else ""), "narrow_b", 0.13, w - 0.08)
        text = _wrap(race.text, "narrow", 0.102, w - 0.1) if race.text and not cont else []
        rule = y + 0.06 + 0.165 * len(lines)
        if draw:
            for i, s in enumerate(lines):
                pg.text(x + 0.04, y + 0.17 + 0.165 * i, s, "narrow_b", 0.13, "spot")
            pg.line(x + 0.02, rule, x + w - 0.02, rule, 0.012, "spot")
            pg.text(x + 0.04, rule + 0.15, _vote_for(race, "long"), "narrow_i", 0.095)
            for i, s in enumerate(text):
                pg.text(x + 0.04, rule + 0.31 + 0.14 * i, s, "narrow", 0.102)
        return rule - y + 0.2 + (0.14 * len(text) + 0.05 if text else 0.0)

    def row(self, pg: Page, race: Race, cand: Cand, x: float, y: float, w: float, draw: bool) -> float:
        h = 0.37 if cand.home else 0.34 if cand.write_in else 0.29
        if draw:
            cy = y + 0.145
            area = [x + 0.38, cy - 0.17, w - 0.48, 0.26] if cand.write_in else None
            pg.target(race, cand, "oval", x + 0.06, cy - 0.065, 0.24, 0.13, 0.012, self.layer, area)
            if cand.write_in:
                pg.line(x + 0.4, cy + 0.09, x + w - 0.08, cy + 0.09, 0.008)
                pg.text(x + 0.4, cy + 0.18, "write-in", "narrow_i", 0.075, amt=0.8)
            else:
                tw = pg.text(x + 0.4, cy, cand.name, "narrow", 0.118, anchor="lm")
                pg.names[cand.id] = (x + 0.4, x + 0.4 + tw, cy)
                if cand.home:
                    pg.text(x + 0.4, cy + 0.14, cand.home, "narrow", 0.085, anchor="lm", amt=0.85)
        return h

    def close(self, pg: Page, x: float, y0: float, y1: float, w: float) -> float:
        pg.line(x, y1 + 0.06, x + w, y1 + 0.06, 0.01)
        return y1 + self.tail

    def more(self, pg: Page, x: float, y: float, w: float) -> None:
        pg.text(x + w - 0.05, y + 0.14, "Continued in next column  >", "narrow_i", 0.09, anchor="rs")


MORE = 0.24  # room for a "continued" note at a column's foot


def _flow(pg: Page, races: tuple[str, ...], cols: list[tuple[float, float]], top: float, bottom: float, kit: _IcKit, split: bool) -> None:
    """Set the contests down the columns; ``split``: a long contest runs on into the next column."""
    ci, y = 0, top
    for rid in races:
        race = RACE[rid]
        x, w = cols[ci]
        rows = [kit.row(pg, race, c, x, 0.0, w, False) for c in race.cands]
        head = kit.head(pg, race, x, 0.0, w, False, False)
        part = split and y + head + sum(rows[:2]) + MORE <= bottom
        if y + head + sum(rows) + 0.05 > bottom and not part:
            ci, y = ci + 1, top
            if ci >= len(cols):
                raise ValueError(f"{pg.sid}: {rid} does not fit")
            x, w = cols[ci]
        y0 = y
        y += kit.head(pg, race, x, y, w, False, True)
        for j, (c, rh) in enumerate(zip(race.cands, rows)):
            last = j == len(rows) - 1
            if y + rh + (0.05 if last else MORE if split else 0.05) > bottom and j > 0:
                if not split:
                    raise ValueError(f"{pg.sid}: {rid} does not fit")
                kit.more(pg, x, y, w)
                kit.close(pg, x, y0, y + MORE - 0.06, w)
                ci, y = ci + 1, top
                x, w = cols[ci]
                y0 = y
                y += kit.head(pg, race, x, y, w, True, True)
                pg.continued += 1
            y += kit.row(pg, race, c, x, y, w, True)
        y = kit.close(pg, x, y0, y, w)


def _cells(pg: Page, x: float, y: float, n: int, cell: float, seed: str) -> None:
    """A 2-D-code-like block: solid left and bottom edges, alternating top and right, random inside."""
    r = random.Random(seed)
    for i in range(n):
        for j in range(n):
            inner = 0 < i < n - 1 and 0 < j < n - 1
            if j == 0 or i == n - 1 or (i == 0 and j % 2 == 0) or (j == n - 1 and i % 2 == 1) or (inner and r.random() < 0.5):
                pg.rect(x + j * cell, y + i * cell, cell, cell)


def _stripe_bits(code: str) -> str:
    """A 1-D barcode-like pattern of ``code``: a start, each bit a wide or narrow bar, a stop."""
    return "11010" + "".join(("1110" if (ord(ch) >> b) & 1 else "1000") for ch in code for b in range(7)) + "10110101"


def _stripes(pg: Page, bits: str, x: float, y: float, h: float, module: float) -> None:
    i = 0
    while i < len(bits):
        if bits[i] == "1":
            j = bits.find("0", i)
            j = len(bits) if j < 0 else j
            pg.rect(x + i * module, y, (j - i) * module, h)
            i = j
        else:
            i += 1


def _ic_page(sid: str, st: Style) -> Page:
    w, h = st.size
    pg = Page(sid, st.size)
    if st.corners == "square":
        for x, y in ((0.3, 0.3), (w - 0.55, 0.3), (0.3, h - 0.55), (w - 0.55, h - 0.55)):
            pg.rect(x, y, 0.25, 0.25)
    else:
        for right in (False, True):
            for low in (False, True):
                x = w - 0.75 if right else 0.3
                y = h - 0.75 if low else 0.3
                pg.rect(x, h - 0.4 if low else 0.3, 0.45, 0.1)
                pg.rect(w - 0.4 if right else 0.3, y, 0.1, 0.45)
    x = 0.9
    while x + 0.08 <= w - 0.9:
        pg.rect(x, 0.32, 0.08, 0.2)
        x += 0.25
    _cells(pg, 0.65, h - 1.25, 16, 0.04, f"ic-block:{st.party}:{st.size[1]}")
    cx = w / 2
    pg.text(cx, 0.88, "OFFICIAL PRIMARY ELECTION BALLOT", "sans_b", 0.2, anchor="ms")
    pg.text(cx, 1.14, f"{PARTY[st.party].upper()} PARTY", "sans_b", 0.16, "spot", anchor="ms")
    pg.text(cx, 1.34, "Kestrel County, Maryland  -  Tuesday, May 14, 2030", "sans", 0.115, anchor="ms")
    pg.text(cx, 1.53, f"Precinct {st.precinct}  {PRECINCTS[st.precinct]}", "sans_b", 0.115, anchor="ms")
    pg.outline(0.65, 1.62, w - 1.3, 0.36, 0.01)
    tw = pg.text(0.75, 1.8, "INSTRUCTIONS: Use a blue or black pen. Completely fill in the oval to the LEFT of your choice, like this:",
                 "sans", 0.092, anchor="lm")
    pg.ops.append(("disc", "spot" if st.spot_targets else "k", 0.82 + tw, 1.75, 0.18, 0.1))
    colw = (w - 0.65 - 0.6 - 0.15) / 2
    _flow(pg, st.races, [(0.65, colw), (0.8 + colw, colw)], 2.15, h - 1.4, _IcKit(st), split=False)
    pg.holes = [(0.28, y) for y in ((h / 2 - 2.125, h / 2 + 2.125) if h < 12 else (h / 2 - 4.25, h / 2, h / 2 + 4.25))]
    pg.staple = (0.27, 0.98, 90.0)
    return pg


def _hart_page(sid: str, st: Style) -> Page:
    w, h = st.size
    pg = Page(sid, st.size)
    y = 0.6
    while y + 0.12 <= h - 0.55:
        pg.rect(0.15, y, 0.3, 0.12)
        pg.rect(w - 0.45, y, 0.3, 0.12)
        y += 0.3
    pg.outline(0.75, 0.6, w - 1.5, 1.2, 0.03)
    cx = w / 2
    pg.text(cx, 0.9, "OFFICIAL BALLOT", "gothic_b", 0.2, anchor="ms")
    pg.text(cx, 1.12, f"Primary Election  -  {PARTY[st.party]} Party", "gothic_b", 0.14, "spot", anchor="ms")
    pg.text(cx, 1.3, "Brisco County, Maryland   May 14, 2030", "gothic", 0.11, anchor="ms")
    pg.text(0.9, 1.52, "To vote, fill in the box to the RIGHT of your choice completely. Use the pen provided or a dark pen.",
            "sans", 0.09, anchor="lm")
    pg.text(0.9, 1.68, "If you make a mistake, ask for a new ballot. Do not cross out or erase.", "sans", 0.09, anchor="lm")
    colw = (w - 1.5 - 0.2) / 2
    _flow(pg, st.races, [(0.75, colw), (0.95 + colw, colw)], 2.0, h - 1.05, _HartKit(st), split=False)
    code = sid.replace("-", "")
    bits = _stripe_bits(code)
    _stripes(pg, bits, (w - len(bits) * 0.016) / 2, h - 0.8, 0.3, 0.016)
    pg.text(cx, h - 0.38, f"* {code} *", "sans", 0.08, anchor="ms")
    pg.holes = [(cx - 1.375, 0.28), (cx + 1.375, 0.28)]
    pg.staple = (1.35, 0.3, 4.0)
    return pg


def _long_page(sid: str, st: Style) -> Page:
    w, h = st.size
    pg = Page(sid, st.size)
    pg.poly([(0.3, 0.3), (0.75, 0.3), (0.3, 0.75)])
    pg.poly([(w - 0.3, 0.3), (w - 0.75, 0.3), (w - 0.3, 0.75)])
    x = 0.6
    while x + 0.1 <= w - 0.6:
        pg.rect(x, h - 0.55, 0.1, 0.2)
        x += 0.25
    pg.rect(0.6, 0.9, w - 1.05, 0.34)
    pg.text(w / 2, 1.13, "OFFICIAL BALLOT  -  PRIMARY ELECTION", "sans_b", 0.17, anchor="ms", amt=0.0)
    pg.text(w / 2, 1.5, f"{PARTY[st.party]} Party", "sans_b", 0.15, "spot", anchor="ms")
    pg.text(w / 2, 1.7, "Cold Spring County, Maryland  -  May 14, 2030", "sans", 0.11, anchor="ms")
    pg.text(w / 2, 1.88, f"Precinct {st.precinct}  {PRECINCTS[st.precinct]}", "sans_b", 0.11, anchor="ms")
    pg.text(0.65, 2.08, "Fill in the oval completely to the left of each choice. Contests may continue in the next column.", "narrow", 0.1,
            anchor="lm")
    colw, gap = 2.45, 0.1
    cols = [(0.6 + i * (colw + gap), colw) for i in range(3)]
    for x, _w in cols[1:]:
        pg.line(x - gap / 2, 2.25, x - gap / 2, h - 0.9, 0.008)
    _flow(pg, st.races, cols, 2.3, h - 0.95, _LongKit(st), split=True)
    pg.holes = [(0.28, h / 2 - 4.25), (0.28, h / 2), (0.28, h / 2 + 4.25)]
    pg.staple = (0.27, 1.6, 92.0)
    return pg


@lru_cache(maxsize=16)
def page_plan(sid: str) -> Page:
    st = STYLES[sid]
    return {"ic": _ic_page, "hart": _hart_page, "long": _long_page}[st.frame](sid, st)


@lru_cache(maxsize=9)
def _printed(sid: str) -> np.ndarray:
    """The blank sheet printed on white paper: RGB uint8 at MASTER dpi (read-only)."""
    pg = page_plan(sid)
    k = MASTER * SS
    size = (round(pg.size[0] * k), round(pg.size[1] * k))
    layers = {n: Image.new("L", size, 0) for n in ("k", "spot")}
    pens = {n: ImageDraw.Draw(im) for n, im in layers.items()}
    for op in pg.ops:
        kind, layer, *a = op
        d = pens[layer]
        if kind == "rect":
            x, y, w, h, amt = a
            d.rectangle([x * k, y * k, (x + w) * k - 1, (y + h) * k - 1], fill=round(255 * amt))
        elif kind in ("frame", "oval"):
            x, y, w, h, lw = a
            box = [x * k, y * k, (x + w) * k, (y + h) * k]
            (d.rectangle if kind == "frame" else d.ellipse)(box, outline=255, width=max(1, round(lw * k)))
        elif kind == "disc":
            x, y, w, h = a
            d.ellipse([x * k, y * k, (x + w) * k, (y + h) * k], fill=255)
        elif kind == "line":
            x0, y0, x1, y1, lw, amt = a
            d.line([(x0 * k, y0 * k), (x1 * k, y1 * k)], fill=round(255 * amt), width=max(1, round(lw * k)))
        elif kind == "poly":
            pts, amt = a
            d.polygon([(px * k, py * k) for px, py in pts], fill=round(255 * amt))
        else:
            x, y, s, key, size_in, anchor, amt = a
            d.text((x * k, y * k), s, font=_font(key, round(size_in * k)), fill=round(255 * amt), anchor=anchor)
    black = np.asarray(layers["k"].reduce(SS), np.float32) / 255.0
    spot = np.asarray(layers["spot"].reduce(SS), np.float32) / 255.0
    colour = SPOTS[STYLES[sid].spot]
    rgb = np.empty(black.shape + (3,), np.float32)
    for ch in range(3):
        rgb[..., ch] = 255.0 * (1 - black * (1 - BLACK_INK[ch] / 255)) * (1 - spot * (1 - colour[ch] / 255))
    out = np.clip(rgb + 0.5, 0, 255).astype(np.uint8)
    out.setflags(write=False)
    return out


# --------------------------------------------------------------------------------------
# The definition a board writes


def _reference_name(sid: str) -> str:
    return f"{sid}.tif" if STYLES[sid].frame == "hart" else f"{sid}.png"


def write_election(out: Path) -> Path:
    """``election.json``, a layout per style, and each blank "scanned" at 200 dpi as its reference."""
    out = Path(out)
    (out / "layouts").mkdir(parents=True, exist_ok=True)
    styles = []
    for sid, st in STYLES.items():
        pg = page_plan(sid)
        w, h = pg.size
        gray = cv2.cvtColor(_printed(sid), cv2.COLOR_RGB2GRAY)
        blank = cv2.resize(gray, (round(w * REF_DPI), round(h * REF_DPI)), interpolation=cv2.INTER_AREA)
        ref = _reference_name(sid)
        if st.frame == "hart":
            Image.fromarray(np.where(blank >= 150, 255, 0).astype(np.uint8)).convert("1", dither=Image.Dither.NONE).save(
                out / "layouts" / ref, "TIFF", compression="group4", dpi=(REF_DPI, REF_DPI))
        else:
            Image.fromarray(blank).save(out / "layouts" / ref, "PNG", dpi=(REF_DPI, REF_DPI))
        page = {"page": 1, "size": list(pg.size), "reference": ref, "reference_dpi": REF_DPI, "targets": pg.targets}
        (out / "layouts" / f"{sid}.json").write_text(json.dumps({"style": sid, "pages": [page]}, indent=1) + "\n")
        styles.append({"id": sid, "precincts": [st.precinct], "contests": list(st.races), "layout": f"layouts/{sid}.json"})
    contests = [{"id": r.id, "title": r.title, "kind": r.kind, "vote_for": r.vote_for,
                 "options": [{"id": c.id, "name": c.name, **({"write_in": True} if c.write_in else {})} for c in r.cands]} for r in RACES]
    election = {"id": "kestrel-30p", "name": "Kestrel County Primary Election 2030", "date": "2030-05-14", "jurisdiction": "MD",
                "precincts": [{"id": p, "name": n, "county": "Kestrel"} for p, n in PRECINCTS.items()],
                "contests": contests, "ballot_styles": styles}
    (out / "election.json").write_text(json.dumps(election, indent=1) + "\n")
    return out / "election.json"


# --------------------------------------------------------------------------------------
# The voter's hand: ink alpha in a local window at MASTER dpi, multiplied into the sheet

INKS = {"ballpoint_black": (36, 36, 46), "ballpoint_blue": (34, 62, 168), "red_pen": (196, 36, 44), "felt_black": (14, 14, 18),
        "felt_blue": (20, 32, 118), "graphite": (72, 72, 78)}
HIGHLIGHTER = (252, 236, 62)
VOTER_INKS = {"ballpoint_black": 30, "ballpoint_blue": 27, "red_pen": 9, "felt_black": 9, "felt_blue": 5, "graphite": 20}
KINDS = {"fill": 46, "partial": 12, "check": 14, "x": 12, "slash": 9}
WRITE_INS = ["Marguerite Ellison", "Tobias Fenwick", "R. Okonkwo", "Daisy Lindqvist", "Jonah Pemberton", "Clara Estevez",
             "Walt Brennan", "Ana Sofia Reyes", "Bert Quimby", "Hollis Grant"]


class Window:
    """A window of the sheet around a target in which one mark's alpha (0..1) is drawn."""

    def __init__(self, cx: float, cy: float, rx: float, ry: float) -> None:
        self.x0, self.y0 = int((cx - rx) * MASTER), int((cy - ry) * MASTER)
        self.w, self.h = int(2 * rx * MASTER) + 2, int(2 * ry * MASTER) + 2
        self.a = np.zeros((self.h, self.w), np.float32)

    def px(self, pts: Any) -> np.ndarray:
        p = np.asarray(pts, np.float64).reshape(-1, 2) * MASTER - (self.x0, self.y0)
        return np.round(p * 16).astype(np.int32)

    def _merge(self, m: np.ndarray, value: float) -> None:
        self.a = np.maximum(self.a, m.astype(np.float32) * (value / 255.0))

    def stroke(self, pts: Any, width: float, value: float = 1.0) -> None:
        m = np.zeros((self.h, self.w), np.uint8)
        cv2.polylines(m, [self.px(pts)], False, 255, max(1, round(width * MASTER)), cv2.LINE_AA, 4)
        self._merge(m, value)

    def fill(self, pts: Any, value: float = 1.0) -> None:
        m = np.zeros((self.h, self.w), np.uint8)
        cv2.fillPoly(m, [self.px(pts)], 255, cv2.LINE_AA, 4)
        self._merge(m, value)

    def dot(self, x: float, y: float, r: float, value: float = 1.0) -> None:
        m = np.zeros((self.h, self.w), np.uint8)
        c = self.px([(x, y)])[0]
        cv2.circle(m, (int(c[0]), int(c[1])), max(16, round(r * MASTER * 16)), 255, -1, cv2.LINE_AA, 4)
        self._merge(m, value)

    def lay(self, sheet: np.ndarray, colour: tuple[int, int, int]) -> None:
        h, w = sheet.shape[:2]
        x0, y0, x1, y1 = max(0, self.x0), max(0, self.y0), min(w, self.x0 + self.w), min(h, self.y0 + self.h)
        a = self.a[y0 - self.y0:y1 - self.y0, x0 - self.x0:x1 - self.x0, None]
        region = sheet[y0:y1, x0:x1].astype(np.float32)
        f = 1.0 - a * (1.0 - np.asarray(colour, np.float32) / 255.0)
        sheet[y0:y1, x0:x1] = np.clip(region * f + 0.5, 0, 255).astype(np.uint8)


def _field(shape: tuple[int, int], rng: np.random.Generator, cell: float) -> np.ndarray:
    """Smooth noise of unit spread whose features are about ``cell`` pixels."""
    h, w = shape
    small = rng.standard_normal((max(2, int(h / cell) + 2), max(2, int(w / cell) + 2))).astype(np.float32)
    big = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    return big / (float(big.std()) + 1e-6)


def _outline_pts(kind: str, cx: float, cy: float, a: float, b: float, rng: np.random.Generator, grow: float) -> np.ndarray:
    """The edge of a hand-filled target: the oval or box grown by ``grow`` with a wobble."""
    t = np.linspace(0, 2 * np.pi, 72, endpoint=False)
    wob = 1.0 + grow + 0.035 * np.sin(2 * t + rng.uniform(0, 6.3)) + 0.025 * np.sin(3 * t + rng.uniform(0, 6.3))
    if kind == "oval":
        return np.stack([cx + a * wob * np.cos(t), cy + b * wob * np.sin(t)], 1)
    c, s = np.cos(t), np.sin(t)
    r = 1.0 / np.maximum(np.abs(c) / a, np.abs(s) / b)  # the rectangle's radius in each direction
    return np.stack([cx + r * wob * c, cy + r * wob * s], 1)


def _interior(win: Window, kind: str, cx: float, cy: float, a: float, b: float) -> np.ndarray:
    m = np.zeros((win.h, win.w), np.uint8)
    if kind == "oval":
        c = win.px([(cx, cy)])[0]
        cv2.ellipse(m, (int(c[0]), int(c[1])), (round((a - 0.015) * MASTER * 16), round((b - 0.015) * MASTER * 16)), 0, 0, 360, 255, -1, cv2.LINE_8, 4)
    else:
        cv2.fillPoly(m, [win.px([(cx - a + 0.015, cy - b + 0.015), (cx + a - 0.015, cy - b + 0.015), (cx + a - 0.015, cy + b - 0.015),
                                 (cx - a + 0.015, cy + b - 0.015)])], 255, cv2.LINE_8, 4)
    return m > 0


def _ink_texture(win: Window, ink: str, rng: np.random.Generator) -> None:
    """Ballpoint leaves lighter streaks between strokes, graphite a paper grain, felt tip bleeds."""
    if ink == "graphite":
        grain = np.clip(0.5 + 0.3 * _field(win.a.shape, rng, 1.3), 0, 1)
        win.a *= np.float32(0.8) + np.float32(0.2) * grain
    elif ink.startswith("felt"):
        bled = cv2.GaussianBlur(win.a, (0, 0), 0.009 * MASTER)
        win.a = np.clip(np.maximum(win.a, bled * 1.5), 0, 1) * np.float32(rng.uniform(0.93, 1.0))
    else:
        rows = np.arange(win.h, dtype=np.float32)[:, None]
        cols = np.arange(win.w, dtype=np.float32)[None, :]
        ang = rng.uniform(0, math.pi)
        phase = (rows * math.cos(ang) + cols * math.sin(ang)) / (0.02 * MASTER) * 2 * math.pi
        streak = 0.5 + 0.5 * np.sin(phase + rng.uniform(0, 6.3)) + 0.15 * _field(win.a.shape, rng, 4)
        win.a *= np.float32(0.86) + np.float32(0.14) * np.clip(streak, 0, 1).astype(np.float32)


def _vote_mark(sheet: np.ndarray, kind: str, shape: tuple[str, float, float, float, float], ink: str, rng: np.random.Generator) -> None:
    tkind, cx, cy, w, h = shape
    a, b = w / 2, h / 2
    win = Window(cx, cy, a + 0.35, b + 0.35)
    width = rng.uniform(0.019, 0.03) if not ink.startswith("felt") else rng.uniform(0.03, 0.045)
    if kind == "fill":
        win.fill(_outline_pts(tkind, cx + rng.uniform(-0.01, 0.01), cy + rng.uniform(-0.008, 0.008), a, b, rng, rng.uniform(0.02, 0.12)))
    elif kind == "partial":
        frac = rng.uniform(0.6, 0.85)
        left = rng.random() < 0.6
        xs = np.arange(0.0, 2 * a * frac, rng.uniform(0.018, 0.026))
        pts = []
        for i, dx in enumerate(xs):
            x = cx - a * 0.92 + dx if left else cx + a * 0.92 - dx
            ext = b * (math.sqrt(max(0.0, 1 - ((x - cx) / a) ** 2)) if tkind == "oval" else 1.0) * 0.95 + rng.uniform(-0.006, 0.012)
            pts.append((x, cy + (ext if i % 2 else -ext)))
        win.stroke(pts, rng.uniform(0.02, 0.028))
    elif kind == "check":
        p0 = (cx - a * rng.uniform(0.5, 0.75), cy - b * rng.uniform(0.0, 0.3))
        p1 = (cx - a * rng.uniform(0.05, 0.25), cy + b * rng.uniform(0.75, 1.05))
        p2 = (cx + a * rng.uniform(1.1, 1.6), cy - b * rng.uniform(1.6, 2.6))
        mid = ((p1[0] + p2[0]) / 2 + rng.uniform(-0.01, 0.01), (p1[1] + p2[1]) / 2 + rng.uniform(-0.01, 0.01))
        win.stroke([p0, p1, mid, p2], width)
    elif kind == "x":
        for sgn in (1, -1):
            half = math.hypot(a, b) * rng.uniform(0.95, 1.25)
            ang = math.atan2(b, a) * sgn + rng.uniform(-0.2, 0.2)
            ox, oy = rng.uniform(-0.15, 0.15) * a, rng.uniform(-0.15, 0.15) * b
            win.stroke([(cx + ox - half * math.cos(ang), cy + oy + half * math.sin(ang)),
                        (cx + ox + half * math.cos(ang), cy + oy - half * math.sin(ang))], width)
    else:  # a single slash through the whole target
        half = math.hypot(a, b) * rng.uniform(1.15, 1.6)
        ang = math.atan2(b, a) * rng.uniform(0.7, 1.4)
        win.stroke([(cx - half * math.cos(ang), cy + half * math.sin(ang)), (cx + half * math.cos(ang), cy - half * math.sin(ang))],
                   width)
    _ink_texture(win, ink, rng)
    win.lay(sheet, INKS[ink])


def _hesitation(sheet: np.ndarray, shape: tuple[str, float, float, float, float], ink: str, rng: np.random.Generator) -> float:
    _k, cx, cy, w, h = shape
    win = Window(cx, cy, w / 2 + 0.1, h / 2 + 0.1)
    r = rng.uniform(0.013, 0.022)
    win.dot(cx + rng.uniform(-0.25, 0.25) * w / 2, cy + rng.uniform(-0.25, 0.25) * h / 2, r, rng.uniform(0.9, 1.0))
    win.lay(sheet, INKS[ink])
    return 2 * r


def _highlight(sheet: np.ndarray, pg: Page, option: str, rng: np.random.Generator) -> None:
    """A swipe of yellow highlighter over the target, often on over the printed name."""
    _k, cx, cy, w, h = pg.shapes[option]
    name = pg.names.get(option)
    x0, x1 = cx - w / 2 - rng.uniform(0.03, 0.08), cx + w / 2 + rng.uniform(0.03, 0.08)
    if name is not None and rng.random() < 0.7:
        x0, x1 = min(x0, name[0] - 0.04), max(x1, name[1] + 0.04)
    win = Window((x0 + x1) / 2, cy, (x1 - x0) / 2 + 0.15, 0.25)
    tall = rng.uniform(0.16, 0.22)
    tilt = rng.uniform(-0.03, 0.03)
    win.stroke([(x0 + tall / 2, cy - tilt), (x1 - tall / 2, cy + tilt)], tall, 1.0)
    win.a = cv2.GaussianBlur(win.a, (0, 0), 0.006 * MASTER) * np.float32(rng.uniform(0.8, 0.95))
    win.a *= np.float32(0.9) + np.float32(0.1) * np.clip(_field(win.a.shape, rng, 6), -1, 1)
    win.lay(sheet, HIGHLIGHTER)


def _erasure(sheet: np.ndarray, shape: tuple[str, float, float, float, float], level: float, rng: np.random.Generator) -> float:
    """An erased pencil fill: a smeared gray residue whose mean darkness inside the target is ``level``."""
    tkind, cx, cy, w, h = shape
    a, b = w / 2, h / 2
    win = Window(cx, cy, a + 0.3, b + 0.3)
    win.fill(_outline_pts(tkind, cx, cy, a, b, rng, rng.uniform(0.0, 0.1)))
    sx = rng.uniform(0.015, 0.035) * MASTER
    win.a = cv2.GaussianBlur(win.a, (0, 0), sigmaX=sx, sigmaY=sx * rng.uniform(0.3, 0.6))
    win.a *= np.clip(0.75 + 0.25 * _field(win.a.shape, rng, 5), 0.3, 1.2).astype(np.float32)
    inside = _interior(win, tkind, cx, cy, a, b)
    lum = 1 - (0.299 * INKS["graphite"][0] + 0.587 * INKS["graphite"][1] + 0.114 * INKS["graphite"][2]) / 255
    now = float(win.a[inside].mean()) * lum
    win.a = np.clip(win.a * np.float32(level / max(now, 1e-6)), 0, 1)
    win.lay(sheet, INKS["graphite"])
    return float(win.a[inside].mean()) * lum


def _handwrite(sheet: np.ndarray, name: str, area: list[float], ink: str, rnd: random.Random, rng: np.random.Generator) -> None:
    x, y, w, h = area
    key = rnd.choice(["hand", "hand2"])
    size = rnd.uniform(0.15, 0.19) if key == "hand" else rnd.uniform(0.12, 0.15)
    while _tw(name, key, size) * 1.12 > w - 0.12 and size > 0.07:
        size *= 0.92
    px = round(size * MASTER)
    font = _font(key, px)
    canvas = Image.new("L", (round((w + 0.2) * MASTER), round((h + 0.25) * MASTER)), 0)
    d = ImageDraw.Draw(canvas)
    pen_x, base = 0.06 * MASTER, (h + 0.1 - 0.05) * MASTER
    for ch in name:
        d.text((pen_x, base + rnd.uniform(-0.012, 0.012) * MASTER), ch, font=font, fill=255, anchor="ls")
        pen_x += font.getlength(ch) * rnd.uniform(1.0, 1.1)
    canvas = canvas.rotate(rnd.uniform(-2.5, 2.5), resample=Image.Resampling.BICUBIC, center=(0.1 * MASTER, base))
    alpha = np.asarray(canvas, np.float32) / 255.0
    if ink != "graphite":
        alpha = np.clip(cv2.dilate(alpha, np.ones((2, 2), np.uint8)) * 1.1, 0, 1)
    win = Window(0, 0, 0, 0)
    win.x0, win.y0 = round((x - 0.05) * MASTER), round((y - 0.1) * MASTER)
    win.h, win.w = alpha.shape
    win.a = alpha * np.float32(rng.uniform(0.85, 0.97))
    win.lay(sheet, INKS[ink])


def _pick(rnd: random.Random, weights: list[float], n: int) -> set[int]:
    left = list(range(len(weights)))
    got: set[int] = set()
    while left and len(got) < n:
        j = rnd.choices(left, weights=[weights[i] for i in left])[0]
        got.add(j)
        left.remove(j)
    return got


def mark_page(sheet: np.ndarray, pg: Page, rnd: random.Random, rng: np.random.Generator, voter: dict[str, Any], bilevel: bool) -> list[dict[str, Any]]:
    """Draw every mark of the card; its truth, one entry per target."""
    ink = voter["ink"]
    truth: list[dict[str, Any]] = []
    for rid in STYLES[pg.sid].races:
        race = RACE[rid]
        mine = [t for t in pg.targets if t["contest"] == rid]
        r = rnd.random()
        n = 0 if voter["blank"] else min(len(mine), race.vote_for + rnd.randint(1, 2)) if r < 0.06 else \
            rnd.randint(0, race.vote_for - 1) if r < 0.18 else race.vote_for
        chosen = _pick(rnd, [0.1 if CAND[t["option"]].write_in else 1.0 for t in mine], n)
        erased = None
        if ink == "graphite" and not voter["blank"] and not bilevel and rnd.random() < 0.3:
            free = [j for j, t in enumerate(mine) if j not in chosen and not CAND[t["option"]].write_in]
            erased = rnd.choice(free) if free else None
        for j, t in enumerate(mine):
            cand = CAND[t["option"]]
            shape = pg.shapes[cand.id]
            e: dict[str, Any] = {"contest": rid, "option": cand.id, "mark": "none", "ink": None, "intent": "no_vote"}
            if j in chosen:
                if not bilevel and ink != "graphite" and rnd.random() < 0.015:
                    _highlight(sheet, pg, cand.id, rng)
                    e.update(mark="highlighter", ink="highlighter", intent="ambiguous")
                else:
                    kind = voter["habit"] if rnd.random() < 0.65 else rnd.choices(list(KINDS), weights=list(KINDS.values()))[0]
                    if ink.startswith("felt") and kind == "partial":
                        kind = "fill"
                    _vote_mark(sheet, kind, shape, ink, rng)
                    e.update(mark=kind, ink=ink, intent="vote")
                if cand.write_in and rnd.random() < 0.85:
                    _handwrite(sheet, rnd.choice(WRITE_INS), t["write_in_area"], ink, rnd, rng)
                    e["write_in"] = True
            elif voter["blank"]:
                pass
            elif j == erased:
                visible = rnd.random() < 0.6
                level = _erasure(sheet, shape, rng.uniform(0.13, 0.22) if visible else rng.uniform(0.025, 0.05), rng)
                e.update(mark="erasure" if visible else "erasure_faint", ink="graphite", intent="ambiguous" if visible else "no_vote",
                         residual_darkness=round(level, 3))
            else:
                u = rnd.random()
                if u < 0.005:
                    size = _hesitation(sheet, shape, ink, rng)
                    e.update(mark="hesitation", ink=ink, intent="no_vote", dot_in=round(size, 3))  # contract §7: a dot is no vote
                elif cand.write_in and u < 0.03:
                    _handwrite(sheet, rnd.choice(WRITE_INS), t["write_in_area"], ink, rnd, rng)
                    e.update(ink=ink, intent="ambiguous", write_in=True)
            truth.append(e)
    return truth


def _outcomes(truth: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for rid in dict.fromkeys(t["contest"] for t in truth):
        mine = [t for t in truth if t["contest"] == rid]
        votes = [t["option"] for t in mine if t["intent"] == "vote"]
        pending = any(t["intent"] == "ambiguous" for t in mine)
        out[rid] = {"votes": votes, "outcome": "pending" if pending else "overvote" if len(votes) > RACE[rid].vote_for else "counted"}
    return out


# --------------------------------------------------------------------------------------
# The scanner

MODES = {"bilevel_g4": 26, "gray_png": 17, "gray_jpg": 15, "rgb_jpg": 28, "rgb_png": 14}
EXT = {"bilevel_g4": "tif", "gray_png": "png", "gray_jpg": "jpg", "rgb_jpg": "jpg", "rgb_png": "png"}


def scanner_for(rnd: random.Random, st: Style) -> dict[str, Any]:
    mode = rnd.choices(list(MODES), weights=list(MODES.values()))[0]
    dpi = rnd.choices([150, 200, 240, 300], weights=[16, 38, 20, 26])[0]
    stock = STOCK[st.party]
    paper = rnd.choices(list(stock), weights=list(stock.values()))[0]
    tag = rnd.choices(["right", "wrong", "missing"], weights=[58, 27, 15])[0]
    wrong = rnd.choice([t for t in (72, 96, 100, 150, 300, 600) if t != dpi])
    speckle = mode == "bilevel_g4" and paper != "white" and rnd.random() < 0.7
    d1, d2 = rnd.uniform(-0.03, 0.03), rnd.uniform(-0.03, 0.03)
    dark = rnd.random() < 0.35
    extra = rnd.random()
    edge = rnd.choice(["left", "right", "top", "bottom"])
    return {
        "mode": mode, "dpi": dpi, "paper": paper, "colour": mode.startswith("rgb"),
        "dpi_tag": dpi if tag == "right" else None if tag == "missing" else wrong,
        "angle": rnd.uniform(-1.0, 1.0) if rnd.random() < 0.55 else rnd.uniform(-3.0, 3.0), "flip": rnd.random() < 0.25,
        "scale": (rnd.uniform(0.98, 1.02), rnd.uniform(0.98, 1.02)), "shift": (rnd.uniform(-0.04, 0.04), rnd.uniform(-0.04, 0.04)),
        "pad": (rnd.uniform(0.04, 0.22), rnd.uniform(0.04, 0.22)), "backing": "dark" if dark else "white",
        "backing_level": rnd.uniform(22, 55) if dark else rnd.uniform(236, 252),
        "optics": rnd.uniform(0.3, 0.8), "noise": rnd.uniform(1.2, 3.2), "grain": rnd.uniform(0.012, 0.03),
        "gray_weights": (0.299 + d1, 0.587 + d2, 0.114 - d1 - d2),
        "jpeg_quality": rnd.randint(35, 60) if rnd.random() < 0.6 else rnd.randint(66, 90),
        "speckle": rnd.uniform(1.0, 5.0) if speckle else None,  # per cent of the paper below the threshold
        "threshold": rnd.uniform(0.55, 0.72),
        "shadow": {"edge": edge, "width_in": rnd.uniform(0.08, 0.2 if mode == "bilevel_g4" else 0.4), "depth": rnd.uniform(0.25, 0.6)}
        if rnd.random() < 0.35 else None,
        "gradient": {"axis": rnd.choice(["x", "y"]), "amount": rnd.uniform(0.04, 0.12), "reverse": rnd.random() < 0.5}
        if not speckle and rnd.random() < 0.25 else None,
        "streak": {"at": rnd.uniform(0.06, 0.94), "px": rnd.randint(1, 3),
                   "level": rnd.uniform(30, 110) if rnd.random() < 0.65 else rnd.uniform(242, 255)} if rnd.random() < 0.06 else None,
        "punch": extra < 0.1, "staple": 0.1 <= extra < 0.17,
    }


def _punch_and_staple(img: np.ndarray, pg: Page, sc: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    """Holes show the scanner's backing (with the hole's shadow on a white one); a staple sits on the paper."""
    back = sc["backing_level"]
    done: dict[str, Any] = {}
    if sc["punch"]:
        holes = pg.holes if rnd.random() < 0.7 or len(pg.holes) < 3 else pg.holes[::2]
        r = 0.125 * MASTER
        for hx, hy in holes:
            x0, y0 = int(hx * MASTER - r - 12), int(hy * MASTER - r - 12)
            sub = img[y0:y0 + int(2 * r) + 24, x0:x0 + int(2 * r) + 24]
            c = (round((hx * MASTER - x0) * 16), round((hy * MASTER - y0) * 16))
            hole, lit = np.zeros(sub.shape[:2], np.uint8), np.zeros(sub.shape[:2], np.uint8)
            cv2.circle(hole, c, round(r * 16), 255, -1, cv2.LINE_AA, 4)
            cv2.circle(lit, (c[0] + round(0.02 * MASTER * 16), c[1] + round(0.02 * MASTER * 16)), round(r * 16), 255, -1, cv2.LINE_AA, 4)
            a = hole.astype(np.float32)[..., None] / 255
            sub[:] = sub * (1 - a) + np.float32(back) * a
            if sc["backing"] == "white":
                sub[:] = sub * (1 - 0.45 * (np.minimum(hole, 255 - lit).astype(np.float32) / 255)[..., None])
        done["punch"] = [[_r(x), _r(y)] for x, y in holes]
    if sc["staple"]:
        x, y, ang = pg.staple
        ang += rnd.uniform(-8, 8)
        L, T = rnd.uniform(0.42, 0.5), rnd.uniform(0.025, 0.035)
        th = math.radians(ang)
        ux, uy = math.cos(th), math.sin(th)
        x0, y0 = int((x - 0.4) * MASTER), int((y - 0.4) * MASTER)
        sub = img[max(0, y0):y0 + int(0.8 * MASTER), max(0, x0):x0 + int(0.8 * MASTER)]
        x0, y0 = max(0, x0), max(0, y0)
        for off, val, wid in ((0.012, None, T * 1.1), (0.0, 120.0, T), (0.0, 200.0, T * 0.3)):
            p0 = ((x - ux * L / 2 + off) * MASTER - x0, (y - uy * L / 2 + off) * MASTER - y0)
            p1 = ((x + ux * L / 2 + off) * MASTER - x0, (y + uy * L / 2 + off) * MASTER - y0)
            m = np.zeros(sub.shape[:2], np.uint8)
            cv2.line(m, (round(p0[0] * 16), round(p0[1] * 16)), (round(p1[0] * 16), round(p1[1] * 16)), 255, max(1, round(wid * MASTER)),
                     cv2.LINE_AA, 4)
            a = (m.astype(np.float32) / 255)[..., None]
            sub[:] = sub * (1 - 0.35 * a) if val is None else sub * (1 - a) + np.float32(val) * a
        done["staple"] = [_r(x), _r(y), round(ang, 1)]
    return done


def scan(sheet: np.ndarray, pg: Page, sc: dict[str, Any], rnd: random.Random, rng: np.random.Generator) -> tuple[Image.Image, dict[str, Any], list[str]]:
    """"Scan" the marked sheet; the image, what the scanner did, and the options a streak crosses."""
    dpi = sc["dpi"]
    w_in, h_in = pg.size
    img = sheet.astype(np.float32) * (np.asarray(PAPERS[sc["paper"]], np.float32) / 255.0)
    meta: dict[str, Any] = _punch_and_staple(img, pg, sc, rnd)
    img = cv2.GaussianBlur(img, (0, 0), math.hypot(0.5 * MASTER / dpi, sc["optics"] * MASTER / 300))
    th = math.radians(sc["angle"])
    cth, sth = abs(math.cos(th)), abs(math.sin(th))
    sx, sy = sc["scale"]
    W = round((w_in * sx * cth + h_in * sy * sth + 2 * sc["pad"][0]) * dpi)
    H = round((w_in * sx * sth + h_in * sy * cth + 2 * sc["pad"][1]) * dpi)
    lin = dpi / MASTER * np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]]) @ np.diag([sx, sy])
    t = np.array([W / 2 + sc["shift"][0] * dpi, H / 2 + sc["shift"][1] * dpi]) - lin @ np.array([w_in * MASTER / 2, h_in * MASTER / 2])
    M = np.hstack([lin, t[:, None]])
    if sc["flip"]:
        M = np.array([[-1.0, 0, W - 1], [0, -1.0, H - 1]]) @ np.vstack([M, [0, 0, 1]])
    back = sc["backing_level"]
    out = cv2.warpAffine(img, M, (W, H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(back, back, back))
    del img
    corners = np.array([[0, 0, 1], [w_in * MASTER, 0, 1], [w_in * MASTER, h_in * MASTER, 1], [0, h_in * MASTER, 1]]) @ M.T
    on_paper = np.zeros((H, W), np.uint8)
    cv2.fillPoly(on_paper, [np.round(corners * 16).astype(np.int32)], 255, cv2.LINE_AA, 4)
    grain = 1 + np.float32(sc["grain"]) * _field((H, W), rng, 1.6) * (on_paper.astype(np.float32) / 255)
    out *= grain[..., None]
    if sc["backing"] == "white":  # the sheet's edge casts a thin shadow on a white backing
        rim = cv2.morphologyEx(on_paper, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8)).astype(np.float32) / 255
        out *= (1 - 0.35 * rim)[..., None]
    light = np.ones((H, W), np.float32)
    if sc["shadow"]:
        s = sc["shadow"]
        d = {"left": np.arange(W)[None, :], "right": (W - 1 - np.arange(W))[None, :], "top": np.arange(H)[:, None],
             "bottom": (H - 1 - np.arange(H))[:, None]}[s["edge"]].astype(np.float32)
        light *= 1 - np.float32(s["depth"]) * np.exp(-d / np.float32(s["width_in"] * dpi))
    if sc["gradient"]:
        g = sc["gradient"]
        ramp = np.linspace(0, 1, W if g["axis"] == "x" else H, dtype=np.float32)
        ramp = ramp[::-1] if g["reverse"] else ramp
        light *= 1 - np.float32(g["amount"]) * (ramp[None, :] if g["axis"] == "x" else ramp[:, None])
    out *= light[..., None]
    if not sc["colour"]:
        wr, wg, wb = sc["gray_weights"]
        out = out[..., 0] * np.float32(wr) + out[..., 1] * np.float32(wg) + out[..., 2] * np.float32(wb)
    out += rng.standard_normal(out.shape, dtype=np.float32) * np.float32(sc["noise"])
    crossed: list[str] = []
    if sc["streak"]:
        st = sc["streak"]
        x0 = round(st["at"] * W)
        out[:, x0:x0 + st["px"]] = out[:, x0:x0 + st["px"]] * 0.1 + np.float32(st["level"]) * 0.9
        for tg in pg.targets:
            for key in ("box", "write_in_area"):
                if key not in tg:
                    continue
                bx, by, bw, bh = tg[key]
                xs = (np.array([[bx, by, 1], [bx + bw, by, 1], [bx, by + bh, 1], [bx + bw, by + bh, 1]]) * [MASTER, MASTER, 1]) @ M.T
                if xs[:, 0].min() <= x0 + st["px"] - 1 and xs[:, 0].max() >= x0 and tg["option"] not in crossed:
                    crossed.append(tg["option"])
        meta["streak"] = {"x_px": x0, "width_px": st["px"], "kind": "dark" if st["level"] < 128 else "light", "level": round(st["level"], 1)}
    inch = M * np.array([MASTER, MASTER, 1.0])  # inches on the sheet -> pixels of the image
    meta.update(inch_to_px=[[round(float(v), 4) for v in row] for row in inch], rotation_deg=round(sc["angle"], 3), scale=[round(v, 5) for v in sc["scale"]], size_px=[W, H], backing=sc["backing"],
                shadow=sc["shadow"], gradient=sc["gradient"], noise_sigma=round(sc["noise"], 2), grain=round(sc["grain"], 4))
    if sc["mode"] == "bilevel_g4":
        centre = out[H // 4:3 * H // 4:3, W // 4:3 * W // 4:3]
        med = float(np.median(centre))
        sigma = 1.4826 * float(np.median(np.abs(centre - med)))  # the paper's spread (print is a small minority)
        thr = med - NormalDist().inv_cdf(1 - sc["speckle"] / 100) * sigma if sc["speckle"] else sc["threshold"] * med
        bits = out >= np.float32(thr)
        paper = centre[np.abs(centre - med) < 4 * sigma]
        meta.update(threshold=round(thr, 1), speckle=sc["speckle"] is not None, black_share_of_paper=round(float((paper < thr).mean()), 4))
        return Image.fromarray(np.where(bits, 255, 0).astype(np.uint8)).convert("1", dither=Image.Dither.NONE), meta, crossed
    q = np.clip(out + 0.5, 0, 255).astype(np.uint8)
    return Image.fromarray(q, "RGB" if sc["colour"] else "L"), meta, crossed


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
    """Print, mark, scan and write card ``i``; its truth entry."""
    cv2.setNumThreads(1)
    rnd = random.Random(f"fourth-vendor:{seed}:{i}")
    rng = np.random.default_rng([seed % 2**32, i, 4])
    sid = rnd.choices(list(STYLE_WEIGHTS), weights=list(STYLE_WEIGHTS.values()))[0]
    st = STYLES[sid]
    sc = scanner_for(rnd, st)
    ink = rnd.choices(list(VOTER_INKS), weights=list(VOTER_INKS.values()))[0]
    habit = rnd.choices(list(KINDS), weights=list(KINDS.values()))[0]
    voter = {"ink": ink, "habit": "fill" if ink.startswith("felt") and habit == "partial" else habit, "blank": rnd.random() < 0.03}
    pg = page_plan(sid)
    sheet = _printed(sid).copy()
    bilevel = sc["mode"] == "bilevel_g4"
    truth = mark_page(sheet, pg, rnd, rng, voter, bilevel)
    image, meta, crossed = scan(sheet, pg, sc, rnd, rng)
    del sheet
    name = f"cards/{i + 1:04d}.{EXT[sc['mode']]}"
    (Path(out) / "cards").mkdir(parents=True, exist_ok=True)
    (Path(out) / name).write_bytes(_encode(image, sc))
    entry: dict[str, Any] = {
        "file": name, "page_of_file": 1, "style": sid, "page": 1, "precinct": st.precinct, "kind": "ballot", "frame": st.frame,
        "party": st.party, "paper": sc["paper"], "second_ink": st.spot, "second_ink_targets": st.spot_targets,
        "rotated_180": sc["flip"], "dpi": sc["dpi"], "dpi_tag": sc["dpi_tag"], "format": EXT[sc["mode"]], "mode": sc["mode"],
        "color": sc["colour"], "jpeg_quality": sc["jpeg_quality"] if EXT[sc["mode"]] == "jpg" else None, "expect": "read",
        "pen": ink, "habit": voter["habit"], "blank": voter["blank"], "targets": truth, "contests": _outcomes(truth), "scan": meta}
    if sc["streak"]:
        by_option = {t["option"]: t for t in truth}
        for o in crossed:
            by_option[o]["streak"] = meta["streak"]["kind"]
        entry["streak_options"] = [o for o in crossed if by_option[o]["intent"] == "no_vote"]
    return entry


def make_deck(out: Path, *, cards: int, seed: int, jobs: int = 1) -> Path:
    """The election with its blanks, ``cards`` cards marked and scanned, and ``expected.json``."""
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)  # no OpenCV worker threads in this process before the pool forks
    try:
        return write_deck(Path(out), write_election, make_card, cards=cards, seed=seed, jobs=jobs, profile=PROFILE)
    finally:
        cv2.setNumThreads(threads)


def main(argv: list[str] | None = None) -> int:
    return deck_cli(make_deck, "a primary-election deck (ImageCast-, Hart-like and three-column frames) by a fourth, independent renderer", argv)


if __name__ == "__main__":
    raise SystemExit(main())
