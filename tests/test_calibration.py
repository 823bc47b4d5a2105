"""derive_thresholds: thresholds inside the gap, refusal on overlap, provenance written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanpipe.calibration import calibration_report, derive_thresholds, write_thresholds
from scanpipe.classify import load_thresholds
from scanpipe.errors import ConfigError
from scanpipe.types import MarkIntent, TargetScore

V, N, A = MarkIntent.VOTE, MarkIntent.NO_VOTE, MarkIntent.AMBIGUOUS


def ts(score: float, ring: float = 0.0, damage: float = 0.0) -> TargetScore:
    return TargetScore("c", "o", score, score, 0.0, ring, damage, 0.0, (0.0, 0.0, 1.0, 1.0))


def sample() -> list[tuple[TargetScore, MarkIntent]]:
    return ([(ts(s), N) for s in (0.0, 0.01, 0.05, 0.1)] + [(ts(s), V) for s in (0.5, 0.7, 1.0)]
            + [(ts(s), A) for s in (0.2, 0.3, 0.35)] + [(ts(0.0, ring=0.9), A)])


def test_thresholds_sit_inside_the_gap() -> None:
    t = derive_thresholds(sample(), margin=0.25)
    # halfway between the highest no-vote (0.1) and the lowest unflagged ambiguous (0.2), and
    # between the highest unflagged ambiguous (0.35) and the lowest vote (0.5)
    assert (t.marginal, t.definite) == (0.15, 0.425)
    assert t.ring == 0.7 and t.damage == 0.3  # floors: clear targets showed no ring or damage
    assert "separation 0.400" in t.source and "ambiguous unknown 100.00%" in t.source


def test_without_between_marks_the_margin_splits_the_gap() -> None:
    plain = [(s, i) for s, i in sample() if i is not A]
    t = derive_thresholds(plain, margin=0.25)
    assert (t.marginal, t.definite) == (0.2, 0.4)
    report = calibration_report(sample(), t)
    assert (report.max_no_vote, report.min_vote, report.clear_unknown) == (0.1, 0.5, 0.0)


def test_flag_thresholds_clear_the_clear_targets() -> None:
    t = derive_thresholds(sample() + [(ts(0.0, ring=0.8), N)])
    assert t.ring == 0.85


def test_refuses_overlap() -> None:
    bad = sample() + [(ts(0.45), N)] + [(ts(0.4), V)]
    with pytest.raises(ConfigError) as err:
        derive_thresholds(bad)
    assert str(err.value) == ("cannot derive thresholds: vote and no_vote scores overlap (highest no_vote 0.450 "
                              ">= lowest vote 0.400; 1 vote(s) at or below it)")


def test_refuses_missing_class() -> None:
    with pytest.raises(ConfigError, match="cannot derive thresholds: 0 vote and 1 no_vote samples"):
        derive_thresholds([(ts(0.0), N)])


def test_write_then_load_round_trip(tmp_path: Path) -> None:
    t = derive_thresholds(sample(), source="unit deck")
    path = write_thresholds(t, tmp_path / "cal" / "thresholds.json", provenance={"seed": 7, "targets": 11})
    data = json.loads(path.read_text())
    assert data["provenance"]["seed"] == 7 and "date" in data["provenance"]
    assert load_thresholds(path) == t


def test_the_page_rules_reviewed_by_hand_are_carried_written_and_recorded(tmp_path: Path) -> None:
    """``hesitation_dot_in`` and ``voter_reach`` are reviewed choices, not derived: a derivation
    carries them into the file it writes and the log records them; thresholds recorded before
    ``voter_reach`` existed load with the voter's-own-marks rule off."""
    from dataclasses import asdict

    from scanpipe.classify import thresholds_from_mapping

    t = derive_thresholds(sample(), source="unit deck", hesitation_dot_in=0.045, voter_reach=0.05)
    assert (t.hesitation_dot_in, t.voter_reach) == (0.045, 0.05)
    path = write_thresholds(t, tmp_path / "thresholds.json")
    assert json.loads(path.read_text())["voter_reach"] == 0.05
    assert load_thresholds(path) == t
    recorded = asdict(t)
    assert thresholds_from_mapping(recorded, source=t.source) == t
    del recorded["voter_reach"]
    assert thresholds_from_mapping(recorded, source=t.source).voter_reach == 0.0
