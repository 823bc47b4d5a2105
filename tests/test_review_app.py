"""The review app through Flask's test client: roles on every route, CSRF, one-time form
tokens, bad input, the two-people rule, the board, throttled logins, expiring sessions."""

from __future__ import annotations

import html
import re
from datetime import timedelta
from pathlib import Path

import pytest
from flask.testing import FlaskClient
from sqlalchemy import select, update
from werkzeug.test import TestResponse

from scanpipe.errors import DecisionError
from scanpipe.review.index import Filters, page_of_items, refresh_all
from scanpipe.review.security import PUBLIC, roles_of
from scanpipe.store.models import decision_table, utcnow
from scanpipe.store.models_review import board_vote_table, web_session_table
from scanpipe.workflow import tally
from tests.test_review_support import (
    CLEAN,
    MARGINAL,
    MARGINAL_2,
    UNREADABLE,
    ReviewWorld,
    build_world,
    csrf_of,
    decide,
    form_token_of,
    login,
)

# The roles matrix, pinned: changing who may use a route must change this test too.
MATRIX = {
    "logout": {"admin", "auditor", "board", "observer"},
    "dashboard": {"admin", "auditor", "board", "observer"},
    "queue": {"admin", "auditor"},
    "card": {"admin", "auditor", "board"},
    "pair": {"admin", "auditor", "board"},
    "image": {"admin", "auditor", "board"},
    "card_decide": {"auditor"},
    "pair_decide": {"auditor"},
    "card_identify": {"auditor"},
    "board": {"admin", "board"},
    "board_propose": {"board"},
    "board_vote": {"board"},
    "board_close": {"board"},
    "board_withdraw": {"board"},
    "history": {"admin", "auditor", "board"},
    "history_item": {"admin", "auditor", "board"},
    "paper": {"admin", "board", "observer"},
    "tally": {"admin", "board", "observer"},
    "tally_export": {"admin", "board", "observer"},
    "users": {"admin"},
    "user_add": {"admin"},
    "user_disable": {"admin"},
    "user_approve": {"admin"},
    "user_unlock": {"admin"},
    "audit": {"admin"},
    "refresh": {"admin"},
    "duplicates": {"admin", "auditor", "board", "observer"},
    "duplicate_print": {"admin", "auditor", "board"},
    "board_matters": {"admin", "board"},
    "board_rule": {"board"},
    "board_pairs": {"admin", "board"},
    "board_sign_off": {"board"},
    "case": {"admin", "auditor", "board", "observer"},
    "case_report": {"admin", "auditor", "board", "observer"},
    "case_certified": {"admin", "auditor", "board", "observer"},
}
ONE_USER_PER_ROLE = {"admin": "root", "auditor": "alice", "board": "carol", "observer": "olga"}
ARGS = {"card_id": MARGINAL, "serial": "A0001", "username": "bob", "name": "review.js", "kind": "card", "item": MARGINAL, "fmt": "html"}


@pytest.fixture
def world(tmp_path: Path) -> ReviewWorld:
    return build_world(tmp_path)


def _text(response) -> str:
    return html.unescape(response.text)


def _requests(app):
    """Every (endpoint, method, url) the app serves, from its url_map."""
    out = []
    for rule in app.url_map.iter_rules():
        url = rule.build({k: ARGS[k] for k in rule.arguments}, append_unknown=False)[1]
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            out.append((rule.endpoint, method, url))
    return out


def _n_decisions(world: ReviewWorld) -> int:
    return len(world.store.decisions())


def test_every_route_is_in_the_roles_matrix_and_refuses_without_login(world: ReviewWorld) -> None:
    served = _requests(world.app)
    assert {e for e, _, _ in served} - PUBLIC == set(MATRIX), "a route was added or removed: update MATRIX"
    anonymous = world.app.test_client()
    for endpoint, method, url in served:
        if endpoint in PUBLIC:
            continue
        assert roles_of(world.app.view_functions[endpoint]) == MATRIX[endpoint], endpoint
        r = anonymous.open(url, method=method)
        if method == "GET":
            assert r.status_code == 302 and r.headers["Location"].startswith("/login"), (endpoint, r.status_code)
        else:
            assert r.status_code == 401, (endpoint, r.status_code)
    assert _n_decisions(world) == 0


