"""The audit log covers what counts: rows edited, inserted or deleted in SQL are named by
``scanpipe audit verify`` (with and without ``--head``), the tally is recomputed from verified
data and compared, and a forged unhashed log entry stays reported."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import delete, insert, select, update

from scanpipe.cli import cli
from scanpipe.cli_review import register
from scanpipe.decisions import Attestation
from scanpipe.store.models import (
    batch_table,
    contest_reading_table,
    decision_table,
    event_table,
    identification_table,
    pair_table,
    utcnow,
)
from scanpipe.store.models_people import decision_attestation_table
from scanpipe.workflow import adjudicate_card
from tests.test_review_support import (
    CLEAN,
    MARGINAL,
    MARGINAL_2,
    ReviewWorld,
    add_mismatched_pair,
    build_world,
)

if "audit" not in cli.commands:
    register(cli)


def _decide(world: ReviewWorld, card: str, votes: list[str], auditor: str) -> None:
    adjudicate_card(world.store, card, contest="gov", votes=votes, auditors=[auditor],
                    attestation=Attestation(f"review:{auditor}", accounts=True))


@pytest.fixture
def world(tmp_path: Path) -> ReviewWorld:
    w = build_world(tmp_path)
    _decide(w, MARGINAL, ["gov-a"], "alice")
    _decide(w, MARGINAL, ["gov-a"], "bob")  # final: gov-a counts on MARGINAL
    return w


def _verify(world: ReviewWorld, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--db", f"sqlite:///{world.folder / 'review.db'}", "audit", "verify", *args])


def _final(world: ReviewWorld) -> int:
    return max(d.id for d in world.store.decisions() if d.state.value == "final")


def _head(world: ReviewWorld) -> str:
    ok = _verify(world)
    assert ok.exit_code == 0, ok.output
    return ok.output.split("head ")[1].split()[0]


def test_an_untouched_store_verifies_and_its_tally_is_recomputed(world: ReviewWorld) -> None:
    r = _verify(world)
    assert r.exit_code == 0, r.output
    assert "every row that can change a count agrees with the log" in r.output and "no tally was logged yet" in r.output
    tallied = CliRunner().invoke(cli, ["--db", f"sqlite:///{world.folder / 'review.db'}", "tally"])
    assert tallied.exit_code == 1  # cards still queued
    r = _verify(world)
    assert r.exit_code == 0 and "equals the tally logged at entry" in r.output, r.output


def test_an_edited_decision_is_named_and_the_tally_difference_shown(world: ReviewWorld) -> None:
    head = _head(world)
    final = _final(world)
    with world.store._write() as conn:
        conn.execute(update(decision_table).where(decision_table.c.id == final).values(votes=["gov-b"]))
    for args in ((), ("--head", head)):
        r = _verify(world, *args)
        assert r.exit_code == 1
        assert f"decision (with its board votes and attestation) {final} was edited outside the log" in r.output
        assert "TALLY: P01 / gov / gov-b: the store says 2, verified data gives 1" in r.output, r.output


def test_an_inserted_and_a_deleted_decision_are_named(world: ReviewWorld) -> None:
    first = _final(world)  # nothing refers to it
    with world.store._write() as conn:
        new = conn.execute(insert(decision_table).returning(decision_table.c.id), {
            "item": CLEAN, "item_kind": "card", "contest": "gov", "votes": ["gov-a"], "auditors": ["alice", "bob"],
            "state": "final", "created_at": utcnow()}).scalar_one()
        conn.execute(delete(decision_attestation_table).where(decision_attestation_table.c.decision_id == first))
        conn.execute(delete(decision_table).where(decision_table.c.id == first))
    r = _verify(world)
    assert r.exit_code == 1
    assert f"decision (with its board votes and attestation) {new} was inserted outside the log" in r.output
    assert f"decision (with its board votes and attestation) {first} was deleted outside the log" in r.output
    assert "TALLY: P01 / gov / gov-b: the store says 0, verified data gives 1" in r.output, r.output  # CLEAN's gov-b, changed


@pytest.mark.parametrize("change", ["edit", "insert", "delete"])
def test_a_changed_contest_reading_is_named(world: ReviewWorld, change: str) -> None:
    t = contest_reading_table
    with world.store._write() as conn:
        if change == "edit":
            conn.execute(update(t).where(t.c.card_id == CLEAN, t.c.contest == "gov").values(votes=["gov-a"]))
        elif change == "insert":
            conn.execute(insert(t), {"card_id": CLEAN, "contest": "extra", "position": 9, "votes": ["x"], "outcome": "counted",
                                     "undervotes": 0, "unknown_options": [], "source": "machine"})
        else:
            conn.execute(delete(t).where(t.c.card_id == CLEAN, t.c.contest == "gov"))
    r = _verify(world)
    assert r.exit_code == 1 and f"card (with its contest readings) {CLEAN} was edited outside the log" in r.output, r.output
    if change == "edit":
        assert "TALLY: P01 / gov / gov-a: the store says 2, verified data gives 1" in r.output


def test_a_row_changed_outside_the_log_stays_named_after_a_logged_write_to_it(world: ReviewWorld) -> None:
    """A later legitimate write records the row's new state; the change before it is still found."""
    _decide(world, MARGINAL_2, ["gov-b"], "alice")
    first = max(d.id for d in world.store.decisions())
    with world.store._write() as conn:
        conn.execute(update(decision_table).where(decision_table.c.id == first).values(auditors=["carol"]))
    _decide(world, MARGINAL_2, ["gov-b"], "bob")  # supersedes the edited row: its state change is logged with its digests
    r = _verify(world)
    assert r.exit_code == 1 and f"decision (with its board votes and attestation) {first} was changed outside the log before entry" in r.output


