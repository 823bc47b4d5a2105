"""§12-108 as the statute reads, end to end with the CLI on the committed pair fixtures.

1. Ballot types: without the duplication log a provisional serial is compared as a mailed one
   (its original's Question 2 vote is a mismatch); with it, on its eligible contests. A bad
   log is refused with line numbers and nothing is imported.
2. The new duplicate's paper: one decided the way the review decides it has paper at once;
   it is pending until printed, scanned back as decided and stored; a print that reads
   differently stays pending; the report is not final meanwhile.
3. The board: orphans and conflicts wait for its ruling (quorum, accounts), matched pairs are
   signed off in batches, and the report says who examined each pair.
4. Rule sets: the report's heading and citations follow the election's jurisdiction; the rule
   set's id is stored with decisions, new duplicates, rulings and sign-offs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from scanpipe.cli import cli
from scanpipe.errors import ScanpipeError
from scanpipe.store.repository import Store
from tests.test_reconcile import EXPECTED, FIXTURES, Run, by_case

BOARD = ("--member", "carol=for", "--member", "dave=for", "--by", "carol", "--no-accounts")


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture deck ingested once (no log, not reconciled); each test works on a copy."""
    root = tmp_path_factory.mktemp("statute")
    shutil.copytree(FIXTURES, root / "fx")
    run = Run(root)
    run("init", "--election", str(root / "fx" / "election" / "election.json"), code=0)
    run("ingest", str(root / "fx" / "deck" / "cards"), "-q", "--workers", "1")
    return root


