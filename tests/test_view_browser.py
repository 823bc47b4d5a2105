"""What auditors and the board see, in a real browser (Playwright driving Debian's chromium),
on real scanned duplicates and originals: the zoom to the contest in question on both cards,
the write-in name, the history of decided items, the board page with the images.

Each test saves a screenshot of the page it checks; with ``SCANPIPE_SCREENS=docs/screens``
they go to the README's pictures (``SCANPIPE_SCREENS=docs/screens pytest tests/test_view_browser.py -n 0``).
Skipped when chromium or playwright is missing, except under CI (env CI), where it fails.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_review_support import PASSWORDS, serving
from tests.view_support import CONFLICT, MISMATCH, PairWorld, build_pair_world

ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1360, "height": 860}


def _missing(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set: the browser tests must run)")
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
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
def world(tmp_path: Path) -> Iterator[tuple[PairWorld, str]]:
    w = build_pair_world(tmp_path)
    with serving(w.app) as base:
        yield w, base


def _login(browser: Any, base: str, user: str) -> Any:
    page = browser.new_context(viewport=VIEWPORT).new_page()
    page.goto(f"{base}/login")
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", PASSWORDS[user])
    with page.expect_navigation():
        page.click("button[type=submit]")
    assert page.url == f"{base}/", f"{user} was not logged in: {page.inner_text('body')[:300]}"
    return page


def _screen(page: Any, name: str, tmp_path: Path) -> Path:
    """A screenshot of the page, kept small (a 128-colour PNG)."""
    from PIL import Image

    folder = Path(os.environ.get("SCANPIPE_SCREENS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path))
    Image.open(path).convert("RGB").quantize(colors=128).save(path, optimize=True)
    return path


def _images_ready(page: Any) -> None:
    """Every card image has loaded and been zoomed (the page marks each figure when done)."""
    page.wait_for_function("""() => {
        const figs = [...document.querySelectorAll('figure.viewer')];
        return figs.length > 0 && figs.every(f => f.dataset.ready === '1');
    }""")


ZOOM_STATE = """() => [...document.querySelectorAll('figure.viewer')].map(fig => {
    const scroll = fig.querySelector('.scroll').getBoundingClientRect();
    const stage = fig.querySelector('.stage');
    const rects = [...fig.querySelectorAll('rect.current')].map(r => r.getBoundingClientRect());
    const inside = rects.length > 0 && rects.every(r => r.left >= scroll.left - 1 && r.right <= scroll.right + 1
                                                      && r.top >= scroll.top - 1 && r.bottom <= scroll.bottom + 1);
    return {zoom: stage.offsetWidth / fig.querySelector('.scroll').clientWidth, inside, targets: rects.length,
            contest: fig.dataset.zoomed || ''};
})"""


def _decide(page: Any, keys: list[str], *, rule: str = "1") -> str:
    page.keyboard.press("Escape")  # out of any text field: keys are commands again
    for key in keys:
        page.keyboard.press(key)
    page.keyboard.press("r")
    page.keyboard.press(rule)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    return str(page.inner_text("#message"))


def test_the_pair_opens_zoomed_to_the_contest_in_question_on_both_cards(browser: Any, world: tuple[PairWorld, str], tmp_path: Path) -> None:
    w, base = world
    alice = _login(browser, base, "alice")
    alice.goto(f"{base}/pair/{MISMATCH}")
    _images_ready(alice)
    state = alice.evaluate(ZOOM_STATE)
    assert [s["contest"] for s in state] == ["q2", "q2"], state  # duplicate and original, both on Question 2
    assert all(s["zoom"] > 1.5 and s["inside"] and s["targets"] == 2 for s in state), state  # zoomed in, both targets in view
    assert "Duplicate differs from original." in alice.inner_text(".instruction")
    assert "Read the ORIGINAL" in alice.inner_text(".instruction")
    _screen(alice, "pair", tmp_path)
    alice.keyboard.press("=")  # the whole card
    assert all(abs(s["zoom"] - 1) < 0.01 and s["contest"] == "" for s in alice.evaluate(ZOOM_STATE))
    alice.keyboard.press("+")
    assert all(abs(s["zoom"] - 1.25) < 0.01 for s in alice.evaluate(ZOOM_STATE))
    alice.keyboard.press("z")  # back to the contest
    assert all(s["contest"] == "q2" and s["inside"] for s in alice.evaluate(ZOOM_STATE))


def test_a_write_in_name_is_recorded_with_the_decision_and_shown_in_the_history(browser: Any, world: tuple[PairWorld, str],
                                                                                tmp_path: Path) -> None:
    w, base = world
    card = w.store.card_id_for("B01#2")  # a mark for a person in Governor, which has a write-in
    for user, expected in (("alice", "awaiting a second"), ("bob", "final: confirmed by bob after alice")):
        page = _login(browser, base, user)
        page.goto(f"{base}/card/{card}")
        _images_ready(page)
        assert page.get_attribute("form.decide.current", "data-contest") == "gov"
        page.keyboard.press("w")  # ticks the write-in and puts the cursor in its name field
        page.keyboard.type("Zed  Zimmer ")
        assert page.is_checked("form.decide.current input[name=votes][value=gov-w]")
        if user == "alice":
            _screen(page, "write-in", tmp_path)
        message = _decide(page, [])
        assert "Card B01 #2 (0014-p1.png) · Governor: Write-in: Zed Zimmer" in message and expected in message, message
        assert f"/card/{card}" not in page.url  # it moved on to the next item
    final = [d for d in w.store.decisions(card) if d.state.value == "final"]
    assert [(d.contest, d.votes) for d in final] == [("gov", ("gov-w",))]
    assert w.store.write_in_names([final[0].id]) == {final[0].id: {"gov-w": "Zed Zimmer"}}
    page.goto(f"{base}/card/{card}")  # decided: its history
    assert "Write-in: Zed Zimmer" in page.inner_text("#decisions")


def test_a_decided_pair_shows_its_history_read_only(browser: Any, world: tuple[PairWorld, str], tmp_path: Path) -> None:
    w, base = world
    for user, expected in (("alice", "awaiting a second"), ("bob", "final: confirmed by bob after alice")):
        page = _login(browser, base, user)
        page.goto(f"{base}/pair/{MISMATCH}")
        page.fill("form.decide textarea[name=note]", f"{user}: the original's mark is a clear fill")
        assert expected in _decide(page, ["2"])  # Question 2: Against
    assert w.store.get_pair(MISMATCH).status == "resolved"
    response = page.goto(f"{base}/pair/{MISMATCH}")  # no longer queued: its history, never "Not found"
    assert response is not None and response.status == 200
    assert f"Serial {MISMATCH}" in page.inner_text("#item-title")
    rows = page.inner_text("#decisions")
    assert "Question 2" in rows and "Against" in rows and "alice" in rows and "bob" in rows and "final" in rows
    assert "The target is filled, partly filled, checked or crossed" in rows and "the original's mark is a clear fill" in rows
    assert page.locator("form.decide").count() == 0 and page.locator("figure.viewer").count() == 2  # read-only, with the cards
    _images_ready(page)
    _screen(page, "history", tmp_path)
    page.goto(f"{base}/history")
    assert f"Serial {MISMATCH}" in page.inner_text("#history-table")


def test_the_board_sees_the_cards_and_each_auditors_reading_rule_and_note(browser: Any, world: tuple[PairWorld, str],
                                                                         tmp_path: Path) -> None:
    w, base = world
    for user, key, rule in (("alice", "1", "1"), ("bob", "2", "5")):
        page = _login(browser, base, user)
        page.goto(f"{base}/pair/{MISMATCH}")
        page.fill("form.decide textarea[name=note]", f"note by {user}")
        _decide(page, [key], rule=rule)
    carol = _login(browser, base, "carol")
    carol.goto(f"{base}/board")
    _images_ready(carol)
    case = carol.locator("section.case")
    assert case.count() == 1
    assert f"Serial {MISMATCH} · Question 2" in case.locator("h2").inner_text()
    assert case.locator("figure.viewer").count() == 2
    assert all(n > 0 for n in carol.eval_on_selector_all("section.case figure img", "imgs => imgs.map(i => i.naturalWidth)"))
    assert all(s["contest"] == "q2" and s["inside"] for s in carol.evaluate(ZOOM_STATE))
    readings = case.locator("table.readings").inner_text()
    assert "alice\tFor\tThe target is filled, partly filled, checked or crossed\tnote by alice" in readings, readings
    assert "bob\tAgainst\tThe voter's marking pattern across the card shows intent\tnote by bob" in readings, readings
    _screen(carol, "board", tmp_path)


def test_the_queue_and_the_tally_read_as_names(browser: Any, world: tuple[PairWorld, str], tmp_path: Path) -> None:
    _, base = world
    alice = _login(browser, base, "alice")
    alice.goto(f"{base}/queue")
    table = alice.inner_text("#queue-table")
    assert f"serial {CONFLICT}" in table and "serial used more than once" in table and "B01 #1 (0006.jpg)" in table
    assert "Precinct 1 Northfield" in table and "mark for a person to read" in table
    _screen(alice, "queue", tmp_path)
    alice.goto(base + alice.locator("a.item-link", has_text="B01 #2").get_attribute("href"))
    _images_ready(alice)
    assert "Card B01 #2 (0014-p1.png)" in alice.inner_text("#item-title")
    assert "Machine read: unclear" in alice.inner_text("form.decide")
    _screen(alice, "card", tmp_path)
    olga = _login(browser, base, "olga")
    olga.goto(f"{base}/tally")
    totals = olga.inner_text("#tally-totals")
    assert "All precincts" in totals and "Ada Alvarez" in totals and "Total votes" in totals
    _screen(olga, "tally", tmp_path)
