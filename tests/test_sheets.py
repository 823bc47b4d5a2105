"""Sheets and the pages that are no ballot.

* A two-page file is one sheet (its pages share a sticker); a file of more pages is a stack
  of cards, each page on its own.
* The blank back of a card printed on one side, scanned with its front (a two-page sheet
  file, or the back side of a duplex scan), is kept as ``blank_back`` and neither counted nor
  queued; every other blank page (a sheet alone, one beside a front that was not read, the
  back of a two-sided style) stays ``blank_page`` for a person.
* A page that is no ballot card leaves the queue by the board's ruling (``board set-aside``).
"""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from scanpipe.counting import count_card
from scanpipe.interpret import blank_back, interpret_file
from scanpipe.pipeline import FileResult, IngestSummary, needs_person, store_results
from scanpipe.queue import build_queue
from scanpipe.types import CardHints, InterpretedCard, MarkStatus, ReadCard, Reason, UnreadableCard
from tests.helpers import read_card
from tests.test_realballots import FIX, context_of

SET = "cedar2008primary"
CARD = FIX / SET / "voted" / "20120608170620594_0002.jpg"  # one-sided: every Cedar style has one page
CLEAN = FIX / SET / "voted" / "20120608170620594_0021.jpg"  # one read with nothing for a person


