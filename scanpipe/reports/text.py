"""The same reports as plain text for a terminal: aligned tables a staffer reads."""

from __future__ import annotations

from collections.abc import Sequence

from scanpipe.names import pair_status_short
from scanpipe.reports.model import DuplicatesReport, QueueRow, StatusReport, TallyReport


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, right: Sequence[int] = ()) -> list[str]:
    """Aligned columns; ``right``: indexes of right-aligned (number) columns."""
    cells = [[str(c) for c in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(r: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()

    return [line(cells[0]), "  ".join("-" * w for w in widths)] + [line(r) for r in cells[1:]]


def queue_table(rows: Sequence[QueueRow]) -> list[str]:
    """One line per item, by precinct then where the paper is; a serial's cards on the lines
    below it (which is the duplicate, which the original)."""
    if not rows:
        return ["Nothing awaits a person."]
    ordered = sorted(rows, key=lambda r: (r.precinct, r.kind, [(c.batch, c.seq, c.page) for c in r.cards]))
    body: list[tuple[object, ...]] = []
    for n, r in enumerate(ordered, start=1):
        body.append((n, r.what, r.reason_text, r.precinct, r.contests or "whole card"))
        body += [("", f"  {role} {c.label}", "", "", "") for c, role in zip(r.cards, r.roles) if r.kind == "pair"]
    out = table(("#", "card: batch #position (file)", "why", "precinct", "contests"), body, right=(0,))
    return out + ["", f"{len(rows)} item(s). Open them in `scanpipe review`, or decide one with `scanpipe adjudicate BATCH#POSITION` "
                      "(a card, e.g. B01#7) or `scanpipe adjudicate SERIAL` (a pair)."]


def status_lines(s: StatusReport) -> list[str]:
    h = s.heading
    out = [f"{h.election} ({h.election_date}) · {h.generated_at}", "",
           f"Cards read: {s.cards}" + (" (" + ", ".join(f"{n} {w}" for w, n in s.cards_by_status) + ")" if s.cards else "")]
    if s.batches:
        out += ["", "Batches:"] + ["  " + x for x in table(("batch", "cards", "state"), s.batches, right=(1,))]
    out += ["", f"Waiting for a person: {s.waiting_total}"]
    if s.waiting_total:
        out += ["  by reason:"] + [f"    {n:>6}  {w}" for w, n in s.waiting_by_reason]
        out += ["  by precinct:"] + [f"    {n:>6}  {w}" for w, n in s.waiting_by_precinct]
    total_pairs = sum(n for _, n in s.pairs)
    out += ["", f"Duplicate/original pairs (serials): {total_pairs}"] + [f"    {n:>6}  {w}" for w, n in s.pairs]
    out += ["", f"New duplicates to print, scan back and store with their originals: {len(s.new_duplicates)}"]
    out += [f"    {nd.serial:<14} {nd.precinct:<24} {nd.state}: {nd.next_step}" for nd in s.new_duplicates]
    out += ["", "Next: `scanpipe queue` lists each item with its batch and position; `scanpipe report pull-list --out pull.pdf` prints them;",
            "`scanpipe duplicates pending` lists the new duplicates' paper."]
    return out


def tally_lines(t: TallyReport) -> list[str]:
    out = [t.heading.title, f"{t.heading.election} ({t.heading.election_date}) · {t.heading.generated_at}"]
    for p in (*t.precincts, None):
        contests = p.contests if p is not None else t.totals
        out += ["", f"== {p.precinct if p is not None else 'All precincts'} =="]
        for c in contests:
            rows = [(x.option, x.votes) for x in c.lines if x.is_option] + [("Total votes", c.votes_total)]
            rows += [(x.option, x.votes) for x in c.lines if not x.is_option]
            out += [f"{c.contest} (vote for {c.vote_for})"] + ["  " + x for x in table(("", "votes"), rows, right=(1,))[2:]]
    if t.unassigned:
        out += ["", f"Cards without a known precinct or style (awaiting a person): {t.unassigned}"]
    return out


def duplicates_lines(r: DuplicatesReport) -> list[str]:
    heads = ("precinct", "serials", *(pair_status_short(c).lower() for c in r.columns), "new duplicates", "examined by the board")
    rows = [(x.precinct, x.serials, *x.statuses, x.new_duplicates, x.examined) for x in (*r.lines, r.total)]
    out = [r.heading.title, f"{r.heading.election} ({r.heading.election_date}) · {r.heading.generated_at}", r.rule_set_line,
           "FINAL" if r.final else f"NOT FINAL: {r.why_not_final}", ""]
    out += table(heads, rows, right=tuple(range(1, len(heads))))
    out += ["", "Each serial has one status, so the status columns add up to 'serials'; 'new duplicates' counts the "
                "resolved serials now counted through a new duplicate."]
    if r.examinations:
        out += ["", "Examined by (serial, status, how, who):"] + [f"  {serial} {status}: {how}" for serial, status, how in r.examinations]
    if r.pending_paper:
        out += ["", f"New duplicates not yet stored with their original ({r.pending_paper_law}): {len(r.pending_paper)}"]
        out += [f"  {serial} ({precinct}): {state}; next: {step}" for serial, precinct, state, step in r.pending_paper]
    if r.awaiting_board:
        out += ["", f"Serials awaiting the board ({r.awaiting_board_law}): {', '.join(r.awaiting_board)}"]
    if r.serials:
        out += ["", "Serials:"]
        body = [(s.serial, s.precinct, s.found, s.now, s.contests or "-", "; ".join(c.label for c in s.duplicates) or "-",
                 "; ".join(c.label for c in s.originals) or "-", s.counted) for s in r.serials]
        out += table(("serial", "precinct", "found", "now", "contests", "duplicate", "original", "counts"), body)
    if r.log_size:
        types = " (" + ", ".join(f"{n} {t}" for t, n in r.log_types) + ")" if r.log_types else ""
        out += ["", f"Canvass duplication log: {r.log_size} serial(s){types}",
                f"  expected by the log but not scanned ({len(r.log_missing)}): " + (", ".join(r.log_missing) or "none"),
                f"  scanned but not in the log ({len(r.log_unknown)}): " + (", ".join(r.log_unknown) or "none")]
    return out
