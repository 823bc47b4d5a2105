"""classify_target / classify_contest / load_thresholds: exact statuses and pinned messages."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from scanpipe.classify import (
    DAMAGE_WHY,
    Thresholds,
    classify_contest,
    classify_target,
    default_thresholds_path,
    is_write_in_flag,
    load_thresholds,
    settle_by_the_voter_s_marks,
    settle_hesitation_dots,
    settle_page,
    unknown_reason,
)
from scanpipe.errors import ConfigError
from scanpipe.types import Contest, ContestOutcome, DamageCause, MarkStatus, Option, Reason, TargetScore

T = Thresholds(marginal=0.08, definite=0.6, ring=0.7, damage=0.5, write_in=0.15, source="test")


def ts(score: float, *, option: str = "a", ring: float = 0.0, damage: float = 0.0, write_in: float = 0.0,
       contest: str = "c", fill: float | None = None) -> TargetScore:
    return TargetScore(contest, option, score, score if fill is None else fill, 0.0, ring, damage, write_in, (0.0, 0.0, 10.0, 6.0))


@pytest.mark.parametrize(
    ("score", "kw", "status", "why"),
    [
        (0.9, {}, MarkStatus.YES, "score 0.900 >= definite 0.600"),
        (0.6, {}, MarkStatus.YES, "score 0.600 >= definite 0.600"),
        (0.02, {}, MarkStatus.NO, "score 0.020 < marginal 0.080"),
        (0.412, {}, MarkStatus.UNKNOWN, "score 0.412 between marginal 0.080 and definite 0.600"),
        (0.08, {}, MarkStatus.UNKNOWN, "score 0.080 between marginal 0.080 and definite 0.600"),
        # a loop round the target whose arcs cross it (or a check, an X): the interior mostly paper
        (0.9, {"ring": 0.8, "fill": 0.2}, MarkStatus.UNKNOWN, "ring 0.800 >= 0.700: ink drawn around or beside the target or its name (score 0.900)"),
        (0.9, {"ring": 0.8, "fill": 0.59}, MarkStatus.UNKNOWN, "ring 0.800 >= 0.700: ink drawn around or beside the target or its name (score 0.900)"),
        # a filled interior: the ink around it is the fill's overflow (a felt pen's), not doubt
        (0.9, {"ring": 0.8, "fill": 0.85}, MarkStatus.YES, "score 0.900 >= definite 0.600"),
        (0.5, {"ring": 0.8, "fill": 0.85}, MarkStatus.UNKNOWN, "ring 0.800 >= 0.700: ink drawn around or beside the target or its name (score 0.500)"),
        (0.0, {"ring": 0.8}, MarkStatus.UNKNOWN, "ring 0.800 >= 0.700: ink drawn around or beside the target or its name (score 0.000)"),
        (0.9, {"damage": 0.5}, MarkStatus.UNKNOWN, "damage 0.500 >= 0.500 over the target (score 0.900)"),
        (0.01, {"write_in": 0.4}, MarkStatus.UNKNOWN,
         "write-in: ink 0.400 >= 0.150 with the oval empty (score 0.010 < marginal 0.080)"),
        (0.95, {"write_in": 0.4}, MarkStatus.YES, "score 0.950 >= definite 0.600"),
        (0.01, {"write_in": 0.1}, MarkStatus.NO, "score 0.010 < marginal 0.080"),
    ],
)
def test_classify_target_statuses(score: float, kw: dict[str, float], status: MarkStatus, why: str) -> None:
    reading = classify_target(ts(score, **kw), T)
    assert reading.status is status
    assert reading.why == why


def test_a_damaged_target_s_reason_says_what_lay_over_it() -> None:
    """Every damage cause has words of its own in the reason a person reads."""
    assert set(DAMAGE_WHY) == set(DamageCause)
    for cause in DamageCause:
        reading = classify_target(replace(ts(0.9, damage=0.5), damage_cause=cause), T)
        assert reading.status is MarkStatus.UNKNOWN
        assert reading.why == f"damage 0.500 >= 0.500 over the target: {DAMAGE_WHY[cause]} (score 0.900)"
    stamped = classify_target(replace(ts(0.0, damage=1.0), damage_cause=DamageCause.INK_ACROSS), T)
    assert stamped.why == "damage 1.000 >= 0.500 over the target: a stamp or signature across the card enters it (score 0.000)"


def test_write_in_flag_and_reason() -> None:
    flagged = classify_target(ts(0.0, write_in=0.5), T)
    marginal = classify_target(ts(0.3), T)
    assert is_write_in_flag(flagged) and unknown_reason(flagged) is Reason.WRITE_IN
    assert not is_write_in_flag(marginal) and unknown_reason(marginal) is Reason.MARGINAL_MARK
    assert unknown_reason(classify_target(ts(0.9), T)) is None


COUNCIL = Contest("c", "Council", "candidate", 2, (Option("a", "A"), Option("b", "B"), Option("d", "D")))


def readings(*scores: float) -> list:
    return [classify_target(ts(s, option=o), T) for s, o in zip(scores, ("a", "b", "d"))]


def test_contest_counted_with_undervotes() -> None:
    r = classify_contest(COUNCIL, readings(0.9, 0.0, 0.0))
    assert (r.votes, r.outcome, r.undervotes, r.unknown_options) == (("a",), ContestOutcome.COUNTED, 1, ())
    full = classify_contest(COUNCIL, readings(0.9, 0.0, 0.95))
    assert (full.votes, full.outcome, full.undervotes) == (("a", "d"), ContestOutcome.COUNTED, 0)


def test_contest_overvote() -> None:
    r = classify_contest(COUNCIL, readings(0.9, 0.8, 0.7))
    assert (r.votes, r.outcome, r.undervotes) == (("a", "b", "d"), ContestOutcome.OVERVOTE, 0)


def test_contest_pending_lists_unknown_options_even_when_overvoted() -> None:
    r = classify_contest(COUNCIL, readings(0.9, 0.3, 0.9))
    assert (r.outcome, r.unknown_options, r.undervotes) == (ContestOutcome.PENDING, ("b",), 0)
    r2 = classify_contest(COUNCIL, list(reversed(readings(0.9, 0.9, 0.9)))[:2] + [classify_target(ts(0.0, option="a", ring=0.9), T)])
    assert r2.outcome is ContestOutcome.PENDING and r2.unknown_options == ("a",)


def test_thresholds_validate() -> None:
    with pytest.raises(ConfigError, match=r"threshold marginal \(0.5\) must be below definite \(0.4\)"):
        Thresholds(0.5, 0.4, 0.7, 0.5, 0.1)
    with pytest.raises(ConfigError, match=r"threshold ring must be a number in \[0, 1\], got 1.5"):
        Thresholds(0.1, 0.4, 1.5, 0.5, 0.1)


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


GOOD = {"marginal": 0.1, "definite": 0.5, "ring": 0.6, "damage": 0.5, "write_in": 0.2, "source": "unit"}


def test_load_thresholds_reads_file(tmp_path: Path) -> None:
    t = load_thresholds(write(tmp_path / "t.json", GOOD))
    assert t == Thresholds(0.1, 0.5, 0.6, 0.5, 0.2, source="unit")


def test_load_thresholds_env_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "thresholds.json", {**GOOD, "marginal": 0.05})
    monkeypatch.setenv("SCANPIPE_CALIBRATION", str(tmp_path))
    assert default_thresholds_path() == tmp_path / "thresholds.json"
    assert load_thresholds().marginal == 0.05


def test_repo_thresholds_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCANPIPE_CALIBRATION", raising=False)
    assert default_thresholds_path().parent.name == "calibration"
    t = load_thresholds()
    assert 0.0 <= t.marginal < t.definite <= 1.0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "thresholds file not found"),
        ("{not json", "not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        ([1, 2], "expected a JSON object of thresholds"),
        ({"marginal": 0.1, "definite": 0.5}, "missing threshold(s): ring, damage, write_in"),
        ({**GOOD, "ring": "high"}, "threshold(s) not a number: ring"),
        ({**GOOD, "definite": 0.05}, "threshold marginal (0.1) must be below definite (0.05)"),
        ({**GOOD, "hesitation_dot_in": "small"}, "threshold hesitation_dot_in must be a number, got 'small'"),
        ({**GOOD, "hesitation_dot_in": 0.5}, "threshold hesitation_dot_in must be a width in inches in [0, 0.1], got 0.5"),
        ({**GOOD, "voter_reach": "far"}, "threshold voter_reach must be a number, got 'far'"),
        ({**GOOD, "voter_reach": 0.3}, "threshold voter_reach must be a score in [0, 0.15], got 0.3"),
    ],
)
def test_load_thresholds_errors_name_file_and_reason(tmp_path: Path, content: object, message: str) -> None:
    path = tmp_path / "thresholds.json"
    if content is not None:
        write(path, content)
    with pytest.raises(ConfigError) as err:
        load_thresholds(path)
    assert str(err.value) == f"{path}: {message}"


DOTS = Thresholds(marginal=0.08, definite=0.6, ring=0.7, damage=0.5, write_in=0.15, source="test", hesitation_dot_in=0.05)


def _dotted(score: float, dot: float, *, option: str, contest: str = "c", damage: float = 0.0) -> TargetScore:
    return TargetScore(contest, option, score, score, 0.0, 0.0, damage, 0.0, (0.0, 0.0, 10.0, 6.0), dot_in=dot)


def test_a_hesitation_dot_beside_the_contest_s_every_vote_is_no_vote_and_any_other_doubt_stays() -> None:
    """A voter-intent guide's hesitation mark: a lone dot (the pen rested), between the
    levels, in a contest whose every allowed vote is read clearly on another option, is no
    vote. The same dot where a vote is still to give may be that vote (a person reads it); a
    larger mark may be an overvote; a dot flagged for damage stays flagged; with the rule off
    (hesitation_dot_in 0) nothing changes."""
    scores = [_dotted(0.9, 0.0, option="a"), _dotted(0.3, 0.033, option="b"), _dotted(0.3, 0.07, option="c"),
              _dotted(0.3, 0.03, option="d", damage=0.6), _dotted(0.3, 0.033, option="x", contest="q"),
              _dotted(0.01, 0.0, option="y", contest="q")]
    readings = [classify_target(x, DOTS) for x in scores]
    got = settle_hesitation_dots(readings, {"c": 1, "q": 1}, DOTS)
    assert [r.status for r in got] == [MarkStatus.YES, MarkStatus.NO, MarkStatus.UNKNOWN, MarkStatus.UNKNOWN,
                                       MarkStatus.UNKNOWN, MarkStatus.NO]
    assert got[1].why == ("hesitation dot 0.033 in <= 0.050 in (score 0.300 between the levels), "
                          "the contest's 1 vote(s) read elsewhere")
    # two votes allowed and one given: the dot may be the second
    assert settle_hesitation_dots(readings, {"c": 2, "q": 1}, DOTS)[1].status is MarkStatus.UNKNOWN
    assert settle_hesitation_dots(readings, {"c": 1, "q": 1}, T) == tuple(readings)  # the rule off


PENCIL = Thresholds(marginal=0.21, definite=0.5, ring=0.7, damage=0.3, write_in=0.1, source="test", voter_reach=0.08)


def _page(*marks: tuple[float, float], **flags: float) -> list:
    """A page's readings, one target per (score, fill), classified one by one."""
    return [classify_target(ts(score, option=f"o{k}", fill=fill, **({} if k else flags)), PENCIL) for k, (score, fill) in enumerate(marks)]


