"""Turn raw target scores into mark statuses: the only place a number becomes a status.

A target is ``yes`` when its score reaches ``definite`` and nothing flags it; ``no`` when its
score is under ``marginal`` and nothing flags it; otherwise ``unknown`` (a person decides).
Flags are ink around the oval (``ring``: a circled option; not around a target whose own
interior is filled, where it is the fill's overflow), damage over it (``damage``: a fold,
stain or tear) and, for an empty write-in oval, ink in the write-in area (``write_in``).

Thresholds are data: ``scanpipe/calibration/thresholds.json`` (derived by
:func:`scanpipe.calibration.derive_thresholds` on a labelled synthetic deck and reviewed like
code), shipped inside the package (so a regular wheel install finds it), or the file in the
directory named by ``SCANPIPE_CALIBRATION``.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scanpipe.errors import ConfigError
from scanpipe.types import (
    Contest,
    ContestOutcome,
    ContestReading,
    DamageCause,
    MarkStatus,
    Reason,
    TargetReading,
    TargetScore,
)

THRESHOLDS_FILE = "thresholds.json"
CALIBRATION_ENV = "SCANPIPE_CALIBRATION"
_NUMBERS = ("marginal", "definite", "ring", "damage", "write_in")
WRITE_IN_PREFIX = "write-in"
HESITATION_PREFIX = "hesitation dot"
HESITATION_DOT_MAX_IN = 0.1  # no dot wider than this is a hesitation mark, whatever a file says
VOTER_PREFIX = "the voter's own marks"
VOTER_REACH_MAX = 0.15  # no file reaches further under definite than this
# A page's own light marks (:func:`settle_by_the_voter_s_marks`): at least VOTER_MARKS targets
# read yes with scores under definite + VOTER_LIGHT (a pencil's, a faint pen's: not a pen's
# full fill), the next of them no more than VOTER_STEP apart, and a target between the levels
# filled at least VOTER_FILL of their median interior
VOTER_MARKS = 4
VOTER_LIGHT = 0.15
VOTER_STEP = 0.03
VOTER_FILL = 0.6


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Score thresholds, all in [0, 1]; ``marginal < definite``."""

    marginal: float
    definite: float
    ring: float
    damage: float
    write_in: float
    source: str = "unspecified"
    # a lone dot this wide (in) or less, between the levels, in a contest whose every vote is
    # read clearly elsewhere, is a hesitation mark: no vote (0: every such dot to a person)
    hesitation_dot_in: float = 0.0
    # a target between the levels no further than this under definite, marked like the page's
    # own light marks read yes and joined to them score by score, reads as they do (0: every
    # such target to a person; :func:`settle_by_the_voter_s_marks`)
    voter_reach: float = 0.0

    def __post_init__(self) -> None:
        for name in _NUMBERS:
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and 0.0 <= value <= 1.0):
                raise ConfigError(f"threshold {name} must be a number in [0, 1], got {value!r}")
        dot = self.hesitation_dot_in
        if isinstance(dot, bool) or not (isinstance(dot, (int, float)) and math.isfinite(dot) and 0.0 <= dot <= HESITATION_DOT_MAX_IN):
            raise ConfigError(f"threshold hesitation_dot_in must be a width in inches in [0, {HESITATION_DOT_MAX_IN}], got {dot!r}")
        reach = self.voter_reach
        if isinstance(reach, bool) or not (isinstance(reach, (int, float)) and math.isfinite(reach) and 0.0 <= reach <= VOTER_REACH_MAX):
            raise ConfigError(f"threshold voter_reach must be a score in [0, {VOTER_REACH_MAX}], got {reach!r}")
        if not self.marginal < self.definite:
            raise ConfigError(
                f"threshold marginal ({self.marginal}) must be below definite ({self.definite})"
            )


def default_thresholds_path() -> Path:
    """``$SCANPIPE_CALIBRATION/thresholds.json``, else the file shipped in the package."""
    env = os.environ.get(CALIBRATION_ENV)
    folder = Path(env) if env else Path(__file__).resolve().parent / "calibration"
    return folder / THRESHOLDS_FILE


