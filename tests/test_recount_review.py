"""The recount case in the review app: a page every role may read (observers too), the report
downloadable there, and the queue and the tally cut to the case's scope."""

from __future__ import annotations

import html
from datetime import date
from pathlib import Path

from scanpipe.recount import service
from scanpipe.recount.petition import PetitionRequest
from scanpipe.review.index import Filters, page_of_items
from scanpipe.types import MarkStatus
from tests.helpers import read_card
from tests.recount_support import certified_csv
from tests.test_review_support import (
    MARGINAL,
    MARGINAL_2,
    ReviewWorld,
    build_world,
    login,
)


def _open_case(world: ReviewWorld, precincts: tuple[str, ...] = ("P01",)) -> None:
    service.import_certified(world.store, certified_csv(world.folder / "certified.csv"))
    doc, ok = service.petition(world.store, PetitionRequest("gov", "gov-b", date(2026, 11, 20), date(2026, 11, 18), precincts=precincts))
    assert ok, doc


def test_without_a_case_the_page_says_so(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    r = login(world.app, "olga").get("/case")
    assert r.status_code == 200 and "has no recount case" in html.unescape(r.text)


def test_an_observer_reads_the_case_page_and_downloads_the_report(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    _open_case(world)
    client = login(world.app, "olga")
    page = html.unescape(client.get("/case").text)
    assert "Recount of Governor" in page and "Scope: Precinct 1 Northfield." in page and "petitioner Ben Brooks" in page
    assert "Not complete" in page and "2 marginal mark" in page  # the two unclear governor marks of Precinct 1
    assert "Costs so far" in page and "outcome changed (Md. Election Law §12-107(b)(2)(i))" in page
    pdf = client.get("/case/report/report.pdf")
    assert pdf.status_code == 200 and pdf.data.startswith(b"%PDF-") and pdf.mimetype == "application/pdf"
    assert client.get("/case/report/results.json").json["Status"] == "recount"
    assert client.get("/case/report/secrets.txt").status_code == 404
    assert client.get("/case/certified/report.pdf").status_code == 404  # not certified yet


def test_an_open_case_cuts_the_review_queue_and_the_tally_to_its_scope(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    e = world.election
    world.store.save_cards([read_card("9" * 64, e, "S2", "P03", {"gov": {"gov-a": MarkStatus.UNKNOWN}}),
                            read_card("8" * 64, e, "S1", "P01", {"council": {"council-a": MarkStatus.UNKNOWN}})])
    from scanpipe.review.index import refresh_all

    refresh_all(world.store)
    before = {i.item for i in page_of_items(world.store, Filters())[0]}
    assert {"9" * 64, "8" * 64, MARGINAL, MARGINAL_2} <= before
    _open_case(world)
    after = page_of_items(world.store, Filters())[0]
    assert {i.item for i in after if i.reason == "marginal_mark"} == {MARGINAL, MARGINAL_2}
    assert all(i.precinct in (None, "P01") and i.contests in ((), ("gov",)) for i in after)
    tally = html.unescape(login(world.app, "olga").get("/tally").text)
    assert "Showing the open recount's scope" in tally and "P03|gov" not in tally and "P01|council" not in tally and "P01|gov|gov-a" in tally
