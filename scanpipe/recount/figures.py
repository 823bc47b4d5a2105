"""Standings, margins and percentages of one contest, with the arithmetic written out.

Pure. Counts are ``{(precinct, contest, option): votes}`` where ``option`` is an option id or
``#overvotes`` / ``#undervotes`` (the shape of ``tally --out`` and of the certified canvass).
Percentages are exact fractions: a test compares ``margin × 100`` with ``limit × base`` in
integers (so exactly 5 % is 5 %), and the 4-place decimal is only for people to read.

Who is the apparent winner (rule-set choices ``multi_seat_margin`` and ``tie``): options are
ranked by votes; a contest electing N has N apparent winners; the margin is between the N-th
(the apparent winner with the fewest votes) and the N+1-th (the top losing candidate).
Candidates tied across the last seat are none of them apparent winners (margin 0). The
write-in line is not a candidate (it adds up many names): it is counted but never ranked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

from scanpipe.types import Contest, Election

Counts = Mapping[tuple[str, str, str], int]
OVER, UNDER = "#overvotes", "#undervotes"


def fmt(n: int) -> str:
    """An integer with thousands separators: 10,250."""
    return f"{n:,}"


def percent_text(part: int, whole: int, places: int = 4) -> str:
    """``part / whole × 100`` as a decimal string with ``places`` places ("2.5000")."""
    if whole == 0:
        return "0." + "0" * places if places else "0"
    value = Decimal(part * 100) / Decimal(whole)
    return str(value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def money(value: Decimal) -> str:
    return str(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def at_most(part: int, whole: int, limit_percent: Decimal) -> bool:
    """Exactly: ``part / whole × 100 <= limit_percent`` (a zero base: only a zero part)."""
    if whole == 0:
        return part <= 0
    return Fraction(part * 100, whole) <= Fraction(limit_percent)


def at_least(part: int, whole: int, limit_percent: Decimal) -> bool:
    """Exactly: ``part / whole × 100 >= limit_percent`` (a zero base: any positive part)."""
    if whole == 0:
        return part > 0
    return Fraction(part * 100, whole) >= Fraction(limit_percent)


def compare_text(part: int, whole: int, limit_percent: Decimal, *, what: str) -> str:
    """The arithmetic of a percentage test, for people: the percentage, then the exact comparison
    in whole numbers (``part × 100`` against ``limit × whole``)."""
    lhs, rhs = Fraction(part * 100), Fraction(limit_percent) * whole
    sign = "<" if lhs < rhs else ("=" if lhs == rhs else ">")
    return (f"{what}: {fmt(part)} / {fmt(whole)} × 100 = {percent_text(part, whole)} %; exactly: "
            f"{fmt(part)} × 100 = {fmt(part * 100)} {sign} {limit_percent} × {fmt(whole)} = {_decimal_text(limit_percent * whole)}")


def _decimal_text(d: Decimal) -> str:
    return fmt(int(d)) if d == d.to_integral_value() else f"{d:,}"


@dataclass(frozen=True, slots=True)
class Standing:
    """One contest's totals over some precincts, ranked."""

    contest: str
    seats: int
    ranked: tuple[tuple[str, int], ...]  # (option id, votes), most votes first; ties in definition order
    winners: tuple[str, ...]  # apparent winners (not in a tie across the last seat)
    tied: tuple[str, ...]  # options tied across the last seat (empty: no such tie)
    apparent_winner: str | None  # the N-th placed (the first of a tie across the last seat)
    top_loser: str | None  # the N+1-th placed
    margin: int  # apparent_winner's votes - top_loser's votes (0 in a tie)
    base: int  # votes of those two together

    def votes(self, option: str) -> int:
        return dict(self.ranked).get(option, 0)

    @property
    def outcome(self) -> tuple[frozenset[str], frozenset[str]]:
        """Who won and who is tied for the last seat: two results are the same outcome when equal."""
        return frozenset(self.winners), frozenset(self.tied)

    def defeated(self, option: str) -> bool:
        return option not in self.winners


def totals(counts: Counts, contest: str, precincts: Iterable[str]) -> dict[str, int]:
    """Votes per option (and #overvotes, #undervotes) of ``contest`` summed over ``precincts``."""
    wanted = set(precincts)
    out: dict[str, int] = {}
    for (p, c, o), n in counts.items():
        if c == contest and p in wanted:
            out[o] = out.get(o, 0) + n
    return out


def rank(contest: Contest, votes: Mapping[str, int]) -> Standing:
    """Rank the contest's options (not the write-in line) by ``votes``."""
    order = [o.id for o in contest.options if not o.write_in]
    ranked = tuple(sorted(((o, votes.get(o, 0)) for o in order), key=lambda ov: (-ov[1], order.index(ov[0]))))
    seats = min(contest.vote_for, max(len(ranked) - 1, 0))
    if seats == 0 or len(ranked) < 2:
        only = ranked[0][0] if ranked else None
        return Standing(contest.id, seats, ranked, (), (), only, None, 0, ranked[0][1] if ranked else 0)
    last, first_out = ranked[seats - 1], ranked[seats]
    if last[1] == first_out[1]:
        tied = tuple(o for o, n in ranked if n == last[1])
        winners = tuple(o for o, n in ranked if n > last[1])
        return Standing(contest.id, seats, ranked, winners, tied, last[0], first_out[0], 0, last[1] + first_out[1])
    winners = tuple(o for o, _ in ranked[:seats])
    return Standing(contest.id, seats, ranked, winners, (), last[0], first_out[0], last[1] - first_out[1], last[1] + first_out[1])


def standing_over(election: Election, counts: Counts, contest: str, precincts: Iterable[str]) -> Standing:
    return rank(election.contest(contest), totals(counts, contest, precincts))


def combined(certified: Counts, recount: Counts, contest: str, all_precincts: Iterable[str], recounted: Iterable[str]) -> dict[tuple[str, str, str], int]:
    """The contest's figures after a recount: recounted precincts from the recount, the rest as certified."""
    done = set(recounted)
    out = {k: v for k, v in certified.items() if k[1] == contest and k[0] in set(all_precincts) and k[0] not in done}
    out.update({k: v for k, v in recount.items() if k[1] == contest and k[0] in done})
    return out


def describe_standing(election: Election, s: Standing) -> str:
    """'Ada Alvarez 10,250, Ben Brooks 9,750' in rank order, with names."""
    names = option_names(election, s.contest)
    return ", ".join(f"{names[o]} {fmt(n)}" for o, n in s.ranked)


def option_names(election: Election, contest: str) -> dict[str, str]:
    return {o.id: o.name for o in election.contest(contest).options} | {OVER: "overvotes", UNDER: "undervotes"}


def precinct_names(election: Election) -> dict[str, str]:
    return {p.id: p.name for p in election.precincts}
