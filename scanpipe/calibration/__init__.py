"""Derive mark thresholds from a labelled sample, and write them with their provenance.

The sample is (score, intent) pairs, typically every target of a generated test deck whose
marks are known. First the flag thresholds (ring, damage, write-in) are put just above what
clear targets showed (so they do not send clear marks to a person), unless given. Then the
ambiguous targets no flag catches ("between" marks: erasures, small partial marks) set where
the score is split: ``marginal`` halfway between the highest ``no_vote`` score and the lowest
"between" score above it, ``definite`` halfway between the highest "between" score below the
lowest ``vote`` score and that vote. Without "between" marks each sits ``margin`` of the
vote/no-vote gap inside it. A clear mark never lands on the wrong side on the sample; when
votes and no-votes overlap there is no safe pair and the derivation refuses. The report
tells how many ambiguous targets end up unknown.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from scanpipe.classify import Thresholds, classify_target
from scanpipe.errors import ConfigError
from scanpipe.types import MarkIntent, MarkStatus, TargetScore

DEFAULT_MARGIN = 0.25
FLAG_HEADROOM = 0.05  # flag thresholds sit this far above the clear targets' values ...
FLAG_CLEAR_SHARE = 0.002  # ... all but this share of them (at most 1 in 500 clear targets flagged)
FLAG_FLOOR = {"ring": 0.7, "damage": 0.3, "write_in": 0.1}  # ring: a loop crosses all 16 sectors, an X at most 8


@dataclass(frozen=True, slots=True)
class CalibrationReport:
    """What a threshold derivation saw and achieved."""

    samples: int
    votes: int
    no_votes: int
    ambiguous: int
    max_no_vote: float
    min_vote: float
    separation: float  # min_vote - max_no_vote
    ambiguous_unknown: float  # fraction of ambiguous targets the thresholds call unknown
    clear_unknown: float  # fraction of clear targets the thresholds call unknown

    def summary(self) -> str:
        return (
            f"{self.samples} targets ({self.votes} vote, {self.no_votes} no_vote, "
            f"{self.ambiguous} ambiguous); highest no_vote {self.max_no_vote:.3f}, lowest vote "
            f"{self.min_vote:.3f}, separation {self.separation:.3f}; ambiguous unknown "
            f"{self.ambiguous_unknown:.2%}, clear unknown {self.clear_unknown:.2%}"
        )


def derive_thresholds(
    samples: Iterable[tuple[TargetScore, MarkIntent]],
    *,
    margin: float = DEFAULT_MARGIN,
    ring: float | None = None,
    damage: float | None = None,
    write_in: float | None = None,
    source: str = "derived",
    hesitation_dot_in: float = 0.0,
    voter_reach: float = 0.0,
) -> Thresholds:
    """Pick thresholds from labelled scores; raise :class:`ConfigError` when votes and
    no-votes overlap (or either is missing). ``hesitation_dot_in`` and ``voter_reach`` are
    carried, not derived (a dot's width says what it is, not where the scores fall; how far a
    voter's own light marks reach is a reviewed choice)."""
    assert 0.0 <= margin < 0.5, "margin is a fraction of the gap, below one half"
    pairs = list(samples)
    votes = [s.score for s, i in pairs if i is MarkIntent.VOTE]
    nos = [s.score for s, i in pairs if i is MarkIntent.NO_VOTE]
    if not votes or not nos:
        raise ConfigError(f"cannot derive thresholds: {len(votes)} vote and {len(nos)} no_vote samples")
    lo, hi = max(nos), min(votes)
    if hi <= lo:
        raise ConfigError(
            f"cannot derive thresholds: vote and no_vote scores overlap (highest no_vote {lo:.3f} "
            f">= lowest vote {hi:.3f}; {sum(v <= lo for v in votes)} vote(s) at or below it)"
        )
    gap = hi - lo
    clear = [s for s, i in pairs if i is not MarkIntent.AMBIGUOUS]
    flags = {
        "ring": ring if ring is not None else _flag_level([s.ring_score for s in clear], "ring"),
        "damage": damage if damage is not None else _flag_level([s.damage_score for s in clear], "damage"),
        "write_in": write_in if write_in is not None
        else _flag_level([s.write_in_score for s, i in pairs if i is MarkIntent.NO_VOTE and s.write_in_score > 0], "write_in"),
    }
    between = [s.score for s, i in pairs if i is MarkIntent.AMBIGUOUS and lo < s.score < hi
               and s.ring_score < flags["ring"] and s.damage_score < flags["damage"]]
    marginal = (lo + min(between)) / 2 if between else lo + margin * gap
    definite = (max(between) + hi) / 2 if between else hi - margin * gap
    if not marginal < definite:
        marginal, definite = lo + margin * gap, hi - margin * gap
    draft = Thresholds(marginal=round(marginal, 4), definite=round(definite, 4), source=source, **flags)
    return Thresholds(draft.marginal, draft.definite, draft.ring, draft.damage, draft.write_in,
                      source=f"{source}: {calibration_report(pairs, draft).summary()}", hesitation_dot_in=hesitation_dot_in,
                      voter_reach=voter_reach)


def _flag_level(values: list[float], name: str) -> float:
    """:data:`FLAG_HEADROOM` above what all but :data:`FLAG_CLEAR_SHARE` of the clear targets
    showed (a clear target beside unlabelled damage may show some; it goes to a person)."""
    ordered = sorted(values)
    top = ordered[min(len(ordered) - 1, int(len(ordered) * (1 - FLAG_CLEAR_SHARE)))] if ordered else 0.0
    return round(min(1.0, max(FLAG_FLOOR[name], top + FLAG_HEADROOM)), 4)


def calibration_report(samples: Iterable[tuple[TargetScore, MarkIntent]], thresholds: Thresholds) -> CalibrationReport:
    """Apply ``thresholds`` to a labelled sample and say how it fares."""
    pairs = list(samples)
    votes = [s.score for s, i in pairs if i is MarkIntent.VOTE]
    nos = [s.score for s, i in pairs if i is MarkIntent.NO_VOTE]
    amb = [s for s, i in pairs if i is MarkIntent.AMBIGUOUS]
    clear = [s for s, i in pairs if i is not MarkIntent.AMBIGUOUS]

    def unknown_share(scores: list[TargetScore]) -> float:
        if not scores:
            return 0.0
        return sum(classify_target(s, thresholds).status is MarkStatus.UNKNOWN for s in scores) / len(scores)

    lo, hi = max(nos, default=0.0), min(votes, default=1.0)
    return CalibrationReport(
        samples=len(pairs), votes=len(votes), no_votes=len(nos), ambiguous=len(amb),
        max_no_vote=lo, min_vote=hi, separation=hi - lo,
        ambiguous_unknown=unknown_share(amb), clear_unknown=unknown_share(clear),
    )


def write_thresholds(thresholds: Thresholds, path: Path, *, provenance: Mapping[str, object] | None = None) -> Path:
    """Write thresholds as JSON with provenance (sample size, seed, profile, date...)."""
    data: dict[str, object] = {
        "marginal": thresholds.marginal,
        "definite": thresholds.definite,
        "ring": thresholds.ring,
        "damage": thresholds.damage,
        "write_in": thresholds.write_in,
        "hesitation_dot_in": thresholds.hesitation_dot_in,
        "voter_reach": thresholds.voter_reach,
        "source": thresholds.source,
        "provenance": {"date": date.today().isoformat(), **dict(provenance or {})},
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return path
