#!/usr/bin/env python3
"""Every reading of a deck, written down, and two such snapshots compared: the proof that a
change meant only to make reading faster read nothing differently.

A snapshot is one JSON line per card (file and page): the style and page read, or the reason
it could not be; the reasons for a person; the codes found; per target its status and every
measure of its score (five decimals: score, damage, fill, stroke, ring, write-in, dot), and
the registration's residual. Cards are read in-process by the library, as ``ingest`` reads
them, in ``--jobs`` processes.

    python scripts/snapshot_readings.py --deck DIR --out before.jsonl [--code OLD_CHECKOUT]
    python scripts/snapshot_readings.py --election E.json --cards DIR --out after.jsonl
    python scripts/snapshot_readings.py --compare before.jsonl after.jsonl

``--code``: read with the scanpipe of another checkout (an earlier commit, for the "before").
``--compare`` prints the cards whose style, reason, reasons or codes differ, the targets whose
status differs, the largest score difference, and exits 1 when anything differs.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# every measure a target's score holds (score and damage first, as snapshots before the others were kept)
SCORE_FIELDS = ("score", "damage_score", "fill_score", "stroke_score", "ring_score", "write_in_score", "dot_in")
CARD_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".pdf")
_CONTEXT: list[Any] = []


def _init(code: str, election: str, cache: str | None) -> None:
    sys.path.insert(0, code)
    import cv2

    from scanpipe.classify import load_thresholds
    from scanpipe.election import load_election
    from scanpipe.interpret import InterpretContext, load_references

    cv2.setNumThreads(1)
    e = load_election(election)
    _CONTEXT.append(InterpretContext(e, load_thresholds(), load_references(e, cache=Path(cache) if cache else None)))


def _read(path: str) -> list[dict[str, Any]]:
    from scanpipe.interpret import interpret_file
    from scanpipe.types import CardHints, MachinePrintedCard, ReadCard

    out = []
    for card in interpret_file(path, _CONTEXT[0], CardHints(), "snapshot"):
        r = card.interpretation
        line: dict[str, Any] = {"file": Path(path).name, "page": card.source.page_index, "kind": card.kind.value,
                                "label": card.label.serial if card.label else None, "codes": sorted(c.text for c in card.codes)}
        if isinstance(r, ReadCard):
            line.update(style=[r.style, r.page], reasons=[x.value for x in r.reasons],
                        residual=round(r.registration.residual_px, 5),
                        targets=[[t.score.contest, t.score.option, t.status.value,
                                  *(round(getattr(t.score, f), 5) for f in SCORE_FIELDS)] for t in r.targets])
        elif isinstance(r, MachinePrintedCard):
            line.update(style=[r.record.style, None], reasons=[x.value for x in r.reasons], machine_printed=True)
        else:
            line.update(reason=r.reason.value, detail=r.detail)
        out.append(line)
    return out


def snapshot(election: Path, cards: Path, out: Path, *, code: Path, jobs: int, cache: Path | None) -> int:
    files = sorted(str(p) for p in cards.rglob("*") if p.is_file() and p.suffix.lower() in CARD_SUFFIXES)
    setup = (str(code), str(election), str(cache) if cache else None)
    if jobs <= 1:  # in this process (``--code`` then must be the checkout already imported, if any)
        _init(*setup)
        lines = [line for f in files for line in _read(f)]
        _CONTEXT.clear()
    else:  # fresh interpreters: a fork of a process with threads may hang, and each imports ``--code``'s scanpipe
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_init, initargs=setup) as pool:
            lines = [line for read in pool.map(_read, files, chunksize=4) for line in read]
    out.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))
    print(f"{len(files)} card files, {len(lines)} cards read by {code} -> {out}")
    return 0


def compare(a: Path, b: Path, *, shown: int = 10) -> int:
    before = {(d["file"], d["page"]): d for d in map(json.loads, a.read_text().splitlines())}
    after = {(d["file"], d["page"]): d for d in map(json.loads, b.read_text().splitlines())}
    cards, targets, largest, notes = 0, 0, 0.0, []
    for key in sorted(set(before) | set(after)):
        x, y = before.get(key), after.get(key)
        if x is None or y is None:
            cards += 1
            notes.append(f"{key[0]} page {key[1]}: only in {'the second' if x is None else 'the first'}")
            continue
        if any(x.get(f) != y.get(f) for f in ("style", "reason", "reasons", "codes", "kind", "label")):
            cards += 1
            notes.append(f"{key[0]} page {key[1]}: {x.get('style') or x.get('reason')} {x.get('reasons', '')} -> "
                         f"{y.get('style') or y.get('reason')} {y.get('reasons', '')}")
            if x.get("style") != y.get("style"):
                continue  # another style's targets: nothing to compare them with
        for s, t in zip(x.get("targets", []), y.get("targets", []), strict=True):
            if s[2] != t[2]:
                targets += 1
                notes.append(f"{key[0]} page {key[1]} {s[1]}: {s[2]} {s[3]} -> {t[2]} {t[3]}")
            # the measures both hold (a snapshot kept before the others were added holds score and damage alone)
            largest = max([largest, *(abs(u - v) for u, v in zip(s[3:], t[3:]))])
    n = sum(len(d.get("targets", [])) for d in before.values())
    print(f"{len(before)} cards, {n} targets: cards read differently {cards}, targets with another status {targets}, "
          f"largest difference of a score measure {largest:.5f}")
    for note in notes[:shown]:
        print("  " + note)
    if len(notes) > shown:
        print(f"  ... and {len(notes) - shown} more")
    return 1 if cards or targets or largest > 0 else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deck", type=Path, help="a deck folder (election/election.json and cards/)")
    ap.add_argument("--election", type=Path)
    ap.add_argument("--cards", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--code", type=Path, default=ROOT, help="the checkout whose scanpipe reads (default: this one)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=None, help="the learned-blanks cache folder (default: none)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("FIRST", "SECOND"))
    args = ap.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    election = args.election or (args.deck / "election" / "election.json" if args.deck else None)
    cards = args.cards or (args.deck / "cards" if args.deck else None)
    if election is None or cards is None or args.out is None:
        ap.error("say --deck DIR (or --election and --cards) and --out, or --compare FIRST SECOND")
    return snapshot(election, cards, args.out, code=args.code.resolve(), jobs=args.jobs, cache=args.cache)


if __name__ == "__main__":
    sys.exit(main())
