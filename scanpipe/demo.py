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

from scanpipe.names import pair_status_label, reason_label
from scanpipe.store.repository import Store
from scanpipe.types import CardHints, Election, MarkStatus, ReadCard

MARKER = ".scanpipe-demo"


DEMO_PAIRS = ("match", "wrong_option", "match", "omitted", "extra_mark", "orphan_duplicate", "match", "conflict")
"""The cases of the demo's duplicate/original serials, in order (one serial each)."""
DEMO_AUDITORS = ("ann", "bob")
DEMO_ADMINS = ("admin-one", "admin-two")


def run_demo(directory: Path, *, cards: int, seed: int, workers: int, pairs: int = len(DEMO_PAIRS)) -> list[str]:
    """Run the demo in ``directory`` (made anew) and return the summary lines.

    Batch ``B01`` holds ``cards`` regular ballot sheets; batch ``B02`` the duplicates and
    originals of ``pairs`` serials (mismatches, an orphan duplicate, a conflict: see
    :data:`DEMO_PAIRS`). Two auditor accounts are made so the review app can be opened at once."""
    from scanpipe.exports.service import export_cvr_file
    from scanpipe.reconcile.service import pairs_csv, reconcile
    from scanpipe.synth.deck import generate_deck
    from scanpipe.synth.definition import write_demo_election
    from scanpipe.synth.pairs import generate_pair_deck
    from scanpipe.tally import tally_csv
    from scanpipe.workflow import ingest_paths, init_election, queue, tally

    directory = directory.resolve()
    _fresh_dir(directory)
    election_path = write_demo_election(directory / "election", seed=seed)
    expected_path = generate_deck(election_path, directory / "cards", cards=cards, seed=seed, profile="typical", jobs=workers)
    cases = {i: {"case": DEMO_PAIRS[i % len(DEMO_PAIRS)], "serial": f"D{i + 1:04d}"} for i in range(pairs)}
    pairs_path = generate_pair_deck(election_path, directory / "pairs", pairs=pairs, seed=seed, profile="clean",
                                    jobs=workers, overrides=cases) if pairs else None
    db_url = f"sqlite:///{directory / 'scanpipe.db'}"
    store = Store.open(db_url)
    try:
        store.migrate()
        election, _ = init_election(store, election_path)
        summary = ingest_paths(store, [str(expected_path.parent / "cards")], batch="B01", hints=CardHints(), workers=workers)
        recount_url = _copy_database(directory / "scanpipe.db", directory / "recount.db")  # the recount's story: batch B01
        pair_lines: list[str] = []
        if pairs_path is not None:
            pair_summary = ingest_paths(store, [str(pairs_path.parent / "cards")], batch="B02", hints=CardHints(), workers=workers)
            reconciled = reconcile(store, render_dir=directory / "new-duplicates")
            pair_lines = [f"{sum(reconciled.statuses.values())} serial(s): "
                          + ", ".join(f"{n} {pair_status_label(s)}" for s, n in sorted(reconciled.statuses.items()))]
            pair_lines.append(f"pair truth: {compare_pairs_with_truth(store, pairs_path)}")
            pair_lines.insert(0, f"batch B02: {pair_summary.cards_stored} duplicate and original card(s) stored")
            (directory / "pairs.csv").write_text(pairs_csv(store), encoding="utf-8", newline="")
        rows = tally(store)
        (directory / "tally.csv").write_text(tally_csv(rows), encoding="utf-8", newline="")
        items = queue(store)
        (directory / "queue.json").write_text(json.dumps([i.as_json() for i in items], indent=2), encoding="utf-8")
        n_cvr = export_cvr_file(store, directory / "cvr.json")
        papers = _write_papers(store, election, directory, items, rows)
        agreement = compare_with_truth(store, expected_path)
        passwords = _demo_accounts(store)
    finally:
        store.close()
    recount_lines = _recount(recount_url, directory, expected_path)
    lines = [f"scanpipe demo: {election.name} ({election.date}), {len(election.precincts)} precincts, {len(election.ballot_styles)} ballot styles"]
    lines += ["", "Ingest (batch B01, regular ballots):"] + ["  " + line for line in summary.lines()]
    if pair_lines:
        lines += ["", "Duplicates and originals (batch B02) and reconciliation:"] + ["  " + line for line in pair_lines]
    reasons = Counter(reason_label(i.reason) for i in items)
    lines += ["", f"Queue: {len(items)} item(s) for a person" + (": " + ", ".join(f"{n} {r}" for r, n in sorted(reasons.items())) if items else "")]
    lines += ["", "Machine readings against the generator's truth (every target of batch B01):"] + ["  " + a for a in agreement]
    lines += ["", f"Tally of {election.contests[0].title} (the whole tally is in the files below):"] + _tally_preview(election, rows)
    lines += ["", "Files:",
              f"  database        {directory / 'scanpipe.db'}",
              f"  cards           {directory / 'cards' / 'cards'} (B01; truth: {expected_path.name}), {directory / 'pairs' / 'cards'} (B02)",
              f"  tally           {directory / 'tally.csv'} (contract CSV); printable: {papers['tally']}",
              f"  duplicates      {papers['duplicates']} (printable, every serial); pairs: {directory / 'pairs.csv'}",
              f"  pull list       {papers['pull']} (the cards a person must see, by batch and position)",
              f"  queue           {directory / 'queue.json'}",
              f"  CVRs            {directory / 'cvr.json'} ({n_cvr} CVRs, NIST SP 1500-103)",
              ] + recount_lines + ["", "Try:",
              f"  export SCANPIPE_DB={db_url}",
              "  scanpipe status                  # what waits for a person, by reason and precinct",
              "  scanpipe queue                   # each item with its batch, position and file",
              "  scanpipe review                  # the auditors' review app: open http://127.0.0.1:8080/",
              "Log in as one auditor, decide an item, then log in as the other (a second browser or a private",
              "window) to confirm it: Maryland needs two auditors per decision. Demo accounts (this database only):"]
    lines_after = ["", f"The recount: scanpipe --db {recount_url} recount status"]
    lines += [f"  {name:<9} password {password}" + ("  (administrator: adds and approves accounts)" if name in DEMO_ADMINS else "  (auditor)")
              for name, password in passwords.items()]
    return lines + lines_after


