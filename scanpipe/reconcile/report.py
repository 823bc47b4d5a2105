"""The duplicate reconciliation report, under the election's own rule set.

Who examined each pair and how (board sign-off, auditors' decisions, board ruling:
§12-108(d)(1)), the new duplicates whose paper is not yet stored with its original, the
serials awaiting the board, and the ballot types of the canvass log. The heading and every
citation come from the jurisdiction's rule set (an Arkansas election never gets Maryland's
§12-108 heading). :mod:`scanpipe.reports.model` adds the counts per precinct and every
serial with its cards' places, and prints it.

The report is final only when every matched pair was examined by the board, no serial
awaits the board, and every new duplicate is stored (:attr:`DuplicateReport.final`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from scanpipe.reconcile.board import ExaminationRow, examination_rows
from scanpipe.reconcile.paper import PaperStatus, pending_new_duplicates
from scanpipe.rules import rule_set
from scanpipe.store.repository import Store


@dataclass(frozen=True)
class DuplicateReport:
    """Where the examination of duplicates stands under the election's rule set; printed with
    names and card places by :mod:`scanpipe.reports` (``scanpipe report duplicates``)."""

    heading: str  # names the law of the election's jurisdiction
    rule_set_line: str
    examinations: tuple[ExaminationRow, ...]
    pending_paper: tuple[PaperStatus, ...]
    awaiting_board: tuple[str, ...]
    reconciled: bool = True  # `reconcile` has run on this database
    log_types: tuple[tuple[str, int], ...] = ()  # ballot types of the canvass log's serials

    @property
    def unexamined(self) -> tuple[str, ...]:
        return tuple(r.serial for r in self.examinations if not r.examined)

    @property
    def final(self) -> bool:
        return self.reconciled and not self.unexamined and not self.pending_paper and not self.awaiting_board

    @property
    def why_not_final(self) -> str:
        parts = [] if self.reconciled else ["`scanpipe reconcile` has not been run"]
        if self.unexamined:
            parts.append(f"{len(self.unexamined)} pair(s) not yet examined")
        if self.awaiting_board:
            parts.append(f"{len(self.awaiting_board)} serial(s) await the board")
        if self.pending_paper:
            parts.append(f"{len(self.pending_paper)} new duplicate(s) not yet printed, scanned back and stored with the original")
        return "; ".join(parts)


def duplicate_report(store: Store) -> DuplicateReport:
    election = store.current_election()
    rules = rule_set(election.jurisdiction)
    pairs = store.pairs()
    awaiting = tuple(p.serial for p in pairs if p.detail.get("awaits_board"))
    log = store.duplication_log()
    scopes = store.comparison_scopes() if log else {}
    types = Counter(scopes[s].ballot_type.value for s in log if s in scopes)
    return DuplicateReport(rules.report_heading("Duplicate reconciliation report"),
                           f"Rule set {rules.id} ({rules.name}); every pair is examined: {rules.examine_source}",
                           tuple(examination_rows(store)), tuple(pending_new_duplicates(store)), awaiting,
                           bool(pairs) or bool(store.events("reconcile")), tuple(sorted(types.items())))