def test_every_route_refuses_each_role_it_does_not_allow(world: ReviewWorld) -> None:
    served = _requests(world.app)
    before = _n_decisions(world)
    for role, user in ONE_USER_PER_ROLE.items():
        client = login(world.app, user)
        token = csrf_of(client.get("/").text)
        for endpoint, method, url in served:
            if endpoint in PUBLIC or role in MATRIX[endpoint] or endpoint == "logout":
                continue
            r = client.open(url, method=method, data={"csrf": token} if method == "POST" else None)
            assert r.status_code == 403, (role, endpoint, method, r.status_code)
    assert _n_decisions(world) == before


def test_a_route_that_declares_no_roles_is_refused_to_everybody(world: ReviewWorld) -> None:
    world.app.add_url_rule("/forgotten", "forgotten", lambda: "secret")
    r = login(world.app, "root").get("/forgotten")
    assert r.status_code == 403 and "secret" not in _text(r)


def test_two_auditors_make_a_marginal_mark_final_and_the_tally_changes(world: ReviewWorld) -> None:
    def gov_a() -> tuple[int, int]:
        rows = {(r.precinct, r.contest, r.option): r.votes for r in tally(world.store)}
        return rows[("P01", "gov", "gov-a")], rows[("P01", "gov", "#pending")]

    votes_before, pending_before = gov_a()
    status, text = decide(login(world.app, "alice"), MARGINAL, "gov", ["gov-a"])
    assert status == 200 and "awaiting a second, different auditor" in text
    assert gov_a() == (votes_before, pending_before)
    rows, _ = page_of_items(world.store, Filters(state="awaiting"))
    assert [(r.item, r.first_auditors) for r in rows] == [(MARGINAL, ("alice",))]
    bob = login(world.app, "bob")
    page = bob.get(f"/card/{MARGINAL}").text
    assert "alice" not in page  # the second auditor does not see who chose what, nor the choice
    status, text = decide(bob, MARGINAL, "gov", ["gov-a"])
    assert status == 200 and "final: confirmed by bob after alice" in text
    assert gov_a() == (votes_before + 1, pending_before - 1)
    assert MARGINAL not in {r.item for r in page_of_items(world.store, Filters())[0]}
    assert _index(world) == _rebuilt_index(world)  # the per-item refresh agrees with the full rebuild


def _index(world: ReviewWorld) -> list[tuple[str, str, tuple[str, ...], str]]:
    return sorted((r.item, r.reason, r.contests, r.state) for r in page_of_items(world.store, Filters(), size=1000)[0])


def _rebuilt_index(world: ReviewWorld) -> list[tuple[str, str, tuple[str, ...], str]]:
    refresh_all(world.store)
    return _index(world)


def test_an_auditor_cannot_confirm_their_own_first_half(world: ReviewWorld) -> None:
    alice = login(world.app, "alice")
    assert decide(alice, MARGINAL, "gov", ["gov-a"])[0] == 200
    status, text = decide(alice, MARGINAL, "gov", ["gov-a"])
    assert status == 409 and "alice already recorded the first half" in text
    assert [d.state.value for d in world.store.decisions()] == ["first_half"]


def _escalate(world: ReviewWorld, second: list[str]) -> int:
    decide(login(world.app, "alice"), MARGINAL_2, "gov", ["gov-b"])
    status, text = decide(login(world.app, "bob"), MARGINAL_2, "gov", second)
    assert status == 200 and "escalated to the board" in text
    return max(d.id for d in world.store.decisions())


def _board_token(html: str, form_class: str) -> str:
    start = html.index(f'class="{form_class}')
    found = re.search(r'name="form_token" value="([^"]+)"', html[start:])
    assert found is not None
    return found.group(1)


def _proposal_of(html: str) -> str:
    found = re.search(r'data-proposal="(\d+)"', html)
    assert found is not None, "no open proposal on the board page"
    return found.group(1)


def _board_step(client: FlaskClient, step: str, **data: str) -> TestResponse:
    page = client.get("/board").text
    form = {"csrf": csrf_of(page), "form_token": _board_token(page, f"board-{step}"), "proposal": _proposal_of(page), **data}
    return client.post(f"/board/{step}", data=form)


