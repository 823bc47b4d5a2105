"""Regenerate the committed pair fixtures under ``fixtures/ballot_images/pairs/``.

Seeded and deterministic. Writes ``election/`` (the demo election plus style S4 for
precinct P06, which lacks Question 2) and ``deck/`` with one serial per case and
``expected_pairs.json`` (the truth per serial: status, listed contests, the voter's intent):

=====  =================  ==================================================================
index  case               what it exercises
=====  =================  ==================================================================
0      match              a correct copy
1      wrong_option       a copy error: mismatch in one contest
2      provisional        duplicate of S4 (P06), original of S1 carrying Question 2, which the
                          voter was not eligible for: compared on S4's contests only -> match
3      machine            a BMD summary card whose printed text disagrees with its QR code;
                          staff copied the text -> mismatch in that contest
4      orphan_duplicate   a duplicate without its original
5      orphan_original    an original without its duplicate
6      conflict           one serial on two duplicates
=====  =================  ==================================================================

Cards are scanned with the ``clean`` profile at 150 dpi (PNG) and marked with full fills, so
the fixture tests reconciliation, not mark reading; labels sit at random angles.

Usage: ``python scripts/regenerate_pair_fixtures.py [--out fixtures/ballot_images/pairs]``
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

from scanpipe.synth.pairs import generate_pair_deck, write_pair_election

SEED = 12108
OVERRIDES: dict[int, dict[str, Any]] = {
    0: {"case": "match", "style": "S1"},
    1: {"case": "wrong_option", "style": "S1"},
    2: {"case": "provisional", "style": "S4", "original_style": "S1", "copy_error": False},
    3: {"case": "machine", "style": "S1", "text_code_disagree": True, "staff_copied": "text"},
    4: {"case": "orphan_duplicate", "style": "S1"},
    5: {"case": "orphan_original", "style": "S1"},
    6: {"case": "conflict", "style": "S1"},
}


def regenerate(out: Path) -> Path:
    """Write the pair fixtures under ``out``; return the expected file."""
    if out.exists():
        shutil.rmtree(out)
    election = write_pair_election(out / "election")
    overrides = {i: {**o, "dpi": 150} for i, o in OVERRIDES.items()}
    return generate_pair_deck(election, out / "deck", pairs=len(OVERRIDES), seed=SEED, profile="clean",
                              overrides=overrides, serial_prefix="F", vote_kinds=("full_fill",))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "fixtures" / "ballot_images" / "pairs")
    args = parser.parse_args()
    print(regenerate(args.out))


if __name__ == "__main__":
    main()