def load_thresholds(path: Path | None = None) -> Thresholds:
    """Read thresholds from JSON; raise :class:`ConfigError` naming the file and the reason."""
    file = Path(path) if path is not None else default_thresholds_path()
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{file}: thresholds file not found") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read thresholds: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: expected a JSON object of thresholds")
    missing = [name for name in _NUMBERS if name not in data]
    if missing:
        raise ConfigError(f"{file}: missing threshold(s): {', '.join(missing)}")
    bad = [n for n in _NUMBERS if isinstance(data[n], bool) or not isinstance(data[n], (int, float))]
    if bad:
        raise ConfigError(f"{file}: threshold(s) not a number: {', '.join(bad)}")
    try:
        return Thresholds(
            **{n: float(data[n]) for n in _NUMBERS},
            source=str(data.get("source", str(file))),
            hesitation_dot_in=_dot_width(data.get("hesitation_dot_in", 0.0)),
            voter_reach=_optional_number(data.get("voter_reach", 0.0), "voter_reach"),
        )
    except ConfigError as exc:
        raise ConfigError(f"{file}: {exc}") from None


def _dot_width(value: object) -> float:
    """The optional ``hesitation_dot_in`` of a recorded set (absent: 0, the rule off)."""
    return _optional_number(value, "hesitation_dot_in")


