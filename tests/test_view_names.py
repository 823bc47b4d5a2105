"""No person-facing page or printable paper shows a bare id: contest titles, candidate and
precinct names, plain reasons and card places instead of option ids, contest ids, precinct
ids, reason codes and hex card ids. Ids stay in URLs, form values and machine formats."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from scanpipe.names import CardPlace, Names
from scanpipe.reports import printable, text
from scanpipe.reports.model import Heading, build_duplicates, build_status, build_tally, pull_list, queue_rows
from scanpipe.types import Reason
from scanpipe.workflow import queue, tally
from tests.test_review_support import csrf_of, form_token_of, login
from tests.view_support import CONFLICT, MISMATCH, ORPHAN, PairWorld, build_pair_world


class _Text(HTMLParser):
    """The text a person sees: text nodes outside scripts and styles (attributes are not shown)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def visible(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(parser.parts)


def pdf_text(data: bytes) -> str:
    import pypdfium2

    doc = pypdfium2.PdfDocument(data)
    return "\n".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))


def bare_ids(world: PairWorld, shown: str) -> list[str]:
    """The ids found as whole words in ``shown``."""
    election = world.store.current_election()
    ids = [o.id for c in election.contests for o in c.options] + [c.id for c in election.contests] + [p.id for p in election.precincts]
    ids += [r.value for r in Reason if "_" in r.value]  # ("escalated", "conflict" are plain words too)
    found = [i for i in ids if re.search(rf"(?<![\w.-]){re.escape(i)}(?![\w.-])", shown)]
    found += re.findall(r"\b[0-9a-f]{64}\b", shown)
    return found


@pytest.fixture
def world(tmp_path: Path) -> PairWorld:
    return build_pair_world(tmp_path)


def _decide(client, url: str, contest: str, votes: list[str], note: str) -> None:  # noqa: ANN001
    page = client.get(url).text
    r = client.post(f"{url}/decide", data={"csrf": csrf_of(page), "form_token": form_token_of(page, contest), "contest": contest,
                                           "votes": votes, "rule": "md-fill", "note": note})
    assert r.status_code == 200, r.text


def test_no_review_page_shows_a_bare_id(world: PairWorld) -> None:
    alice, bob = login(world.app, "alice"), login(world.app, "bob")
    _decide(alice, f"/pair/{MISMATCH}", "q2", ["q2-for"], "alice's note")
    _decide(bob, f"/pair/{MISMATCH}", "q2", ["q2-against"], "bob's note")  # escalated: the board page has a case
    governor = world.store.card_id_for("B01#2")  # Governor unclear
    _decide(alice, f"/card/{governor}", "gov", ["gov-w"], "")
    _decide(bob, f"/card/{governor}", "gov", ["gov-w"], "")  # final: the history has a decision
    cards = [i.item for i in queue(world.store) if i.kind == "card"]
    pages = {url: alice for url in ["/", "/queue", "/history", f"/pair/{CONFLICT}", f"/pair/{ORPHAN}", f"/history/card/{governor}",
                                    f"/history/pair/{MISMATCH}", "/pair/F00000G5V", f"/card/{governor}"] + [f"/card/{c}" for c in cards]}
    pages.update({"/board": login(world.app, "carol"), "/tally": login(world.app, "olga"),
                  "/print/tally.html": login(world.app, "olga"), "/print/duplicates.html": login(world.app, "olga")})
    problems = {}
    for url, client in pages.items():
        r = client.get(url)
        assert r.status_code == 200, (url, r.text[:500])
        found = bare_ids(world, visible(r.text))
        if found:
            problems[url] = found
    for url in ("/print/tally.pdf", "/print/duplicates.pdf"):
        found = bare_ids(world, pdf_text(login(world.app, "olga").get(url).data))
        if found:
            problems[url] = found
    assert problems == {}


