"""The review app in a real browser (Playwright driving Debian's chromium), keyboard only.

Skipped when chromium or playwright is missing, except under CI (env CI), where it fails.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from scanpipe.workflow import tally
from tests.test_review_support import (
    MARGINAL,
    MARGINAL_2,
    PASSWORDS,
    ReviewWorld,
    build_world,
    serving,
)

pytestmark = pytest.mark.slow  # a real browser against the review app

ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


def _missing(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set: the browser tests must run)")
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    chromium = shutil.which("chromium")
    if chromium is None:
        _missing("Debian's chromium is not installed: apt-get install chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed: pip install playwright")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[ReviewWorld, str]]:
    w = build_world(tmp_path)
    with serving(w.app) as base:
        yield w, base


def _login(browser, base: str, user: str):
    page = browser.new_context().new_page()
    page.goto(f"{base}/login")
    # The user name field has focus (autofocus); under load chromium may apply it a moment after "load",
    # and keys typed before that are lost, so wait for the focus itself.
    page.wait_for_selector("input[name=username]:focus")
    page.keyboard.type(user)
    page.keyboard.press("Tab")
    page.wait_for_selector("input[name=password]:focus")
    page.keyboard.type(PASSWORDS[user])
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url == f"{base}/", f"{user} was not logged in: {page.inner_text('body')[:300]}"
    return page


def _decide_by_keyboard(page, base: str, card_id: str, keys: list[str]) -> str:
    page.goto(f"{base}/card/{card_id}")
    page.wait_for_selector("form.decide.current")
    for key in keys:
        page.keyboard.press(key)
    page.keyboard.press("r")
    page.keyboard.press("1")  # the first voter-intent rule
    with page.expect_navigation():
        page.keyboard.press("Enter")
    return page.inner_text("#message")


def _gov(world: ReviewWorld, option: str) -> int:
    return next(r.votes for r in tally(world.store) if (r.precinct, r.contest, r.option) == ("P01", "gov", option))


def test_two_auditors_resolve_a_marginal_mark_by_keyboard_and_the_tally_changes(browser, world) -> None:
    w, base = world
    before = _gov(w, "gov-a")
    alice = _login(browser, base, "alice")
    alice.goto(f"{base}/card/{MARGINAL}")
    assert alice.locator(".stage rect.current").count() == 4  # the contest's targets outlined
    assert "awaiting a second" in _decide_by_keyboard(alice, base, MARGINAL, ["1"])
    assert _gov(w, "gov-a") == before
    bob = _login(browser, base, "bob")
    assert "final: confirmed by bob" in _decide_by_keyboard(bob, base, MARGINAL, ["1"])
    assert _gov(w, "gov-a") == before + 1
    bob.goto(f"{base}/queue")
    assert MARGINAL[:16] not in bob.inner_text("#queue-table")


def test_blind_mode_hides_the_machine_reading(browser, world) -> None:
    _, base = world
    alice = _login(browser, base, "alice")
    alice.goto(f"{base}/card/{MARGINAL}")
    assert alice.locator(".machine").count() == 1 and alice.locator(".score").count() > 0
    alice.keyboard.press("b")
    alice.wait_for_selector("#blind-on")
    assert alice.locator(".machine").count() == 0 and alice.locator(".score").count() == 0
    assert alice.locator(".stage rect title").count() == 0


def _click_and_wait(page, selector: str) -> None:
    with page.expect_navigation():
        page.click(selector)


def test_a_disagreement_reaches_the_board_whose_members_vote_from_their_own_logins(browser, world) -> None:
    w, base = world
    _decide_by_keyboard(_login(browser, base, "alice"), base, MARGINAL_2, ["2"])
    text = _decide_by_keyboard(_login(browser, base, "bob"), base, MARGINAL_2, ["0"])
    assert "escalated to the board" in text
    carol = _login(browser, base, "carol")
    carol.goto(f"{base}/board")
    assert "alice\tBen Brooks" in carol.inner_text("table.readings")
    assert carol.locator("select[name^=member_]").count() == 0  # no member chooses another's vote
    carol.check("form.board input[value='gov-b']")
    carol.select_option("form.board select[name=rule]", index=1)
    _click_and_wait(carol, "form.board button[type=submit]")
    assert "carol: for" in carol.inner_text(".ballots")
    _click_and_wait(carol, "form.board-close button")
    assert "a board decision needs 2 present" in carol.inner_text("main")  # carol alone: refused, nothing recorded
    assert [d.state.value for d in w.store.decisions()] == ["escalated", "escalated"]
    dave, erin = _login(browser, base, "dave"), _login(browser, base, "erin")
    for member, vote in ((dave, "for"), (erin, "abstain")):
        member.goto(f"{base}/board")
        assert "carol proposes" in member.inner_text(".proposal")
        _click_and_wait(member, f"form.board-vote button[value={vote}]")
        assert "You voted" in member.inner_text(".proposal")
    carol.goto(f"{base}/board")
    assert carol.inner_text(".ballots").splitlines() == ["carol: for", "dave: for", "erin: abstain"]
    _click_and_wait(carol, "form.board-close button")
    assert "final" in carol.inner_text("#message")
    olga = _login(browser, base, "olga")
    response = olga.goto(f"{base}/card/{MARGINAL}")
    assert response is not None and response.status == 403
    olga.goto(f"{base}/tally")
    assert olga.locator("#tally tr").count() > 1


def test_login_with_a_tab_in_next_stays_on_this_site(browser, world) -> None:
    """``/login?next=%2F%09%2Fevil.example``: a browser drops the tab of ``/\t/evil.example``
    and would go to ``//evil.example``; the review follows only its own paths."""
    _, base = world
    page = browser.new_context().new_page()
    page.goto(f"{base}/login?next=%2F%09%2Fevil.example")
    page.wait_for_selector("input[name=username]:focus")
    page.keyboard.type("alice")
    page.keyboard.press("Tab")
    page.wait_for_selector("input[name=password]:focus")
    page.keyboard.type(PASSWORDS["alice"])
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url == f"{base}/", page.url


