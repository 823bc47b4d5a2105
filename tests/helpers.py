"""Small builders of typed values for tests (no images)."""

from __future__ import annotations

from scanpipe.types import (
    BallotStyle,
    CardKind,
    CardSource,
    Contest,
    ContestOutcome,
    ContestReading,
    Election,
    InterpretedCard,
    Layout,
    LayoutPage,
    MarkStatus,
    Option,
    Precinct,
    ReadCard,
    Reason,
    Registration,
    TargetDef,
    TargetReading,
    TargetScore,
    UnreadableCard,
)

FIDS = ((0.35, 0.35, 0.25, 0.25), (7.9, 0.35, 0.25, 0.25), (0.35, 10.4, 0.25, 0.25), (7.9, 10.4, 0.25, 0.25))


def tiny_election(jurisdiction: str = "MD") -> Election:
    gov = Contest("gov", "Governor", "candidate", 1, (Option("gov-a", "A"), Option("gov-b", "B"), Option("gov-w", "Write-in", True)))
    council = Contest("council", "Council", "candidate", 2, (Option("c-1", "One"), Option("c-2", "Two"), Option("c-3", "Three")))
    q1 = Contest("q1", "Question 1", "question", 1, (Option("q1-for", "For"), Option("q1-against", "Against")))
    targets, y = [], 2.0
    for c in (gov, council, q1):
        for o in c.options:
            targets.append(TargetDef(c.id, o.id, (0.9, y, 0.22, 0.14)))
            y += 0.4
    page = LayoutPage(1, (8.5, 11.0), tuple(targets), FIDS, (6.6, 0.8, 1.2, 1.2))
    s1 = BallotStyle("S1", ("P01", "P02"), ("gov", "council", "q1"), Layout("S1", (page,)))
    s2_targets = tuple(t for t in targets if t.contest != "council")
    s2 = BallotStyle("S2", ("P03",), ("gov", "q1"), Layout("S2", (LayoutPage(1, (8.5, 11.0), s2_targets, FIDS, (6.6, 0.8, 1.2, 1.2)),)))
    precincts = (Precinct("P01", "One"), Precinct("P02", "Two"), Precinct("P03", "Three"))
    return Election("demo-2026", "Demo", "2026-11-03", jurisdiction, precincts, (gov, council, q1), (s1, s2))


REG = Registration((1.0, 0, 0, 0, 1.0, 0, 0, 0, 1.0), "fiducials", False, 200.0, 4, 0.5)


def reading(contest: str, option: str, status: MarkStatus, score: float = 0.0) -> TargetReading:
    ts = TargetScore(contest, option, score, score, score, 0.0, 0.0, 0.0, (0.0, 0.0, 44.0, 28.0))
    return TargetReading(ts, status, "test")


def read_card(card_id: str, election: Election, style: str, precinct: str | None, marks: dict[str, dict[str, MarkStatus]],
              *, kind: CardKind = CardKind.BALLOT, reasons: tuple[Reason, ...] = ()) -> InterpretedCard:
    """A read card: ``marks`` maps contest -> option -> status (unlisted options: NO)."""
    s = election.style(style)
    readings, contests = [], []
    for cid in s.contests:
        c = election.contest(cid)
        rs = [reading(cid, o.id, marks.get(cid, {}).get(o.id, MarkStatus.NO)) for o in c.options]
        readings += rs
        yes = tuple(r.score.option for r in rs if r.status is MarkStatus.YES)
        unk = tuple(r.score.option for r in rs if r.status is MarkStatus.UNKNOWN)
        if unk:
            contests.append(ContestReading(cid, yes, ContestOutcome.PENDING, 0, unk))
        elif len(yes) > c.vote_for:
            contests.append(ContestReading(cid, yes, ContestOutcome.OVERVOTE, 0))
        else:
            contests.append(ContestReading(cid, yes, ContestOutcome.COUNTED, c.vote_for - len(yes)))
    if any(c.outcome is ContestOutcome.PENDING for c in contests) and Reason.MARGINAL_MARK not in reasons:
        reasons = reasons + (Reason.MARGINAL_MARK,)
    source = CardSource(card_id, card_id[:64].ljust(64, "0"), f"/scans/{card_id}.png", 1, 1, "b1")
    return InterpretedCard(source, kind, None, None, ReadCard(style, 1, precinct, REG, tuple(readings), tuple(contests), reasons))


def unreadable_card(card_id: str, reason: Reason = Reason.NO_FIDUCIALS) -> InterpretedCard:
    source = CardSource(card_id, card_id[:64].ljust(64, "0"), f"/scans/{card_id}.png", 1, 1, "b1")
    return InterpretedCard(source, CardKind.BALLOT, None, None, UnreadableCard(reason, "test"))