@pytest.fixture
def marginal_card(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """CARD with its one mark for a person: a loose scribble just under the definite level
    (``state-rep-79-rep-kaufmann``, 0.480). Read with the voter's other light marks it is a
    vote (``voter_reach``); these tests need a card a person must look at, so they read with
    that rule off (the shipped thresholds, ``voter_reach`` 0)."""
    import json as _json

    from scanpipe.classify import default_thresholds_path

    data = _json.loads(default_thresholds_path().read_text())
    folder = tmp_path / "calibration"
    folder.mkdir()
    (folder / "thresholds.json").write_text(_json.dumps({**data, "voter_reach": 0.0}))
    monkeypatch.setenv("SCANPIPE_CALIBRATION", str(folder))
    return CARD


def _blank(shape: tuple[int, int], seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(rng.normal(236, 4, shape), 0, 255).astype(np.uint8)  # paper with a scanner's noise


def _sheet(*pages: np.ndarray) -> bytes:
    """A multi-page TIFF: one sheet, its sides in the order given."""
    images = [Image.fromarray(p) for p in pages]
    out = io.BytesIO()
    images[0].save(out, format="TIFF", save_all=True, append_images=images[1:], dpi=(200, 200))
    return out.getvalue()


def _front() -> np.ndarray:
    gray = cv2.imread(str(CARD), cv2.IMREAD_GRAYSCALE)
    assert gray is not None
    return gray


def _read(data: bytes) -> list[InterpretedCard]:
    return interpret_file("sheet.tif", context_of(SET), CardHints(), "t", data=data)


def _reason(card: InterpretedCard) -> Reason | None:
    result = card.interpretation
    return result.reason if isinstance(result, UnreadableCard) else None


@pytest.mark.parametrize("front_first", [True, False], ids=["front-then-back", "back-then-front"])
def test_the_blank_back_of_a_one_sided_card_is_kept_and_awaits_no_one(front_first: bool) -> None:
    front = _front()
    pages = (front, _blank(front.shape)) if front_first else (_blank(front.shape), front)
    cards = _read(_sheet(*pages))
    read, back = (cards[0], cards[1]) if front_first else (cards[1], cards[0])
    assert isinstance(read.interpretation, ReadCard)
    assert _reason(back) is Reason.BLANK_BACK, back.interpretation
    detail = back.interpretation.detail  # type: ignore[union-attr]
    assert detail.startswith(f"the blank back of a card printed on one side: page {read.source.page_index} of this sheet "
                             f"is read as style {read.interpretation.style}, which prints one side only (the page is blank: "
                             "print on 0.0"), detail
    assert not needs_person(back)
    election = context_of(SET).election
    count = count_card(election, back, {})
    assert (count.counts, count.card_pending, count.reasons) == (False, False, (Reason.BLANK_BACK,))
    queue = build_queue([count_card(election, c, {}) for c in cards], [])
    assert back.source.card_id not in {i.item for i in queue}


def test_two_blank_pages_or_a_blank_beside_an_unread_page_stay_for_a_person() -> None:
    shape = _front().shape
    both = _read(_sheet(_blank(shape), _blank(shape)))
    assert [_reason(c) for c in both] == [Reason.BLANK_PAGE, Reason.BLANK_PAGE]
    noise = np.random.default_rng(3).integers(0, 256, shape, dtype=np.uint8)  # not a card of the election
    beside = _read(_sheet(noise, _blank(shape)))
    assert _reason(beside[0]) not in (None, Reason.BLANK_BACK)
    assert _reason(beside[1]) is Reason.BLANK_PAGE
    assert needs_person(beside[1])


def test_a_blank_side_of_a_two_sided_style_stays_for_a_person() -> None:
    """Where the front's style prints two sides, a blank one is missing print: a person looks."""
    front = _front()
    read, back = _read(_sheet(front, _blank(front.shape)))
    assert isinstance(read.interpretation, ReadCard)
    election = context_of(SET).election
    style = election.style(read.interpretation.style)
    second = replace(style.layout.pages[0], page=2)
    two_sided = replace(election, ballot_styles=tuple(
        replace(s, layout=replace(s.layout, pages=(*s.layout.pages, second))) if s.id == style.id else s
        for s in election.ballot_styles))
    as_blank = replace(back, interpretation=UnreadableCard(Reason.BLANK_PAGE, "the page is blank: print on 0.000% of it"))
    assert blank_back(read, as_blank, election).interpretation.reason is Reason.BLANK_BACK  # type: ignore[union-attr]
    assert blank_back(read, as_blank, two_sided) is as_blank


def test_a_duplex_scan_keeps_the_blank_backs_with_their_fronts(tmp_path: Path) -> None:
    """``scan --duplex``: each side is a page file; a back side the scanner found blank after a
    front read as a one-sided style is ``blank_back``, said once in the summary; a blank sheet
    fed as a front is still ``blank_page`` for a person."""
    from scanpipe.scan import scan_batch
    from scanpipe.sources.base import ScanSettings
    from scanpipe.sources.replay import ReplaySource
    from scanpipe.store.repository import Store
    from scanpipe.workflow import init_election, queue

    stack = tmp_path / "stack"
    stack.mkdir()
    front = _front()
    (stack / "1.jpg").write_bytes(CARD.read_bytes())  # the front ...
    for name, seed in (("2.png", 1), ("3.png", 2), ("4.png", 3)):  # ... its blank back; a blank sheet fed face up, its back
        assert cv2.imwrite(str(stack / name), _blank(front.shape, seed))
    store = Store.open(f"sqlite:///{tmp_path / 'scan.db'}")
    try:
        store.migrate()
        init_election(store, FIX / SET / "election.json")
        lines: list[str] = []
        summary = scan_batch(store, ReplaySource(f"replay:{stack}", ScanSettings(duplex=True)), batch="d1",
                             out_dir=tmp_path / "scans", on_line=lines.append)
        reasons = {c.card.source.path.rsplit("/", 1)[-1]: _reason(c.card) for c in store.iter_cards()}
        assert reasons == {"00001.jpg": None, "00002.png": Reason.BLANK_BACK, "00003.png": Reason.BLANK_PAGE,
                           "00004.png": Reason.BLANK_PAGE}, reasons
        assert summary.blank_backs == 1
        assert summary.unreadable == {"blank_page": 2}
        assert "  1 blank back(s) of cards printed on one side: kept with their fronts, nothing to decide" in summary.lines()
        assert "NEEDS A PERSON" not in lines[1], lines
        assert lines[1].startswith("d1/00002  the blank back of a card printed on one side: its front, 00001.jpg, is read as "
                                   "style "), lines
        queued = {i.item for i in queue(store)}
        by_file = {c.card.source.path.rsplit("/", 1)[-1]: c.card_id for c in store.iter_cards()}
        assert by_file["00002.png"] not in queued
        assert {by_file["00003.png"], by_file["00004.png"]} <= queued
    finally:
        store.close()


def test_the_board_sets_a_page_that_is_no_ballot_aside(tmp_path: Path, marginal_card: Path) -> None:
    """A sheet fed by mistake (blank, or printed with something else) waits in the queue until
    the board rules it is no ballot card (``board set-aside``): it then counts nothing and
    leaves the queue, kept as evidence, the ruling in the audit log. A ballot, or a page
    already ruled, is refused."""
    import json as _json

    from tests.test_reconcile import Run
    from tests.test_statute_cli import fails

    folder = tmp_path / "cards"
    folder.mkdir()
    (folder / "ballot.jpg").write_bytes(marginal_card.read_bytes())
    assert cv2.imwrite(str(folder / "stray.png"), _blank(_front().shape, 11))
    run = Run(tmp_path)
    run("init", "--election", str(FIX / SET / "election.json"), code=0)
    run("ingest", str(folder), "-q")
    queue = _json.loads(run("queue", "--json", code=(0, 1)))
    stray = next(i["item"] for i in queue if i["reason"] == "blank_page")
    ballot = next(i["item"] for i in queue if i["item"] != stray)  # the ballot's marks for a person
    board = ("--member", "carol=for", "--member", "dave=for", "--by", "carol", "--no-accounts")
    said = run("board", "set-aside", stray, "--why", "a blank sheet fed with the stack", *board, code=0)
    assert said == (f"page ruling 1: card {stray} is not a ballot card (a blank sheet fed with the stack)\n"
                    "1 page(s) set aside by the board; for: carol, dave [MD-2026.1]\n"), said
    assert stray not in {i["item"] for i in _json.loads(run("queue", "--json", code=(0, 1)))}
    refused = fails(run, "board", "set-aside", ballot, "--why", "x", *board)
    assert "is read as a ballot card; the board does not set a ballot aside" in refused
    again = fails(run, "board", "set-aside", stray, "--why", "again", *board)
    assert "was set aside by the board already (page ruling 1: a blank sheet fed with the stack)" in again
    assert "1 set aside by the board as no ballot card (kept, counted nowhere)" in run("status", code=0)
    run("audit", "verify", code=0)
    run("export", "cvr", "--out", str(tmp_path / "cvr.json"), code=0)
    cvrs = {c["UniqueId"]: c for c in _json.loads((tmp_path / "cvr.json").read_text())["CVR"]}
    assert cvrs[stray]["CVRSnapshot"][0]["OtherStatus"] == "role=regular;unreadable=blank_page;set_aside=page ruling 1"
    # a stack scanned on both sides, saved as one file: its blank backs are pages of their own (a
    # stack is no sheet), set aside in one decision once the board has looked at them
    shape = _front().shape
    (folder / "stack.tif").write_bytes(_sheet(_front(), _blank(shape, 12), _front()[:, ::-1].copy(), _blank(shape, 13)))
    run("ingest", str(folder), "-q")
    blanks = [i["item"] for i in _json.loads(run("queue", "--json", code=(0, 1))) if i["reason"] == "blank_page"]
    assert len(blanks) == 2
    said = run("board", "set-aside", "--blank-pages-of", "cards", "--why", "the blank backs of a stack scanned on both sides",
               *board, code=0)
    assert said.splitlines()[-1] == "2 page(s) set aside by the board; for: carol, dave [MD-2026.1]", said
    assert not {i["item"] for i in _json.loads(run("queue", "--json", code=(0, 1)))} & set(blanks)
    assert "name at least one page to set aside" in fails(run, "board", "set-aside", "--blank-pages-of", "cards", "--why", "x", *board)
    run("audit", "verify", code=0)


def _labelled(text: str) -> np.ndarray:
    """The Cedar card with a pairing sticker stuck on its lower margin."""
    from scanpipe.synth.pairs import label_patch

    page = _front().copy()
    patch = cv2.cvtColor(label_patch(text, 200.0), cv2.COLOR_RGB2GRAY)
    h, w = patch.shape
    page[page.shape[0] - h - 40: page.shape[0] - 40, 60: 60 + w] = patch
    return page


def test_only_a_two_page_file_is_one_sheet() -> None:
    """A sheet has two sides: its pages share the sticker found on either. A file of more pages
    is a stack of cards (a scanner's batch saved as one TIFF or PDF): a sticker on one page
    makes only that page a duplicate, not every ballot of the batch."""
    from scanpipe.types import CardKind

    labelled, plain = _labelled("DUP-A0042"), _front()
    sheet = _read(_sheet(labelled, plain))
    assert [(c.kind, c.label and c.label.serial) for c in sheet] == [(CardKind.DUPLICATE, "A0042")] * 2
    stack = _read(_sheet(plain, labelled, np.ascontiguousarray(plain[:, ::-1])))
    assert [(c.kind, c.label and c.label.serial) for c in stack] == [
        (CardKind.BALLOT, None), (CardKind.DUPLICATE, "A0042"), (CardKind.BALLOT, None)]


def _duplex_scan(tmp_path: Path, pages: list[Path | np.ndarray], *, stop_on_flag: bool = False) -> tuple[object, object, list[str]]:
    """Scan ``pages`` (a card file or a page image each) as a duplex stack: (summary, store, lines)."""
    from scanpipe.scan import scan_batch
    from scanpipe.sources.base import ScanSettings
    from scanpipe.sources.replay import ReplaySource
    from scanpipe.store.repository import Store
    from scanpipe.workflow import init_election

    stack = tmp_path / "stack"
    stack.mkdir(parents=True)
    for k, page in enumerate(pages, start=1):
        if isinstance(page, Path):
            (stack / f"{k}{page.suffix}").write_bytes(page.read_bytes())
        else:
            assert cv2.imwrite(str(stack / f"{k}.png"), page)
    store = Store.open(f"sqlite:///{tmp_path / 'scan.db'}")
    store.migrate()
    init_election(store, FIX / SET / "election.json")
    lines: list[str] = []
    summary = scan_batch(store, ReplaySource(f"replay:{stack}", ScanSettings(duplex=True)), batch="d1",
                         out_dir=tmp_path / "scans", on_line=lines.append, stop_on_flag=stop_on_flag)
    return summary, store, lines


def test_a_card_fed_face_down_through_a_duplex_scan_keeps_its_blank_front_out_of_the_queue(tmp_path: Path, marginal_card: Path) -> None:
    """Fed face down, a one-sided card shows its blank back as the scanner's front and its face
    as the back: once the face reads, the stored front is a blank back (reinterpreted, logged),
    and ``--stop-on-flag`` does not stop for it (it stops on the second card's marginal mark)."""
    from scanpipe.workflow import queue

    shape = _front().shape
    summary, store, lines = _duplex_scan(tmp_path, [_blank(shape, 5), CLEAN, _blank(shape, 6), marginal_card], stop_on_flag=True)
    try:
        reasons = {c.card.source.path.rsplit("/", 1)[-1]: _reason(c.card) for c in store.iter_cards()}
        assert reasons == {"00001.png": Reason.BLANK_BACK, "00002.jpg": None, "00003.png": Reason.BLANK_BACK,
                           "00004.jpg": None}, reasons
        assert summary.stopped_on is not None and summary.stopped_on[:2] == (4, "00004.jpg")  # type: ignore[attr-defined]  # its marginal mark
        assert summary.blank_backs == 2 and not summary.unreadable  # type: ignore[attr-defined]
        assert any(line.startswith("d1/00001  the blank back of a card printed on one side: its front, 00002.jpg, is read as")
                   and line.endswith("(the card was fed face down)") for line in lines), lines
        blank_id = next(c.card_id for c in store.iter_cards() if c.card.source.path.endswith("00001.png"))
        assert blank_id not in {i.item for i in queue(store)}
        assert any(e.action == "card_reinterpreted" and e.detail["card"] == blank_id for e in store.events())
    finally:
        store.close()  # type: ignore[attr-defined]


def test_a_blank_sheet_through_a_duplex_scan_stops_the_feed_on_its_front(tmp_path: Path) -> None:
    shape = _front().shape
    summary, store, _lines = _duplex_scan(tmp_path, [_blank(shape, 5), _blank(shape, 6), CARD, _blank(shape, 8)],
                                          stop_on_flag=True)
    try:
        assert summary.stopped_on is not None and summary.stopped_on[:2] == (1, "00001.png"), summary.stopped_on  # type: ignore[attr-defined]
    finally:
        store.close()  # type: ignore[attr-defined]


def test_a_duplex_scan_folder_ingested_elsewhere_keeps_its_blank_backs_out_of_the_queue(tmp_path: Path) -> None:
    """A folder ``scan --duplex`` wrote (on a workstation offline, say) and ``ingest``ed into
    another database: its manifest says which pages are the two sides of a sheet, so the blank
    backs (after a front, or before a card fed face down) are ``blank_back`` there too, and a
    blank sheet stays for a person. The folder is not changed."""
    from scanpipe.store.repository import Store
    from scanpipe.types import CardHints
    from scanpipe.workflow import ingest_paths, init_election, queue

    shape = _front().shape
    pages: list[Path | np.ndarray] = [CLEAN, _blank(shape, 21), _blank(shape, 22), CARD, _blank(shape, 23), _blank(shape, 24)]
    _summary, first, _lines = _duplex_scan(tmp_path / "ws", pages)
    first.close()  # type: ignore[attr-defined]
    folder = tmp_path / "ws" / "scans" / "d1"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    store = Store.open(f"sqlite:///{tmp_path / 'central.db'}")
    try:
        store.migrate()
        init_election(store, FIX / SET / "election.json")
        summary = ingest_paths(store, [str(folder)], batch="central", hints=CardHints())
        reasons = {c.card.source.path.rsplit("/", 1)[-1]: _reason(c.card) for c in store.iter_cards()}
        assert reasons == {"00001.jpg": None, "00002.png": Reason.BLANK_BACK, "00003.png": Reason.BLANK_BACK,
                           "00004.jpg": None, "00005.png": Reason.BLANK_PAGE, "00006.png": Reason.BLANK_PAGE}, reasons
        assert summary.blank_backs == 2 and summary.unreadable == {"blank_page": 2}, summary
        assert len(summary.unreadable_cards) == 2
        queued = {i.item for i in queue(store)}
        assert not queued & {c.card_id for c in store.iter_cards() if _reason(c.card) is Reason.BLANK_BACK}
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    finally:
        store.close()


def _duplex_folder_and_central_store(tmp_path: Path):  # noqa: ANN202
    """A folder ``scan --duplex`` wrote (two one-sided cards, each with its blank back) and a
    fresh database elsewhere holding the election, to ingest it into."""
    from scanpipe.store.repository import Store
    from scanpipe.workflow import init_election

    shape = _front().shape
    _summary, first, _lines = _duplex_scan(tmp_path / "ws", [CLEAN, _blank(shape, 21), _blank(shape, 22), CARD])
    first.close()  # type: ignore[attr-defined]
    store = Store.open(f"sqlite:///{tmp_path / 'central.db'}")
    store.migrate()
    init_election(store, FIX / SET / "election.json")
    return tmp_path / "ws" / "scans" / "d1", store


def test_a_rerun_over_a_duplex_scan_folder_loads_none_of_its_sheets_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sheets of a duplex scan folder are told (blank backs, one style per sheet) on ingest;
    a rerun of the same ingest finds every sheet settled from the sides' readings alone, so it
    loads no sheet whole again (a county's folder holds thousands), and every side keeps its
    reading."""
    from scanpipe import workflow
    from scanpipe.types import CardHints
    from scanpipe.workflow import ingest_paths

    folder, store = _duplex_folder_and_central_store(tmp_path)
    try:
        summary = ingest_paths(store, [str(folder)], batch="central", hints=CardHints())
        assert summary.blank_backs == 2, summary
        before = {c.card_id: _reason(c.card) for c in store.iter_cards()}
        looked: list[tuple[str, str]] = []
        for name in ("tell_sheet_blank_backs", "tell_sheet_style"):
            told = getattr(workflow, name)
            monkeypatch.setattr(workflow, name, lambda store, e, front, back, _told=told, **kw: looked.append((front, back)) or _told(store, e, front, back, **kw))
        again = ingest_paths(store, [str(folder)], batch="central", hints=CardHints())
        assert again.cards_stored == 0 and again.blank_backs == 0, again
        assert looked == []
        assert {c.card_id: _reason(c.card) for c in store.iter_cards()} == before
    finally:
        store.close()


def test_sheets_stored_by_an_ingest_that_stopped_before_telling_them_are_told_by_the_rerun(tmp_path: Path,
                                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """An ingest that stopped after storing a duplex folder's sides but before telling its
    sheets (a crash, a power cut) leaves the blank backs stored as blank pages for a person; the
    rerun reads nothing new, yet tells those sheets, and the backs leave the queue."""
    from scanpipe import workflow
    from scanpipe.types import CardHints
    from scanpipe.workflow import ingest_paths, queue

    folder, store = _duplex_folder_and_central_store(tmp_path)
    try:
        with monkeypatch.context() as stopped:
            stopped.setattr(workflow, "tell_duplex_blank_backs", lambda *a, **k: [])
            stopped.setattr(workflow, "tell_duplex_sheet_styles", lambda *a, **k: [])
            ingest_paths(store, [str(folder)], batch="central", hints=CardHints())
        assert sorted(_reason(c.card) is Reason.BLANK_PAGE for c in store.iter_cards()) == [False, False, True, True]
        again = ingest_paths(store, [str(folder)], batch="central", hints=CardHints())
        assert again.cards_stored == 0 and again.blank_backs == 2, again
        backs = {c.card_id for c in store.iter_cards() if _reason(c.card) is Reason.BLANK_BACK}
        assert len(backs) == 2 and not backs & {i.item for i in queue(store)}
    finally:
        store.close()


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_status_counts_pages_set_aside_and_blank_backs_apart(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The status screen's counts by kind of page come from one query on either database: a
    page the board set aside counts as set aside whatever it was read as (even reinterpreted
    later), a blank back as a blank back, the rest by their status."""
    from scanpipe.store.repository import Store
    from scanpipe.workflow import init_election
    from tests.helpers import unreadable_card

    url = f"sqlite:///{tmp_path / 'db.sqlite'}" if backend == "sqlite" else request.getfixturevalue("pg_database_factory")()
    store = Store.open(url, create=True)
    try:
        store.migrate()
        init_election(store, FIX / SET / "election.json")
        cards = [unreadable_card(f"{k:064x}", reason) for k, reason in
                 enumerate((Reason.BLANK_PAGE, Reason.BLANK_PAGE, Reason.BLANK_BACK, Reason.UNKNOWN_STYLE), start=1)]
        store.save_cards(cards)
        store.add_page_rulings(cards=[cards[0].source.card_id], why="a blank sheet", members={"carol": "for"}, actor="carol",
                               rule_set="t", note=None)
        assert store.card_status_counts() == {"set_aside": 1, "unreadable": 2, "blank_back": 1}
        store.replace_interpretation(replace(cards[0], interpretation=UnreadableCard(Reason.BLANK_BACK, "told later")))
        assert store.card_status_counts() == {"set_aside": 1, "unreadable": 2, "blank_back": 1}
    finally:
        store.close()


# ---------------------------------------------------------------------------------------
# A sheet is one ballot style (:func:`scanpipe.interpret.sheet_style`)


@pytest.fixture(scope="module")
def vendor_context(vendor_election):  # noqa: ANN001, ANN201
    from scanpipe.classify import load_thresholds
    from scanpipe.interpret import InterpretContext, load_references

    return InterpretContext(vendor_election, load_thresholds(), load_references(vendor_election, cache=False))


def _side(context, style: str, page: int) -> np.ndarray:  # noqa: ANN001
    from scanpipe.synth.vendor import STYLES
    from scanpipe.synth.vendor_render import render_vendor_card

    return cv2.cvtColor(render_vendor_card(context.election, style, page, STYLES[style].precinct, 200), cv2.COLOR_RGB2GRAY)


def _read_sheet(context, tmp_path: Path, *sides: tuple[str, int]) -> list[InterpretedCard]:  # noqa: ANN001
    path = tmp_path / "sheet.tif"
    path.write_bytes(_sheet(*(_side(context, s, p) for s, p in sides)))
    return interpret_file(str(path), context, CardHints(), "t")


def test_a_sheet_read_as_one_two_sided_style_holds_nothing(vendor_context, tmp_path: Path) -> None:  # noqa: ANN001
    cards = _read_sheet(vendor_context, tmp_path, ("D-15", 1), ("D-15", 2))
    assert [(c.interpretation.style, c.interpretation.page) for c in cards if isinstance(c.interpretation, ReadCard)] == [("D-15", 1), ("D-15", 2)]
    assert all(Reason.STYLE_CONFLICT not in c.interpretation.reasons for c in cards)  # type: ignore[union-attr]


@pytest.mark.parametrize("sides", [(("D-15", 1), ("D-16", 2)), (("D-16", 1), ("D-16", 1))], ids=["two styles", "one side twice"])
def test_sides_read_as_two_styles_or_one_side_twice_are_both_held(vendor_context, tmp_path: Path, sides) -> None:  # noqa: ANN001
    cards = _read_sheet(vendor_context, tmp_path, *sides)
    assert [(c.interpretation.style, c.interpretation.page) for c in cards if isinstance(c.interpretation, ReadCard)] == list(sides)
    assert all(Reason.STYLE_CONFLICT in c.interpretation.reasons and needs_person(c) for c in cards)  # type: ignore[union-attr]
    for c in cards:  # counted only once a person states the style
        count = count_card(vendor_context.election, c, {})
        assert count.card_pending and Reason.STYLE_CONFLICT in count.reasons


def test_two_styles_of_one_side_each_may_name_a_sheets_sides(vendor_context, tmp_path: Path) -> None:  # noqa: ANN001
    cards = _read_sheet(vendor_context, tmp_path, ("E-D-11", 1), ("A-17", 1))
    assert all(isinstance(c.interpretation, ReadCard) and Reason.STYLE_CONFLICT not in c.interpretation.reasons for c in cards)


def test_a_side_too_close_to_call_is_read_as_the_style_of_its_other_side(vendor_context, tmp_path: Path) -> None:  # noqa: ANN001
    from scanpipe.interpret import sheet_style

    front, back = _read_sheet(vendor_context, tmp_path, ("D-16", 1), ("D-16", 2))
    unclear = replace(back, interpretation=UnreadableCard(Reason.AMBIGUOUS_STYLE, "fits D-15 page 2 and D-16 page 2 about equally"))
    asked: list[tuple[int, str]] = []

    def reread(side: InterpretedCard, style: str) -> InterpretedCard:
        asked.append((side.source.page_index, style))
        return back

    assert sheet_style([front, unclear], vendor_context.election, reread) == [front, back]
    assert asked == [(2, "D-16")]
    # read again as the other side's very page: not taken (the sheet would be one side twice)
    assert sheet_style([front, unclear], vendor_context.election, lambda i, s: front) == [front, unclear]
    # the other side a style of one page: nothing to read it as
    single = _read_sheet(vendor_context, tmp_path, ("E-D-11", 1), ("A-17", 1))[0]
    assert sheet_style([single, unclear], vendor_context.election, reread) == [single, unclear] and len(asked) == 1


def test_a_duplex_scanned_side_too_close_to_call_is_read_as_the_style_of_its_other_side(vendor_dir: Path, tmp_path: Path) -> None:
    """``scan --duplex`` writes each side of a sheet as a page file of its own. A back whose
    page prints alike on two styles (here D-15's and D-16's backs are one blank) was left
    ``ambiguous_style`` for a person, although its front, read as D-16, says which it is. The
    sides are now read as one style, as a two-page file's are: the back reads as D-16 page 2,
    counts, and awaits no one, and the scan's summary says so. The same folder ingested into
    another database is told the same."""
    import json
    import shutil

    from scanpipe.election import load_election
    from scanpipe.scan import scan_batch
    from scanpipe.sources.base import ScanSettings
    from scanpipe.sources.replay import ReplaySource
    from scanpipe.store.repository import Store
    from scanpipe.synth.vendor import STYLES
    from scanpipe.synth.vendor_render import render_vendor_card
    from scanpipe.workflow import ingest_paths, init_election, queue

    shutil.copytree(vendor_dir, tmp_path / "election")
    layouts = tmp_path / "election" / "layouts"
    d15, d16 = (json.loads((layouts / f"{s}.json").read_text()) for s in ("D-15", "D-16"))
    d16["pages"][1] = d15["pages"][1]  # one back for both styles (their contests are the same)
    (layouts / "D-16.json").write_text(json.dumps(d16))
    election = load_election(tmp_path / "election" / "election.json")
    stack = tmp_path / "stack"
    stack.mkdir()
    for name, (style, page) in (("1.png", ("D-16", 1)), ("2.png", ("D-15", 2))):
        side = render_vendor_card(election, style, page, STYLES[style].precinct, 200)
        assert cv2.imwrite(str(stack / name), cv2.cvtColor(side, cv2.COLOR_RGB2GRAY))

    def read(store: Store) -> dict[str, object]:
        return {c.card.source.path.rsplit("/", 1)[-1]: (c.card.interpretation.style, c.card.interpretation.page)  # type: ignore[union-attr]
                if isinstance(c.card.interpretation, ReadCard) else c.card.interpretation.reason for c in store.iter_cards()}  # type: ignore[union-attr]

    store = Store.open(f"sqlite:///{tmp_path / 'scan.db'}")
    try:
        store.migrate()
        init_election(store, tmp_path / "election" / "election.json")
        lines: list[str] = []
        summary = scan_batch(store, ReplaySource(f"replay:{stack}", ScanSettings(duplex=True)), batch="d1",
                             out_dir=tmp_path / "scans", on_line=lines.append)
        assert read(store) == {"00001.png": ("D-16", 1), "00002.png": ("D-16", 2)}, read(store)
        assert summary.needs_person == 0 and not summary.unreadable, summary.lines()
        assert not queue(store)
    finally:
        store.close()
    central = Store.open(f"sqlite:///{tmp_path / 'central.db'}")
    try:
        central.migrate()
        init_election(central, tmp_path / "election" / "election.json")
        ingested = ingest_paths(central, [str(tmp_path / "scans" / "d1")], batch="central", hints=CardHints())
        assert read(central) == {"00001.png": ("D-16", 1), "00002.png": ("D-16", 2)}, read(central)
        assert ingested.needs_person == 0 and not ingested.unreadable and not ingested.unreadable_cards, ingested.lines()
        assert not queue(central)
    finally:
        central.close()


def test_a_duplex_folder_s_files_pair_in_name_order_numbers_by_value() -> None:
    from scanpipe.workflow import sheets_in_order

    sides = [("/s/a/img10.png", "c"), ("/s/a/img2.png", "b"), ("/s/a/img1.png", "a"), ("/s/a/img11.png", "d"),
             ("/s/b/x.png", "e"), ("/s/a/img12.png", "f")]
    assert sheets_in_order(sides) == [("a", "b"), ("c", "d")]  # img12 alone at the end of its folder; /s/b has one file


def test_a_card_waits_for_a_person_in_the_ingest_summary_as_in_the_queue() -> None:
    """``needs_person`` (the ingest summary's count) says what the queue says: a scanner streak
    across targets read clearly either side of it leaves nothing to decide (the card keeps its
    reason, the queue holds no item); the same streak beside a pending contest, or a reason of
    the card's own, waits for a person."""
    election = context_of(SET).election
    style = election.ballot_styles[0]
    contest = election.contest(style.contests[0])
    precinct = style.precincts[0]
    cards = {
        "clear": read_card("a" * 64, election, style.id, precinct, {}, reasons=(Reason.SCANNER_STREAK,)),
        "pending": read_card("b" * 64, election, style.id, precinct, {contest.id: {contest.options[0].id: MarkStatus.UNKNOWN}},
                             reasons=(Reason.SCANNER_STREAK,)),
        "conflict": read_card("c" * 64, election, style.id, precinct, {}, reasons=(Reason.STYLE_CONFLICT,)),
        "plain": read_card("d" * 64, election, style.id, precinct, {}),
    }
    queue = build_queue([count_card(election, c, {}) for c in cards.values()], [])
    queued = {i.item for i in queue}
    assert {name: needs_person(c) for name, c in cards.items()} == {"clear": False, "pending": True, "conflict": True, "plain": False}
    assert {name: c.source.card_id in queued for name, c in cards.items()} == {name: needs_person(c) for name, c in cards.items()}
    # the summary counts what waits, and tells the board of the streaks (the glass wants cleaning)
    summary = IngestSummary()
    store_results([FileResult(f"/scans/{name}.png", c.source.sha256, (c,)) for name, c in cards.items()], len, summary)
    assert summary.needs_person == 2 and summary.streaked == 2
    (line,) = [x for x in summary.lines() if "scanner streak" in x]
    assert line.startswith("  2 card(s) show a scanner streak across their targets") and "clean it" in line


def test_a_scanner_streak_stops_the_feed_though_its_card_waits_for_no_one(tmp_path: Path) -> None:
    """A clean Cedar card scanned with a 2-px line down the glass through a column of empty
    targets reads clearly either side of it (``scanner_streak``, nothing pending): no one waits
    for it, but ``--stop-on-flag`` stops the feed there (every card after it would carry the
    line) and the summary asks for the glass to be cleaned."""
    from scanpipe.scan import scan_batch
    from scanpipe.sources.replay import ReplaySource
    from scanpipe.store.repository import Store
    from scanpipe.workflow import init_election

    gray = cv2.imread(str(CLEAN), cv2.IMREAD_GRAYSCALE)
    assert gray is not None
    (clean,) = interpret_file(str(CLEAN), context_of(SET), CardHints(), "t")
    assert isinstance(clean.interpretation, ReadCard) and not clean.interpretation.reasons
    x, _y, w, _h = next(t.score.box_px for t in clean.interpretation.targets if t.status is MarkStatus.NO)
    column = int(round(x + w / 2))
    gray[:, column: column + 2] = 30
    stack = tmp_path / "stack"
    stack.mkdir()
    assert cv2.imwrite(str(stack / "1.png"), gray)
    (stack / "2.jpg").write_bytes(CLEAN.read_bytes())
    store = Store.open(f"sqlite:///{tmp_path / 'scan.db'}")
    store.migrate()
    try:
        init_election(store, FIX / SET / "election.json")
        summary = scan_batch(store, ReplaySource(f"replay:{stack}"), batch="s1", out_dir=tmp_path / "scans", stop_on_flag=True)
        (streaked,) = [c.card for c in store.iter_cards()]
        assert isinstance(streaked.interpretation, ReadCard)
        assert streaked.interpretation.reasons == (Reason.SCANNER_STREAK,) and not needs_person(streaked)
        assert summary.stopped_on == (1, "00001.png", ("scanner_streak",))
        assert summary.needs_person == 0 and summary.streaked == 1
        message = summary.stop_message()
        assert message is not None and message.startswith("stopped: card s1/00001 (00001.png) shows a scanner streak across its "
                                                          "targets (scanner_streak); it is the last card fed. It was read")
        assert "Clean the scanner's glass before feeding more" in message and "set it aside" not in message
        assert any("scanner streak across their targets" in line and "clean it" in line for line in summary.lines())
    finally:
        store.close()
