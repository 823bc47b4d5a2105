"""A second card renderer, written apart from ``scanpipe.synth``, from the contract alone.

Issue 13: the reader must read cards the project did not draw. This module shares no code
with ``scanpipe.synth`` (and imports nothing from scanpipe): it writes its own election
(``election.json`` and layouts, contract sections 2-3: other ids, contests, page sizes,
margins, oval sizes, targets to the *right* of the names on one style, our fiducials and
card code where its layouts put them, write-in areas ending just above the printed line),
prints the cards with Pillow (TrueType text, 4x supersampled shapes, its own ovals and
lines), marks them with its own hand (scribbled fills, checks, X's, partial fills, light
pencil; blanks, undervotes, overvotes; typed-italic write-in names with the oval filled),
"scans" them mildly (200/300 dpi, under 1 degree of skew, PNG or JPEG q85+, gray or colour),
and writes the truth as ``expected.json`` in the contract's shape (every mark is clear: a
vote or no vote, nothing ambiguous). Seeded: the same seed gives the same files.

    python -m tests.foreign_renderer OUT --cards 200 --seed 7   # a deck for bench_accuracy --deck OUT
"""

from __future__ import annotations

import argparse
import io
import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import zxingcpp
from PIL import Image, ImageDraw, ImageFilter, ImageFont

SS = 2  # supersampling factor of the print and the marks
ELECTION = {
    "id": "foreign-27", "name": "Riverbend Municipal 2027", "date": "2027-04-06", "jurisdiction": "AR",
    "precincts": [{"id": "W1", "name": "Ward One"}, {"id": "W2", "name": "Ward Two"}, {"id": "W3", "name": "Ward Three"}],
    "contests": [
        {"id": "mayor", "title": "Mayor of Riverbend", "kind": "candidate", "vote_for": 1,
         "options": [{"id": "m-okafor", "name": "Ngozi Okafor"}, {"id": "m-reyes", "name": "Tomas Reyes"},
                     {"id": "m-wi", "name": "Write-in", "write_in": True}]},
        {"id": "aldermen", "title": "Aldermen", "kind": "candidate", "vote_for": 3,
         "options": [{"id": "a-1", "name": "Priya Raman"}, {"id": "a-2", "name": "Owen Fitzgerald"},
                     {"id": "a-3", "name": "Sade Adeyemi"}, {"id": "a-4", "name": "Lukas Weber"},
                     {"id": "a-5", "name": "Mei Chen"}, {"id": "a-wi1", "name": "Write-in", "write_in": True},
                     {"id": "a-wi2", "name": "Write-in", "write_in": True}]},
        {"id": "levy", "title": "Library Levy", "kind": "question", "vote_for": 1,
         "options": [{"id": "levy-yes", "name": "Yes"}, {"id": "levy-no", "name": "No"}]},
        {"id": "prop7", "title": "Proposition 7", "kind": "question", "vote_for": 1,
         "options": [{"id": "p7-yes", "name": "Approve"}, {"id": "p7-no", "name": "Reject"}]},
    ],
}


@dataclass(frozen=True)
class Look:
    """One style's print: sheet, where targets go, their size."""

    size: tuple[float, float]
    margin: float
    oval: tuple[float, float]
    pitch: float
    targets_right: bool  # ovals right of the names
    columns: int


STYLES = {
    "LTR": (("W1", "W2"), Look((8.5, 11.0), 0.6, (0.18, 0.12), 0.38, False, 2)),
    "LGL": (("W3",), Look((8.5, 14.0), 0.75, (0.24, 0.15), 0.45, True, 1)),
}
FID = 0.2  # fiducial side, inches: squares 0.45 in from each edge


def _layout(style: str) -> dict[str, Any]:
    _, look = STYLES[style]
    w, h = look.size
    fids = [[0.45, 0.45, FID, FID], [w - 0.45 - FID, 0.45, FID, FID], [0.45, h - 0.45 - FID, FID, FID],
            [w - 0.45 - FID, h - 0.45 - FID, FID, FID]]
    col_w = (w - 2 * look.margin) / look.columns
    targets, col, y = [], 0, 2.6
    for contest in ELECTION["contests"]:
        rows = len(contest["options"]) + 1.6
        if y + rows * look.pitch > h - 1.2:
            col, y = col + 1, 2.6
        x0 = look.margin + col * col_w
        y += 0.55
        for opt in contest["options"]:
            ox = x0 + col_w - 0.35 - look.oval[0] if look.targets_right else x0 + 0.15
            t: dict[str, Any] = {"contest": contest["id"], "option": opt["id"], "box": [round(ox, 3), round(y, 3), *look.oval]}
            if opt.get("write_in"):
                ax = x0 + 0.15 if look.targets_right else ox + look.oval[0] + 0.15
                line_y = y + look.oval[1] + 0.06
                t["write_in_area"] = [round(ax, 3), round(line_y - 0.31, 3), round(col_w - 0.65 - look.oval[0], 3), 0.30]
            targets.append(t)
            y += look.pitch
        y += 0.35
    return {"style": style, "pages": [{"page": 1, "size": list(look.size), "fiducials": fids,
                                       "qr": [w - 1.6, 0.75, 0.95, 0.95], "targets": targets}]}


