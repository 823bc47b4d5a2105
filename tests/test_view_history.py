"""The read-only history: a decided item opens as its history (never "Not found"), and while an
item is open the second auditor cannot read the first one's choice there."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_review_support import csrf_of, form_token_of, login
from tests.test_view_names import visible
from tests.view_support import MISMATCH, PairWorld, build_pair_world


@pytest.fixture
def world(tmp_path: Path) -> PairWorld:
    return build_pair_world(tmp_path)


def _decide(client, contest: str, votes: list[str], note: str):  # noqa: ANN001, ANN202
    page = client.get(f"/pair/{MISMATCH}").text
    return client.post(f"/pair/{MISMATCH}/decide", data={"csrf": csrf_of(page), "form_token": form_token_of(page, contest),
                                                         "contest": contest, "votes": votes, "rule": "md-fill", "note": note})


def test_the_first_reading_stays_hidden_from_the_second_auditor_until_final(world: PairWorld) -> None:
    alice, bob, carol = login(world.app, "alice"), login(world.app, "bob"), login(world.app, "carol")
    assert _decide(alice, "q2", ["q2-against"], "a secret first reading").status_code == 200
    for who in (alice, bob):
        shown = visible(who.get(f"/history/pair/{MISMATCH}").text)
        assert "a secret first reading" not in shown and "Against" not in shown.split("Standing")[-1]
    assert "a secret first reading" in visible(carol.get(f"/history/pair/{MISMATCH}").text)  # the board may look
    r = _decide(bob, "q2", ["q2-against"], "")
    assert r.status_code == 200 and "final: confirmed by bob after alice" in visible(r.text)
    page = bob.get(f"/pair/{MISMATCH}")  # decided: its history, read-only
    assert page.status_code == 200 and "decisions (read-only)" in page.text
    shown = visible(page.text)
    assert "a secret first reading" in shown and "alice, bob" in shown and "final" in shown
    assert 'class="decide"' not in page.text


def test_an_unknown_item_is_still_not_found(world: PairWorld) -> None:
    r = login(world.app, "alice").get("/pair/NOSUCH")
    assert r.status_code == 404 and "there is no serial NOSUCH" in r.text