def _propose(client: FlaskClient, escalation: int, votes: list[str], **extra: str) -> TestResponse:
    page = client.get("/board").text
    return client.post("/board/propose", data={"csrf": csrf_of(page), "form_token": form_token_of(page, "gov"), "item": MARGINAL_2,
                                               "contest": "gov", "decision": str(escalation), "votes": votes, "rule": "md-fill",
                                               **extra})


def _ballots(world: ReviewWorld) -> dict[str, str]:
    from scanpipe.store.models_people import board_ballot_table

    with world.store._read() as conn:
        return dict(conn.execute(select(board_ballot_table.c.member, board_ballot_table.c.vote)).all())


def test_a_disagreement_goes_to_the_board_whose_members_each_vote_from_their_own_login(world: ReviewWorld) -> None:
    escalation = _escalate(world, [])
    assert [r.item for r in page_of_items(world.store, Filters(state="escalated"))[0]] == [MARGINAL_2]
    carol = login(world.app, "carol")
    board = carol.get("/board").text
    assert '<td>alice</td><td class="reading">Ben Brooks</td>' in board and '<td>bob</td><td class="reading">no vote</td>' in board
    wrong = _propose(carol, escalation - 1, ["gov-b"])
    assert wrong.status_code == 400 and "is not the open escalation" in _text(wrong)
    # carol alone fills in votes for dave and erin: the form fields naming them record nothing
    r = _propose(carol, escalation, ["gov-b"], member_carol="for", member_dave="for", member_erin="against", member="dave", vote="for")
    assert r.status_code == 302, _text(r)
    assert _ballots(world) == {"carol": "for"}
    alone = _board_step(carol, "close")
    assert alone.status_code == 400 and "1 of the board's 3 members present (voted); a board decision needs 2 present" in _text(alone)
    assert [d.state.value for d in world.store.decisions()] == ["escalated", "escalated"]
    assert not world.store.events("board_decision")
    dave, erin = login(world.app, "dave"), login(world.app, "erin")
    assert _board_step(dave, "vote", vote="for", member="erin").status_code == 302
    assert _board_step(erin, "vote", vote="against").status_code == 302
    again = _board_step(dave, "vote", vote="against") if 'class="board-vote"' in dave.get("/board").text else None
    assert again is None  # a member who voted has no vote form; the server refuses a second vote too (below)
    r = _board_step(carol, "close")
    assert r.status_code == 200 and "final" in _text(r), r.text
    final = [d for d in world.store.decisions() if d.state.value == "final"]
    assert [(d.votes, d.auditors) for d in final] == [(("gov-b",), ("carol", "dave"))]
    with world.store._read() as conn:
        votes = dict(conn.execute(select(board_vote_table.c.member, board_vote_table.c.vote)).all())
    assert votes == {"carol": "for", "dave": "for", "erin": "against"} == _ballots(world)
    assert not page_of_items(world.store, Filters(state="escalated"))[0]
    assert [e.detail["members"] for e in world.store.events("board_decision")] == [votes]
    assert [(e.actor, e.detail["vote"]) for e in world.store.events("board_vote_cast")] == [("dave", "for"), ("erin", "against")]


def test_a_member_votes_once(world: ReviewWorld) -> None:
    from scanpipe.review import board as board_votes

    escalation = _escalate(world, ["gov-a"])
    carol = login(world.app, "carol")
    assert _propose(carol, escalation, ["gov-b"]).status_code == 302
    [proposal] = board_votes.open_proposals(world.store, [MARGINAL_2]).values()
    with pytest.raises(DecisionError, match="carol already voted on this proposal"):
        board_votes.cast_vote(world.store, proposal_id=proposal.id, vote="against", member="carol", session="x")
    assert _ballots(world) == {"carol": "for"}


