"""Decks the project did not draw (issue 13 item 3): the second renderer's cards read exactly
as its truth says, and the benchmarks take any deck folder (``--deck DIR``)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from scanpipe.classify import load_thresholds
from scanpipe.election import load_election
from scanpipe.interpret import InterpretContext, interpret_file
from scanpipe.types import CardHints, ReadCard
from tests.foreign_renderer import make_deck

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
sys.path.insert(0, str(SCRIPTS))
from deck_truth import DeckError, load_deck  # noqa: E402

STATUS_OF = {"vote": "yes", "no_vote": "no", "ambiguous": "unknown"}


@pytest.fixture(scope="module")
def foreign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("foreign")
    make_deck(out, cards=5, seed=20)
    return out


def test_the_second_renderer_is_seeded(foreign: Path, tmp_path: Path) -> None:
    make_deck(tmp_path, cards=2, seed=20)
    truth = json.loads((tmp_path / "expected.json").read_text())
    assert truth["cards"] == json.loads((foreign / "expected.json").read_text())["cards"][:2]
    for card in truth["cards"]:
        assert (tmp_path / card["file"]).read_bytes() == (foreign / card["file"]).read_bytes()


def test_cards_of_the_second_renderer_read_exactly_as_its_truth(foreign: Path) -> None:
    deck = load_deck(foreign)
    election = load_election(deck.election_path)
    context = InterpretContext(election, load_thresholds())
    assert {c["style"] for c in deck.cards} == {"LTR", "LGL"}  # both page sizes and target sides
    for card in deck.cards:
        (read,) = interpret_file(str(deck.root / card["file"]), context, CardHints(), "t")
        interp = read.interpretation
        assert isinstance(interp, ReadCard), f"{card['file']}: {interp}"
        assert (interp.style, interp.precinct) == (card["style"], card["precinct"])
        got = {t.score.option: t.status.value for t in interp.targets}
        assert got == {t["option"]: STATUS_OF[t["intent"]] for t in card["targets"]}, card["file"]
        outcomes = {c.contest: (c.outcome.value, list(c.votes)) for c in interp.contests}
        assert outcomes == {cid: (o["outcome"], o["votes"]) for cid, o in card["contests"].items()}


def test_bench_accuracy_reads_a_deck_it_did_not_draw(foreign: Path, tmp_path: Path) -> None:
    import bench_accuracy

    figures = tmp_path / "figures.json"
    assert bench_accuracy.main(["--deck", str(foreign), "--jobs", "1", "--json", str(figures)]) == 0
    got = json.loads(figures.read_text())
    targets = sum(len(c["targets"]) for c in json.loads((foreign / "expected.json").read_text())["cards"])
    assert got == {"targets": targets, "misread": 0, "ambiguous_unknown_pct": 0.0, "clear_unknown_pct": 0.0,
                   "style_right": 5, "style_queued": 0, "style_wrong": 0, "unread": 0, "cards": 5}


def test_bench_ingest_stages_only_the_cards_a_deck_lists(foreign: Path, tmp_path: Path) -> None:
    import bench_ingest

    deck = tmp_path / "deck"
    shutil.copytree(foreign, deck)
    election, folder, files = bench_ingest.deck_cards(deck, tmp_path / "work")
    assert election == (deck / "election" / "election.json").resolve()
    assert folder == deck / "cards" and files == sorted((deck / "cards").iterdir())  # the cards alone: ingested as they lie
    truth = json.loads((deck / "expected.json").read_text())
    listed = [c["file"] for c in truth["cards"][:2]]
    truth["cards"] = truth["cards"][:2]  # the other cards in cards/ are not the deck's
    (deck / "expected.json").write_text(json.dumps(truth))
    _, folder, files = bench_ingest.deck_cards(deck, tmp_path / "work2")
    assert folder == tmp_path / "work2" / "deck-cards"
    assert [str(f.relative_to(folder)) for f in files] == listed
    assert all(f.resolve() == (deck / name).resolve() for f, name in zip(files, listed))


def _deck_with(tmp_path: Path, foreign: Path, change) -> Path:
    deck = tmp_path / "deck"
    shutil.copytree(foreign, deck)
    truth = json.loads((deck / "expected.json").read_text())
    change(truth)
    (deck / "expected.json").write_text(json.dumps(truth))
    return deck


@pytest.mark.parametrize("change, message", [
    (lambda t: t["cards"][0].update(file="cards/none.png"), "cards[0]: card file 'cards/none.png' not found"),
    (lambda t: t["cards"][1]["targets"][0].update(option="nobody"), "cards[1].targets[0]: option 'nobody' is not in the election"),
    (lambda t: t["cards"][0]["targets"][2].update(intent="maybe"), "cards[0].targets[2]: 'intent' must be one of vote, no_vote, ambiguous"),
    (lambda t: t["cards"][0]["targets"][0].update(contest="levy"), "option 'm-okafor' belongs to contest 'mayor', not 'levy'"),
    (lambda t: t.update(election="nowhere/election.json"), "election 'nowhere/election.json' not found"),
    (lambda t: t.pop("cards"), "expected an object with a 'cards' list"),
])
def test_a_bad_deck_is_refused_naming_the_file_and_the_entry(tmp_path: Path, foreign: Path, change, message: str) -> None:
    deck = _deck_with(tmp_path, foreign, change)
    with pytest.raises(DeckError) as caught:
        load_deck(deck)
    assert str(caught.value).startswith(str((deck / "expected.json").resolve()))
    assert message in str(caught.value)


def test_a_truth_json_without_an_election_key_finds_the_election(tmp_path: Path, foreign: Path) -> None:
    deck = _deck_with(tmp_path, foreign, lambda t: (t.pop("election"), t.pop("seed"), t.pop("profile")))
    (deck / "expected.json").rename(deck / "truth.json")
    loaded = load_deck(deck)
    assert loaded.truth_path.name == "truth.json" and loaded.election_path == (deck / "election" / "election.json").resolve()
    assert all(t["mark"] in ("fill", "check", "x", "partial", "pencil", "none") for c in loaded.cards for t in c["targets"])
    with pytest.raises(DeckError, match="no truth file"):
        load_deck(deck / "cards")
