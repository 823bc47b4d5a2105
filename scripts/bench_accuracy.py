#!/usr/bin/env python3
"""Mark-reading accuracy on a synthetic deck: every card through ``scanpipe.interpret``.

Generates a deck (default: the ``hardest`` profile with a fresh seed) or takes one
(``--deck DIR``: any folder of cards with an ``election.json``, its layouts and a truth file,
``expected.json`` or ``truth.json``, of the shape ``scanpipe.synth`` writes; see
``scripts/deck_truth.py``: decks drawn by another renderer, real ballots labelled by eye),
interprets every card in a process pool, and compares each target's status with the intent
the truth records:

* clear marks misread (vote read ``no``, no_vote read ``yes``): must be 0;
* ambiguous targets reported ``unknown``: must be >= 99%;
* clear targets reported ``unknown``: must be <= 0.5%;
* a confusion table per mark kind (rows) and status (columns);
* where the truth names a card's style: cards whose style was read right, queued for a
  person (not read), or read as another style (must be 0).

``--derive PATH`` also derives thresholds from the deck's raw scores
(:func:`scanpipe.calibration.derive_thresholds`) and writes them with provenance;
``--dump FILE`` writes every target's card, raw scores, labels and status (under the
thresholds read, as ``interpret`` gives it) as JSON lines.

``--profile vendor`` (or ``vendor_clean``) generates the vendor-like election's cards instead
(:mod:`scanpipe.synth.vendor_deck`: timing marks, no fiducials, no card code, bilevel and
colour scans with wrong dpi tags, crops, stamps). ``--sheets`` tells the two files of a sheet's sides (``NAME-p1.EXT``, ``NAME-p2.EXT``) as one
sheet, as a duplex scan's manifest or ``ingest --duplex`` has them told; ``--neighbours`` tries files next to each
other in name order that read as one style's front and back as one sheet's sides, as ``ingest`` does unasked (the
other side's show-through, where the sides measure it). ``--hint-style`` reads every card with its
true style and page stated, as ``ingest --style`` does: marks measured apart from telling styles.
``--leave-out`` reads each style's cards against the election without that style (a stray
ballot of another precinct, a definition missing a style): every card must be queued, none
read as another style (its look-alike neighbour).

Example: ``python scripts/bench_accuracy.py --cards 2600 --seed 90210 --jobs 2``
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import shlex
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

from scanpipe.calibration import calibration_report, derive_thresholds, write_thresholds
from scanpipe.classify import Thresholds, classify_target, load_thresholds, settle_page
from scanpipe.election import load_election
from scanpipe.interpret import InterpretContext, interpret_file, load_references
from scanpipe.types import CardHints, MarkIntent, MarkStatus, ReadCard, TargetScore

sys.path.insert(0, str(Path(__file__).resolve().parent))
from deck_truth import Deck, DeckError, load_deck  # noqa: E402

TUNING_SEED = 9  # the seed scanpipe/calibration/thresholds.json was derived on: never report on it
_CONTEXT: InterpretContext | None = None


# "forkserver", never plain fork: a parent that already ran OpenCV can leave a forked child holding
# a lock no thread releases (as scanpipe.pipeline found); a pool broke so once under a heavy load
_FORKSERVER = multiprocessing.get_context("forkserver")

def _init(election_path: str, thresholds_path: str | None, boxes: str | None = None, boxes_of: tuple[str, ...] = ()) -> None:
    global _CONTEXT
    election = load_election(Path(election_path))
    if boxes:
        from bench_real import drawn_off

        election = drawn_off(election, boxes, boxes_of)
    thresholds = load_thresholds(Path(thresholds_path) if thresholds_path else None)
    _CONTEXT = InterpretContext(election, thresholds, load_references(election))


def _read_file(task: tuple[str, str, str | None, int | None]) -> list[dict[str, Any]]:
    """Interpret one file; return per page its raw target scores (or why it was not read)."""
    path, name, style, page = task
    assert _CONTEXT is not None
    t0 = time.perf_counter()
    cards = interpret_file(path, _CONTEXT, CardHints(style=style, page=page), "bench")
    seconds = (time.perf_counter() - t0) / max(1, len(cards))
    return [_entry(name, card, seconds) for card in cards]


def _read_sheet(tasks: list[tuple[str, str, str | None, int | None]]) -> list[dict[str, Any]]:
    """The files of one sheet's sides (``--sheets``): each read alone, then told as one sheet,
    as a duplex scan's manifest or ``ingest --duplex`` has them told (one style, the other
    side's show-through)."""
    from scanpipe.interpret import reread_card, sheet_show_through, sheet_style

    if len(tasks) != 2:
        return [e for t in tasks for e in _read_file(t)]
    assert _CONTEXT is not None
    context = _CONTEXT
    t0 = time.perf_counter()
    cards = [interpret_file(path, context, CardHints(style=style, page=page), "bench")[0] for path, _n, style, page in tasks]
    told = sheet_style(cards, context.election, lambda side, style: reread_card(side, context, CardHints(style=style)))
    told = sheet_show_through(told, context)
    seconds = (time.perf_counter() - t0) / 2
    return [_entry(name, card, seconds) for (_p, name, _s, _pg), card in zip(tasks, told, strict=True)]