def test_a_cleared_batch_void_and_a_forged_identification_are_named(world: ReviewWorld) -> None:
    world.store.void_batch("b1", "fed twice")
    with world.store._write() as conn:
        conn.execute(update(batch_table).where(batch_table.c.name == "b1").values(voided_at=None, void_reason=None))
        conn.execute(insert(identification_table), {"card_id": CLEAN, "precinct": "P02", "at": utcnow()})
    r = _verify(world)
    assert r.exit_code == 1
    assert "batch b1 was edited outside the log" in r.output and f"identification of card {CLEAN} was inserted outside the log" in r.output


def test_a_forged_unhashed_log_entry_stays_reported_after_later_appends(world: ReviewWorld) -> None:
    with world.store._write() as conn:
        forged = conn.execute(insert(event_table).returning(event_table.c.id), {
            "at": utcnow(), "actor": "mallory", "action": "decision", "detail": {"item": CLEAN}}).scalar_one()
    world.store.log_event("export", {"what": "a normal action after the forgery"})
    _decide(world, MARGINAL_2, ["gov-b"], "alice")
    r = _verify(world)
    assert r.exit_code == 1 and f"entry {forged} has no hash" in r.output
    with world.store._read() as conn:
        assert conn.execute(select(event_table.c.hash).where(event_table.c.id == forged)).scalar() is None


def test_an_edited_pair_row_is_a_note_naming_the_serial(world: ReviewWorld) -> None:
    add_mismatched_pair(world)
    assert _verify(world).exit_code == 0
    with world.store._write() as conn:
        conn.execute(update(pair_table).where(pair_table.c.serial == "A0042").values(status="match", counted="duplicate"))
    r = _verify(world)
    assert r.exit_code == 0 and "note: serial A0042: the stored pair row says match, counted duplicate, contests gov, verified data gives mismatch, counted none, contests gov" in r.output


def test_an_edited_board_ruling_is_named(world: ReviewWorld) -> None:
    from dataclasses import replace

    from scanpipe.reconcile.board import rule_on_serial
    from scanpipe.reconcile.rulings import RulingKind
    from scanpipe.reconcile.service import reconcile
    from scanpipe.store.models_statute import board_ruling_table
    from scanpipe.types import CardKind, MarkStatus, PairingLabel
    from tests.helpers import read_card
    from tests.test_review_support import UNREADABLE

    card = read_card("7" * 64, world.election, "S1", "P01", {"gov": {"gov-a": MarkStatus.YES}}, kind=CardKind.DUPLICATE)
    world.store.save_cards([replace(card, label=PairingLabel(CardKind.DUPLICATE, "B0007", "B0007", None),
                                    source=replace(card.source, sha256=UNREADABLE))])
    reconcile(world.store)
    made = rule_on_serial(world.store, "B0007", ruling=RulingKind.NOTHING, card=None, members={"carol": "for", "dave": "for"}, actor="carol")
    assert _verify(world).exit_code == 0
    with world.store._write() as conn:
        conn.execute(update(board_ruling_table).where(board_ruling_table.c.id == made.id).values(ruling="counts_as_is"))
    r = _verify(world)
    assert r.exit_code == 1 and f"board ruling {made.id} was edited outside the log" in r.output
    assert "TALLY: P01 / gov / gov-a: the store says 2, verified data gives 1" in r.output, r.output


def test_a_board_ruling_on_a_page_deleted_or_forged_is_named(world: ReviewWorld) -> None:
    """The board's ruling that a page is no ballot card is covered like its other rulings:
    one deleted outside the log (the page back in the queue), or one inserted outside it (a
    page quietly dropped from the count), is named."""
    from scanpipe.reconcile.board import set_aside_pages
    from scanpipe.store.models_statute import card_ruling_table
    from tests.test_review_support import UNREADABLE

    (made,) = set_aside_pages(world.store, [UNREADABLE], why="a batch header sheet", members={"carol": "for", "dave": "for"},
                          actor="carol")
    assert _verify(world).exit_code == 0
    with world.store._write() as conn:
        row = dict(conn.execute(select(card_ruling_table).where(card_ruling_table.c.id == made.id)).mappings().one())
        conn.execute(delete(card_ruling_table).where(card_ruling_table.c.id == made.id))
    r = _verify(world)
    assert r.exit_code == 1 and f"board ruling on a page {made.id} was deleted outside the log" in r.output, r.output
    with world.store._write() as conn:
        conn.execute(insert(card_ruling_table).values({**row, "id": made.id + 1}))
    r = _verify(world)
    assert r.exit_code == 1 and f"board ruling on a page {made.id + 1} was inserted outside the log" in r.output, r.output