def test_a_voter_s_light_pencil_fills_on_either_side_of_definite_read_as_the_voter_made_them() -> None:
    """A voter who marks every choice with a light pencil leaves fills whose scores straddle
    definite: where the page shows four or more such marks read yes, a target unknown only for
    its score, filled like them and joined to them score by score (0.03 apart at most) down to
    0.08 under definite, reads yes. What lies further under, a gap in the run, a dot's or a
    stroke's fill, a flagged target, a page with fewer light marks, a page of a pen's full
    fills and the rule off stay as they were."""
    light = [(0.52, 0.33), (0.55, 0.36), (0.58, 0.4), (0.51, 0.3)]  # read yes: the voter's pencil
    readings = _page((0.48, 0.29), *light, (0.455, 0.27), (0.43, 0.25), (0.41, 0.3), (0.47, 0.05), (0.0, 0.0))
    got = settle_by_the_voter_s_marks(readings, PENCIL)
    assert [r.status for r in got] == [MarkStatus.YES] * 5 + [MarkStatus.YES, MarkStatus.YES, MarkStatus.UNKNOWN,
                                                                MarkStatus.UNKNOWN, MarkStatus.NO]
    assert got[0].why == ("the voter's own marks: score 0.480 under definite 0.500 by at most 0.080, filled like the "
                          "page's 4 light marks read yes and within 0.03 of the next (0.510)")
    # a gap in the run: nothing under it joins
    gap = _page((0.47, 0.29), *light, (0.45, 0.29))
    assert [r.status for r in settle_by_the_voter_s_marks(gap, PENCIL)] == [MarkStatus.UNKNOWN] + [MarkStatus.YES] * 4 + [MarkStatus.UNKNOWN]
    # a damaged target stays flagged; three light marks are no run; a pen's full fills are no pencil
    assert settle_by_the_voter_s_marks(_page((0.49, 0.3), *light, damage=0.6), PENCIL)[0].status is MarkStatus.UNKNOWN
    assert settle_by_the_voter_s_marks(_page((0.49, 0.3), *light[:3]), PENCIL)[0].status is MarkStatus.UNKNOWN
    pen = _page((0.49, 0.3), (0.9, 0.9), (0.95, 0.9), (0.88, 0.85), (0.92, 0.9))
    assert settle_by_the_voter_s_marks(pen, PENCIL)[0].status is MarkStatus.UNKNOWN
    assert settle_by_the_voter_s_marks(readings, replace(PENCIL, voter_reach=0.0)) == tuple(readings)  # the rule off