def _read_neighbours(tasks: list[tuple[str, str, str | None, int | None]]) -> list[dict[str, Any]]:
    """Two files next to each other in name order that read as one style's front and back, one
    with a mark for a person (``--neighbours``): read again, and told as ``ingest`` tells such
    neighbours (:func:`scanpipe.workflow.tell_neighbour_show_through`: only the other side's
    show-through, and only where its sides measure it)."""
    from scanpipe.interpret import may_be_one_sheet, sheet_show_through, show_through_may_change

    assert _CONTEXT is not None
    t0 = time.perf_counter()
    cards = [interpret_file(path, _CONTEXT, CardHints(style=style, page=page), "bench")[0] for path, _n, style, page in tasks]
    if may_be_one_sheet(*cards) and show_through_may_change(cards):
        cards = sheet_show_through(cards, _CONTEXT)
    seconds = (time.perf_counter() - t0) / 2
    return [_entry(name, card, seconds) for (_p, name, _s, _pg), card in zip(tasks, cards, strict=True)]


def _neighbour_pairs(tasks: list[tuple[str, str, str | None, int | None]], results: list[dict[str, Any]]) -> list[list[tuple[str, str, str | None, int | None]]]:
    """The pairs of single-page files next to each other in name order (numbers by value, as
    ``ingest`` orders a folder) whose first reading is one style's odd page, then the page after
    it, one of them with a mark for a person."""
    from scanpipe.workflow import _folders_in_order

    by_name: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_name.setdefault(r["file"], []).append(r)
    task_of = {t[1]: t for t in tasks}
    ordered = [name for files in _folders_in_order((t[1], t[1]) for t in tasks) for name in files]
    pairs = []
    for a, b in zip(ordered, ordered[1:]):
        if Path(a).parent != Path(b).parent or len(by_name.get(a, ())) != 1 or len(by_name.get(b, ())) != 1:
            continue
        ra, rb = by_name[a][0], by_name[b][0]
        if ("style" in ra and "style" in rb and ra["style"] == rb["style"] and ra["page"] % 2 == 1 and rb["page"] == ra["page"] + 1
                and (ra["marginal"] or rb["marginal"])):
            pairs.append([task_of[a], task_of[b]])
    return pairs