def test_a_board_decision_is_one_transaction(world: ReviewWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure while the members' votes are written leaves the escalation open and nothing
    recorded: the superseded escalation, the final reading and the votes land together."""
    from scanpipe.store.transaction import Transaction

    escalation = _escalate(world, ["gov-a"])
    before = world.store.decisions()
    carol, dave = login(world.app, "carol"), login(world.app, "dave")
    assert _propose(carol, escalation, ["gov-b"]).status_code == 302
    assert _board_step(dave, "vote", vote="for").status_code == 302

    def broken(self: Transaction, decision_id: int, members: object) -> None:
        raise RuntimeError("disk gone while writing the board's votes")

    monkeypatch.setattr(Transaction, "add_board_votes", broken)
    failed = _board_step(carol, "close")
    assert failed.status_code == 500 and "Nothing from it was recorded" in _text(failed)
    assert world.store.decisions() == before
    assert [r.item for r in page_of_items(world.store, Filters(state="escalated"))[0]] == [MARGINAL_2]
    with world.store._read() as conn:
        assert conn.execute(select(board_vote_table)).all() == []
    assert world.store.events("board_decision") == []
    assert 'data-proposal="' in carol.get("/board").text  # the vote is still open


def test_a_board_without_a_majority_decides_nothing(world: ReviewWorld) -> None:
    escalation = _escalate(world, ["gov-a"])
    carol, dave = login(world.app, "carol"), login(world.app, "dave")
    before = world.store.decisions()
    assert _propose(carol, escalation, ["gov-b"]).status_code == 302
    assert _board_step(dave, "vote", vote="against").status_code == 302
    r = _board_step(dave, "close")
    assert r.status_code == 200 and "The proposal was rejected" in _text(r)
    assert world.store.decisions() == before
    assert [e.detail["members"] for e in world.store.events("board_proposal_rejected")] == [{"carol": "for", "dave": "against"}]
    assert _propose(dave, escalation, ["gov-a"]).status_code == 302  # another reading may be proposed


def test_an_observer_sees_progress_and_tallies_but_cannot_decide(world: ReviewWorld) -> None:
    olga = login(world.app, "olga")
    assert olga.get("/").status_code == 200 and olga.get("/tally").status_code == 200
    token = csrf_of(olga.get("/").text)
    r = olga.post(f"/card/{MARGINAL}/decide", data={"csrf": token, "contest": "gov", "votes": ["gov-a"]})
    assert r.status_code == 403
    assert olga.get(f"/card/{MARGINAL}").status_code == 403 and olga.get(f"/image/{MARGINAL}").status_code == 403
    assert _n_decisions(world) == 0


def test_a_request_without_the_csrf_token_is_refused(world: ReviewWorld) -> None:
    alice = login(world.app, "alice")
    page = alice.get(f"/card/{MARGINAL}").text
    data = {"form_token": form_token_of(page, "gov"), "contest": "gov", "votes": ["gov-a"], "rule": "md-fill"}
    assert alice.post(f"/card/{MARGINAL}/decide", data=data).status_code == 403
    assert alice.post(f"/card/{MARGINAL}/decide", data={**data, "csrf": "0" * 64}).status_code == 403
    assert world.app.test_client().post("/login", data={"username": "alice", "password": "alice-password"}).status_code == 403
    assert _n_decisions(world) == 0


def test_a_double_submission_records_one_decision(world: ReviewWorld) -> None:
    alice = login(world.app, "alice")
    page = alice.get(f"/card/{MARGINAL}").text
    data = {"csrf": csrf_of(page), "form_token": form_token_of(page, "gov"), "contest": "gov", "votes": ["gov-a"], "rule": "md-fill"}
    assert alice.post(f"/card/{MARGINAL}/decide", data=data).status_code == 200
    again = alice.post(f"/card/{MARGINAL}/decide", data=data)
    assert again.status_code == 409 and "already submitted" in _text(again)
    assert _n_decisions(world) == 1


@pytest.mark.parametrize("change, message", [
    ({"contest": "q1"}, "is not the form"),  # the token was issued for gov: a forged contest fails the token
    ({"votes": ["evil"]}, "not an option of contest 'gov'"),
    ({"rule": "made-up"}, "not a voter-intent rule"),
    ({"votes": []}, "No option was chosen"),
])
def test_forged_form_fields_are_refused_and_change_nothing(world: ReviewWorld, change: dict, message: str) -> None:
    alice = login(world.app, "alice")
    page = alice.get(f"/card/{MARGINAL}").text
    data = {"csrf": csrf_of(page), "form_token": form_token_of(page, "gov"), "contest": "gov", "votes": ["gov-a"], "rule": "md-fill", **change}
    r = alice.post(f"/card/{MARGINAL}/decide", data=data)
    assert r.status_code in (400, 409)
    assert message.replace("is not the form", "does not belong to this form") in _text(r)
    assert _n_decisions(world) == 0


def test_a_contest_not_in_the_queue_and_a_card_that_does_not_exist_are_refused(world: ReviewWorld) -> None:
    from scanpipe.review.security import issue_form_token

    alice = login(world.app, "alice")
    page = alice.get(f"/card/{MARGINAL}").text
    secret = csrf_of(page)
    for card_id, contest in ((MARGINAL, "q1"), (CLEAN, "gov"), ("e" * 64, "gov")):
        token = issue_form_token(secret, f"card|{card_id}|{contest}")  # a validly signed token cannot help either
        r = alice.post(f"/card/{card_id}/decide", data={"csrf": secret, "form_token": token, "contest": contest,
                                                        "votes": ["gov-a"], "rule": "md-fill"})
        assert r.status_code == 400 and "is not awaiting an auditor's decision" in _text(r)
    assert alice.get(f"/card/{'e' * 64}").status_code == 404
    assert _n_decisions(world) == 0


@pytest.mark.parametrize("path", ["/image/..%2F..%2Fetc%2Fpasswd", "/image/%2Fetc%2Fpasswd", "/image/" + "e" * 64,
                                  "/image/" + "A" * 64, "/image/..", "/image/card.png", "/assets/..%2Fapp.py"])
def test_images_are_served_by_card_id_only(world: ReviewWorld, path: str) -> None:
    alice = login(world.app, "alice")
    assert alice.get(f"/image/{MARGINAL}").status_code == 200
    r = alice.get(path)
    assert r.status_code == 404 and b"root:" not in r.data


def test_repeated_failed_logins_are_answered_with_429(world: ReviewWorld) -> None:
    client = world.app.test_client()
    token = csrf_of(client.get("/login").text)
    for _ in range(5):
        assert client.post("/login", data={"csrf": token, "username": "bob", "password": "wrong-password"}).status_code == 401
    r = client.post("/login", data={"csrf": token, "username": "bob", "password": "bob-password"})
    assert r.status_code == 429
    assert len(world.store.events("login_failed")) == 5 and world.store.events("login_throttled")
    login(world.app, "alice")  # another account is not locked


def test_sessions_expire_when_idle_and_end_when_the_account_is_disabled(world: ReviewWorld) -> None:
    from scanpipe.review.accounts import disable_user

    alice = login(world.app, "alice")
    assert alice.get("/queue").status_code == 200
    with world.store._write() as conn:
        conn.execute(update(web_session_table).values(last_seen=utcnow() - timedelta(hours=1)))
    assert alice.get("/queue").status_code == 302
    bob = login(world.app, "bob")
    disable_user(world.store, "bob")
    assert bob.get("/queue").status_code == 302
    assert login_fails(world, "bob")


def login_fails(world: ReviewWorld, user: str) -> bool:
    client = world.app.test_client()
    token = csrf_of(client.get("/login").text)
    return client.post("/login", data={"csrf": token, "username": user, "password": "bob-password"}).status_code == 401


def test_an_unreadable_card_is_identified_then_decided_contest_by_contest(world: ReviewWorld) -> None:
    alice = login(world.app, "alice")
    page = alice.get(f"/card/{UNREADABLE}").text
    assert 'id="identify-form"' in page and "no_fiducials" in page and 'class="decide"' not in page
    start = page.index('id="identify-form"')
    token = form_token_of(page[start:])
    r = alice.post(f"/card/{UNREADABLE}/identify", data={"csrf": csrf_of(page), "form_token": token, "style": "S1",
                                                        "precinct": "P01", "kind": "ballot"})
    assert r.status_code == 302, _text(r)
    assert world.store.identifications()[UNREADABLE] == ("S1", "P01")
    page = alice.get(f"/card/{UNREADABLE}").text
    assert 'data-contest="gov"' in page  # now decided contest by contest
    again = alice.post(f"/card/{UNREADABLE}/identify", data={"csrf": csrf_of(page), "form_token": token, "style": "S2"})
    assert again.status_code == 409 and world.store.identifications()[UNREADABLE] == ("S1", "P01")
    assert _index(world) == _rebuilt_index(world)


def test_queue_filters_and_progress(world: ReviewWorld) -> None:
    root = login(world.app, "root")
    text = root.get("/queue?reason=marginal_mark").text
    assert MARGINAL[:16] in text and UNREADABLE[:16] not in text
    assert root.get("/queue?precinct=P09").text.count('class="item-link"') == 0
    decide(login(world.app, "alice"), MARGINAL, "gov", ["gov-a"])
    text = root.get("/").text
    assert 'id="p-awaiting">1<' in text and 'id="p-decided">0<' in text
    with world.store._read() as conn:
        assert conn.execute(select(decision_table.c.state)).scalars().all() == ["first_half"]


def test_two_auditors_resolve_a_mismatched_pair_through_reconciliation(world: ReviewWorld) -> None:
    from tests.test_review_support import add_mismatched_pair

    add_mismatched_pair(world)

    def p01(option: str) -> int:
        return next(r.votes for r in tally(world.store) if (r.precinct, r.contest, r.option) == ("P01", "gov", option))

    before = (p01("gov-a"), p01("gov-b"))
    for user in ("alice", "bob"):
        client = login(world.app, user)
        page = client.get("/pair/A0042").text
        assert "Duplicate: Ada Alvarez" in page and "Original: Ben Brooks" in page
        r = client.post("/pair/A0042/decide", data={"csrf": csrf_of(page), "form_token": form_token_of(page, "gov"),
                                                    "contest": "gov", "votes": ["gov-b"], "rule": "md-fill"})
        assert r.status_code == 200, _text(r)
    assert "final: confirmed by bob after alice" in _text(r)
    assert (p01("gov-a"), p01("gov-b")) == (before[0], before[1] + 1)  # the new duplicate counts, the old one does not
    assert [p.counted for p in world.store.pairs()] == ["A0042-R1"]
    assert "A0042" not in {i.item for i in page_of_items(world.store, Filters())[0]}
    assert _index(world) == _rebuilt_index(world)


def test_a_card_read_upside_down_or_sideways_is_shown_turned_upright_so_its_boxes_line_up(world: ReviewWorld) -> None:
    """The target boxes stored for a card fed upside down (or sideways) are in the upright
    card's pixels; the image was sent as scanned, so an auditor saw every box on the wrong part
    of the card. It is sent turned upright (PNG); a card read the right way up as it is."""
    from dataclasses import replace

    import cv2
    import numpy as np

    from scanpipe.review.images import card_image
    from scanpipe.types import MarkStatus
    from tests.helpers import read_card
    from tests.test_review_support import PNG, UNREADABLE

    scanned = cv2.imdecode(np.frombuffer(PNG, np.uint8), cv2.IMREAD_GRAYSCALE)
    sideways_then_upside_down = cv2.rotate(cv2.rotate(scanned, cv2.ROTATE_90_CLOCKWISE), cv2.ROTATE_180)
    for card_id, quarter, half, want in (("d" * 64, False, True, cv2.rotate(scanned, cv2.ROTATE_180)),
                                         ("e" * 64, True, False, cv2.rotate(scanned, cv2.ROTATE_90_CLOCKWISE)),
                                         ("f" * 64, True, True, sideways_then_upside_down)):
        card = read_card(card_id, world.election, "S1", "P01", {"gov": {"gov-a": MarkStatus.UNKNOWN}})
        registration = replace(card.interpretation.registration, rotated_180=half, quarter_turned=quarter)
        world.store.save_cards([replace(card, interpretation=replace(card.interpretation, registration=registration),
                                        source=replace(card.source, path=str(world.folder / "card.png"), sha256=UNREADABLE))])
        stored = world.store.get_card(card_id)
        assert stored is not None and stored.card.interpretation.registration == registration  # kept as read
        sent = card_image(world.store, card_id)
        shown = cv2.imdecode(np.frombuffer(sent.data, np.uint8), cv2.IMREAD_GRAYSCALE)
        assert sent.mimetype == "image/png" and np.array_equal(shown, want), card_id
    assert card_image(world.store, MARGINAL).data == PNG
