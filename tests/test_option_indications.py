"""Per-option indications: a clear option is never reported ``unknown`` because a neighbour
in its contest is (issue 13 item 2). The contest stays pending; each clear option is reported
as what it was read, in the contest reading, the stored reading, the CVR, the queue and the
review page (which asks a person about the doubtful target only)."""

from __future__ import annotations

import html
from dataclasses import replace
from pathlib import Path

from scanpipe.classify import Thresholds, classify_contest, classify_target, option_status
from scanpipe.counting import count_card
from scanpipe.exports.cvr import CvrEntry, build_cvr_report, validate_cvr_report
from scanpipe.queue import card_queue_items
from scanpipe.store.repository import Store
from scanpipe.types import Contest, ContestOutcome, MarkStatus, Option, ReadCard, TargetScore
from scanpipe.workflow import init_election
from tests.helpers import read_card
from tests.test_export_cvr import GENERATED, make_election, positions
from tests.test_review_support import MARGINAL, build_world, login

YES, NO, UNKNOWN = MarkStatus.YES, MarkStatus.NO, MarkStatus.UNKNOWN
THRESHOLDS = Thresholds(marginal=0.2, definite=0.6, ring=0.5, damage=0.5, write_in=0.3)
COUNCIL = Contest("council", "Council", "candidate", 2,
                  (Option("c-x", "Xia"), Option("c-y", "Yves"), Option("c-z", "Zoe"), Option("c-w", "Wu")))


def _score(option: str, score: float) -> TargetScore:
    return TargetScore("council", option, score, score, 0.0, 0.0, 0.0, 0.0, (0.0, 0.0, 44.0, 28.0))


def test_a_doubtful_option_leaves_its_clear_neighbours_as_read() -> None:
    readings = [classify_target(_score(o, s), THRESHOLDS) for o, s in
                (("c-x", 1.0), ("c-y", 0.0), ("c-z", 0.41), ("c-w", 0.0))]
    contest = classify_contest(COUNCIL, readings)
    assert contest.outcome is ContestOutcome.PENDING
    assert (contest.votes, contest.unknown_options) == (("c-x",), ("c-z",))
    assert [option_status(contest, o.id) for o in COUNCIL.options] == [YES, NO, UNKNOWN, NO]


def _cvr_of(contest_marks: dict[str, MarkStatus]) -> dict[str, dict]:
    """The council positions of a card read with ``contest_marks`` (others no), exported."""
    election = make_election()
    card = read_card("d" * 64, election, "S1", "P01", {"council": contest_marks})
    report = build_cvr_report(election, [CvrEntry(card=card, role="regular", preprinted_id=None, modified=None)], generated_at=GENERATED)
    assert validate_cvr_report(report) == []
    (snap,) = report["CVR"][0]["CVRSnapshot"]
    return positions(snap, "council")


def test_cvr_reports_each_clear_option_of_a_pending_contest_as_read() -> None:
    # council is vote for 2: one clear vote and one doubtful option cannot make an overvote
    council = _cvr_of({"c-x": YES, "c-y": UNKNOWN})
    assert {o: (p["HasIndication"], p["IsAllocable"]) for o, p in council.items()} == {
        "c-x": ("yes", "yes"), "c-y": ("unknown", "unknown"), "c-z": ("no", "no")}


def test_cvr_leaves_a_clear_vote_unallocated_while_the_doubtful_one_could_overvote() -> None:
    council = _cvr_of({"c-x": YES, "c-y": YES, "c-z": UNKNOWN})
    assert {o: (p["HasIndication"], p["IsAllocable"]) for o, p in council.items()} == {
        "c-x": ("yes", "unknown"), "c-y": ("yes", "unknown"), "c-z": ("unknown", "unknown")}


def test_cvr_without_target_scores_still_reports_options_one_by_one() -> None:
    """A card loaded without its per-target rows (``iter_cards(targets=False)``) reports from
    the contest reading: the same per-option indications."""
    election = make_election()
    card = read_card("e" * 64, election, "S1", "P01", {"council": {"c-x": YES, "c-z": UNKNOWN}})
    bare = replace(card, interpretation=replace(card.interpretation, targets=()))
    entry = CvrEntry(card=bare, role="regular", preprinted_id=None, modified=None)
    report = build_cvr_report(election, [entry], generated_at=GENERATED)
    council = positions(report["CVR"][0]["CVRSnapshot"][0], "council")
    assert {o: p["HasIndication"] for o, p in council.items()} == {"c-x": "yes", "c-y": "no", "c-z": "unknown"}


def test_the_stored_reading_keeps_clear_options_of_a_pending_contest(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'db.sqlite'}")
    store.migrate()
    election, _ = init_election(store, Path(__file__).parent.parent / "fixtures" / "ballot_images" / "election" / "election.json")
    gov = election.contest("gov")
    marks = {gov.options[0].id: YES, gov.options[1].id: UNKNOWN}
    store.save_cards([read_card("f" * 64, election, "S1", "P01", {"gov": marks})])
    stored = store.get_card("f" * 64)
    assert stored is not None
    (reading,) = [r for r in stored.card.interpretation.contests if r.contest == "gov"]
    assert [option_status(reading, o.id) for o in gov.options] == [YES, UNKNOWN] + [NO] * (len(gov.options) - 2)
    count = count_card(election, stored.card, {})
    (item,) = card_queue_items(count, {})
    assert (item.contests, item.options) == (("gov",), (gov.options[1].id,))
    assert item.as_json()["options"] == [gov.options[1].id]
    store.close()


def test_review_page_asks_about_the_doubtful_target_only(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    gov = world.election.contest("gov")
    alice = login(world.app, "alice")
    page = html.unescape(alice.get(f"/card/{MARGINAL}").text)  # gov-a unclear, the others read no
    assert page.count("needs you") == 1
    assert f"Needs you: {gov.options[0].name}; the machine read the other options clearly." in page
    assert f'data-option="{gov.options[0].id}" class="doubtful"' in page
    assert page.count('class="doubtful"') == 2  # its box on the image and its line in the form
    # the machine's reason for the doubtful one, as it was stored (a damaged target's says what lay over it)
    stored = world.store.get_card(MARGINAL)
    assert stored is not None and isinstance(stored.card.interpretation, ReadCard)
    (why,) = [t.why for t in stored.card.interpretation.targets if t.score.option == gov.options[0].id]
    assert page.count(f"(the machine: {why})") == 1
    alice.set_cookie("sp_blind", "1")
    blind = html.unescape(alice.get(f"/card/{MARGINAL}").text)
    assert "needs you" not in blind and 'class="doubtful"' not in blind and "(the machine:" not in blind