def _optional_number(value: object, name: str) -> float:
    """An optional threshold of a recorded set (absent: 0, its rule off)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"threshold {name} must be a number, got {value!r}")
    return float(value)


def thresholds_from_mapping(data: dict[str, object], *, source: str) -> Thresholds:
    """Thresholds from a mapping of the five numbers and, where recorded, ``hesitation_dot_in``
    and ``voter_reach`` (e.g. recorded in the log)."""
    try:
        return Thresholds(**{n: float(data[n]) for n in _NUMBERS}, source=source,  # type: ignore[arg-type]
                          hesitation_dot_in=_dot_width(data.get("hesitation_dot_in", 0.0)),
                          voter_reach=_optional_number(data.get("voter_reach", 0.0), "voter_reach"))
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"recorded thresholds are incomplete: {exc}") from None


DAMAGE_WHY = {
    DamageCause.STAIN: "a stain over it",
    DamageCause.FOLD: "a fold or crease across it",
    DamageCause.TEAR: "the paper torn or missing there",
    DamageCause.CROSSING: "a stroke from outside runs through it (a stamp's letter, a signature, a line)",
    DamageCause.INK_ACROSS: "a stamp or signature across the card enters it",
    DamageCause.MARKED_ON_BLANK: "the layout's blank is marked there itself, so a mark there cannot be told",
    DamageCause.CUT_OFF: "part of it is not on the scan",
    DamageCause.PRINTED_OVER: "the ballot's own print covers it (a stamp printed across it), so the machine cannot see a mark there",
    DamageCause.STREAK: "a scanner streak runs through it",
}
"""What a person reading a damaged target is told the machine saw over it."""


def classify_target(score: TargetScore, thresholds: Thresholds) -> TargetReading:
    """Decide yes / no / unknown for one target; ``why`` names the rule and the numbers."""
    t = thresholds
    s = score.score
    if score.damage_score >= t.damage:
        what = f": {DAMAGE_WHY[score.damage_cause]}" if score.damage_cause is not None else ""
        why = f"damage {score.damage_score:.3f} >= {t.damage:.3f} over the target{what} (score {s:.3f})"
        return TargetReading(score, MarkStatus.UNKNOWN, why)
    if score.ring_score >= t.ring and not _filled(score, t):
        why = f"ring {score.ring_score:.3f} >= {t.ring:.3f}: ink drawn around or beside the target or its name (score {s:.3f})"
        return TargetReading(score, MarkStatus.UNKNOWN, why)
    if s >= t.definite:
        return TargetReading(score, MarkStatus.YES, f"score {s:.3f} >= definite {t.definite:.3f}")
    if s < t.marginal and score.write_in_score >= t.write_in:
        why = (
            f"{WRITE_IN_PREFIX}: ink {score.write_in_score:.3f} >= {t.write_in:.3f} "
            f"with the oval empty (score {s:.3f} < marginal {t.marginal:.3f})"
        )
        return TargetReading(score, MarkStatus.UNKNOWN, why)
    if s < t.marginal:
        return TargetReading(score, MarkStatus.NO, f"score {s:.3f} < marginal {t.marginal:.3f}")
    why = f"score {s:.3f} between marginal {t.marginal:.3f} and definite {t.definite:.3f}"
    return TargetReading(score, MarkStatus.UNKNOWN, why)


def settle_hesitation_dots(readings: Sequence[TargetReading], vote_for: dict[str, int],
                           thresholds: Thresholds) -> tuple[TargetReading, ...]:
    """``readings`` (a page's, classified one by one) with each hesitation dot read as no vote:
    a target unknown only for its score (between the levels, nothing flagging it) whose ink is
    a lone dot (``dot_in``) no wider than ``hesitation_dot_in``, in a contest (``vote_for``:
    contest -> votes allowed) whose every allowed vote is read clearly (yes) on its other
    targets. A voter-intent guide's hesitation mark: the pen rested on an option the voter did
    not choose. A dot in a contest with a vote still to give stays for a person (it may be that
    vote), as does anything larger (a small fill, which may be an overvote)."""
    limit = thresholds.hesitation_dot_in
    if limit <= 0.0:
        return tuple(readings)
    votes = _votes_read(readings)
    out = []
    for r in readings:
        dot = r.score.dot_in
        allowed = vote_for.get(r.score.contest, 0)
        if is_between_levels(r) and 0.0 < dot <= limit and allowed > 0 and votes.get(r.score.contest, 0) == allowed:
            why = (f"{HESITATION_PREFIX} {dot:.3f} in <= {limit:.3f} in (score {r.score.score:.3f} between the levels), "
                   f"the contest's {allowed} vote(s) read elsewhere")
            r = TargetReading(r.score, MarkStatus.NO, why)
        out.append(r)
    return tuple(out)


def settle_page(readings: Sequence[TargetReading], vote_for: dict[str, int], thresholds: Thresholds) -> tuple[TargetReading, ...]:
    """A page's readings, classified one by one, settled by the page: the voter's own light
    marks read as the page's others (:func:`settle_by_the_voter_s_marks`), then its hesitation
    dots by their contests (:func:`settle_hesitation_dots`; ``vote_for``: contest -> votes
    allowed)."""
    return settle_hesitation_dots(settle_by_the_voter_s_marks(readings, thresholds, vote_for), vote_for, thresholds)


def settle_by_the_voter_s_marks(readings: Sequence[TargetReading], thresholds: Thresholds,
                                vote_for: dict[str, int] | None = None) -> tuple[TargetReading, ...]:
    """``readings`` (a page's, classified one by one) with the voter's own light marks read as
    the voter made them: a voter who marks every choice alike, with a light pencil, a pen
    running dry or a loose scribble, leaves marks that straddle ``definite``, some read yes,
    the rest a person's. Where
    the page shows VOTER_MARKS or more marks read yes with scores under ``definite`` +
    VOTER_LIGHT, a target unknown only for its score, no further than ``voter_reach`` under
    ``definite``, whose interior is filled at least VOTER_FILL of theirs (the median of their
    ``fill_score``: a fill like theirs, not a dot, a check's stroke or a line), reads yes when
    it joins them score by score: from the lightest of them down, each such target no more
    than VOTER_STEP under the one before. What lies further under (an erasure's residue, a
    hesitation, a lighter stroke), anything flagged (damage, a ring, a written name) and
    every page without such marks stay as they were; so does a target whose contest
    (``vote_for``: contest -> votes allowed, where given) already holds every vote it allows:
    read yes it would make an overvote of a doubtful mark, and a person decides that."""
    reach = thresholds.voter_reach
    if reach <= 0.0:
        return tuple(readings)
    light = [r for r in readings if r.status is MarkStatus.YES and r.score.score < thresholds.definite + VOTER_LIGHT]
    if len(light) < VOTER_MARKS:
        return tuple(readings)
    fills = sorted(r.score.fill_score for r in light)
    fill = fills[len(fills) // 2]
    lowest = min(r.score.score for r in light)
    floor = thresholds.definite - reach
    votes = _votes_read(readings)
    joined: dict[int, float] = {}
    for k in sorted((k for k, r in enumerate(readings) if is_between_levels(r) and r.score.score >= floor
                     and r.score.fill_score >= VOTER_FILL * fill), key=lambda k: -readings[k].score.score):
        score, contest = readings[k].score.score, readings[k].score.contest
        if lowest - score > VOTER_STEP + 1e-9:  # (scores are rounded nowhere: a step of exactly VOTER_STEP joins)
            break
        if vote_for is None or votes.get(contest, 0) < vote_for.get(contest, 0):
            joined[k] = lowest
            votes[contest] = votes.get(contest, 0) + 1
        lowest = score  # (the run goes on past a mark left for a person: the voter made it alike)
    out = list(readings)
    for k, above in joined.items():
        r = readings[k]
        why = (f"{VOTER_PREFIX}: score {r.score.score:.3f} under definite {thresholds.definite:.3f} by at most "
               f"{reach:.3f}, filled like the page's {len(light)} light marks read yes and within {VOTER_STEP:.2f} "
               f"of the next ({above:.3f})")
        out[k] = TargetReading(r.score, MarkStatus.YES, why)
    return tuple(out)


def _votes_read(readings: Sequence[TargetReading]) -> dict[str, int]:
    """Per contest, how many of ``readings`` are read yes."""
    return dict(Counter(r.score.contest for r in readings if r.status is MarkStatus.YES))


def _filled(score: TargetScore, thresholds: Thresholds) -> bool:
    """Whether the target's own interior is filled: both its score and its interior's mean ink
    reach ``definite``. Ink around such a target is the fill's overflow (a felt pen's, a
    scribble's), not a loop drawn round an option left empty: the ring does not flag it. A loop
    whose arcs cross the oval, a check or an X leave most of the interior paper (mean ink far
    under ``definite``) and stay flagged."""
    return score.score >= thresholds.definite and score.fill_score >= thresholds.definite


def is_write_in_flag(reading: TargetReading) -> bool:
    """True when the reading is unknown because of a written name beside an empty oval."""
    return reading.status is MarkStatus.UNKNOWN and reading.why.startswith(WRITE_IN_PREFIX)


def is_between_levels(reading: TargetReading) -> bool:
    """True when the reading is unknown only for its score: between ``marginal`` and
    ``definite``, nothing flagging it (no damage, ring or write-in)."""
    return reading.status is MarkStatus.UNKNOWN and reading.why.startswith("score ")


def unknown_reason(reading: TargetReading) -> Reason | None:
    """The queue reason of an unknown reading (``write_in`` or ``marginal_mark``), else None."""
    if reading.status is not MarkStatus.UNKNOWN:
        return None
    return Reason.WRITE_IN if is_write_in_flag(reading) else Reason.MARGINAL_MARK


def classify_contest(contest: Contest, readings: Sequence[TargetReading]) -> ContestReading:
    """Apply vote-for-N to the readings of one contest's targets.

    Any unknown target makes the contest ``pending``; more yes than ``vote_for`` is an
    ``overvote``; otherwise it is ``counted`` with ``vote_for - votes`` undervotes. Options
    without a reading count as not marked.

    A pending contest still carries what was read clearly, option by option: ``votes`` are
    the options read ``yes`` and ``unknown_options`` only the doubtful ones, so every other
    option was read ``no`` (:func:`option_status`). One doubtful target never makes its
    neighbours unknown.
    """
    by_option = {r.score.option: r for r in readings}
    option_ids = [o.id for o in contest.options]
    assert all(r.score.contest == contest.id for r in readings), "reading of another contest"
    assert set(by_option) <= set(option_ids), f"unknown option in {sorted(by_option)}"
    statuses = {oid: by_option[oid].status for oid in option_ids if oid in by_option}
    votes = tuple(oid for oid in option_ids if statuses.get(oid) is MarkStatus.YES)
    unknown = tuple(oid for oid in option_ids if statuses.get(oid) is MarkStatus.UNKNOWN)
    if unknown:
        return ContestReading(contest.id, votes, ContestOutcome.PENDING, 0, unknown)
    if len(votes) > contest.vote_for:
        return ContestReading(contest.id, votes, ContestOutcome.OVERVOTE, 0)
    return ContestReading(contest.id, votes, ContestOutcome.COUNTED, contest.vote_for - len(votes))


def option_status(reading: ContestReading, option: str) -> MarkStatus:
    """What a contest reading says of one of its options: ``unknown`` only for the options a
    person must read, ``yes`` for the votes, ``no`` for every other option (also in a pending
    contest, whose clear options stay what they were read)."""
    if option in reading.unknown_options:
        return MarkStatus.UNKNOWN
    return MarkStatus.YES if option in reading.votes else MarkStatus.NO

