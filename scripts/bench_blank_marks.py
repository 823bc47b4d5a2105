#!/usr/bin/env python
"""The check ``scanpipe init`` makes of every reference scan (a voted card given as a blank):
how often it is wrong on true blanks, and how often it catches a voted card.

For every labelled real set (``--sets``, cards in ``--shared``) and any other election given
(``--election``, synthetic decks' too):

* **true blanks**: each style's own reference; the targets taken for marks (target 0);
* **voted cards as blanks** (real sets with voted cards of a style, upright): each style's
  reference replaced by one of its voted cards (the middle one of the style's cards), as a
  board without blanks might do; the references refused (at least one target taken for a
  mark) and, of the voted card's own votes, those taken for marks.

The check is :func:`scanpipe.workflow.marks_on_blanks`, the one ``init`` runs. ``--read``:
the sets are also read with those voted cards as their blanks (``bench_real.py`` over a copy
of the sets whose layouts name them), what a definition loaded with ``--accept-blank-marks``
reads.

    python scripts/bench_blank_marks.py --sets fixtures/realballots --shared ../shared/realballots [--election E.json ...] [--read]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scanpipe.election import load_election  # noqa: E402
from scanpipe.workflow import marks_on_blanks  # noqa: E402


def _references(election: object) -> dict[tuple[str, int], bytes]:
    out = {}
    for style in election.ballot_styles:  # type: ignore[attr-defined]
        for page in style.layout.pages:
            if page.reference is not None:
                out[(style.id, page.page)] = Path(page.reference).read_bytes()
    return out


def true_blanks(election_path: Path) -> tuple[int, int, int]:
    """(references, targets, targets taken for marks)."""
    election = load_election(election_path)
    refs = _references(election)
    targets = sum(len(p.targets) for s in election.ballot_styles for p in s.layout.pages if (s.id, p.page) in refs)
    return len(refs), targets, sum(len(options) for *_x, options in marks_on_blanks(election, refs))


def voted_as_blanks(folder: Path, shared: Path, copy_to: Path | None = None) -> tuple[int, int, int, int]:
    """(references replaced, refused, votes on them, votes taken for marks); ``copy_to``: the
    set copied there with its layouts naming the voted cards as the blanks."""
    election = load_election(folder / "election.json")
    truth = json.loads((folder / "truth.json").read_text())["cards"]
    refs: dict[tuple[str, int], bytes] = {}
    votes: dict[tuple[str, int], set[str]] = {}
    for style in election.ballot_styles:
        for page in style.layout.pages:
            cards = [c for c in truth if c.get("style") == style.id and c.get("page") == page.page
                     and not c.get("rotated_180") and c.get("expect") == "read" and (shared / folder.name / c["file"]).is_file()]
            if page.reference is None or not cards:
                continue
            card = cards[len(cards) // 2]
            refs[(style.id, page.page)] = (shared / folder.name / card["file"]).read_bytes()
            if copy_to is not None and style.layout.path is not None:
                copied = copy_to / folder.name / "layouts" / Path(style.layout.path).name
                layout = json.loads(copied.read_text())
                next(p for p in layout["pages"] if p["page"] == page.page)["reference"] = str((shared / folder.name / card["file"]).resolve())
                copied.write_text(json.dumps(layout, indent=1))
            votes[(style.id, page.page)] = {t["option"] for t in card["targets"] if t["intent"] == "vote"}
    found = {(style.id, page): set(options) for style, page, _name, options in marks_on_blanks(election, refs)}
    caught = sum(len(found.get(k, set()) & v) for k, v in votes.items())
    return len(refs), len(found), sum(len(v) for v in votes.values()), caught


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=Path, default=ROOT / "fixtures" / "realballots")
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "realballots")
    ap.add_argument("--election", type=Path, action="append", default=[], help="another election (its references are true blanks)")
    ap.add_argument("--read", action="store_true", help="also read the sets with the voted cards as their blanks")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    print("command: python scripts/bench_blank_marks.py --sets " + str(args.sets) + " --shared " + str(args.shared)
          + "".join(f" --election {e}" for e in args.election) + (" --read" if args.read else ""))
    copies = Path(tempfile.mkdtemp(prefix="voted-blanks-")) if args.read else None
    wrong = 0
    refused_all = replaced_all = 0
    for folder in sorted(p for p in args.sets.iterdir() if (p / "election.json").is_file()):
        n, targets, marked = true_blanks(folder / "election.json")
        wrong += marked
        line = f"{folder.name:22s} true blanks {n:3d} ({targets:4d} targets): taken for marks {marked}"
        if (folder / "truth.json").is_file() and args.shared.is_dir():
            if copies is not None:
                shutil.copytree(folder, copies / folder.name)
            replaced, refused, votes, caught = voted_as_blanks(folder, args.shared, copies)
            refused_all += refused
            replaced_all += replaced
            line += f"  |  voted cards as blanks {replaced:3d}: refused {refused:3d}; their votes taken for marks {caught}/{votes}"
        print(line)
    for path in args.election:
        n, targets, marked = true_blanks(path)
        wrong += marked
        print(f"{str(path):22s} true blanks {n:3d} ({targets:4d} targets): taken for marks {marked}")
    print(f"all: true blanks' targets taken for marks {wrong}; voted cards as blanks refused {refused_all}/{replaced_all}")
    if copies is not None:
        print("read with the voted cards as blanks (what --accept-blank-marks reads):", flush=True)
        subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_real.py"), "--sets", str(copies), "--shared", str(args.shared),
                        "--jobs", str(args.jobs)], check=False)
        shutil.rmtree(copies)
    print("target met (no target of a true blank taken for a mark)" if wrong == 0 else "TARGET NOT MET")
    return 0 if wrong == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