def _copy_database(source: Path, target: Path) -> str:
    """A consistent copy of a SQLite database (its WAL included); returns the copy's URL."""
    import sqlite3

    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    return f"sqlite:///{target}"


def _recount(url: str, directory: Path, expected_path: Path) -> list[str]:
    """The recount demo, on its own copy of the database taken after batch B01 (its certified
    results come from B01's truth): an open case cuts the queue and the review to its scope,
    and the demo's review should show every duplicate and pair."""
    from scanpipe.demo_recount import run_recount_demo

    store = Store.open(url)
    try:
        lines = run_recount_demo(store, directory, expected_path)
    finally:
        store.close()
    return lines + [f"  database   {url} (the demo's database before the duplicates: while its case is open, its queue is the case's scope)"]


def _demo_accounts(store: Store) -> dict[str, str]:
    """Two auditor accounts with fresh random passwords (the demo database only), added and
    approved by the two set-up administrators (whose passwords are printed too)."""
    import secrets

    from scanpipe.review.accounts import add_user, approve_user

    passwords = {name: f"{name}-{secrets.token_hex(4)}" for name in (*DEMO_AUDITORS, *DEMO_ADMINS)}
    for name in DEMO_ADMINS:
        add_user(store, name, "admin", passwords[name])  # set-up: the first two accounts
    for name in DEMO_AUDITORS:
        add_user(store, name, "auditor", passwords[name], actor=DEMO_ADMINS[0])
        approve_user(store, name, approver=DEMO_ADMINS[1])
    return passwords


def _write_papers(store: Store, election: Election, directory: Path, items: list, rows: list) -> dict[str, Path]:  # noqa: ANN001
    from scanpipe.reports.model import Heading, build_duplicates, build_tally, pull_list
    from scanpipe.reports.printable import duplicates_html, pull_list_html, tally_html, write_paper

    out = {"tally": directory / "tally.html", "duplicates": directory / "duplicates.html", "pull": directory / "pull-list.html"}
    write_paper(out["tally"], html=tally_html(build_tally(election, rows)))
    write_paper(out["duplicates"], html=duplicates_html(build_duplicates(store, election)))
    write_paper(out["pull"], html=pull_list_html(Heading.of(election, "Pull list: cards a person must see"), pull_list(store, election, items)))
    return out


def compare_pairs_with_truth(store: Store, pairs_path: Path) -> str:
    """How many serials reconciliation gave the status the generator intended."""
    truth = json.loads(pairs_path.read_text())["serials"]
    stored = {p.serial: p.status for p in store.pairs()}
    same = sum(1 for serial, t in truth.items() if stored.get(serial) == t["status"])
    wrong = [f"{serial} ({stored.get(serial, 'missing')}, expected {t['status']})" for serial, t in truth.items() if stored.get(serial) != t["status"]]
    return f"{same} of {len(truth)} serials have the status the generator intended" + (f"; differ: {', '.join(wrong)}" if wrong else "")


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


def _tally_preview(election: Election, rows: list) -> list[str]:  # noqa: ANN001
    """The first contest of each precinct on one line: every choice's votes, then what awaits a person."""
    from scanpipe.names import Names

    names = Names(election)
    first = election.contests[0].id
    by_precinct: dict[str, list[str]] = {}
    for r in rows:
        if r.contest == first and r.option not in ("#overvotes", "#undervotes"):
            by_precinct.setdefault(r.precinct, []).append(f"{names.option(r.option)} {r.votes}")
    return [f"  {names.precinct(p)}: {', '.join(parts)}" for p, parts in by_precinct.items()]
