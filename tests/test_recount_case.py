"""The recount case through the command line: certified results in, petition, scope of the
queue, status, terminate, costs, report, certification; every bad input refused with nothing written."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scanpipe.cli import main
from scanpipe.decisions import Attestation
from scanpipe.recount.results_err import build_results, validate_results
from scanpipe.store.recount import RecountStore
from scanpipe.types import MarkStatus
from scanpipe.workflow import queue, record_decision
from tests.helpers import read_card
from tests.recount_support import CERTIFIED, RecountWorld, build_world, certified_csv

FILED = ["--filed", "2026-11-20", "--certified-on", "2026-11-18"]


def run(world: RecountWorld, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict | list | None, str]:
    """``scanpipe --db URL args...`` in process: exit status, stdout as JSON (None if empty), stderr."""
    capsys.readouterr()
    try:
        main(["--db", world.db, *args])
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


@pytest.fixture
def world(tmp_path: Path) -> RecountWorld:
    return build_world(tmp_path)


def _open_case(world: RecountWorld, capsys: pytest.CaptureFixture[str], precincts: str = "P01,P02,P03") -> dict:
    code, doc, err = run(world, capsys, "recount", "certified", str(certified_csv(world.folder / "certified.csv")))
    assert code == 0, err
    code, doc, err = run(world, capsys, "recount", "petition", "--contest", "gov", "--petitioner", "gov-b", "--precincts", precincts, *FILED)
    assert code == 0, err
    return doc  # type: ignore[return-value]


def _cases(world: RecountWorld) -> list:
    return RecountStore(world.store).cases()


# --------------------------------------------------------------------------------------
# certified results


def test_certified_csv_is_imported_and_every_bad_row_is_named_with_nothing_imported(world: RecountWorld, capsys) -> None:
    bad = certified_csv(world.folder / "bad.csv", extra=(
        "P09,gov,gov-a,3\n"        # line 32: unknown precinct
        "P01,mayor,m-a,3\n"        # 33: unknown contest
        "P01,gov,gov-z,3\n"        # 34: unknown option
        "P02,gov,gov-a,7\n"        # 35: duplicate of line 8
        "P03,judge,judge-yes,4\n"  # 36: judge-no missing
        "P04,q1,q1-for,2.5\n"      # 37: not a whole number
        "P05,q2,q2-for,-4\n"))     # 38: negative
    code, doc, err = run(world, capsys, "recount", "certified", str(bad))
    assert code == 2 and doc is None
    for expected in ("line 32: precinct 'P09' is not a precinct of election 'demo-2026'",
                     "line 33: contest 'mayor' is not a contest of election 'demo-2026'",
                     "line 34: option 'gov-z' is not an option of contest 'gov'",
                     "line 35: duplicate of line 8 (P02, gov, gov-a)",
                     "line 38: votes -4 is negative",
                     "line 37: votes '2.5' is not a whole number",
                     "precinct P03, contest judge: no row for option(s) judge-no",
                     "nothing imported"):
        assert expected in err, expected
    assert RecountStore(world.store).latest_import("demo-2026") is None
    code, doc, err = run(world, capsys, "recount", "certified", str(certified_csv(world.folder / "good.csv")))
    assert code == 0 and doc["rows"] == 30 and doc["contests"] == ["gov"] and doc["contest_titles"] == ["Governor"]


def test_certified_results_of_another_election_are_refused(world: RecountWorld, capsys) -> None:
    other = certified_csv(world.folder / "other.csv")
    text = other.read_text().splitlines()
    other.write_text("\n".join([text[0] + ",election"] + [line + ",county-2024" for line in text[1:]]) + "\n")
    code, _, err = run(world, capsys, "recount", "certified", str(other))
    assert code == 2 and "election 'county-2024' is another election (loaded: 'demo-2026', Demo County General 2026)" in err
    code, _, err = run(world, capsys, "recount", "certified", "--election", "county-2024", str(certified_csv(world.folder / "c.csv")))
    assert code == 2 and "results for another election" in err
    report = build_results(world.election, {("P01", "gov", o.id): 1 for o in world.election.contest("gov").options}, contests=["gov"],
                           status="certified", generated_at=datetime.now(UTC), software="test")
    report["Election"][0]["Name"]["Text"][0]["Content"] = "Springfield Primary 2024"
    report["Election"][0]["ExternalIdentifier"][0]["Value"] = "springfield-2024"
    path = world.folder / "other.json"
    path.write_text(json.dumps(report))
    code, _, err = run(world, capsys, "recount", "certified", str(path))
    assert code == 2 and "results for another election (Springfield Primary 2024)" in err
    assert RecountStore(world.store).latest_import("demo-2026") is None


def test_a_nist_election_report_is_read_with_its_overvotes_and_undervotes(world: RecountWorld, capsys) -> None:
    figures = {(p, "gov", o): n for p, per in CERTIFIED.items() for o, n in {**{x.id: 0 for x in world.election.contest("gov").options}, **per}.items()}
    figures.update({(p, "gov", k): 1 for p in CERTIFIED for k in ("#overvotes", "#undervotes")})
    report = build_results(world.election, figures, contests=["gov"], status="certified", generated_at=datetime.now(UTC), software="test")
    validate_results(report)
    path = world.folder / "certified.json"
    path.write_text(json.dumps(report))
    code, doc, err = run(world, capsys, "recount", "certified", str(path))
    assert code == 0 and doc["format"] == "nist-err-v2", err
    imp = RecountStore(world.store).latest_import("demo-2026")
    assert RecountStore(world.store).certified_counts(imp.id) == figures
    report["Status"] = "unofficial-complete"
    path.write_text(json.dumps(report))
    code, _, err = run(world, capsys, "recount", "certified", str(path))
    assert code == 2 and "'unofficial-complete' results are not the certified results" in err


# --------------------------------------------------------------------------------------
# the petition: refusals write nothing


def test_petition_bad_input_and_refusals_write_nothing(world: RecountWorld, capsys) -> None:
    code, _, err = run(world, capsys, "recount", "petition", "--contest", "gov", "--petitioner", "gov-b", *FILED)
    assert code == 2 and "no certified results of election 'demo-2026' are imported" in err
    run(world, capsys, "recount", "certified", str(certified_csv(world.folder / "certified.csv")))
    code, _, err = run(world, capsys, "recount", "petition", "--contest", "mayor", "--petitioner", "gov-b", *FILED)
    assert code == 2 and "--contest mayor: election 'demo-2026' has no such contest" in err
    code, doc, err = run(world, capsys, "recount", "petition", "--contest", "gov", "--petitioner", "gov-a", *FILED)
    assert code == 1 and doc["eligible"] is False and "Ada Alvarez won Governor in the certified results" in doc["reasons"][0]
    code, doc, _ = run(world, capsys, "recount", "petition", "--contest", "gov", "--petitioner", "gov-b", "--filed", "2026-11-17",
                       "--certified-on", "2026-11-18")
    assert code == 1 and doc["filed_in_time"] is False and doc["reasons"] == ["filed 2026-11-17, before the certification (2026-11-18): a petition is filed after it"]
    assert _cases(world) == []
    code, _, err = run(world, capsys, "recount", "terminate", "--requested-by", "gov-b", "--reason", "x")
    assert code == 2 and "has no recount case" in err
    for verb in (["status"], ["costs"], ["report", "--out", str(world.folder / "r")]):
        assert run(world, capsys, "recount", *verb)[0] == 2
    assert not (world.folder / "r").exists()


def test_a_petition_opens_the_case_with_its_arithmetic(world: RecountWorld, capsys) -> None:
    doc = _open_case(world, capsys)
    assert doc["eligible"] and doc["case"] == 1 and doc["precincts"] == ["P01", "P02", "P03"]
    assert doc["apparent_winner_name"] == "Ada Alvarez" and doc["margin_votes"] == 1 and doc["margin_percent"] == "1.1236"
    assert doc["deadline"] == "2026-11-21" and doc["rule_set"] == "MD-2026.1"
    code, again, _ = run(world, capsys, "recount", "petition", "--contest", "gov", "--petitioner", "gov-c", *FILED)
    assert code == 1 and again["reasons"] == ["a recount is already open (case 1, gov): one case at a time"]


# --------------------------------------------------------------------------------------
# the scope: nobody is asked about anything else


def test_an_open_case_asks_only_about_its_contest_and_precincts(world: RecountWorld, capsys) -> None:
    e = world.election
    world.store.save_cards([
        read_card("d" * 64, e, "S1", "P01", {"gov": {"gov-a": MarkStatus.UNKNOWN}}),                   # in scope
        read_card("e" * 64, e, "S1", "P01", {"gov": {"gov-a": MarkStatus.YES}, "council": {"council-a": MarkStatus.UNKNOWN}}),  # other contest
        read_card("f" * 64, e, "S2", "P03", {"gov": {"gov-b": MarkStatus.YES}, "q1": {"q1-for": MarkStatus.UNKNOWN}}),
    ])
    before = queue(world.store)
    assert {(i.item[:1], i.contests) for i in before} == {("d", ("gov",)), ("e", ("council",)), ("f", ("q1",))}
    _open_case(world, capsys, "P01,P02")
    code, items, _ = run(world, capsys, "queue", "--json")
    assert code == 0 and [(i["item"][:1], i["contests"]) for i in items] == [("d", ["gov"])]
    status = run(world, capsys, "recount", "status")[1]
    p01 = status["precincts"][0]
    assert p01["precinct_name"] == "Precinct 1 Northfield" and p01["cards_pending"] == 1 and p01["left"] == {"marginal_mark": 1}
    assert status["complete"] is False
    record_decision(world.store, e, item="d" * 64, item_kind="card", contest="gov", votes=["gov-a"], auditors=["ann", "bob"], rule=None, note=None,
                    attestation=Attestation("cli:test@host", accounts=False))
    assert queue(world.store) == []
    assert run(world, capsys, "recount", "status")[1]["complete"] is True


# --------------------------------------------------------------------------------------
# costs, termination, the report, certification


def test_costs_show_every_test_with_names(world: RecountWorld, capsys) -> None:
    _open_case(world, capsys)
    code, doc, _ = run(world, capsys, "recount", "costs")
    assert code == 0 and doc["payer"] == "county" and doc["outcome_changed"] is True
    assert [t["rule"] for t in doc["tests"]] == ["outcome_changed", "petitioner_gain", "certified_margin"]
    assert "Ben Brooks 45, Ada Alvarez 44" in doc["tests"][0]["arithmetic"]


def test_terminate_stops_at_a_precinct_boundary_and_the_report_says_where(world: RecountWorld, capsys) -> None:
    _open_case(world, capsys)
    world.store.save_cards([read_card("d" * 64, world.election, "S2", "P03", {"gov": {"gov-a": MarkStatus.UNKNOWN}})])
    code, doc, _ = run(world, capsys, "recount", "terminate", "--requested-by", "Chloe Chen", "--reason", "costs")
    assert code == 1 and "Chloe Chen is not a petitioner" in doc["reasons"][0]
    code, doc, _ = run(world, capsys, "recount", "terminate", "--requested-by", "Ben Brooks", "--reason", "costs", "--finished", "P03")
    assert code == 1 and doc["reasons"] == ["precinct P03 cannot be declared finished: 9 card(s) counted, 2 awaiting a person"]
    code, doc, err = run(world, capsys, "recount", "terminate", "--requested-by", "Ben Brooks", "--reason", "the petitioner withdrew")
    assert code == 0, err
    assert doc["finished"] == ["P01", "P02"] and doc["kept_certified"] == ["P03"]
    assert run(world, capsys, "queue", "--json")[1] == []  # P03 is no longer asked about
    out = world.folder / "report"
    code, written, _ = run(world, capsys, "recount", "report", "--out", str(out))
    report = json.loads((out / "report.json").read_text())
    assert report["case"]["terminated"]["kept_certified_names"] == ["Precinct 3 Riverside"]
    p03 = [r for r in report["precincts"] if r["precinct"] == "P03"]
    assert all(r["certified"] == r["recount"] and not r["recounted"] for r in p03)
    # P03's +1 for Ben Brooks was not recounted to the end; P01's -1 for Ada Alvarez was: a tie, so the outcome changed
    assert report["outcome_changed"] and report["contest_result"]["tied_after_recount"] == ["Ada Alvarez", "Ben Brooks"]
    assert "Terminated on" in (out / "report.html").read_text()
    code, doc, _ = run(world, capsys, "recount", "terminate", "--requested-by", "Ben Brooks", "--reason", "again")
    assert code == 1 and doc["reasons"] == ["recount case 1 is already terminated"]


def test_the_report_has_its_four_files_with_names_and_a_valid_nist_results_file(world: RecountWorld, capsys) -> None:
    _open_case(world, capsys)
    out = world.folder / "report"
    code, doc, err = run(world, capsys, "recount", "report", "--out", str(out))
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.json", "report.pdf", "results.json"]
    report = json.loads((out / "report.json").read_text())
    assert report["case"]["contest_title"] == "Governor" and report["case"]["petitioner_name"] == "Ben Brooks"
    row = next(r for r in report["precincts"] if r["precinct"] == "P01" and r["option"] == "gov-a")
    assert (row["precinct_name"], row["option_name"], row["certified"], row["recount"], row["change"]) == ("Precinct 1 Northfield", "Ada Alvarez", 7, 6, -1)
    assert {r["option"] for r in report["precincts"]} >= {"#overvotes", "#undervotes"}
    assert report["outcome_changed"] is True and report["costs"]["payer"] == "county"
    assert len(report["data_sha256"]) == 64 and report["software_version"].startswith("scanpipe ")
    assert report["duplicates"]["totals"]["examined"] == 0 and report["complete"] is True
    results = json.loads((out / "results.json").read_text())
    validate_results(results)
    assert results["Status"] == "recount"
    html = (out / "report.html").read_text()
    assert "Ada Alvarez" in html and "Precinct 1 Northfield" in html and "<svg" in html and ">gov-a<" not in html
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(out / "report.pdf"))
    text = "".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    assert (out / "report.pdf").read_bytes().startswith(b"%PDF-") and "Ben Brooks" in text and "Precinct 3 Riverside" in text
    assert doc["files"]["report.pdf"]["bytes"] == (out / "report.pdf").stat().st_size


def test_the_board_certifies_and_a_later_change_makes_the_report_stale(world: RecountWorld, capsys) -> None:
    _open_case(world, capsys)
    out = world.folder / "report"
    run(world, capsys, "recount", "report", "--out", str(out))
    code, doc, err = run(world, capsys, "recount", "certify", "--member", "carol", "--report", str(out))
    assert code == 2 and "name at least two members" in err
    (out / "report.html").write_text((out / "report.html").read_text().replace("Ben Brooks", "B. Brooks"))
    code, doc, _ = run(world, capsys, "recount", "certify", "--member", "carol", "--member", "dave", "--report", str(out))
    assert code == 1 and "were edited since" in doc["reasons"][0]
    run(world, capsys, "recount", "report", "--out", str(out))
    code, doc, err = run(world, capsys, "recount", "certify", "--member", "carol", "--member", "dave", "--report", str(out))
    assert code == 0 and doc["certified"] and doc["members"] == ["carol", "dave"], err
    cert = RecountStore(world.store).certification(1)
    assert cert is not None and cert.report_sha256 == doc["files"]["report.json"]
    assert RecountStore(world.store).certified_file(1, "report.pdf") == (out / "report.pdf").read_bytes()
    fresh = world.folder / "again"
    assert json.loads(run(world, capsys, "recount", "report", "--out", str(fresh))[1] and (fresh / "report.json").read_text())["certification"]["stale"] is False
    world.store.save_cards([read_card("d" * 64, world.election, "S1", "P02", {"gov": {"gov-b": MarkStatus.YES}})])
    code, doc, err = run(world, capsys, "recount", "report", "--out", str(fresh))
    assert code == 0 and doc["stale"] is True and "changed after the board certified" in err
    report = json.loads((fresh / "report.json").read_text())
    assert report["certification"]["stale"] is True and "STALE" in (fresh / "report.html").read_text()
    code, doc, _ = run(world, capsys, "recount", "certify", "--member", "carol", "--member", "dave", "--report", str(fresh))
    assert code == 1 and doc["reasons"][0] == "recount case 1 is already certified"


def test_certification_waits_for_the_recount_to_be_complete(world: RecountWorld, capsys) -> None:
    _open_case(world, capsys)
    world.store.save_cards([read_card("d" * 64, world.election, "S1", "P02", {"gov": {"gov-a": MarkStatus.UNKNOWN}})])
    out = world.folder / "report"
    run(world, capsys, "recount", "report", "--out", str(out))
    assert "PRELIMINARY" in (out / "report.html").read_text()
    code, doc, _ = run(world, capsys, "recount", "certify", "--member", "carol", "--member", "dave", "--report", str(out))
    assert code == 1 and doc["reasons"][0] == "the recount is not complete: Precinct 2 Eastbrook: 1 card(s) awaiting a person"
    assert RecountStore(world.store).certification(1) is None


def test_a_counterpetition_adds_the_other_precincts_once_the_outcome_changed(world: RecountWorld, capsys) -> None:
    _open_case(world, capsys, "P01")  # Ada Alvarez loses a vote in P01: 44 to 44, a tie, so the outcome changed
    counter = ["recount", "petition", "--counter", "--contest", "gov", "--petitioner", "gov-a", "--filed", "2026-12-02",
               "--certified-on", "2026-11-18"]
    code, doc, _ = run(world, capsys, *counter, "--determined-on", "2026-11-29")
    assert code == 1 and doc["reasons"] == ["filed 2026-12-02, after the last day to file (2026-12-01)"]
    code, doc, err = run(world, capsys, *counter, "--determined-on", "2026-12-01")
    assert code == 0, err
    assert doc["kind"] == "counterpetition" and doc["precincts"] == ["P02", "P03", "P04", "P05"] and doc["deadline"] == "2026-12-03"
    status = run(world, capsys, "recount", "status")[1]
    assert status["scope"] == ["P01", "P02", "P03", "P04", "P05"] and status["complete"] is False  # P04, P05: no card counted yet
    costs = run(world, capsys, "recount", "costs")[1]
    assert [p["kind"] for p in costs["petitions"]] == ["petition", "counterpetition"]


def test_arkansas_charges_the_capped_cost_and_allows_one_recount_per_candidate(tmp_path: Path, capsys) -> None:
    world = build_world(tmp_path, jurisdiction="AR")
    run(world, capsys, "recount", "certified", str(certified_csv(world.folder / "certified.csv")))
    args = ["recount", "petition", "--contest", "gov", "--petitioner", "gov-a", "--precincts", "P01,P02,P03",
            "--unofficial-on", "2026-11-04", "--filed", "2026-11-06", "--certified-on", "2026-11-18"]
    code, doc, err = run(world, capsys, *args)
    assert code == 0 and doc["rule_set"] == "AR-2026.1" and doc["limit_percent"] is None and doc["notice_by"] == "2026-11-08", err
    code, doc, _ = run(world, capsys, "recount", "costs", "--actual-cost", "5000")
    cap = next(t for t in doc["tests"] if t["rule"] == "charge_cap")
    assert cap["inputs"]["votes_cast"] == 29 and doc["charge"] == "7.25" and doc["refund"] is True and doc["payer"] == "county"
    assert run(world, capsys, "recount", "costs", "--actual-cost", "lots")[0] == 2


def test_the_recount_waits_for_new_duplicates_to_be_printed_and_scanned_back(world: RecountWorld, capsys) -> None:
    from dataclasses import replace

    from scanpipe.reconcile.service import adjudicate_pair, reconcile
    from scanpipe.types import CardKind, PairingLabel

    def labelled(seed: str, kind: CardKind, option: str):
        card = read_card(seed * 64, world.election, "S1", "P01", {"gov": {option: MarkStatus.YES}}, kind=kind)
        return replace(card, label=PairingLabel(kind, "A0042", "A0042", None))

    world.store.save_cards([labelled("1", CardKind.DUPLICATE, "gov-a"), labelled("2", CardKind.ORIGINAL, "gov-b")])
    reconcile(world.store)
    _open_case(world, capsys, "P01,P02")
    adjudicate_pair(world.store, "A0042", contest="gov", votes=["gov-b"], auditors=["ann", "bob"], rule="md-fill",
                    attestation=Attestation("cli:test@host", accounts=False))
    status = run(world, capsys, "recount", "status")[1]
    assert status["new_duplicates_to_print_and_scan"] == ["A0042-R1"] and status["complete"] is False
    out = world.folder / "report"
    run(world, capsys, "recount", "report", "--out", str(out))
    report = json.loads((out / "report.json").read_text())
    assert report["duplicates"]["new_duplicates"][0]["paper"] == "to print" and report["duplicates"]["totals"]["mismatch"] == 1
    assert report["duplicates"]["decided_by"] == {"ann": 1, "bob": 1}
    assert "new duplicate(s) to print and scan: A0042-R1" in (out / "report.html").read_text()
    world.store.attach_scanned_new_duplicate("A0042-R1", "3" * 64)  # its printed card scanned back and read as decided
    assert run(world, capsys, "recount", "status")[1]["complete"] is True


def test_the_report_names_the_boards_ruling_on_an_orphan(world: RecountWorld, capsys) -> None:
    from dataclasses import replace

    from scanpipe.reconcile.pairing import PairStatus
    from scanpipe.reconcile.rulings import RulingKind
    from scanpipe.reconcile.service import reconcile
    from scanpipe.types import CardKind, PairingLabel

    card = read_card("1" * 64, world.election, "S1", "P01", {"gov": {"gov-b": MarkStatus.YES}}, kind=CardKind.DUPLICATE)
    world.store.save_cards([replace(card, label=PairingLabel(CardKind.DUPLICATE, "A0007", "A0007", None))])
    reconcile(world.store)
    world.store.add_board_ruling(serial="A0007", matter=PairStatus.ORPHAN_DUPLICATE, ruling=RulingKind.COUNTS_AS_IS, card="1" * 64,
                                 cards=["1" * 64], members={"carol": "for", "dave": "for", "erin": "against"}, actor="carol",
                                 rule_set="MD-2026.1", note=None)
    _open_case(world, capsys, "P01")
    out = world.folder / "report"
    run(world, capsys, "recount", "report", "--out", str(out))
    orphans = json.loads((out / "report.json").read_text())["duplicates"]["orphans"]
    assert orphans == [{"serial": "A0007", "kind": "orphan_duplicate", "status": orphans[0]["status"],
                        "board_ruling": {"ruling": "counts_as_is", "members": {"carol": "for", "dave": "for", "erin": "against"}, "note": None}}]
    assert "A0007 (orphan duplicate" in (out / "report.html").read_text() and "the board ruled counts as is: carol for, dave for, erin against" in (out / "report.html").read_text()
