"""A second *vendor* ballot renderer, written apart from ``scanpipe.synth``, from the contract alone.

Issue 8: the reader is judged on vendor ballots drawn by a generator the project did not
write. This module shares no code with ``scanpipe.synth`` (and imports nothing from
scanpipe), and draws its vendor sheets its own way: a "rail" frame (narrow timing marks
every sixth of an inch down both long edges, ovals to the *right* of the names, shaded
contest headers that a bilevel scan dithers), three styles of that frame that differ only in
the printed precinct line or in one contest, and a "bare" legal-size absentee sheet without
any timing marks whose targets are rectangles to the *left* of the names. Layouts are what a
board writes (the style's blank scan as ``reference``, target boxes, nothing else). Cards are
marked by this renderer's hand (fills, checks, X's, big partial fills, pencil, scribbles;
write-in names; blanks, undervotes, overvotes) and "scanned" by a scanner of its own: skew
up to 2 degrees, a 180-degree feed, a stretch along the feed up to 1.5 %, a cut margin,
mostly at 200 dpi (150 or 300 sometimes), bilevel (thresholded or dithered, TIFF G4), gray
or colour (PNG, JPEG), with a dpi tag that may be wrong or missing. Every mark is clear (a
vote or no vote), as in :mod:`tests.foreign_renderer`. Seeded: the same seed gives the same files.

    python -m tests.foreign_vendor OUT --cards 120 --seed 7   # a deck for bench_accuracy --deck OUT
"""

from __future__ import annotations

import io
import json
import math
import random
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from tests.foreign_renderer import deck_cli, write_deck

DPI = 200
SS = 2  # supersampling of the print
ELECTION: dict[str, Any] = {
    "id": "harlan-28p", "name": "Harlan County Primary 2028", "date": "2028-05-16", "jurisdiction": "MD",
    "precincts": [{"id": "01", "name": "Harlan North"}, {"id": "02", "name": "Harlan South"}, {"id": "03", "name": "Elk Run"}],
    "contests": [
        {"id": "gov", "title": "Governor", "kind": "candidate", "vote_for": 1,
         "options": [{"id": "gov-1", "name": "Marta Quispe"}, {"id": "gov-2", "name": "Daniel Hruska"},
                     {"id": "gov-3", "name": "Ifeoma Nwosu"}, {"id": "gov-w", "name": "Write-in", "write_in": True}]},
        {"id": "council", "title": "County Council (Vote for Two)", "kind": "candidate", "vote_for": 2,
         "options": [{"id": "cc-1", "name": "Leon Barros"}, {"id": "cc-2", "name": "Hana Sato"}, {"id": "cc-3", "name": "Rex Obi"},
                     {"id": "cc-4", "name": "Ivy Lindqvist"}, {"id": "cc-5", "name": "Paul Mbeki"}]},
        {"id": "q1", "title": "Question 1: Road Bond", "kind": "question", "vote_for": 1,
         "options": [{"id": "q1-y", "name": "For"}, {"id": "q1-n", "name": "Against"}]},
        {"id": "q2", "title": "Question 2: Charter Change", "kind": "question", "vote_for": 1,
         "options": [{"id": "q2-y", "name": "Yes"}, {"id": "q2-n", "name": "No"}]},
        {"id": "school", "title": "Elk Run School Board", "kind": "candidate", "vote_for": 1,
         "options": [{"id": "sb-1", "name": "Greta Holm"}, {"id": "sb-2", "name": "Musa Kamara"}]},
    ],
}
# style: (frame, precincts, contests)
STYLES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "R-01": ("rail", ("01",), ("gov", "council", "q1", "q2")),
    "R-02": ("rail", ("02",), ("gov", "council", "q1", "q2")),  # R-01 but for the precinct line
    "R-03": ("rail", ("03",), ("gov", "council", "q1", "school")),
    "AB": ("bare", ("01", "02", "03"), ("gov", "council", "q1", "q2")),
}
SIZES = {"rail": (8.5, 11.0), "bare": (8.5, 14.0)}
RAIL_MARK = (0.22, 0.055)  # timing mark, inches
RAIL_PITCH = 1.0 / 6.0
OVAL = (0.26, 0.13)
BOX = (0.22, 0.15)