def _entry(name: str, card: Any, seconds: float) -> dict[str, Any]:
    from scanpipe.types import Reason

    interp = card.interpretation
    entry: dict[str, Any] = {"file": name, "page_of_file": card.source.page_index, "seconds": seconds}
    if isinstance(interp, ReadCard):
        entry["scores"] = [asdict(r.score) for r in interp.targets]
        entry["style"], entry["page"] = interp.style, interp.page
        entry["marginal"] = Reason.MARGINAL_MARK in interp.reasons
    else:
        entry["unread"] = f"{type(interp).__name__}: {getattr(interp, 'reason', '')} {getattr(interp, 'detail', '')}"
    return entry


def _sheet_groups(tasks: list[tuple[str, str, str | None, int | None]]) -> list[list[tuple[str, str, str | None, int | None]]]:
    """Tasks grouped by sheet: files named ``NAME-p1.EXT`` and ``NAME-p2.EXT`` (a renderer's
    sides of one sheet) together, every other file alone."""
    groups: dict[str, list[tuple[str, str, str | None, int | None]]] = {}
    for task in tasks:
        m = re.match(r"(.*)-p(\d+)\.\w+$", task[1])
        groups.setdefault(m.group(1) if m else task[1], []).append(task)
    return [sorted(g, key=lambda t: t[1]) for g in groups.values()]


def interpret_deck(deck: Deck, jobs: int, thresholds_path: str | None, *, hint_style: bool = False,
                   boxes: str | None = None, boxes_of: tuple[str, ...] = (), sheets: bool = False,
                   neighbours: bool = False) -> list[dict[str, Any]]:
    """Every card file of the deck read in a pool; ``hint_style``: with its true style and page
    stated (single-page files only: a multi-page file's pages differ); ``sheets``: the sides of
    each sheet saved as two files told as one sheet (:func:`_read_sheet`); ``neighbours``: files
    next to each other that read as one style's front and back told as ``ingest`` tells them
    (:func:`_read_neighbours`)."""
    names = sorted({c["file"] for c in deck.cards})
    truth = {c["file"]: c for c in deck.cards if c["page_of_file"] == 1}
    pages = {c["file"] for c in deck.cards if c["page_of_file"] > 1}

    def hint(f: str) -> tuple[str | None, int | None]:
        if not hint_style or f in pages or f not in truth:
            return None, None
        return truth[f].get("style"), truth[f].get("page")

    tasks = [(str(deck.root / f), f, *hint(f)) for f in names]
    with ProcessPoolExecutor(jobs, mp_context=_FORKSERVER, initializer=_init, initargs=(str(deck.election_path), thresholds_path, boxes, boxes_of)) as pool:
        if sheets:
            return [e for chunk in pool.map(_read_sheet, _sheet_groups(tasks), chunksize=4) for e in chunk]
        results = [e for chunk in pool.map(_read_file, tasks, chunksize=8) for e in chunk]
        if neighbours:
            told = {e["file"]: e for chunk in pool.map(_read_neighbours, _neighbour_pairs(tasks, results), chunksize=2) for e in chunk}
            results = [told.get(r["file"], r) for r in results]
        return results


def labelled_scores(deck: Deck, results: list[dict[str, Any]],
                    where: list[str] | None = None) -> tuple[list[tuple[TargetScore, MarkIntent, str]], list[str]]:
    """Pair every read target's score with its expected intent and mark kind; ``where``, when
    given, receives each pair's card (``file#page``) in the same order."""
    got = {(r["file"], r["page_of_file"]): r for r in results}
    pairs, unread = [], []
    for card in deck.cards:
        if card["expect"] != "read":
            continue
        r = got.get((card["file"], card["page_of_file"]))
        if r is None or "scores" not in r:
            unread.append(f"{card['file']}#{card['page_of_file']}: {r['unread'] if r else 'missing'}")
            continue
        if card.get("style") not in (None, r["style"]) or card.get("page") not in (None, r["page"]):
            continue  # read as another style or page: counted by style_report, its targets are not comparable
        by_option = {s["option"]: s for s in r["scores"]}
        for t in card["targets"]:
            s = by_option[t["option"]]
            score = TargetScore(**{**s, "box_px": tuple(s["box_px"]), "shift_px": tuple(s["shift_px"])})
            kind = t["mark"] + (f"({t['damage']})" if t.get("damage") else "") + ("+write_in" if t.get("write_in") else "") + ("(name)" if t.get("circled") == "name" else "")
            pairs.append((score, MarkIntent(t["intent"]), kind))
            if where is not None:
                where.append(f"{card['file']}#{card['page_of_file']}")
    return pairs, unread