@pytest.fixture
def run(ingested: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    for part in ingested.glob("db.sqlite*"):  # the database and its write-ahead log
        shutil.copy(part, tmp_path / part.name)
    (tmp_path / "fx").symlink_to(ingested / "fx")
    monkeypatch.chdir(tmp_path)
    return Run(tmp_path)


def fails(run: Run, *args: str) -> str:
    """The message of a command refused as a whole (``scanpipe.cli.main`` maps a ScanpipeError to exit 2)."""
    result = CliRunner().invoke(cli, ["--db", run.db, *args])
    if isinstance(result.exception, ScanpipeError):
        return f"scanpipe: error: {result.exception}"
    assert result.exit_code == 2, (result.output, result.exception)
    return result.output


def row(run: Run, serial: str) -> dict[str, str]:
    return next(r for r in run.pairs() if r["serial"] == serial)


def pending(run: Run) -> dict[str, dict]:
    return {p["serial"]: p for p in json.loads(run("duplicates", "pending", "--json", code=0))}


def store_of(run: Run) -> Store:
    return Store.open(run.db)


# --------------------------------------------------------------------------------------
# 1. Ballot types


def test_a_provisional_serial_is_compared_as_mailed_until_the_log_says_provisional(run: Run) -> None:
    serial = by_case("provisional")
    run("reconcile")
    assert (row(run, serial)["status"], row(run, serial)["contests"]) == ("mismatch", "q2")  # the original's Question 2 vote
    run("import", "duplication-log", str(run.root / "fx" / "deck" / "duplication_log.csv"), code=0)
    run("reconcile")
    assert (row(run, serial)["status"], row(run, serial)["contests"]) == ("match", "")


def test_a_bad_duplication_log_is_refused_with_line_numbers_and_nothing_is_imported(run: Run) -> None:
    log = run.root / "log.csv"
    log.write_text("serial,precinct,reason,ballot_type,eligible_contests\n"
                   "A1,P01,torn,mail,\n"
                   "A2,P01,torn,absentee,\n"
                   "A3,P06,torn,provisional,gov;mayor\n"
                   "A1,P01,again,mail,\n"
                   "A4,P99,torn,,\n"
                   "A5,P01,torn,mail,gov\n", encoding="utf-8")
    out = fails(run, "import", "duplication-log", str(log))
    assert out.splitlines()[1:] == [
        "  line 3: ballot type 'absentee' is not one of mail, provisional, other (or empty: not known)",
        "  line 4: contest id(s) 'mayor' not in election 'demo-2026'",
        "  line 5: serial A1 is also on line 2",
        "  line 6: precinct 'P99' is not a precinct of election 'demo-2026'",
        "  line 7: eligible contests are for a provisional ballot; this one is 'mail'",
    ]
    assert f"{log}: the duplication log was not imported (nothing was):" in out.splitlines()[0]
    assert store_of(run).duplication_log() == {}
    log.write_text("serial,precinct,reason,ballot-type\nA1,P01,torn,mail\n", encoding="utf-8")
    assert "line 1: unknown column(s) 'ballot-type'" in fails(run, "import", "duplication-log", str(log))
    assert store_of(run).duplication_log() == {}


# --------------------------------------------------------------------------------------
# 2. The new duplicate's paper


def _decide_as_the_review_does(run: Run, serial: str) -> tuple[str, ...]:
    """Two auditors' decisions through the library call the review makes (no render folder)."""
    from scanpipe.decisions import Attestation
    from scanpipe.reconcile.service import adjudicate_pair

    store = store_of(run)
    made: tuple[str, ...] = ()
    try:
        for contest in EXPECTED[serial]["contests"]:
            for auditor in ("alice", "bob"):
                made += adjudicate_pair(store, serial, contest=contest, votes=EXPECTED[serial]["intent"][contest], auditors=[auditor],
                                        attestation=Attestation(f"review:{auditor}", accounts=False)).new_duplicates  # a deck without accounts
    finally:
        store.close()
    return made


def test_a_new_duplicate_decided_in_the_review_has_paper_and_is_pending_until_stored_with_its_original(run: Run) -> None:
    run("import", "duplication-log", str(run.root / "fx" / "deck" / "duplication_log.csv"), code=0)
    run("reconcile")
    serial = by_case("wrong_option")
    assert _decide_as_the_review_does(run, serial) == (f"{serial}-R1",)
    nd = f"{serial}-R1"
    assert store_of(run).new_duplicate_pages(nd)  # rendered at once, into the database
    assert pending(run)[nd]["state"] == "to_print"
    report = CliRunner().invoke(cli, ["--db", run.db, "report", "duplicates"])
    assert report.exit_code == 1 and "NOT FINAL" in report.output and f"{nd}" in report.output
    assert "has not been scanned back" in fails(run, "duplicates", "stored", nd, "--by", "ann", "--where", "envelope 7")
    printed = run("duplicates", "print", "--all", "--out", "printed", "--by", "ann", code=0)
    assert f"{nd}: " in printed and (run.root / "printed" / f"{nd}.pdf").read_bytes().startswith(b"%PDF")
    assert (pending(run)[nd]["state"], pending(run)[nd]["printed_by"]) == ("to_scan", "ann")
    run("ingest", str(run.root / "printed" / f"{nd}.png"), "--batch", "printed", "-q")
    assert f"printed new duplicate scanned: {nd}" in run("reconcile")
    assert pending(run)[nd]["state"] == "to_store"
    run("duplicates", "stored", nd, "--by", "ann", "--where", "envelope 7", code=0)
    assert nd not in pending(run)
    stored = json.loads(run("duplicates", "pending", "--json", "--all", code=0))
    assert [(p["serial"], p["state"], p["stored_where"]) for p in stored if p["serial"] == nd] == [(nd, "stored", "envelope 7")]
    assert row(run, serial)["counted"] == nd


def test_a_printed_new_duplicate_that_reads_differently_stays_pending(run: Run) -> None:
    from scanpipe.exports.paper import PaperSpec, png_bytes, render_new_duplicate
    from scanpipe.types import ContestReading

    run("reconcile")
    serial = by_case("wrong_option")
    _decide_as_the_review_does(run, serial)
    nd = f"{serial}-R1"
    store = store_of(run)
    record = store.new_duplicates(base_serial=serial)[0]
    (contest,) = EXPECTED[serial]["contests"]
    wrong = tuple(ContestReading(c.contest, () if c.contest == contest else c.votes, c.outcome, c.undervotes) for c in record.contests)
    page = render_new_duplicate(store.current_election(), PaperSpec(nd, record.style, record.precinct, wrong))[0]
    (run.root / "misprint.png").write_bytes(png_bytes(page, 200))
    store.close()
    run("ingest", str(run.root / "misprint.png"), "--batch", "misprint", "-q")
    out = run("reconcile")
    assert f"reads differently from the decision in {contest}" in out
    assert pending(run)[nd]["state"] == "reads_differently"
    assert "reads differently" in pending(run)[nd]["problem"]


# --------------------------------------------------------------------------------------
# 3. The board


def test_an_orphan_duplicate_goes_to_the_board_which_rules_a_new_duplicate_that_auditors_fill(run: Run) -> None:
    run("reconcile")
    serial = by_case("orphan_duplicate")
    assert "is a matter for the board (Md. Election Law §12-108(c))" in fails(
        run, "adjudicate", serial, "--contest", "gov", "--votes", "gov-c", "--auditor", "a", "--auditor", "b", "--no-accounts")
    assert "needs at least 2 members present; 1 present" in fails(
        run, "board", "rule", serial, "--ruling", "new-duplicate", "--member", "carol=for", "--by", "carol", "--no-accounts")
    assert "this database has no review accounts" in fails(run, "board", "rule", serial, "--ruling", "nothing", "--member", "carol=for",
                                                         "--member", "dave=for", "--by", "carol")
    assert store_of(run).board_rulings() == {}
    out = run("board", "rule", serial, "--ruling", "new-duplicate", *BOARD, code=0)
    assert "new_duplicate; for: carol, dave [MD-2026.1]" in out
    queued = [i for i in json.loads(run("queue", "--json")) if i["item"] == serial]
    assert [(i["reason"], i["contests"]) for i in queued] == [("orphan_duplicate", ["gov", "council", "judge", "q1", "q2"])]
    for contest, votes in EXPECTED[serial]["intent"].items():
        run("adjudicate", serial, "--contest", contest, "--votes", ",".join(votes), "--auditor", "a", "--auditor", "b", "--no-accounts")
    assert (row(run, serial)["status"], row(run, serial)["counted"]) == ("resolved", f"{serial}-R1")
    assert pending(run)[f"{serial}-R1"]["state"] == "to_print"


def test_the_board_rules_that_nothing_counts_or_that_a_duplicate_counts_as_it_is(run: Run) -> None:
    run("reconcile")
    before = run.tally()
    orphan_original, conflict = by_case("orphan_original"), by_case("conflict")
    assert "an original never counts as it is" in fails(run, "board", "rule", orphan_original, "--ruling", "counts-as-is", *BOARD)
    run("board", "rule", orphan_original, "--ruling", "nothing", *BOARD, code=0)
    assert (row(run, orphan_original)["status"], row(run, orphan_original)["counted"]) == ("resolved", "none")
    precinct = EXPECTED[orphan_original]["originals"][0]["precinct"]
    after = run.tally()
    assert after[(precinct, "gov", "#pending")] == before[(precinct, "gov", "#pending")] - 1
    run("board", "rule", conflict, "--ruling", "counts-as-is", *BOARD, code=0)
    assert (row(run, conflict)["status"], row(run, conflict)["counted"]) == ("resolved", "duplicate")
    assert run.tally()[("P01", "gov", "#pending")] == after[("P01", "gov", "#pending")] - 1
    rulings = store_of(run).board_rulings()
    assert {s: (r.ruling.value, r.rule_set, dict(r.members)) for s, r in rulings.items()} == {
        orphan_original: ("nothing", "MD-2026.1", {"carol": "for", "dave": "for"}),
        conflict: ("counts_as_is", "MD-2026.1", {"carol": "for", "dave": "for"})}


def test_matched_pairs_are_signed_off_in_batches_and_the_report_says_who_examined_each(run: Run) -> None:
    run("import", "duplication-log", str(run.root / "fx" / "deck" / "duplication_log.csv"), code=0)
    run("reconcile")
    matched = sorted(s for s, t in EXPECTED.items() if t["status"] == "match")
    assert run("board", "unexamined", code=0).split() == matched
    wrong = by_case("wrong_option")
    assert f"serial {wrong} is not a matched pair (mismatch)" in fails(run, "board", "sign-off", *matched, wrong, *BOARD)
    assert store_of(run).examinations() == {}
    run("board", "sign-off", *matched, *BOARD, code=0)
    assert run("board", "unexamined", code=0).split() == []
    report = CliRunner().invoke(cli, ["--db", run.db, "report", "duplicates"]).output
    for serial in matched:
        assert f"  {serial} match: board sign-off 1 by carol, dave [MD-2026.1]" in report
    assert f"  {wrong} mismatch: NOT YET EXAMINED" in report


# --------------------------------------------------------------------------------------
# 4. Rule sets


def test_the_report_follows_the_elections_jurisdiction(run: Run, tmp_path: Path) -> None:
    run("reconcile")
    md = CliRunner().invoke(cli, ["--db", run.db, "report", "duplicates"]).output
    assert md.splitlines()[0] == "Duplicate reconciliation report (Md. Election Law §12-108(d))"
    election = json.loads((run.root / "fx" / "election" / "election.json").read_text())
    arkansas = tmp_path / "ar"
    shutil.copytree(run.root / "fx" / "election", arkansas)
    (arkansas / "election.json").write_text(json.dumps({**election, "jurisdiction": "AR"}))
    run("init", "--election", str(arkansas / "election.json"), code=0)
    run("reconcile")
    ar = CliRunner().invoke(cli, ["--db", run.db, "report", "duplicates"]).output
    assert "12-108" not in ar and "Md." not in ar
    assert ar.splitlines()[0] == "Duplicate reconciliation report (the county board's recount procedure (Ark. Code Ann. §7-5-319))"
    rules = json.loads(run("rules", "--json", code=0))
    assert rules["rule_set"] == "AR-2026.1"
    assert {r["source"]["kind"] for r in rules["rules"]} == {"statute", "local policy"}


def test_the_rule_sets_id_is_stored_with_every_decision_and_new_duplicate(run: Run) -> None:
    run("reconcile")
    serial = by_case("wrong_option")
    _decide_as_the_review_does(run, serial)
    store = store_of(run)
    assert {d.rule_set for d in store.decisions()} == {"MD-2026.1"}
    assert [nd.rule_set for nd in store.new_duplicates()] == ["MD-2026.1"]
    assert store.get_pair(serial).detail["rule_set"] == "MD-2026.1"
    assert all(e.detail.get("rule_set") == "MD-2026.1" for e in store.events("decision"))