def _targets(style: str) -> list[dict[str, Any]]:
    """Target boxes (inches) of a style, in print order."""
    frame, _, contests = STYLES[style]
    w, h = SIZES[frame]
    out: list[dict[str, Any]] = []
    if frame == "rail":
        col_w, x0s, top = 3.55, (0.55, 4.4), 2.7
    else:
        col_w, x0s, top = 7.2, (0.65,), 2.9
    col, y = 0, top
    for cid in contests:
        contest = next(c for c in ELECTION["contests"] if c["id"] == cid)
        need = 0.45 + 0.34 * len(contest["options"]) + 0.25
        if y + need > h - 0.8:
            col, y = col + 1, top
        x0 = x0s[col]
        y += 0.45
        for opt in contest["options"]:
            if frame == "rail":
                box = [round(x0 + col_w - 0.2 - OVAL[0], 3), round(y, 3), *OVAL]
            else:
                box = [round(x0 + 0.1, 3), round(y, 3), *BOX]
            t: dict[str, Any] = {"contest": cid, "option": opt["id"], "box": box}
            if opt.get("write_in"):
                area_x = x0 + 0.1 if frame == "rail" else x0 + 0.5
                t["write_in_area"] = [round(area_x, 3), round(y - 0.12, 3), 2.3, 0.27]
            out.append(t)
            y += 0.34
        y += 0.25
    return out


def write_election(out: Path) -> Path:
    """``election.json``, each style's layout and its blank scan (the reference a board scans)."""
    (out / "layouts").mkdir(parents=True, exist_ok=True)
    election = dict(ELECTION, ballot_styles=[{"id": s, "precincts": list(p), "contests": list(c), "layout": f"layouts/{s}.json"}
                                             for s, (_, p, c) in STYLES.items()])
    for s, (frame, precincts, _) in STYLES.items():
        blank = print_sheet(s, precincts[0] if len(precincts) == 1 else None)
        bilevel = blank.point(lambda v: 255 if v >= 150 else 0).convert("1")
        bilevel.save(out / "layouts" / f"{s}.tif", compression="group4", dpi=(DPI, DPI))
        page = {"page": 1, "size": list(SIZES[frame]), "reference": f"{s}.tif", "reference_dpi": DPI, "targets": _targets(s)}
        (out / "layouts" / f"{s}.json").write_text(json.dumps({"style": s, "pages": [page]}, indent=1))
    (out / "election.json").write_text(json.dumps(election, indent=1))
    return out / "election.json"