def test_a_page_is_settled_by_the_voter_s_marks_before_its_hesitation_dots() -> None:
    """The light mark read as the voter's gives its contest its vote: a dot beside it is then
    a hesitation, no vote."""
    t = replace(PENCIL, hesitation_dot_in=0.05)
    scores = [ts(s, option=f"o{k}", contest=f"c{k}", fill=f) for k, (s, f) in enumerate([(0.52, 0.33), (0.55, 0.36), (0.58, 0.4), (0.51, 0.3)])]
    scores += [ts(0.48, option="x", contest="q", fill=0.29), _dotted(0.3, 0.03, option="y", contest="q")]
    got = settle_page([classify_target(x, t) for x in scores], {"c0": 1, "c1": 1, "c2": 1, "c3": 1, "q": 1}, t)
    assert [r.status for r in got][-2:] == [MarkStatus.YES, MarkStatus.NO]


def test_a_voter_s_light_mark_that_would_overvote_its_contest_stays_for_a_person() -> None:
    """Read yes beside the contest's vote already read, a light mark would make an overvote (no
    vote counted) of a doubtful mark: it stays for a person, and the run goes on past it."""
    scores = [ts(s, option=f"o{k}", contest=f"c{k}", fill=f) for k, (s, f) in enumerate([(0.52, 0.33), (0.55, 0.36), (0.58, 0.4), (0.51, 0.3)])]
    scores += [ts(0.49, option="p", contest="c0", fill=0.3), ts(0.47, option="x", contest="q", fill=0.29)]
    readings = [classify_target(x, PENCIL) for x in scores]
    vote_for = {"c0": 1, "c1": 1, "c2": 1, "c3": 1, "q": 1}
    got = settle_by_the_voter_s_marks(readings, PENCIL, vote_for)
    assert [r.status for r in got][-2:] == [MarkStatus.UNKNOWN, MarkStatus.YES]
    assert settle_by_the_voter_s_marks(readings, PENCIL, {**vote_for, "c0": 2})[-2].status is MarkStatus.YES