def test_no_printable_paper_or_staff_screen_shows_a_bare_id(world: PairWorld) -> None:
    store = world.store
    election = store.current_election()
    items = queue(store)
    rows = tally(store)
    dup = build_duplicates(store, election)
    pulls = pull_list(store, election, items)
    heading = Heading.of(election, "Pull list")
    papers = {
        "status": "\n".join(text.status_lines(build_status(store, election, items))),
        "queue": "\n".join(text.queue_table(queue_rows(store, election, items))),
        "tally (text)": "\n".join(text.tally_lines(build_tally(election, rows))),
        "duplicates (text)": "\n".join(text.duplicates_lines(dup)),
        "tally (HTML)": visible(printable.tally_html(build_tally(election, rows))),
        "duplicates (HTML)": visible(printable.duplicates_html(dup)),
        "pull list (HTML)": visible(printable.pull_list_html(heading, pulls)),
        "tally (PDF)": pdf_text(printable.tally_pdf(build_tally(election, rows))),
        "duplicates (PDF)": pdf_text(printable.duplicates_pdf(dup)),
        "pull list (PDF)": pdf_text(printable.pull_list_pdf(heading, pulls)),
    }
    problems = {name: found for name, shown in papers.items() if (found := bare_ids(world, shown))}
    assert problems == {}
    for name in ("tally (HTML)", "tally (PDF)", "duplicates (PDF)"):
        assert "Board member (print name)" in papers[name] and election.name in papers[name] and election.date in papers[name], name
    assert "Precinct 1 Northfield" in papers["tally (PDF)"] and "Ada Alvarez" in papers["tally (PDF)"]
    assert "B02 13 00006-3.png F000065S original" in papers["pull list (PDF)"] and "serial used more than once" in papers["pull list (HTML)"]


def test_the_checker_finds_a_bare_id(world: PairWorld) -> None:
    """The check above can fail: ids are found where a page would show them."""
    assert bare_ids(world, "Governor: gov-a") == ["gov-a"]
    assert bare_ids(world, "a marginal_mark in P01") == ["P01", "marginal_mark"]
    assert bare_ids(world, "Ada Alvarez, Precinct 1 Northfield, mark for a person to read") == []
    assert bare_ids(world, "card " + "ab" * 32) == ["ab" * 32]


def test_the_duplicates_csv_adds_up_and_keeps_ids_beside_names(world: PairWorld) -> None:
    import csv
    import io

    report = build_duplicates(world.store, world.store.current_election())
    rows = list(csv.DictReader(io.StringIO(printable.duplicates_csv(report))))
    assert rows[0].keys() >= {"precinct", "precinct_name", "serials", "match", "mismatch", "conflict", "new_duplicates"}
    for row in rows:
        assert int(row["serials"]) == sum(int(row[s]) for s in report.columns), row
    assert rows[-1]["precinct"] == "#all" and int(rows[-1]["serials"]) == len(world.store.pairs()) == 7 and rows[-1]["examined"] == "0"
    assert {r["precinct"]: r["precinct_name"] for r in rows[:-1]} == {"P01": "Precinct 1 Northfield", "P02": "Precinct 2 Eastbrook",
                                                                          "P06": "Precinct 6 Westgate"}


def test_a_card_is_named_by_batch_position_and_file_and_found_by_them(world: PairWorld) -> None:
    from scanpipe.errors import DecisionError

    store = world.store
    places = store.card_places()
    first = next(p for p in places.values() if p.batch == "B01" and p.seq == 1)
    assert first == CardPlace(first.card_id, "B01", 1, "0006.jpg")
    assert first.label == "B01 #1 (0006.jpg)" and store.card_id_for("B01#1") == first.card_id
    assert store.card_id_for(first.card_id[:10]) == first.card_id
    assert sorted(p.seq for p in places.values() if p.batch == "B02") == list(range(1, 14))
    with pytest.raises(DecisionError, match="batch B02 has 13 sheet"):
        store.card_id_for("B02#14")
    from tests.helpers import read_card

    twins = ["abcd" + "1" * 60, "abcd" + "2" * 60]
    store.save_cards([read_card(c, store.current_election(), "S1", "P01", {}) for c in twins])
    with pytest.raises(DecisionError, match="more than one card id starts with this"):
        store.card_id_for("abcd")
    assert store.card_id_for("abcd2") == twins[1] and store.card_id_for("abcd3") is None
    assert Names(store.current_election()).votes(["gov-w"], write_ins={"gov-w": "Zed Zimmer"}) == "Write-in: Zed Zimmer"


def test_every_queue_reason_has_words_and_an_instruction() -> None:
    from scanpipe.names import REASONS

    assert [r.value for r in Reason if r not in REASONS] == []
    assert all(t.label and t.instruction for t in REASONS.values())