def test_two_auditors_resolve_a_mismatched_pair_side_by_side(browser, world) -> None:
    from tests.test_review_support import add_mismatched_pair

    w, base = world
    add_mismatched_pair(w)
    before = _gov(w, "gov-b")
    for user, expected in (("alice", "awaiting a second"), ("bob", "final: confirmed by bob")):
        page = _login(browser, base, user)
        page.goto(f"{base}/pair/A0042")
        assert page.locator("figure.viewer").count() == 2  # duplicate and original side by side
        assert "Duplicate: Ada Alvarez" in page.inner_text("form.decide")
        page.keyboard.press("+")  # zoom in: the image grows inside its frame
        assert page.eval_on_selector(".stage", "s => s.style.width") == "125%"
        page.keyboard.press("2")
        page.keyboard.press("r")
        page.keyboard.press("1")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert expected in page.inner_text("#message")
    assert _gov(w, "gov-b") == before + 1


def test_a_post_without_the_csrf_token_is_refused_in_the_browser(browser, world) -> None:
    """A script in a logged-in auditor's page posts a complete decision form without the
    CSRF token (as a forged cross-site form would): refused, nothing recorded."""
    w, base = world
    alice = _login(browser, base, "alice")
    alice.goto(f"{base}/card/{MARGINAL}")
    post = """async (withToken) => {
            const form = document.querySelector("form.decide#decide-gov");
            const data = new FormData(form);
            if (!withToken) data.delete("csrf");
            data.set("votes", "gov-a");
            data.set("rule", "md-fill");
            const response = await fetch(form.action, {method: "POST", body: new URLSearchParams(data)});
            return response.status;
        }"""
    assert alice.evaluate(post, False) == 403
    assert w.store.decisions(MARGINAL) == []
    assert alice.evaluate(post, True) == 200  # the same form with its token is taken: the token made the difference
    assert len(w.store.decisions(MARGINAL)) == 1


def test_the_audit_page_names_a_tampered_entry(browser, world) -> None:
    from sqlalchemy import select, update

    from scanpipe.store.models import event_table

    w, base = world
    root = _login(browser, base, "root")
    root.goto(f"{base}/audit")
    assert "The chain holds" in root.inner_text("#chain")
    with w.store._write() as conn:  # somebody edits a logged login behind the app's back
        target = conn.execute(select(event_table.c.id).where(event_table.c.action == "login").order_by(event_table.c.id)).scalars().first()
        conn.execute(update(event_table).where(event_table.c.id == target).values(detail={"user": "mallory", "remote": "127.0.0.1"}))
    root.goto(f"{base}/audit")
    text = root.inner_text("#chain")
    assert "The chain is broken" in text and f"entry {target}" in text and "edited" in text
