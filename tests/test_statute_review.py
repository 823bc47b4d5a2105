"""The review's §12-108 pages: new duplicates with a print button, the board's rulings on
orphans and conflicts, and its batch sign-off of matched pairs; and the paper of a new
duplicate never drawing on the demo."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from scanpipe.decisions import Attestation
from scanpipe.review.index import refresh_all
from scanpipe.types import CardKind, MarkStatus, PairingLabel
from tests.helpers import read_card
from tests.test_review_support import (
    UNREADABLE,
    ReviewWorld,
    add_mismatched_pair,
    build_world,
    csrf_of,
    login,
)


def _step(client, page_url: str, step: str, **data: str):  # noqa: ANN001, ANN202 - a member's own vote, close or withdraw
    page = client.get(page_url).text
    start = page.index(f'class="board-{step}')
    token = re.search(r'name="form_token" value="([^"]+)"', page[start:])
    proposal = re.search(r'data-proposal="(\d+)"', page)
    assert token is not None and proposal is not None
    return client.post(f"/board/{step}", data={"csrf": csrf_of(page), "form_token": token.group(1), "proposal": proposal.group(1),
                                               "back": "board_matters" if "matters" in page_url else "board_pairs", **data})


def _labelled(world: ReviewWorld, seed: str, kind: CardKind, serial: str, option: str):  # noqa: ANN202
    card = read_card(seed * 64, world.election, "S1", "P01", {"gov": {option: MarkStatus.YES}}, kind=kind)
    return replace(card, label=PairingLabel(kind, serial, serial, None),
                   source=replace(card.source, path=str(world.folder / "card.png"), sha256=UNREADABLE))  # the file is card.png


def _token(html: str) -> str:
    found = re.search(r'name="form_token" value="([^"]+)"', html)
    assert found is not None
    return found.group(1)


def test_the_print_button_gives_the_pdf_and_records_who_printed_it(tmp_path: Path) -> None:
    from scanpipe.reconcile.service import adjudicate_pair

    world = build_world(tmp_path)
    add_mismatched_pair(world)  # A0042: duplicate gov-a, original gov-b
    for auditor in ("alice", "bob"):
        adjudicate_pair(world.store, "A0042", contest="gov", votes=["gov-b"], auditors=[auditor],
                        attestation=Attestation(f"review:{auditor}", accounts=True))
    client = login(world.app, "alice")
    page = client.get("/duplicates")
    assert page.status_code == 200 and 'data-serial="A0042-R1" data-state="to_print"' in page.text
    r = client.post("/duplicates/A0042-R1/print", data={"csrf": csrf_of(page.text), "form_token": _token(page.text)})
    assert r.status_code == 200 and r.mimetype == "application/pdf" and r.data.startswith(b"%PDF")
    again = client.post("/duplicates/A0042-R1/print", data={"csrf": csrf_of(page.text), "form_token": _token(page.text)})
    assert again.status_code == 409  # the same form twice: nothing more recorded
    (nd,) = world.store.new_duplicates()
    assert (nd.printed_by, client.get("/duplicates").text.count('data-state="to_scan"')) == ("alice", 1)
    image = client.get("/image/nd-A0042-R1")  # the rendered card, from the database
    assert image.status_code == 200 and image.data.startswith(b"\x89PNG")
    observer = login(world.app, "olga")
    assert observer.get("/duplicates").status_code == 200 and "Print (PDF)" not in observer.get("/duplicates").text


def test_the_board_rules_on_an_orphan_from_its_page_with_each_members_vote(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    world.store.save_cards([_labelled(world, "7", CardKind.DUPLICATE, "B0007", "gov-a")])
    from scanpipe.reconcile.service import reconcile

    reconcile(world.store)
    refresh_all(world.store)
    client = login(world.app, "carol")
    page = client.get("/board/matters")
    assert page.status_code == 200
    assert "The voter's original (paper record) for duplicate B0007 is missing (Md. Election Law §12-108(c)" in html.unescape(page.text)
    data = {"csrf": csrf_of(page.text), "form_token": _token(page.text), "serial": "B0007", "ruling": "counts_as_is",
            "member_carol": "for", "member_dave": "for", "member_erin": "against"}  # carol cannot speak for dave and erin
    assert client.post("/board/matters/rule", data=data).status_code == 302
    refused = _step(client, "/board/matters", "close")
    assert refused.status_code == 400 and "a board decision needs 2 present" in refused.text
    assert world.store.board_rulings() == {}
    assert _step(login(world.app, "dave"), "/board/matters", "vote", vote="for").status_code == 302
    assert _step(login(world.app, "erin"), "/board/matters", "vote", vote="against").status_code == 302
    done = _step(client, "/board/matters", "close")
    assert done.status_code == 200 and "for: carol, dave" in done.text
    ruling = world.store.board_rulings()["B0007"]
    assert (ruling.ruling.value, dict(ruling.members), ruling.rule_set) == ("counts_as_is", {"carol": "for", "dave": "for", "erin": "against"}, "MD-2026.1")
    assert world.store.get_pair("B0007").status == "resolved"
    assert "No orphan or conflict awaits the board." in client.get("/board/matters").text


def test_the_board_signs_off_matched_pairs_in_one_decision_seeing_both_images(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    world.store.save_cards([_labelled(world, s, k, serial, "gov-a") for serial, s1, s2 in (("C0001", "3", "4"), ("C0002", "5", "6"))
                            for s, k in ((s1, CardKind.DUPLICATE), (s2, CardKind.ORIGINAL))])
    from scanpipe.reconcile.service import reconcile

    reconcile(world.store)
    client = login(world.app, "carol")
    page = client.get("/board/pairs")
    assert page.status_code == 200 and page.text.count('class="thumb"') == 4
    assert f'src="/image/{"3" * 64}"' in page.text and f'src="/image/{"4" * 64}"' in page.text
    r = client.post("/board/pairs/sign-off", data={"csrf": csrf_of(page.text), "form_token": _token(page.text), "serial": ["C0001"],
                                                   "member_carol": "for", "member_dave": "for"})
    assert r.status_code == 302 and world.store.examinations() == {}  # proposed; dave's vote is dave's to cast
    assert _step(login(world.app, "dave"), "/board/pairs", "vote", vote="for").status_code == 302
    r = _step(client, "/board/pairs", "close")
    assert r.status_code == 302 and "done=" in r.headers["Location"]
    examined = world.store.examinations()
    assert list(examined) == ["C0001"] and examined["C0001"][0].ayes == ("carol", "dave")
    assert [e.action for e in world.store.events("pairs_signed_off")] == ["pairs_signed_off"]
    assert 'data-serial="C0002"' in client.get("/board/pairs").text and 'data-serial="C0001"' not in client.get("/board/pairs").text


def test_a_new_duplicate_of_a_style_named_like_the_demos_is_printed_without_the_demo(tmp_path: Path) -> None:
    """A county whose style is called S1: its new duplicate is rendered with scanpipe.synth
    made unimportable, reads back as its own election's card, and carries no demo text."""
    code = r'''
import sys, json
sys.modules["scanpipe.synth"] = None  # any import of the demo now fails
from scanpipe.election import parse_election
from scanpipe.counting import decided_reading
from scanpipe.exports.paper import PaperSpec, render_new_duplicate
from scanpipe.imaging.codes import decode_codes
definition = {"id": "harbor-2026", "name": "Harbor County General 2026", "date": "2026-11-03", "jurisdiction": "AR",
  "precincts": [{"id": "H1", "name": "Harbor Ward 1"}],
  "contests": [{"id": "mayor", "title": "Mayor of Harbor", "kind": "candidate", "vote_for": 1,
                "options": [{"id": "m-x", "name": "Xu Lin"}, {"id": "m-y", "name": "Yara Oke"}]}],
  "ballot_styles": [{"id": "S1", "precincts": ["H1"], "contests": ["mayor"], "layout": "S1.json"}]}
layout = {"style": "S1", "pages": [{"page": 1, "size": [8.5, 11.0],
  "fiducials": [[0.35, 0.35, 0.25, 0.25], [7.9, 0.35, 0.25, 0.25], [0.35, 10.4, 0.25, 0.25], [7.9, 10.4, 0.25, 0.25]],
  "qr": [6.6, 0.8, 1.2, 1.2],
  "targets": [{"contest": "mayor", "option": "m-x", "box": [1.0, 3.0, 0.22, 0.14]}, {"contest": "mayor", "option": "m-y", "box": [1.0, 3.5, 0.22, 0.14]}]}]}
election = parse_election(definition, {"S1.json": layout}, base=None, check_files=False)
spec = PaperSpec("H77-R1", "S1", "H1", (decided_reading("mayor", 1, ["m-x", "m-y"], ["m-y"]),))
(page,) = render_new_duplicate(election, spec, dpi=150)
import cv2
gray = cv2.cvtColor(page, cv2.COLOR_RGB2GRAY)
codes = decode_codes(gray)
from scanpipe.imaging.printed import ocr_lines
print(json.dumps([sorted(c.text for c in codes), " | ".join(ocr_lines(gray))]))
'''
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    codes, text = json.loads(done.stdout)
    assert codes == ["DUP-H77-R1", "SPB1|E=harbor-2026|S=S1|P=H1|PG=1"]
    squeezed = text.replace(" ", "")  # the OCR drops some spaces
    assert all(words.replace(" ", "") in squeezed for words in ("Mayor of Harbor", "Xu Lin", "Yara Oke", "Harbor County General 2026")), text
    assert "Demo" not in text and "Governor" not in text, text
