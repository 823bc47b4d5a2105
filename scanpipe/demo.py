"""``scanpipe demo``: a synthetic election end to end on SQLite, with a readable summary.

It writes an election definition, generates marked and "scanned" cards (with the truth of
every mark beside them), then runs the real pipeline: init, ingest, queue, tally, CVR
export. Because the truth is known, the summary also says how the machine's readings
compare with what a careful person would say of each mark.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

from scanpipe.store.repository import Store
from scanpipe.types import CardHints, MarkStatus, ReadCard

MARKER = ".scanpipe-demo"


def run_demo(directory: Path, *, cards: int, seed: int, workers: int) -> list[str]:
    """Run the demo in ``directory`` (made anew) and return the summary lines."""
    from scanpipe.exports.service import export_cvr_file
    from scanpipe.synth.deck import generate_deck
    from scanpipe.synth.definition import write_demo_election
    from scanpipe.tally import tally_csv
    from scanpipe.workflow import ingest_paths, init_election, queue, tally

    directory = directory.resolve()
    _fresh_dir(directory)
    election_path = write_demo_election(directory / "election", seed=seed)
    expected_path = generate_deck(election_path, directory / "cards", cards=cards, seed=seed, profile="typical", jobs=workers)
    db_url = f"sqlite:///{directory / 'scanpipe.db'}"
    store = Store.open(db_url)
    try:
        store.migrate()
        election, _ = init_election(store, election_path)
        summary = ingest_paths(store, [str(expected_path.parent / "cards")], batch="demo", hints=CardHints(), workers=workers)
        rows = tally(store)
        (directory / "tally.csv").write_text(tally_csv(rows), encoding="utf-8", newline="")
        items = queue(store)
        (directory / "queue.json").write_text(json.dumps([i.as_json() for i in items], indent=2), encoding="utf-8")
        n_cvr = export_cvr_file(store, directory / "cvr.json")
        agreement = compare_with_truth(store, expected_path)
        from scanpipe.demo_recount import run_recount_demo

        recount_lines = run_recount_demo(store, directory, expected_path)
    finally:
        store.close()
    lines = [f"scanpipe demo: {election.name} ({election.id}), {len(election.precincts)} precincts, {len(election.ballot_styles)} ballot styles"]
    lines += ["", "Ingest:"] + ["  " + line for line in summary.lines()]
    reasons = Counter(i.reason for i in items)
    lines += ["", f"Queue: {len(items)} item(s) for a person" + (": " + ", ".join(f"{n} {r}" for r, n in sorted(reasons.items())) if items else "")]
    lines += ["", "Machine readings against the generator's truth (every target):"] + ["  " + a for a in agreement]
    lines += ["", "Tally (first contest of each precinct):"] + _tally_preview(rows)
    lines += ["", "Files:",
              f"  database   {directory / 'scanpipe.db'}",
              f"  cards      {directory / 'cards'} (truth: {expected_path.name})",
              f"  tally      {directory / 'tally.csv'}",
              f"  queue      {directory / 'queue.json'}",
              f"  CVRs       {directory / 'cvr.json'} ({n_cvr} CVRs, NIST SP 1500-103)",
              ] + recount_lines + ["", f"Try: scanpipe --db {db_url} recount status"]
    return lines


def _fresh_dir(directory: Path) -> None:
    if directory.exists():
        if not (directory / MARKER).exists() and any(directory.iterdir()):
            from scanpipe.errors import SourceError

            raise SourceError(f"{directory}: exists and is not a scanpipe demo folder; choose another --dir")
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    (directory / MARKER).write_text("made by scanpipe demo; removed and remade by the next run\n")


def compare_with_truth(store: Store, expected_path: Path) -> list[str]:
    """Compare each stored target's status with the generator's intent."""
    expected = json.loads(expected_path.read_text())
    base = expected_path.parent
    truth: dict[tuple[str, int], dict] = {}
    for card in expected["cards"]:
        truth[(str((base / card["file"]).resolve()), card.get("page_of_file", 1))] = card
    table: Counter[tuple[str, str]] = Counter()
    unread = 0
    for stored in store.iter_cards():
        card = stored.card
        t = truth.get((str(Path(card.source.path).resolve()), card.source.page_index))
        if t is None:
            continue
        result = card.interpretation
        if not isinstance(result, ReadCard):
            unread += 1
            continue
        intents = {(x["contest"], x["option"]): x["intent"] for x in t["targets"]}
        for reading in result.targets:
            intent = intents.get((reading.score.contest, reading.score.option))
            if intent is not None:
                table[(intent, reading.status.value)] += 1
    total = sum(table.values())
    wrong = table[("vote", MarkStatus.NO.value)] + table[("no_vote", MarkStatus.YES.value)]
    amb = sum(v for (i, _), v in table.items() if i == "ambiguous")
    amb_unknown = table[("ambiguous", MarkStatus.UNKNOWN.value)]
    clear = total - amb
    clear_unknown = table[("vote", "unknown")] + table[("no_vote", "unknown")]
    out = [f"{total} targets on read cards; clear marks misread: {wrong}",
           f"ambiguous marks sent to a person: {amb_unknown} of {amb}",
           f"clear marks sent to a person anyway: {clear_unknown} of {clear}"]
    if unread:
        out.append(f"cards not read by the machine (queued): {unread}")
    return out


def _tally_preview(rows: list) -> list[str]:  # noqa: ANN001
    out: list[str] = []
    by_precinct: dict[str, str] = {}
    for r in rows:
        by_precinct.setdefault(r.precinct, r.contest)
        if by_precinct[r.precinct] == r.contest:
            out.append(f"  {r.precinct:<12} {r.contest:<10} {r.option:<14} {r.votes:>5}")
    return out
