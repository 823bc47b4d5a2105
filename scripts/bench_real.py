#!/usr/bin/env python3
"""Read every labelled real ballot and compare with the truth read by eye (issue 8).

For each set under ``fixtures/realballots/<set>/`` (an ``election.json`` with its layouts and
blank references, and a ``truth.json`` of the contract's ``expected.json`` shape whose files
are relative to the set's folder in ``../shared/realballots``), every voted card is read as a
board would read it (no ``--style``) and the script prints, per set and in all:

* cards; style right / queued for a person / wrong (a wrong style is a definite error);
* targets; definite errors (a vote read as no vote or the reverse); clear targets sent to a
  person, and how many of them the blank itself prints over (a "SAMPLE" stamp across the oval:
  no scan shows a mark there); ambiguous marks flagged (sent to a person);
* milliseconds per card (one process; the machine's load shows here).

Targets: 0 definite errors; every card's style right or queued; at most 2 % of clear targets
to a person. Run: ``python scripts/bench_real.py [--shared ../shared/realballots] [--jobs 2]``.

``--rescan skew|turned|sideways|dpi300|bilevel|dpi150|background|stretch|blurred|tinted|faded|gamma|shadow|dither|photo|combined``: every card
read as another scanner would have delivered it (:func:`rescanned`, a PNG in memory): the same
truth must come out, or the card be queued (never a definite error). The
reader is judged on other counties' scanners; this is the cheapest stand-in.

``--alone``: every card against the election holding only one style, for each style in
turn: its own cards must read as labelled (or be queued), every other card must be queued,
never read as that style (a frame whose page has one blank has no runner-up to tell the
styles apart: the card must print that blank's own lines).

``--boxes loose|tight|shifted``: every target box of the layouts drawn as another hand or
program might (:func:`drawn_off`: 0.03 in larger on every side; 30% smaller; 0.02 in right
and 0.015 in up), as a county's layouts written elsewhere may be: the reader snaps them to what
the blank prints, and the same truth must come out.

``--reference-dpi 300``: every layout page's ``reference_dpi`` written wrong (a 200 dpi scan
called 300): the reader goes by the blank's size (:func:`scanpipe.imaging.reference.reference_dpi`)
and the same truth must come out.

``--foreign``: every set's cards against every other set's election (a batch of another
county or election fed by mistake): every card must be queued, none read.

``--leave-out``: a style the election lacks (a definition missing a style, a stray ballot of
another precinct). Every voted card is read against its election with its own style taken
out: it must be queued (``unknown_style`` or ``ambiguous_style``), never read as another
style. Prints per set the cards queued and the cards read as another style (each named).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from scanpipe.synth.rescan import RESCANS, rescanned_gray

ROOT = Path(__file__).resolve().parents[1]
STATUS = {"vote": "yes", "no_vote": "no", "ambiguous": "unknown"}
_CONTEXT: Any = None
_RESCAN: str | None = None
_CHECKED: Any = None  # the election as its layouts were checked by eye (--boxes: for what the blank prints over)
BOXES = ("loose", "tight", "shifted")


# "forkserver", never plain fork: a parent that already ran OpenCV can leave a forked child holding
# a lock no thread releases (as scanpipe.pipeline found); a pool broke so once under a heavy load
_FORKSERVER = multiprocessing.get_context("forkserver")

def rescanned(path: str, how: str) -> bytes:
    """The card's file as another scanner would have delivered it (``--rescan HOW``:
    :func:`scanpipe.synth.rescan.rescanned_gray`, which says what each does), written as a PNG
    in memory."""
    import cv2

    gray = rescanned_gray(cv2.imread(path, cv2.IMREAD_GRAYSCALE), how, Path(path).name)
    ok, png = cv2.imencode(".png", gray)
    if not ok:
        raise RuntimeError(f"{path}: could not encode the rescanned card")
    return png.tobytes()


def drawn_off(election: Any, how: str, only: Sequence[str] = ()) -> Any:
    """The election with every target box of its layouts (of the styles ``only``, if given)
    drawn off (``--boxes``): ``loose`` 0.03 in larger on every side, ``tight`` 30% smaller,
    ``shifted`` 0.02 in right and 0.015 in up, ``whole_arrow`` a broken arrow's gap boxed
    with its tail and head (0.25 in left, 0.17 in right, 0.12 in high: the synthetic
    Premier-like family's arrows; for ``bench_accuracy.py --boxes whole_arrow --boxes-of A-17``)."""
    from dataclasses import replace

    def box(b: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
        x, y, w, h = b
        if how == "loose":
            return (x - 0.03, y - 0.03, w + 0.06, h + 0.06)
        if how == "tight":
            return (x + 0.15 * w, y + 0.15 * h, 0.7 * w, 0.7 * h)
        if how == "whole_arrow":
            return (x - 0.25, y + h / 2 - 0.06, w + 0.42, 0.12)
        return (x + 0.02, y - 0.015, w, h)

    styles = tuple(s if only and s.id not in only else replace(s, layout=replace(s.layout, pages=tuple(
        replace(p, targets=tuple(replace(t, box_in=box(t.box_in)) for t in p.targets)) for p in s.layout.pages)))
        for s in election.ballot_styles)
    return replace(election, ballot_styles=styles)


def with_reference_dpi(election: Any, dpi: float) -> Any:
    """The election with every layout page's ``reference_dpi`` written as ``dpi`` (``--reference-dpi``)."""
    from dataclasses import replace

    return replace(election, ballot_styles=tuple(replace(s, layout=replace(s.layout, pages=tuple(
        replace(p, reference_dpi=dpi) for p in s.layout.pages))) for s in election.ballot_styles))


def _init(election_path: str, rescan: str | None = None, boxes: str | None = None, dpi: float | None = None) -> None:
    global _CONTEXT, _RESCAN, _CHECKED
    _RESCAN = rescan
    from scanpipe.classify import load_thresholds
    from scanpipe.election import load_election
    from scanpipe.interpret import InterpretContext, load_references

    election = load_election(election_path)
    _CHECKED = election
    if boxes:
        election = drawn_off(election, boxes)
    if dpi:
        election = with_reference_dpi(election, dpi)
    _CONTEXT = InterpretContext(election, load_thresholds(), load_references(election))


def _read(task: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    from scanpipe.interpret import interpret_file
    from scanpipe.types import CardHints, ReadCard

    path, truth = task
    started = time.perf_counter()
    data = rescanned(path, _RESCAN) if _RESCAN and truth.get("page_of_file", 1) == 1 else None
    cards = {c.source.page_index: c for c in interpret_file(path, _CONTEXT, CardHints(), "bench-real", data=data)}
    seconds = time.perf_counter() - started
    result = cards[truth.get("page_of_file", 1)].interpretation
    out: dict[str, Any] = {"file": truth["file"], "seconds": seconds, "counts": Counter(), "errors": []}
    if not isinstance(result, ReadCard):
        out["style"] = "queued"
        out["why"] = f"{result.reason.value}: {result.detail}"
        return out
    out["style"] = "right" if (result.style, result.page) == (truth["style"], truth.get("page", 1)) else "wrong"
    if out["style"] == "wrong":
        out["why"] = f"read as {result.style} page {result.page}, truth {truth['style']} page {truth.get('page', 1)}"
        return out
    got = {(t.score.contest, t.score.option): t for t in result.targets}
    boxes = {(t.contest, t.option): t.box_in for p in (_CHECKED or _CONTEXT.election).style(result.style).layout.pages
             if p.page == result.page for t in p.targets}
    model = _CONTEXT.index.get(result.style, result.page)
    for target in truth["targets"]:
        reading = got[(target["contest"], target["option"])]
        want, status = STATUS[target["intent"]], reading.status.value
        c = out["counts"]
        if target["intent"] == "ambiguous":
            c["ambiguous"] += 1
            c["ambiguous_flagged"] += status == "unknown"
        else:
            c["clear"] += 1
            c["clear_to_person"] += status == "unknown"
            if status == "unknown" and model is not None and _under_print(model, boxes[(target["contest"], target["option"])]):
                c["clear_under_print"] += 1
            c["definite_errors"] += status not in (want, "unknown")
        if status != want:
            out["errors"].append(f"{target['option']}: truth {target['intent']}, read {status} ({reading.why})")
    return out


def _under_print(model: Any, box: tuple[float, float, float, float]) -> bool:
    """Whether the blank prints over most of the target's inside (a "SAMPLE" stamp across it):
    nobody can see a mark there on the scan, so a person decides from the mark around it."""

    x, y, w, h = (int(round(v * model.dpi)) for v in box)
    inside = model.image[y + h // 4: y + h - h // 4, x + w // 4: x + w - w // 4]
    return bool(inside.size and (inside < 128).mean() >= 0.5)


def labelled_cards(folder: Path, shared: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(path, truth)`` of every labelled card of a set that is here: its scan in ``shared``,
    else the few cards copied into the repository."""
    out = []
    for card in json.loads((folder / "truth.json").read_text())["cards"]:
        path = shared / folder.name / card["file"]
        if not path.is_file():
            path = folder / card["file"]
        if path.is_file():
            out.append((str(path), card))
    return out


def run_set(folder: Path, shared: Path, jobs: int, rescan: str | None = None, boxes: str | None = None,
            dpi: float | None = None) -> tuple[Counter, list[dict[str, Any]]]:
    tasks = labelled_cards(folder, shared)
    election = str(folder / "election.json")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=_FORKSERVER, initializer=_init, initargs=(election, rescan, boxes, dpi)) as pool:
        results = list(pool.map(_read, tasks))
    total: Counter = Counter()
    for r in results:
        total["cards"] += 1
        total[f"style_{r['style']}"] += 1
        total.update(r["counts"])
        total["ms"] += r["seconds"] * 1000
    return total, results


def _context_with_styles(election_path: str, keep: Callable[[str], bool]) -> Any:
    """The reading context of the election at ``election_path`` holding only the styles
    ``keep`` admits, parsed in memory (nothing written beside the fixture)."""
    from scanpipe.classify import load_thresholds
    from scanpipe.election import parse_election, read_definition
    from scanpipe.interpret import InterpretContext, load_references

    path = Path(election_path).resolve()
    definition, layouts = read_definition(path)
    definition = {**definition, "ballot_styles": [s for s in definition["ballot_styles"] if keep(s["id"])]}
    election = parse_election(definition, layouts, base=path.parent, file=str(path))
    return InterpretContext(election, load_thresholds(), load_references(election))


def _outcomes(context: Any, cards: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, bool, str]]:
    """Per card, ``(file, read, what)``: the style it was read as, or the reason it was queued."""
    from scanpipe.interpret import interpret_file
    from scanpipe.types import CardHints, ReadCard

    out = []
    for path, truth in cards:
        read = {c.source.page_index: c for c in interpret_file(path, context, CardHints(), "bench-real")}
        result = read[truth.get("page_of_file", 1)].interpretation
        out.append((truth["file"], True, result.style) if isinstance(result, ReadCard) else (truth["file"], False, result.reason.value))
    return out


def read_without_own_style(task: tuple[str, str, list[tuple[str, dict[str, Any]]]]) -> list[tuple[str, bool, str]]:
    """The cards of one style read against the election without that style (:func:`_outcomes`)."""
    election_path, style, cards = task
    return _outcomes(_context_with_styles(election_path, lambda s: s != style), cards)


def run_leave_out(folder: Path, shared: Path, jobs: int) -> tuple[int, int, list[str]]:
    """Cards queued, cards read as another style (and those named) with their own style left out."""
    by_style: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for path, card in labelled_cards(folder, shared):
        by_style.setdefault(card["style"], []).append((path, card))
    styles = json.loads((folder / "election.json").read_text())["ballot_styles"]
    if len(styles) < 2:
        return 0, 0, []  # nothing left to read against
    tasks = [(str(folder / "election.json"), style, cards) for style, cards in sorted(by_style.items())]
    with ProcessPoolExecutor(max_workers=jobs, mp_context=_FORKSERVER) as pool:
        results = list(pool.map(read_without_own_style, tasks))
    queued, wrong = 0, []
    for (_, style, _), read in zip(tasks, results, strict=True):
        for file, was_read, got in read:
            if not was_read and got in ("unknown_style", "ambiguous_style"):
                queued += 1
            else:
                wrong.append(f"{file} ({style}, left out): {'read as ' if was_read else ''}{got}")
    return queued, len(wrong), wrong


def _read_against_lone_style(task: tuple[str, str, list[tuple[str, dict[str, Any]]], str | None]) -> tuple[Counter, list[str]]:
    """Read cards against the election holding only ``style``: its own cards must read as
    labelled (no definite error, the style right or queued), every other card must be queued."""
    global _CONTEXT, _RESCAN
    election_path, style, cards, _RESCAN = task
    _CONTEXT = _context_with_styles(election_path, lambda s: s == style)
    counts: Counter = Counter()
    named = []
    for card_path, truth in cards:
        out = _read((card_path, truth))
        if truth["style"] == style:
            counts["own"] += 1
            counts[f"own_{out['style']}"] += 1
            counts["own_definite_errors"] += out["counts"]["definite_errors"]
            if out["style"] != "right":
                named.append(f"{truth['file']} ({style}, alone): {out.get('why', '')}")
        else:
            counts["other"] += 1
            counts["other_queued"] += out["style"] == "queued"
            if out["style"] != "queued":
                named.append(f"{truth['file']} ({truth['style']}) read as {style}, the election's only style")
    return counts, named


def run_alone(folder: Path, shared: Path, jobs: int, rescan: str | None = None) -> tuple[Counter, list[str]]:
    """Every card against the election holding only one style, for every style of the set."""
    cards = labelled_cards(folder, shared)
    styles = [s["id"] for s in json.loads((folder / "election.json").read_text())["ballot_styles"]]
    tasks = [(str(folder / "election.json"), style, cards, rescan) for style in styles]
    total: Counter = Counter()
    named: list[str] = []
    with ProcessPoolExecutor(max_workers=jobs, mp_context=_FORKSERVER) as pool:
        for counts, lines in pool.map(_read_against_lone_style, tasks):
            total.update(counts)
            named.extend(lines)
    return total, named


def _read_against_election(task: tuple[str, list[tuple[str, dict[str, Any]]]]) -> list[tuple[str, bool, str]]:
    """Cards read against another county's election (:func:`_outcomes`)."""
    election_path, cards = task
    return _outcomes(_context_with_styles(election_path, lambda s: True), cards)


def run_foreign(sets: list[Path], shared: Path, jobs: int) -> tuple[Counter, list[str]]:
    """Every set's cards against every other set's election (a batch of another county, or
    another election, fed by mistake): every card must be queued, none read."""
    cards_of = {folder: labelled_cards(folder, shared) for folder in sets}
    tasks = [(str(election / "election.json"), cards_of[own], own.name, election.name)
             for election in sets for own in sets if own != election]
    total: Counter = Counter()
    named: list[str] = []
    with ProcessPoolExecutor(max_workers=jobs, mp_context=_FORKSERVER) as pool:
        for (_, _, own, election), read in zip(tasks, pool.map(_read_against_election, [t[:2] for t in tasks]), strict=True):
            for file, was_read, got in read:
                total["cards"] += 1
                total[f"read as {got}" if was_read else got] += 1
                if was_read:
                    named.append(f"{own}/{file} against {election}: read as {got}")
    return total, named


def report(name: str, c: Counter) -> str:
    clear, amb = c["clear"], c["ambiguous"]
    pct = 100.0 * c["clear_to_person"] / clear if clear else 0.0
    flagged = f"{c['ambiguous_flagged']}/{amb}" if amb else "0/0"
    seen = clear - c["clear_under_print"]
    seen_pct = 100.0 * (c["clear_to_person"] - c["clear_under_print"]) / seen if seen else 0.0
    return (f"{name:<20} cards {c['cards']:>3}  style right {c['style_right']:>3} queued {c['style_queued']:>2} "
            f"wrong {c['style_wrong']}  targets {clear + amb:>4}  definite errors {c['definite_errors']}  "
            f"clear to a person {c['clear_to_person']}/{clear} = {pct:.2f}% (under the blank's print "
            f"{c['clear_under_print']}; of the rest {seen_pct:.2f}%)  ambiguous flagged {flagged}  "
            f"{c['ms'] / max(1, c['cards']):.0f} ms/card")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=Path, default=ROOT / "fixtures" / "realballots", help="folder of labelled sets")
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "realballots", help="the scanned ballots")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--verbose", action="store_true", help="every card that differs from its truth")
    ap.add_argument("--leave-out", action="store_true", help="each card against its election without its own style")
    ap.add_argument("--alone", action="store_true", help="every card against the election holding only one style, "
                    "for every style (a frame with one blank: no runner-up to tell styles apart)")
    ap.add_argument("--rescan", choices=RESCANS, help="read each card as another scanner would deliver it (see rescanned()): the same "
                    "truth must come out, or the card be queued")
    ap.add_argument("--boxes", choices=BOXES, help="every target box of the layouts drawn off as another hand might "
                    "(see drawn_off()): the same truth must come out")
    ap.add_argument("--reference-dpi", type=float, default=None, help="every layout page's reference_dpi written as this "
                    "(a resolution the blanks' size contradicts): the same truth must come out")
    ap.add_argument("--foreign", action="store_true", help="every set's cards against every other set's election: "
                    "all must be queued")
    args = ap.parse_args(argv)
    print("command: python scripts/bench_real.py " + " ".join(sys.argv[1:]))
    if args.foreign:
        sets = sorted(p for p in args.sets.iterdir() if (p / "truth.json").is_file())
        total, named = run_foreign(sets, args.shared, args.jobs)
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(total.items()) if k != "cards" and not k.startswith("read as"))
        read = sum(v for k, v in total.items() if k.startswith("read as"))
        print(f"another election's cards: {total['cards']}  queued {total['cards'] - read} ({reasons})  read {read}")
        for line in named:
            print(f"    {line}")
        print("target met (a card of another election is queued, never read)" if not read else
              "target NOT met (a card of another election is queued, never read)")
        return 0 if not read else 1
    if args.leave_out:
        total_queued = total_wrong = 0
        for folder in sorted(p for p in args.sets.iterdir() if (p / "truth.json").is_file()):
            queued, n_wrong, wrong = run_leave_out(folder, args.shared, args.jobs)
            total_queued, total_wrong = total_queued + queued, total_wrong + n_wrong
            if queued + n_wrong == 0:
                print(f"{folder.name:<20} own style left out: one style only, nothing left to read against")
                continue
            print(f"{folder.name:<20} own style left out: cards {queued + n_wrong:>3}  queued {queued:>3}  read as another style {n_wrong}")
            for line in wrong:
                print(f"    {line}")
        print(f"{'all':<20} own style left out: cards {total_queued + total_wrong:>3}  queued {total_queued:>3}  "
              f"read as another style {total_wrong}")
        print("target met" if total_wrong == 0 else "target NOT met", "(a card of a style the election lacks is queued, never read as another style)")
        return 0 if total_wrong == 0 else 1
    if args.alone:
        ok = True
        for folder in sorted(p for p in args.sets.iterdir() if (p / "truth.json").is_file()):
            c, named = run_alone(folder, args.shared, args.jobs, args.rescan)
            print(f"{folder.name:<20} each style alone: own cards {c['own']:>3} right {c['own_right']:>3} queued "
                  f"{c['own_queued']:>2} wrong {c['own_wrong']}  definite errors {c['own_definite_errors']}  |  "
                  f"cards of another style {c['other']:>4} queued {c['other_queued']:>4} read as the lone style "
                  f"{c['other'] - c['other_queued']}")
            for line in named:
                print(f"    {line}")
            ok = ok and c["own_wrong"] == 0 and c["own_definite_errors"] == 0 and c["other"] == c["other_queued"]
        print("targets met" if ok else "targets NOT met", "(alone, a style's own cards read right or are queued; "
              "no card of another style is read as it)")
        return 0 if ok else 1
    grand: Counter = Counter()
    for folder in sorted(p for p in args.sets.iterdir() if (p / "truth.json").is_file()):
        counts, results = run_set(folder, args.shared, args.jobs, args.rescan, args.boxes, args.reference_dpi)
        grand.update(counts)
        print(report(folder.name, counts))
        for r in results:
            if r["style"] != "right" or (args.verbose and r["errors"]):
                print(f"    {r['file']}: {r.get('why', '')}")
            if args.verbose:
                for e in r["errors"]:
                    print(f"        {e}")
    print(report("all", grand))
    visible = grand["clear"] - grand["clear_under_print"]
    ok = (grand["definite_errors"] == 0 and grand["style_wrong"] == 0
          and grand["clear_to_person"] - grand["clear_under_print"] <= 0.02 * visible)
    print("targets met" if ok else "targets NOT met", "(0 definite errors, no wrong style, <= 2% of the clear targets a "
          "scan shows sent to a person; targets under the blank's own print go to a person unless the voter's mark "
          "shows on the part it leaves bare)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