def style_report(deck: Deck, results: list[dict[str, Any]]) -> dict[str, int]:
    """Cards whose truth names a style: read as it, queued unread, or read as another."""
    got = {(r["file"], r["page_of_file"]): r for r in results}
    right, queued, wrong = 0, 0, []
    for card in deck.cards:
        if card.get("style") is None or card["expect"] != "read":
            continue
        r = got.get((card["file"], card["page_of_file"]), {})
        if "style" not in r:
            queued += 1
        elif (r["style"], r["page"]) == (card["style"], card.get("page", r["page"])):
            right += 1
        else:
            wrong.append(f"{card['file']}#{card['page_of_file']}: read as {r['style']} page {r['page']}, truth {card['style']} page {card.get('page')}")
    total = right + queued + len(wrong)
    if total:
        print(f"style: {right}/{total} right, {queued} queued for a person, {len(wrong)} wrong (need 0)")
        for line in wrong[:10]:
            print("  " + line)
    return {"style_right": right, "style_queued": queued, "style_wrong": len(wrong)}


def statuses(pairs: list[tuple[TargetScore, MarkIntent, str]], thresholds: Thresholds, where: list[str] | None = None,
             vote_for: dict[str, int] | None = None) -> list[MarkStatus]:
    """Each pair's status as ``interpret`` gives it: classified one by one, then settled per card
    (``where``: each pair's card; :func:`~scanpipe.classify.settle_page`: the voter's own light
    marks, hesitation dots by their contests, ``vote_for``)."""
    readings = [classify_target(score, thresholds) for score, _i, _k in pairs]
    if where is None or vote_for is None:
        return [r.status for r in readings]
    by_card: dict[str, list[int]] = defaultdict(list)
    for k, card in enumerate(where):
        by_card[card].append(k)
    out = [r.status for r in readings]
    for ks in by_card.values():
        for k, r in zip(ks, settle_page([readings[k] for k in ks], vote_for, thresholds), strict=True):
            out[k] = r.status
    return out


def report(pairs: list[tuple[TargetScore, MarkIntent, str]], thresholds: Thresholds, where: list[str] | None = None,
           vote_for: dict[str, int] | None = None) -> dict[str, float]:
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    misread, amb, amb_unknown, clear, clear_unknown = [], 0, 0, 0, 0
    for (score, intent, kind), status in zip(pairs, statuses(pairs, thresholds, where, vote_for), strict=True):
        confusion[kind][status.value] += 1
        if intent is MarkIntent.AMBIGUOUS:
            amb += 1
            amb_unknown += status is MarkStatus.UNKNOWN
            continue
        clear += 1
        clear_unknown += status is MarkStatus.UNKNOWN
        wrong = MarkStatus.NO if intent is MarkIntent.VOTE else MarkStatus.YES
        if status is wrong:
            misread.append((kind, score))
    print(f"\ntargets counted: {len(pairs)}")
    print(f"clear marks misread: {len(misread)}")
    for kind, s in misread[:20]:
        print(f"  {kind}: score {s.score:.3f} fill {s.fill_score:.3f} stroke {s.stroke_score:.3f}")
    amb_pct = 100.0 * amb_unknown / max(1, amb)
    clear_pct = 100.0 * clear_unknown / max(1, clear)
    print(f"ambiguous reported unknown: {amb_unknown}/{amb} = {amb_pct:.2f}%  (need >= 99%)")
    print(f"clear reported unknown: {clear_unknown}/{clear} = {clear_pct:.3f}%  (need <= 0.5%)")
    print(f"\n{'mark kind':28s} {'yes':>8s} {'no':>8s} {'unknown':>8s}")
    for kind in sorted(confusion):
        c = confusion[kind]
        print(f"{kind:28s} {c['yes']:8d} {c['no']:8d} {c['unknown']:8d}")
    return {"targets": len(pairs), "misread": len(misread), "ambiguous_unknown_pct": amb_pct, "clear_unknown_pct": clear_pct}