def write_election(out: Path) -> Path:
    """``election.json`` and one layout per style (no reference scans: these carry fiducials)."""
    (out / "layouts").mkdir(parents=True, exist_ok=True)
    election = dict(ELECTION, ballot_styles=[
        {"id": s, "precincts": list(p), "contests": [c["id"] for c in ELECTION["contests"]], "layout": f"layouts/{s}.json"}
        for s, (p, _) in STYLES.items()])
    for s in STYLES:
        (out / "layouts" / f"{s}.json").write_text(json.dumps(_layout(s), indent=1))
    (out / "election.json").write_text(json.dumps(election, indent=1))
    return out / "election.json"


# --------------------------------------------------------------------------------------
# Printing


@lru_cache(maxsize=64)
def _font(px: int, italic: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    name = "DejaVuSans-Oblique.ttf" if italic else "DejaVuSans.ttf"
    for folder in ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu"):
        if Path(folder, name).is_file():
            return ImageFont.truetype(str(Path(folder, name)), px)
    return ImageFont.load_default(size=px)


def _qr(payload: str) -> Image.Image:
    code = zxingcpp.create_barcode(payload, zxingcpp.BarcodeFormat.QRCode, ec_level="M")
    return Image.fromarray(code.to_image(scale=1, add_quiet_zones=False)).convert("L")


def print_card(style: str, precinct: str, dpi: int) -> tuple[Image.Image, dict[str, Any]]:
    """The blank printed card (RGB at ``dpi``) and its layout page."""
    _, look = STYLES[style]
    page = _layout(style)["pages"][0]
    k = dpi * SS / 1.0
    big = Image.new("L", (round(look.size[0] * k), round(look.size[1] * k)), 255)
    d = ImageDraw.Draw(big)
    names = {o["id"]: o["name"] for c in ELECTION["contests"] for o in c["options"]}
    ward = next(p["name"] for p in ELECTION["precincts"] if p["id"] == precinct)
    d.text((1.3 * k, 0.9 * k), "RIVERBEND MUNICIPAL ELECTION", font=_font(int(0.2 * k)), fill=0)
    d.text((1.3 * k, 1.3 * k), f"{ward}  ·  April 6, 2027", font=_font(int(0.13 * k)), fill=0)
    d.text((1.3 * k, 1.75 * k), "Mark your choice by filling the oval completely.", font=_font(int(0.1 * k)), fill=40)
    for fx, fy, fw, fh in page["fiducials"]:
        d.rectangle([fx * k, fy * k, (fx + fw) * k - 1, (fy + fh) * k - 1], fill=0)
    seen: set[str] = set()
    for t in page["targets"]:
        x, y, w, h = (v * k for v in t["box"])
        contest = next(c for c in ELECTION["contests"] if c["id"] == t["contest"])
        col_w = (look.size[0] - 2 * look.margin) / look.columns
        left = (look.margin + int((t["box"][0] - look.margin) / col_w) * col_w + 0.15) * k
        if contest["id"] not in seen:
            seen.add(contest["id"])
            d.text((left, y - 0.5 * k), contest["title"], font=_font(int(0.14 * k)), fill=0)
            d.line([(left - 0.1 * k, y - 0.58 * k), (left + (col_w - 0.3) * k, y - 0.58 * k)], fill=0, width=int(0.015 * k))
        d.ellipse([x, y, x + w, y + h], outline=0, width=max(1, int(0.014 * k)))
        if "write_in_area" in t:
            ax, ay, aw, ah = (v * k for v in t["write_in_area"])
            d.line([(ax, ay + ah + 0.01 * k), (ax + aw, ay + ah + 0.01 * k)], fill=0, width=max(1, int(0.01 * k)))
            d.text((ax, ay + ah + 0.03 * k), "write-in", font=_font(int(0.07 * k)), fill=60)
        else:
            nx = left if look.targets_right else x + w + 0.12 * k
            d.text((nx, y - 0.02 * k), names[t["option"]], font=_font(int(0.12 * k)), fill=0)
    qx, qy, qw, qh = (v * k for v in page["qr"])
    qr = _qr(f"SPB1|E={ELECTION['id']}|S={style}|P={precinct}|PG=1").resize((round(qw), round(qh)), Image.NEAREST)
    big.paste(qr, (round(qx), round(qy)))
    return big.resize((round(look.size[0] * dpi), round(look.size[1] * dpi)), Image.LANCZOS).convert("RGB"), page


# --------------------------------------------------------------------------------------
# Marking


INKS = {"black": (30, 30, 35), "blue": (25, 45, 160), "pencil": (70, 70, 75)}


def _mark(img: Image.Image, box: list[float], kind: str, dpi: int, ink: str, rnd: random.Random) -> None:
    """Draw one clear mark by this renderer's own hand (supersampled RGBA overlay)."""
    x, y, w, h = (v * dpi * SS for v in box)
    pad = int(0.15 * dpi * SS)
    layer = Image.new("L", (int(w) + 2 * pad, int(h) + 2 * pad), 0)
    d = ImageDraw.Draw(layer)
    cx, cy = pad + w / 2, pad + h / 2
    pen = max(1, int(rnd.uniform(0.02, 0.035) * dpi * SS))
    if kind in ("fill", "pencil", "partial"):
        reach = 1.0 if kind != "partial" else rnd.uniform(0.55, 0.75)
        left = cx - w / 2 * 0.95
        rows = int(h / (pen * 0.6)) + 1
        pts = []
        for i in range(rows + 1):
            yy = cy - h / 2 * 0.9 + i * h * 0.9 / rows
            half = w / 2 * math.sqrt(max(0.0, 1 - ((yy - cy) / (h / 2)) ** 2))
            xa, xb = cx - half, min(cx + half, left + w * 0.95 * reach)
            pts.append((xa, yy) if i % 2 == 0 else (xb, yy))
            pts.append((xb, yy) if i % 2 == 0 else (xa, yy))
        d.line(pts, fill=255, width=pen, joint="curve")
        if kind != "partial":
            d.ellipse([cx - w / 2 * 0.9, cy - h / 2 * 0.85, cx + w / 2 * 0.9, cy + h / 2 * 0.85], fill=255)
    elif kind == "check":
        d.line([(cx - w * 0.35, cy), (cx - w * 0.05, cy + h * 0.45), (cx + w * 0.6, cy - h * 1.2)], fill=255, width=pen, joint="curve")
    elif kind == "x":
        d.line([(cx - w * 0.5, cy - h * 0.55), (cx + w * 0.5, cy + h * 0.55)], fill=255, width=pen)
        d.line([(cx - w * 0.5, cy + h * 0.55), (cx + w * 0.5, cy - h * 0.55)], fill=255, width=pen)
    strength = rnd.uniform(0.66, 0.9) if kind == "pencil" else rnd.uniform(0.85, 1.0)  # pencil: darkness 0.47-0.65
    alpha = layer.point(lambda v: int(v * strength))
    color = Image.new("RGB", layer.size, INKS["pencil" if kind == "pencil" else ink])
    img.paste(color.resize((layer.width // SS, layer.height // SS)), (round((x - pad) / SS), round((y - pad) / SS)),
              alpha.resize((layer.width // SS, layer.height // SS), Image.LANCZOS))


def _write_name(img: Image.Image, area: list[float], dpi: int, ink: str, rnd: random.Random) -> None:
    x, y, w, h = (v * dpi for v in area)
    name = rnd.choice(["J. Smith", "Ana Lima", "R. Okoro", "Dee Park", "Sam Ito"])
    d = ImageDraw.Draw(img)
    d.text((x + 0.1 * dpi, y + h * 0.25), name, font=_font(int(0.16 * dpi), italic=True), fill=INKS[ink])


VOTE_KINDS = ("fill", "fill", "fill", "check", "x", "partial", "pencil")


def mark_card(img: Image.Image, page: dict[str, Any], dpi: int, rnd: random.Random) -> list[dict[str, Any]]:
    """Choose and draw every mark: blanks, undervotes, overvotes, write-ins. Returns the truth targets."""
    ink = rnd.choice(["black", "blue"])
    blank = rnd.random() < 0.05
    truth = []
    for contest in ELECTION["contests"]:
        mine = [t for t in page["targets"] if t["contest"] == contest["id"]]
        r = rnd.random()
        n = 0 if blank else (contest["vote_for"] + 1 if r < 0.06 else rnd.randint(0, contest["vote_for"] - 1) if r < 0.2
                             else contest["vote_for"])
        chosen = set(rnd.sample(range(len(mine)), min(n, len(mine))))
        for i, t in enumerate(mine):
            kind = rnd.choice(VOTE_KINDS) if i in chosen else "none"
            if kind != "none":
                _mark(img, t["box"], kind, dpi, ink, rnd)
                if "write_in_area" in t:
                    _write_name(img, t["write_in_area"], dpi, ink, rnd)
            truth.append({"contest": contest["id"], "option": t["option"], "mark": kind,
                          "intent": "vote" if kind != "none" else "no_vote"})
    return truth


def _outcomes(truth: list[dict[str, Any]]) -> dict[str, Any]:
    out = {}
    for c in ELECTION["contests"]:
        votes = [t["option"] for t in truth if t["contest"] == c["id"] and t["intent"] == "vote"]
        out[c["id"]] = {"votes": votes, "outcome": "overvote" if len(votes) > c["vote_for"] else "counted"}
    return out


# --------------------------------------------------------------------------------------
# Scanning and the deck


def scan(img: Image.Image, rnd: random.Random, dpi: int) -> tuple[Image.Image, str, bool]:
    """A mild scan: under 1 degree of skew, a little blur, gray or colour, PNG or JPEG q85+."""
    angle = rnd.uniform(-0.9, 0.9)
    blur = rnd.uniform(0.0, 0.6) * dpi / 200
    color = rnd.random() < 0.4
    if not color:
        img = img.convert("L")
    img = img.rotate(angle, resample=Image.BILINEAR, fillcolor=(255, 255, 255) if color else 255)
    if blur > 0.25:
        img = img.filter(ImageFilter.GaussianBlur(blur))
    fmt = "png" if rnd.random() < 0.5 else "jpg"
    return img, fmt, color


def make_card(out: Path, seed: int, i: int) -> dict[str, Any]:
    """Print, mark, scan and write card ``i`` of the deck; its truth entry."""
    rnd = random.Random(seed * 100_003 + i)
    style = rnd.choice(sorted(STYLES))
    precinct = rnd.choice(STYLES[style][0])
    dpi = rnd.choice((200, 300))
    img, page = print_card(style, precinct, dpi)
    truth = mark_card(img, page, dpi, rnd)
    scanned, fmt, color = scan(img, rnd, dpi)
    name = f"cards/{i + 1:04d}.{fmt}"
    (out / "cards").mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    scanned.save(buf, "PNG" if fmt == "png" else "JPEG", dpi=(dpi, dpi), **({} if fmt == "png" else {"quality": rnd.randint(85, 95)}))
    (out / name).write_bytes(buf.getvalue())
    return {"file": name, "page_of_file": 1, "style": style, "page": 1, "precinct": precinct, "dpi": dpi,
            "format": fmt, "color": color, "expect": "read", "targets": truth, "contests": _outcomes(truth)}


def make_deck(out: Path, *, cards: int, seed: int, jobs: int = 1) -> Path:
    """Write the election, ``cards`` marked and scanned cards and ``expected.json``; return its path.
    Each card depends only on ``(seed, its index)``, so ``jobs`` processes give the same deck."""
    return write_deck(out, write_election, make_card, cards=cards, seed=seed, jobs=jobs, profile="foreign")


def write_deck(out: Path, election_writer: Callable[[Path], Path], card_maker: Callable[[Path, int, int], dict[str, Any]], *,
               cards: int, seed: int, jobs: int, profile: str) -> Path:
    """A deck folder as ``bench_accuracy --deck`` reads it: ``election_writer(out / "election")``,
    then ``card_maker(out, seed, i)`` for every card (in ``jobs`` processes: each card depends
    only on the seed and its index), then ``expected.json``. Shared by the independent renderers."""
    out = Path(out)
    election = election_writer(out / "election")
    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs) as pool:
            entries = list(pool.map(card_maker, [out] * cards, [seed] * cards, range(cards)))
    else:
        entries = [card_maker(out, seed, i) for i in range(cards)]
    path = out / "expected.json"
    path.write_text(json.dumps({"election": str(election.relative_to(out)), "seed": seed, "profile": profile,
                                "cards": entries}, indent=1))
    return path


def deck_cli(make: Callable[..., Path], description: str, argv: list[str] | None = None) -> int:
    """``python -m tests.<renderer> OUT --cards N --seed S --jobs J``: write a deck with ``make``."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("out", type=Path)
    ap.add_argument("--cards", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args(argv)
    print(make(args.out, cards=args.cards, seed=args.seed, jobs=args.jobs))
    return 0


def main(argv: list[str] | None = None) -> int:
    return deck_cli(make_deck, "a deck drawn by the second, independent renderer", argv)


if __name__ == "__main__":
    raise SystemExit(main())
