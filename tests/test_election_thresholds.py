"""An election's own thresholds, from the scores of its cards (no labels), and reading the stored
cards again from their raw scores."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from scanpipe.calibration.election import derive_for_election
from scanpipe.classify import classify_target, load_thresholds
from scanpipe.errors import ConfigError
from scanpipe.interpret import reclassify
from scanpipe.store.repository import Store
from scanpipe.types import MarkStatus, ReadCard, Reason
from scanpipe.workflow import calibrate_election, election_thresholds, init_election, interpret_context
from tests.helpers import read_card

ROOT = Path(__file__).resolve().parents[1]
REVIEWED = load_thresholds()


def _scores(empty: float, marked: float, seed: int = 1) -> list[float]:
    rng = np.random.default_rng(seed)
    return list(np.clip(rng.normal(empty, 0.02, 800), 0, 1)) + list(np.clip(rng.normal(marked, 0.05, 200), 0, 1))


def test_an_election_that_fits_keeps_the_reviewed_thresholds() -> None:
    derived = derive_for_election(_scores(0.02, 0.85), REVIEWED, election="e")
    assert derived.kept and (derived.thresholds.marginal, derived.thresholds.definite) == (REVIEWED.marginal, REVIEWED.definite)


def test_darker_paper_moves_marginal_above_the_empty_targets_and_keeps_a_band_for_a_person() -> None:
    derived = derive_for_election(_scores(0.26, 0.85), REVIEWED, election="e")
    t = derived.thresholds
    assert not derived.kept and derived.empty_top < t.marginal < t.definite < derived.marked_bottom
    assert t.definite - t.marginal >= 0.15 - 1e-9 and "election e" in t.source


def test_scores_without_a_safe_gap_are_refused() -> None:
    with pytest.raises(ConfigError, match="no safe band"):
        derive_for_election(_scores(0.02, 0.45), REVIEWED, election="e")
    with pytest.raises(ConfigError, match="at least 200"):
        derive_for_election([0.0] * 50, REVIEWED, election="e")


def _card(card_id: str, election, scores: dict[str, float]) -> object:
    card = read_card(card_id, election, "S1", "P01", {})
    result = card.interpretation
    assert isinstance(result, ReadCard)
    targets = tuple(classify_target(replace(r.score, score=scores.get(r.score.option, r.score.score)), REVIEWED)
                    for r in result.targets)
    return replace(card, interpretation=replace(result, targets=targets))


def test_reclassify_reads_a_card_again_from_its_scores() -> None:
    from tests.helpers import tiny_election

    election = tiny_election()
    card = _card("a" * 64, election, {"gov-a": 0.3})
    assert card.interpretation.targets[0].status is MarkStatus.UNKNOWN
    moved = replace(REVIEWED, marginal=0.4, definite=0.6)
    again = reclassify(card, election, moved)
    assert again is not None and again.interpretation.targets[0].status is MarkStatus.NO
    assert Reason.MARGINAL_MARK not in again.interpretation.reasons
    assert reclassify(card, election, REVIEWED) is None  # nothing changes: nothing to store


def test_applied_thresholds_are_logged_used_and_every_stored_card_read_again(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'e.db'}")
    store.migrate()
    init_election(store, ROOT / "fixtures" / "ballot_images" / "election" / "election.json")
    election = store.current_election()
    rng = np.random.default_rng(7)
    cards = []
    for k in range(40):  # dark paper: empty targets score ~0.26, marks ~0.85
        style = election.style("S1")
        options = [o.id for cid in style.contests for o in election.contest(cid).options]
        scores = {o: float(np.clip(rng.normal(0.26, 0.015), 0, 1)) for o in options}
        scores[options[k % len(options)]] = float(np.clip(rng.normal(0.85, 0.03), 0, 1))
        cards.append(_card(f"{k:064x}", election, scores))
    store.save_cards(cards)
    before = sum(t.status is MarkStatus.UNKNOWN for c in store.iter_cards() for t in c.card.interpretation.targets)
    assert before > 100  # the reviewed thresholds send every dark empty target to a person
    derived, changed = calibrate_election(store, apply=True, actor="test")
    assert changed == 40 and not derived.kept
    after = sum(t.status is MarkStatus.UNKNOWN for c in store.iter_cards() for t in c.card.interpretation.targets)
    assert after == 0
    recorded = election_thresholds(store, election.id)
    assert recorded is not None and recorded.marginal == derived.thresholds.marginal
    assert interpret_context(store).thresholds == recorded
    store.close()


def test_reading_again_settles_a_hesitation_dot_by_its_contest() -> None:
    """``interpret`` settles a page's hesitation dots after classifying it target by target:
    a lone 0.03-in dot between the levels beside the contest's only vote is no vote; the same
    dot in the two-seat council beside one vote stays for a person (it may be the second)."""
    from tests.helpers import tiny_election

    election = tiny_election()
    card = read_card("d" * 64, election, "S1", "P01", {})
    result = card.interpretation
    assert isinstance(result, ReadCard)
    marks = {"gov-a": (0.95, 0.0), "gov-b": (0.33, 0.03), "c-1": (0.95, 0.0), "c-2": (0.33, 0.03)}
    targets = tuple(classify_target(replace(r.score, score=marks.get(r.score.option, (r.score.score, 0.0))[0],
                                            dot_in=marks.get(r.score.option, (0.0, 0.0))[1]), REVIEWED)
                    for r in result.targets)
    card = replace(card, interpretation=replace(result, targets=targets))
    again = reclassify(card, election, REVIEWED)
    assert again is not None
    got = {t.score.option: t for t in again.interpretation.targets}
    assert got["gov-b"].status is MarkStatus.NO and got["gov-b"].why.startswith("hesitation dot 0.030 in"), got["gov-b"]
    assert got["c-2"].status is MarkStatus.UNKNOWN and got["gov-a"].status is MarkStatus.YES
    gov = next(c for c in again.interpretation.contests if c.contest == "gov")
    assert gov.votes == ("gov-a",) and not gov.unknown_options
