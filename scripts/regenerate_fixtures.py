"""Regenerate the committed golden ballot images under ``fixtures/ballot_images/``.

Seeded and deterministic: running it twice gives the same bytes. It writes

* ``election/``: the demo definition, layouts and the vendor styles' reference scans;
* ``deck/``: ~24 cards of mixed profiles, formats and styles (a blank card, a 180-degree
  feed, a multi-page TIFF and a PDF sheet, both vendor styles) with ``expected.json``;
* ``defaced/``: one good S1 card and defaced copies of it (rotated 3 degrees, a corner with
  its fiducial torn off, the card code whitened, fed upside down, another election's code),
  with ``expected.json`` naming each file's exact expected outcome.

Usage: ``python scripts/regenerate_fixtures.py [--out fixtures/ballot_images]``
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scanpipe.election import load_election
from scanpipe.synth.deck import _Target, contest_outcomes, generate_deck
from scanpipe.synth.definition import write_demo_election
from scanpipe.synth.marks import MarkKind, draw_mark
from scanpipe.synth.render import box_px, card_code_payload, render_card
from scanpipe.synth.scan import save_scan
from scanpipe.types import Election

SEED = 2026
DPI = 200
DEFACED_MARKS = {
    "gov-b": MarkKind.FULL_FILL, "council-a": MarkKind.CHECK, "council-d": MarkKind.X_MARK,
    "q1-for": MarkKind.FULL_FILL, "q2-against": MarkKind.PARTIAL_FILL, "judge-yes": MarkKind.HESITATION_DOT,
}


def deck_overrides() -> dict[int, dict[str, Any]]:
    """Force the cases the fixture set must contain; everything else is drawn by the seed."""
    forced: dict[int, dict[str, Any]] = {
        0: {"style": "S1", "blank": True, "profile": "clean"},
        1: {"style": "S1", "flip180": True, "profile": "typical", "format": "jpg"},
        2: {"style": "S2", "container": "tif", "profile": "typical"},
        3: {"style": "S2", "container": "pdf", "profile": "hardest"},
        4: {"style": "V1", "profile": "typical", "format": "png"},
        5: {"style": "V2", "profile": "hardest", "format": "jpg"},
        6: {"style": "S1", "profile": "hardest", "damage": ("fold",), "format": "tif_g4"},
        7: {"style": "S1", "profile": "hardest", "damage": ("stain",), "format": "jpg", "color": True},
    }
    for i in range(20):
        forced.setdefault(i, {})
        forced[i].setdefault("dpi", 150 if i % 2 else 200)
        forced[i].setdefault("container", "file")
    return forced


def _good_card(election: Election) -> tuple[list[_Target], dict[str, Any]]:
    page = election.style("S1").layout.pages[0]
    targets = [_Target(i, t.contest, t.option, t.box_in, t.write_in_area_in) for i, t in enumerate(page.targets)]
    for t in targets:
        t.mark = DEFACED_MARKS.get(t.option, MarkKind.NONE)
        t.ink = "blue" if t.mark is not MarkKind.NONE else None
    return targets, contest_outcomes(election, targets)


def _marked(election: Election, targets: list[_Target], payload: str | None = None) -> np.ndarray:
    rgb = render_card(election, "S1", 1, "P01", DPI, code_payload=payload)
    rng = np.random.default_rng(SEED)
    for t in targets:
        draw_mark(rgb, box_px(t.box_in, DPI), t.mark, rng, ink="blue", dpi=DPI)
    return cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)


def _rotate(gray: np.ndarray, degrees: float) -> np.ndarray:
    h, w = gray.shape
    m = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    return cv2.warpAffine(gray, m, (w, h), flags=cv2.INTER_LINEAR, borderValue=255)


def _tear_corner(gray: np.ndarray, legs_in: float) -> np.ndarray:
    """Tear off the bottom-right corner (with its fiducial): the white backing shows."""
    out = gray.copy()
    h, w = out.shape
    legs = legs_in * DPI
    rng = np.random.default_rng(SEED)
    xs = np.linspace(w - legs, w, 12) + rng.uniform(-4, 4, 12)
    ys = np.linspace(h, h - legs, 12) + rng.uniform(-4, 4, 12)
    pts = np.concatenate([np.stack([xs, ys], 1), [[w, h]]]).round().astype(np.int32)
    cv2.fillPoly(out, [pts], 255)
    cv2.polylines(out, [pts[:-1]], False, 150, 2)
    return out


def write_defaced(election: Election, out: Path, election_rel: str) -> None:
    targets, contests = _good_card(election)
    good = _marked(election, targets)
    qx, qy, qw, qh = box_px(election.style("S1").layout.pages[0].qr_in, DPI)
    pad = 0.06 * DPI
    whitened = good.copy()
    cv2.rectangle(whitened, (int(qx - pad), int(qy - pad)), (int(qx + qw + pad), int(qy + qh + pad)), 255, -1)
    other = _marked(election, targets, card_code_payload("other-2026", "S1", "P01", 1))
    cases = [
        ("good.png", good, "read", False, "the unaltered card"),
        ("rotated.png", _rotate(good, 3.0), "read", False, "skewed 3 degrees"),
        ("corner_missing.png", _tear_corner(good, 1.4), "read", False,
         "bottom-right corner torn off with its fiducial: three fiducials remain"),
        ("code_whitened.png", whitened, "unknown_style", False,
         "QR card code painted white; S1 has no reference scan, so the style cannot be found"),
        ("upside_down.png", np.ascontiguousarray(good[::-1, ::-1]), "read", True, "fed upside down"),
        ("other_election.png", other, "wrong_election", False, "card code names election other-2026"),
    ]
    out.mkdir(parents=True, exist_ok=True)
    cards = []
    for name, image, expect, flipped, note in cases:
        save_scan(out / name, image, "png", dpi=DPI)
        cards.append({"file": name, "page_of_file": 1, "style": "S1", "page": 1, "precinct": "P01", "kind": "ballot",
                      "rotated_180": flipped, "dpi": DPI, "format": "png", "color": False, "expect": expect,
                      "note": note, "targets": [t.as_json() for t in targets], "contests": contests})
    expected = {"election": election_rel, "seed": SEED, "profile": "clean", "cards": cards}
    (out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "fixtures" / "ballot_images")
    args = parser.parse_args()
    out: Path = args.out
    for sub in ("election", "deck", "defaced"):
        shutil.rmtree(out / sub, ignore_errors=True)
    election_path = write_demo_election(out / "election", seed=SEED)
    election = load_election(election_path)
    generate_deck(election_path, out / "deck", cards=20, seed=SEED, profile="mixed", overrides=deck_overrides())
    write_defaced(election, out / "defaced", "../election/election.json")
    total = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"wrote {out} ({total / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