def leave_out_report(deck: Deck, jobs: int) -> int:
    """Each style's cards read against the deck's election without that style
    (``bench_real``'s reading of a set with a style left out): per style, the cards queued and
    those read as another style, named. 0 when none was read, else 1."""
    from bench_real import read_without_own_style

    by_style: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for card in deck.cards:
        by_style[card["style"]].append((str(deck.root / card["file"]), card))
    if len(by_style) < 2:
        print("one style only: nothing left to read its cards against")
        return 0
    tasks = [(str(deck.election_path), style, cards) for style, cards in sorted(by_style.items())]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs, mp_context=_FORKSERVER) as pool:
        outcomes = list(pool.map(read_without_own_style, tasks))
    total, wrong = 0, []
    for (_path, style, cards), outcome in zip(tasks, outcomes, strict=True):
        read = [(file, what) for file, was_read, what in outcome if was_read]
        total += len(cards)
        wrong += [f"{file} ({style} left out) read as {what}" for file, what in read]
        print(f"{style:12s} left out: cards {len(cards):4d}  queued {len(cards) - len(read):4d}  read as another style {len(read)}")
    print(f"all styles: cards {total}  queued {total - len(wrong)}  read as another style {len(wrong)}  "
          f"({time.perf_counter() - t0:.0f} s)")
    for line in wrong[:20]:
        print("  " + line)
    print("target met (a card of a style the election lacks is queued, never read as another style)" if not wrong
          else "target NOT met: cards of a style the election lacks were read as another style")
    return 0 if not wrong else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cards", type=int, default=200, help="sheets to generate (about 40 targets each)")
    ap.add_argument("--seed", type=int, default=None, help="deck seed (default: fresh, from the clock)")
    ap.add_argument("--profile", default="hardest")
    ap.add_argument("--deck", type=Path, default=None,
                    help="use this deck instead: a folder of cards with election.json, layouts and expected.json or truth.json")
    ap.add_argument("--out", type=Path, default=None, help="where to generate the deck (default: a temp dir)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--thresholds", type=Path, default=None, help="thresholds.json (default: the reviewed one)")
    ap.add_argument("--derive", type=Path, default=None, help="derive thresholds from this deck and write them here")
    ap.add_argument("--dump", type=Path, default=None, help="write raw scores and labels as JSON lines")
    ap.add_argument("--json", type=Path, default=None, help="also write the headline figures to this JSON file")
    ap.add_argument("--hint-style", action="store_true", help="state each card's true style and page (as ingest --style)")
    ap.add_argument("--sheets", action="store_true", help="the two files of a sheet's sides (NAME-p1, NAME-p2) told as one sheet, "
                                                          "as a duplex scan's manifest or ingest --duplex tells them")
    ap.add_argument("--neighbours", action="store_true", help="files next to each other in name order that read as one "
                    "style's front and back tried as one sheet's sides, as ingest tries them (the other side's show-through)")
    ap.add_argument("--boxes", choices=("loose", "tight", "shifted", "whole_arrow"), default=None,
                    help="read with the layouts' target boxes drawn off as another hand might (bench_real.drawn_off)")
    ap.add_argument("--boxes-of", default="", help="comma-separated styles whose boxes --boxes draws off (default: all)")
    ap.add_argument("--leave-out", action="store_true", help="each style's cards against the election without that style "
                    "(with --deck): every card must be queued, none read as another style")
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time()) % 1_000_000 + 1000
    print("command:", shlex.join([sys.executable, *sys.argv]))
    if args.deck is None and seed == TUNING_SEED and args.derive is None:
        print(f"warning: seed {seed} is the tuning seed; figures on it are not a fair report")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-deck-") as tmp:
        folder = args.deck
        if folder is None:
            from scanpipe.synth.deck import generate_deck
            from scanpipe.synth.definition import write_demo_election
            from scanpipe.synth.vendor import write_vendor_election
            from scanpipe.synth.vendor_deck import VENDOR_SCANS, generate_vendor_deck

            folder = args.out or Path(tmp)
            if args.profile in VENDOR_SCANS:
                election_path = write_vendor_election(folder / "election")
                generate_vendor_deck(election_path, folder, cards=args.cards, seed=seed, scan=args.profile, jobs=args.jobs)
            else:
                election_path = write_demo_election(folder / "election")
                generate_deck(election_path, folder, cards=args.cards, seed=seed, profile=args.profile, jobs=args.jobs)
            print(f"generated {args.cards} sheets, profile {args.profile}, seed {seed} in {time.perf_counter() - t0:.0f} s")
        try:
            deck = load_deck(folder)
        except DeckError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if args.leave_out:
            return leave_out_report(deck, args.jobs)
        t1 = time.perf_counter()
        results = interpret_deck(deck, args.jobs, str(args.thresholds) if args.thresholds else None, hint_style=args.hint_style,
                                 boxes=args.boxes, boxes_of=tuple(s for s in args.boxes_of.split(",") if s), sheets=args.sheets,
                                 neighbours=args.neighbours)
        elapsed = time.perf_counter() - t1
        print(f"{deck.describe()}; interpreted {len(results)} cards in "
              f"{elapsed:.0f} s ({1000 * sum(r['seconds'] for r in results) / max(1, len(results)):.0f} ms/card per process)")
        styles = style_report(deck, results)
        where: list[str] = []
        pairs, unread = labelled_scores(deck, results, where)
        if unread:
            print(f"cards not read ({len(unread)}):")
            for line in unread[:10]:
                print("  " + line)
        thresholds = load_thresholds(args.thresholds)
        if args.dump:
            vote_for = {c.id: c.vote_for for c in load_election(deck.election_path).contests}
            with args.dump.open("w") as fh:
                for (s, intent, kind), card_ref, status in zip(pairs, where, statuses(pairs, thresholds, where, vote_for), strict=True):
                    fh.write(json.dumps({"card": card_ref, "kind": kind, "intent": intent.value, "status": status.value, **asdict(s)}) + "\n")
        if args.derive:
            samples = [(s, i) for s, i, _ in pairs]
            thresholds = derive_thresholds(samples, source=f"derived on a {deck.profile} deck, seed {deck.seed}",
                                           hesitation_dot_in=thresholds.hesitation_dot_in, voter_reach=thresholds.voter_reach)
            write_thresholds(thresholds, args.derive, provenance={
                "seed": deck.seed, "profile": deck.profile, "cards": len(results),
                "targets": len(pairs), "command": shlex.join(["python", *sys.argv]),
            })
            print(f"wrote {args.derive}: {thresholds}")
        print(f"thresholds: marginal {thresholds.marginal} definite {thresholds.definite} ring {thresholds.ring} "
              f"damage {thresholds.damage} write_in {thresholds.write_in} hesitation_dot_in {thresholds.hesitation_dot_in} "
              f"voter_reach {thresholds.voter_reach}")
        print(calibration_report([(s, i) for s, i, _ in pairs], thresholds).summary())
        vote_for = {c.id: c.vote_for for c in load_election(deck.election_path).contests}
        figures = report(pairs, thresholds, where, vote_for)
        if args.json:
            args.json.write_text(json.dumps({**figures, **styles, "unread": len(unread), "cards": len(results)}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
