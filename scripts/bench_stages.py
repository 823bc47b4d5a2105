#!/usr/bin/env python3
"""Where one card's reading time goes, per stage, without a profiler (issue 8).

Reads the cards of a deck folder (``election/election.json`` and ``cards/``, as
``bench_accuracy.py --out`` writes them) in one process with one OpenCV thread, timing each
stage by wall clock around its function: decoding, the page's codes, telling the style (of it the
timing marks (the votes, every frame; the fits, the frames the votes and the marks leave), the dense alignment, local refinement, warping the card into the frame and
choosing among the blanks), the registration and the scoring. Prints milliseconds a card
and calls, and ``cv2.imread`` over the same files for scale. Stages nest (the style step
holds the alignments), so the lines do not add up. As a board's every ingest after its first:
an untimed first pass learns the blanks and the look-alike pairs the cards need and keeps them
in a cache; the timed pass starts from that cache as a new process would.

Run: ``python scripts/bench_stages.py --deck DIR [--cards N]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scanpipe import interpret  # noqa: E402
from scanpipe.classify import load_thresholds  # noqa: E402
from scanpipe.election import load_election  # noqa: E402
from scanpipe.imaging import decode, style  # noqa: E402
from scanpipe.types import CardHints  # noqa: E402

# (module, function, label): each is looked up in the module that calls it
STAGES = (
    (decode, "_decode_single", "decoding (single-page files)"),
    (interpret, "read_page_codes", "codes (QR, pairing stickers)"),
    (interpret, "_find_style", "telling the style"),
    (style, "mark_votes", "  timing marks: votes, every frame"),
    (style, "align_by_marks", "  timing marks: fits"),
    (style, "align_densely", "  dense alignment"),
    (style, "refine", "  local refinement"),
    (style, "_card_in_frame", "  the card warped into the frame"),
    (style, "_choose", "  choosing among the blanks"),
    (interpret, "register_card", "registration"),
    (interpret, "score_targets", "scoring against the blank"),
)


def _timed(function: Callable[..., Any], label: str, spent: defaultdict[str, float], calls: Counter[str]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[label] += time.perf_counter() - started
            calls[label] += 1
    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deck", type=Path, required=True, help="folder with election/election.json and cards/")
    parser.add_argument("--cards", type=int, default=0, help="the first N card files (default: all)")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    print("command:", " ".join([Path(sys.executable).name, *sys.argv]))
    election = load_election(args.deck / "election" / "election.json")
    started = time.perf_counter()
    interpret.load_references(election, cache=False)
    learned = time.perf_counter() - started
    files = sorted(f for f in (args.deck / "cards").iterdir() if f.is_file())
    files = files[: args.cards] if args.cards else files
    with tempfile.TemporaryDirectory() as folder:
        warm = interpret.InterpretContext(election, load_thresholds(), interpret.load_references(election, cache=Path(folder)))
        for f in files:  # an earlier run: learns the blanks and the look-alike pairs the cards need, and keeps them
            interpret.interpret_file(str(f), warm, CardHints(), "bench-stages")
        started = time.perf_counter()
        context = interpret.InterpretContext(election, load_thresholds(), interpret.load_references(election, cache=Path(folder)))
        print(f"learning the blanks: {learned:.2f} s; loading what was learned from the cache (scanpipe.learned_cache): "
              f"{time.perf_counter() - started:.2f} s; the look-alike pairs, learned by an untimed first pass, are loaded as "
              "cards need them (a board's every ingest after its first)")
        _timed_pass(files, context)


def _timed_pass(files: list[Path], context: interpret.InterpretContext) -> None:
    spent: defaultdict[str, float] = defaultdict(float)
    calls: Counter[str] = Counter()
    originals = [(module, name, getattr(module, name)) for module, name, _label in STAGES]
    for module, name, label in STAGES:
        setattr(module, name, _timed(getattr(module, name), label, spent, calls))
    started, cpu = time.perf_counter(), time.process_time()
    for f in files:
        interpret.interpret_file(str(f), context, CardHints(), "bench-stages")
    for module, name, function in originals:
        setattr(module, name, function)
    n = max(1, len(files))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    started = time.perf_counter()
    for f in files:
        cv2.imread(str(f))
    imread = time.perf_counter() - started
    print(f"{len(files)} card files: {1000 * wall / n:.1f} ms a file (CPU {1000 * cpu / n:.1f}); cv2.imread {1000 * imread / n:.1f} ms")
    for _module, _name, label in STAGES:
        print(f"  {label:34s} {1000 * spent[label] / n:7.1f} ms a file   calls {calls[label]}")


if __name__ == "__main__":
    main()
