#!/usr/bin/env python
"""Scanner-streak benchmark: dirt on the scanner's glass, drawn on a deck's cards.

Every single-page card file of ``--deck`` (any deck ``scripts/deck_truth.py`` reads) is read
as it is, then again with a dark vertical line drawn down the whole image at ``--positions``
places across it (``--width`` pixels, gray ``--level``), as dirt on the glass draws it on every
sheet. Printed:

* **false streaks**: streaks found on the cards as they are (target 0);
* **streaks found**: of the streaked images, those whose streak was found (where the card
  was read, the reason ``scanner_streak`` is given when it crosses a target);
* **definite flips**: targets read ``yes`` on the card as it is and ``no`` with the streak,
  or the reverse (target 0: a streak never turns into a vote, nor hides one);
* **crossed targets**: the targets the streak crossed, those sent to a person (``unknown``) and
  those read (a vote filled beyond the line, or no vote where the line shows nothing under it),
  each as it read on the card as scanned and with the streak (a read one must not flip);
* **other targets changed**: targets the streak did not cross whose status changed (the
  streak moved the registration or the style, say); cards the streak made unreadable, with
  their reasons (a person then reads them; the detail names the streak).

    python scripts/bench_streaks.py --deck DIR [--cards 40] [--positions 12] [--jobs 2]
    python scripts/bench_streaks.py --election E.json --folder DIR ...   # cards without truth (real ballots)
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from deck_truth import load_deck  # noqa: E402

_CONTEXT: list[Any] = []


def _init(election_path: str, cache: str) -> None:
    import cv2

    from scanpipe.classify import load_thresholds
    from scanpipe.election import load_election
    from scanpipe.interpret import InterpretContext, load_references

    cv2.setNumThreads(1)
    election = load_election(Path(election_path))
    _CONTEXT.append(InterpretContext(election, load_thresholds(), load_references(election, cache=Path(cache))))


def _reading(data: bytes, name: str) -> dict[str, Any]:
    from scanpipe.interpret import interpret_file
    from scanpipe.types import CardHints, ReadCard

    (card,) = interpret_file(name, _CONTEXT[0], CardHints(), "bench", data=data)[:1]
    r = card.interpretation
    if not isinstance(r, ReadCard):
        return {"read": False, "reason": r.reason.value, "detail": r.detail}
    return {"read": True, "style": r.style, "reasons": [x.value for x in r.reasons], "turned": r.registration.rotated_180,
            "status": [t.status.value for t in r.targets], "damage": [t.score.damage_score for t in r.targets],
            "boxes": [list(t.score.box_px) for t in r.targets]}


def _one(path: str, positions: int, width: int, level: int) -> dict[str, Any]:
    from PIL import Image

    from scanpipe.imaging.decode import decode_card_bytes
    from scanpipe.imaging.streaks import vertical_streaks

    data = Path(path).read_bytes()
    pages = decode_card_bytes(data, Path(path).name)
    if len(pages) != 1:
        return {"file": path, "skipped": True}
    gray = pages[0].image
    out: dict[str, Any] = {"file": path, "false": len(vertical_streaks(gray)), "as_is": _reading(data, path), "streaked": []}
    w = gray.shape[1]
    for k in range(positions):
        x = int(w * (0.08 + 0.84 * k / max(1, positions - 1)))
        card = gray.copy()
        card[:, x: x + width] = level
        buffer = io.BytesIO()
        Image.fromarray(card).save(buffer, format="PNG", dpi=(pages[0].dpi or 200, pages[0].dpi or 200))
        found = vertical_streaks(card)
        out["streaked"].append({"x": x, "x1": x + width - 1, "w": w, "found": any(s.x0 <= x + width - 1 and s.x1 >= x for s in found),
                                "reading": _reading(buffer.getvalue(), f"{Path(path).stem}-streak{x}.png")})
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deck", type=Path, help="a deck (its election, layouts and cards)")
    ap.add_argument("--election", type=Path, help="... or an election.json and --folder, a folder of its card files")
    ap.add_argument("--folder", type=Path)
    ap.add_argument("--cards", type=int, default=40, help="the first N single-page card files")
    ap.add_argument("--positions", type=int, default=12, help="streaks drawn per card, evenly across it")
    ap.add_argument("--width", type=int, default=2, help="the streak's width, pixels")
    ap.add_argument("--level", type=int, default=40, help="the streak's gray level")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    if args.deck is not None:
        deck = load_deck(args.deck)
        source, election_path, all_files = f"--deck {args.deck}", deck.election_path, deck.files
        print(deck.describe())
    elif args.election is not None and args.folder is not None:
        source, election_path = f"--election {args.election} --folder {args.folder}", args.election
        all_files = sorted(f for f in args.folder.iterdir() if f.suffix.lower() in (".png", ".jpg", ".jpeg", ".tif", ".tiff"))
    else:
        ap.error("give --deck, or --election and --folder")
    print(f"command: python scripts/bench_streaks.py {source} --cards {args.cards} --positions {args.positions} "
          f"--width {args.width} --level {args.level} --jobs {args.jobs}")
    files = [str(f) for f in all_files][: args.cards]
    with tempfile.TemporaryDirectory() as cache, ProcessPoolExecutor(args.jobs, initializer=_init,
                                                                      initargs=(str(election_path), cache)) as pool:
        results = [r for r in pool.map(_one, files, *([v] * len(files) for v in (args.positions, args.width, args.level)))
                   if not r.get("skipped")]
    false = sum(r["false"] for r in results)
    from scanpipe.imaging.streaks import Streak, crossing, upright_columns

    images = found = flips = crossed = crossed_person = others = unreadable = 0
    crossed_read: Counter[str] = Counter()  # as scanned -> with the streak, of the crossed targets the machine read
    why: Counter[str] = Counter()
    changes: Counter[str] = Counter()
    for r in results:
        base = r["as_is"]
        for s in r["streaked"]:
            images += 1
            found += s["found"]
            got = s["reading"]
            if not got["read"]:
                unreadable += base["read"]
                why[got["reason"]] += base["read"]
                continue
            if not base["read"] or got["style"] != base["style"]:
                continue
            columns = [upright_columns(Streak(s["x"], s["x1"]), s["w"], got["turned"])]
            for a, b, box in zip(base["status"], got["status"], got["boxes"], strict=True):
                flips += {a, b} == {"yes", "no"}
                if crossing(columns, box):
                    crossed += 1
                    crossed_person += b == "unknown"
                    if b != "unknown":
                        crossed_read[f"{a}->{b}"] += 1
                else:
                    others += a != b
                    if a != b:
                        changes[f"{a}->{b}"] += 1
    print(f"cards {len(results)} (single-page files), streaked images {images}")
    print(f"false streaks on the cards as they are: {false}")
    print(f"streaks found: {found}/{images}")
    print(f"definite flips (yes <-> no): {flips}")
    print(f"crossed targets {crossed}: to a person {crossed_person}, read {sum(crossed_read.values())}"
          + (f" (as scanned -> with the streak: {', '.join(f'{k} {n}' for k, n in sorted(crossed_read.items()))})" if crossed_read else ""))
    print(f"other targets whose status changed: {others}" + (f" ({', '.join(f'{k} {n}' for k, n in sorted(changes.items()))})" if changes else ""))
    print(f"cards read as they are but not with the streak: {unreadable}" + (f" ({dict(why)})" if why else ""))
    ok = false == 0 and flips == 0 and found == images
    print("targets met (no false streak, every streak found, no definite flip)" if ok else "TARGETS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