@lru_cache(maxsize=32)
def _font(px: int, bold: bool = False, italic: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    name = "DejaVuSerif-Bold.ttf" if bold else "DejaVuSans-Oblique.ttf" if italic else "DejaVuSerif.ttf"
    for folder in ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu"):
        if Path(folder, name).is_file():
            return ImageFont.truetype(str(Path(folder, name)), px)
    return ImageFont.load_default(size=px)


def print_sheet(style: str, precinct: str | None) -> Image.Image:
    """The blank sheet of ``style`` (gray, ``DPI``); ``precinct`` printed in the header (None: absentee)."""
    frame, _, _ = STYLES[style]
    w, h = SIZES[frame]
    k = DPI * SS
    big = Image.new("L", (round(w * k), round(h * k)), 255)
    d = ImageDraw.Draw(big)
    if frame == "rail":
        for y in np.arange(0.45, h - 0.4, RAIL_PITCH):
            for x in (0.1, w - 0.1 - RAIL_MARK[0]):
                d.rectangle([x * k, y * k, (x + RAIL_MARK[0]) * k - 1, (y + RAIL_MARK[1]) * k - 1], fill=0)
    d.text((0.7 * k, 0.55 * k), "OFFICIAL PRIMARY ELECTION BALLOT", font=_font(int(0.19 * k), bold=True), fill=0)
    d.text((0.7 * k, 0.9 * k), "HARLAN COUNTY, MARYLAND   MAY 16, 2028", font=_font(int(0.13 * k)), fill=0)
    name = {p["id"]: p["name"] for p in ELECTION["precincts"]}
    line = f"PRECINCT {precinct}  {name[precinct].upper()}" if precinct else "ABSENTEE / MAIL-IN"
    d.text((0.7 * k, 1.15 * k), line, font=_font(int(0.13 * k), bold=True), fill=0)
    how = "Fill in the oval to the RIGHT of your choice." if frame == "rail" else "Mark the box to the LEFT of your choice."
    d.rectangle([0.6 * k, 1.5 * k, (w - 0.6) * k, 2.05 * k], outline=0, width=int(0.012 * k))
    d.text((0.7 * k, 1.62 * k), "INSTRUCTIONS: " + how + " Use a black or blue pen.", font=_font(int(0.1 * k)), fill=0)
    seen: set[str] = set()
    names = {o["id"]: o["name"] for c in ELECTION["contests"] for o in c["options"]}
    for t in _targets(style):
        x, y, bw, bh = t["box"]
        contest = next(c for c in ELECTION["contests"] if c["id"] == t["contest"])
        left = 0.55 if x < 4.2 else 4.4
        if frame == "bare":
            left = 0.65
        right = left + (3.55 if frame == "rail" else 7.2)
        if contest["id"] not in seen:
            seen.add(contest["id"])
            d.rectangle([left * k, (y - 0.42) * k, right * k, (y - 0.16) * k], fill=215)  # shaded header band
            d.text(((left + 0.08) * k, (y - 0.4) * k), contest["title"], font=_font(int(0.12 * k), bold=True), fill=0)
        if frame == "rail":
            d.ellipse([x * k, y * k, (x + bw) * k, (y + bh) * k], outline=0, width=max(2, int(0.012 * k)))
            label_x = left + 0.1
        else:
            d.rectangle([x * k, y * k, (x + bw) * k, (y + bh) * k], outline=0, width=max(2, int(0.014 * k)))
            label_x = x + bw + 0.15
        if "write_in_area" in t:
            ax, ay, aw, ah = t["write_in_area"]
            d.line([(ax * k, (ay + ah) * k), ((ax + aw) * k, (ay + ah) * k)], fill=0, width=int(0.008 * k))
            d.text((ax * k, (ay + ah + 0.02) * k), "write-in", font=_font(int(0.07 * k)), fill=80)
        else:
            d.text((label_x * k, (y - 0.01) * k), names[t["option"]], font=_font(int(0.12 * k)), fill=0)
    d.text((0.7 * k, (h - 0.35) * k), f"Form 28-P  {style}", font=_font(int(0.08 * k)), fill=0)
    return big.resize((round(w * DPI), round(h * DPI)), Image.LANCZOS)


INKS = {"black": 25, "blue": 70, "pencil": 95}  # gray of the ink as a gray scan sees it
VOTE_KINDS = ("fill", "fill", "fill", "check", "x", "partial", "pencil", "scribble")


def _mark(img: Image.Image, box: list[float], kind: str, ink: str, rnd: random.Random) -> None:
    """One clear mark by this renderer's hand, drawn into the gray sheet (darkest wins)."""
    x, y, w, h = (v * DPI * SS for v in box)
    pad = int(0.2 * DPI * SS)
    layer = Image.new("L", (int(w) + 2 * pad, int(h) + 2 * pad), 0)
    d = ImageDraw.Draw(layer)
    cx, cy = pad + w / 2, pad + h / 2
    pen = max(2, int(rnd.uniform(0.018, 0.03) * DPI * SS))
    if kind in ("fill", "pencil", "partial"):
        share = 1.0 if kind != "partial" else rnd.uniform(0.6, 0.8)
        d.rectangle([cx - w * 0.47, cy - h * 0.42, cx - w * 0.47 + w * 0.94 * share, cy + h * 0.42], fill=255)
        d.ellipse([cx - w * 0.5, cy - h * 0.48, cx - w * 0.5 + w * share, cy + h * 0.48], fill=255)
    elif kind == "scribble":
        pts = [(cx + rnd.uniform(-0.45, 0.45) * w, cy + rnd.uniform(-0.42, 0.42) * h) for _ in range(14)]
        d.line(pts, fill=255, width=pen, joint="curve")
    elif kind == "check":
        d.line([(cx - w * 0.3, cy - h * 0.05), (cx - w * 0.05, cy + h * 0.45), (cx + w * 0.55, cy - h * 1.0)], fill=255, width=pen, joint="curve")
    elif kind == "x":
        d.line([(cx - w * 0.45, cy - h * 0.5), (cx + w * 0.45, cy + h * 0.5)], fill=255, width=pen)
        d.line([(cx - w * 0.45, cy + h * 0.5), (cx + w * 0.45, cy - h * 0.5)], fill=255, width=pen)
    small = layer.resize((layer.width // SS, layer.height // SS), Image.LANCZOS)
    tone = INKS["pencil" if kind == "pencil" else ink]
    at = (round((x - pad) / SS), round((y - pad) / SS))
    region = img.crop((at[0], at[1], at[0] + small.width, at[1] + small.height))
    alpha = np.asarray(small, np.float32) / 255.0 * (0.8 if kind == "pencil" else 1.0)
    base = np.asarray(region, np.float32)
    out = np.minimum(base, base * (1 - alpha) + tone * alpha)
    img.paste(Image.fromarray(out.astype(np.uint8)), at)


def _write_name(img: Image.Image, area: list[float], ink: str, rnd: random.Random) -> None:
    x, y, w, h = (v * DPI for v in area)
    d = ImageDraw.Draw(img)
    d.text((x + 0.3 * DPI, y + h * 0.2), rnd.choice(["Lou Vance", "K. Otieno", "Bea Ruiz"]), font=_font(int(0.15 * DPI), italic=True), fill=INKS[ink])


def mark_card(img: Image.Image, style: str, rnd: random.Random) -> list[dict[str, Any]]:
    ink = rnd.choice(["black", "black", "blue"])
    blank = rnd.random() < 0.04
    truth = []
    targets = _targets(style)
    for cid in STYLES[style][2]:
        contest = next(c for c in ELECTION["contests"] if c["id"] == cid)
        mine = [t for t in targets if t["contest"] == cid]
        r = rnd.random()
        n = 0 if blank else contest["vote_for"] + 1 if r < 0.05 else rnd.randint(0, contest["vote_for"] - 1) if r < 0.2 else contest["vote_for"]
        chosen = set(rnd.sample(range(len(mine)), min(n, len(mine))))
        for i, t in enumerate(mine):
            kind = rnd.choice(VOTE_KINDS) if i in chosen else "none"
            if kind != "none":
                _mark(img, t["box"], kind, ink, rnd)
                if "write_in_area" in t:
                    _write_name(img, t["write_in_area"], ink, rnd)
            truth.append({"contest": cid, "option": t["option"], "mark": kind, "intent": "vote" if kind != "none" else "no_vote"})
    return truth


def scan(img: Image.Image, rnd: random.Random) -> tuple[Image.Image, str, bool, bool, int]:
    """This renderer's scanner: stretch, skew, shift, a cut margin, a feed either way, 200 dpi
    mostly (150 or 300 sometimes), and bilevel (threshold or dither), gray or colour.
    Returns (image, format, colour, turned, resolution)."""
    w, h = img.size
    sy = rnd.uniform(0.985, 1.015)
    angle = math.radians(rnd.uniform(-2.0, 2.0))
    dx, dy = rnd.uniform(-15, 15), rnd.uniform(-15, 15)
    # the inverse map (output -> input), as PIL's affine transform takes it
    c, s = math.cos(angle), math.sin(angle)
    cx, cy = w / 2, h / 2
    a, b = c, s / sy
    d_, e = -s, c / sy
    coeffs = (a, b, cx - a * (cx + dx) - b * (cy + dy), d_, e, cy - d_ * (cx + dx) - e * (cy + dy))
    paper = rnd.randint(236, 250)
    page = Image.eval(img, lambda v: int(v * paper / 255))
    out = page.transform((w, int(h * sy)), Image.AFFINE, coeffs, resample=Image.BILINEAR, fillcolor=paper)
    cut = rnd.choice((0, 0, 0, int(rnd.uniform(0.05, 0.15) * DPI)))
    if cut:
        out = out.crop((0, cut, out.width, out.height)) if rnd.random() < 0.5 else out.crop((0, 0, out.width - cut, out.height))
    if rnd.random() < 0.5:
        out = out.filter(ImageFilter.GaussianBlur(rnd.uniform(0.3, 0.8)))
    turned = rnd.random() < 0.25
    if turned:
        out = out.rotate(180)
    resolution = rnd.choices([DPI, 150, 300], weights=[6, 1, 1])[0]
    if resolution != DPI:
        out = out.resize((round(out.width * resolution / DPI), round(out.height * resolution / DPI)), Image.LANCZOS)
    mode = rnd.choices(["threshold", "dither", "gray", "rgb"], weights=[3, 2, 3, 2])[0]
    if mode == "threshold":
        level = rnd.randint(130, 170)
        return out.point(lambda v: 255 if v >= level else 0).convert("1"), "tif", False, turned, resolution
    if mode == "dither":  # the scanner levels its paper to white, then dithers (Floyd-Steinberg) what is gray
        return out.point(lambda v: min(255, int(v * 255 / (paper - 4)))).convert("1"), "tif", False, turned, resolution
    if mode == "rgb":
        tint = (rnd.randint(245, 255), rnd.randint(240, 252), rnd.randint(225, 245))
        rgb = Image.merge("RGB", [out.point(lambda v, t=t: int(v * t / 255)) for t in tint])
        return rgb, rnd.choice(["png", "jpg"]), True, turned, resolution
    return out, rnd.choice(["png", "jpg"]), False, turned, resolution


def make_card(out: Path, seed: int, i: int) -> dict[str, Any]:
    rnd = random.Random(seed * 7919 + i)
    style = rnd.choice(sorted(STYLES))
    frame, precincts, contests = STYLES[style]
    precinct = rnd.choice(precincts)
    sheet = print_sheet(style, precinct if len(precincts) == 1 else None)
    truth = mark_card(sheet, style, rnd)
    scanned, fmt, color, turned, resolution = scan(sheet, rnd)
    tag = rnd.choices([resolution, 72, 96, 300, None], weights=[6, 1, 1, 1, 1])[0]
    name = f"cards/{i + 1:04d}.{fmt}"
    (out / "cards").mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    extra: dict[str, Any] = {} if tag is None else {"dpi": (tag, tag)}
    if fmt == "tif":
        scanned.save(buf, "TIFF", compression="group4", **extra)
    elif fmt == "png":
        scanned.save(buf, "PNG", **extra)
    else:
        scanned.save(buf, "JPEG", quality=rnd.randint(80, 95), **extra)
    (out / name).write_bytes(buf.getvalue())
    outcomes = {}
    for cid in contests:
        vote_for = next(c["vote_for"] for c in ELECTION["contests"] if c["id"] == cid)
        votes = [t["option"] for t in truth if t["contest"] == cid and t["intent"] == "vote"]
        outcomes[cid] = {"votes": votes, "outcome": "overvote" if len(votes) > vote_for else "counted"}
    return {"file": name, "page_of_file": 1, "style": style, "page": 1, "precinct": precinct, "kind": "ballot",
            "rotated_180": turned, "dpi": resolution, "dpi_tag": tag, "format": fmt, "color": color, "expect": "read",
            "targets": truth, "contests": outcomes}


def make_deck(out: Path, *, cards: int, seed: int, jobs: int = 1) -> Path:
    """The election with its blanks, ``cards`` marked and scanned cards and ``expected.json``."""
    return write_deck(out, write_election, make_card, cards=cards, seed=seed, jobs=jobs, profile="foreign-vendor")


def main(argv: list[str] | None = None) -> int:
    return deck_cli(make_deck, "a vendor-style deck drawn by a second, independent renderer", argv)


if __name__ == "__main__":
    raise SystemExit(main())
