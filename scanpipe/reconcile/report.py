"""The duplicate reconciliation report, under the election's own rule set.

Per precinct: serials, pairs examined, matched, mismatched, resolved, new duplicates,
orphans, conflicts; then who examined each pair and how (board sign-off, auditors'
decisions, board ruling: §12-108(d)(1)), the new duplicates whose paper is not yet stored
with its original, and, with the canvass log imported, its serials the scans lack and the
scanned serials it does not know. The heading and every citation come from the
jurisdiction's rule set (an Arkansas election never gets Maryland's §12-108 heading).

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

COLUMNS = ("serials", "examined", "match", "mismatch", "needs_review", "resolved", "new duplicates", "orphan_duplicate",
           "orphan_original", "conflict")


@dataclass(frozen=True)
class DuplicateReport:
    lines: tuple[str, ...]
    examinations: tuple[ExaminationRow, ...]
    pending_paper: tuple[PaperStatus, ...]
    awaiting_board: tuple[str, ...]
    reconciled: bool = True  # `reconcile` has run on this database

    @property
    def unexamined(self) -> tuple[str, ...]:
        return tuple(r.serial for r in self.examinations if not r.examined)

    @property
    def final(self) -> bool:
        return self.reconciled and not self.unexamined and not self.pending_paper and not self.awaiting_board


def duplicate_report(store: Store) -> DuplicateReport:
    election = store.current_election()
    rules = rule_set(election.jurisdiction)
    pairs = store.pairs()
    rows = examination_rows(store)
    pending = pending_new_duplicates(store)
    new_dups = {nd.base_serial for nd in store.new_duplicates()}
    names = {p.id: p.name for p in election.precincts}
    by_precinct: dict[str, Counter[str]] = {}
    examined = {r.serial for r in rows if r.examined}
    for p in pairs:
        c = by_precinct.setdefault(p.precinct or "#unassigned", Counter())
        c["serials"] += 1
        c["examined"] += p.serial in examined
        c[str(p.detail.get("base_status", p.status))] += 1
        c["new duplicates"] += p.serial in new_dups and p.counted not in ("duplicate", "none")
        c["resolved"] += p.status == "resolved"
    awaiting = tuple(p.serial for p in pairs if p.detail.get("awaits_board"))
    reconciled = bool(pairs) or bool(store.events("reconcile"))
    report = DuplicateReport((), tuple(rows), tuple(pending), awaiting, reconciled)
    lines = [rules.report_heading("Duplicate reconciliation report"),
             f"Rule set {rules.id} ({rules.name}); every pair is examined: {rules.examine_source}",
             "FINAL" if report.final else "NOT FINAL: " + _why_not_final(report), ""]
    lines.append(f"{'precinct':<24}" + "".join(f"{c:>17}" for c in COLUMNS))
    total: Counter[str] = Counter()
    for precinct in sorted(by_precinct):
        c = by_precinct[precinct]
        total.update(c)
        lines.append(f"{names.get(precinct, precinct)[:23]:<24}" + "".join(f"{c[k]:>17}" for k in COLUMNS))
    lines.append(f"{'all':<24}" + "".join(f"{total[k]:>17}" for k in COLUMNS))
    lines += ["", "Examined by (serial, status, how, who):"]
    lines += [f"  {r.serial} {r.status}: " + (f"{r.how} by {', '.join(r.by) or 'unrecorded'}" + (f" [{r.rule_set}]" if r.rule_set else "")
                                             if r.examined else "NOT YET EXAMINED") for r in rows]
    if pending:
        lines += ["", f"New duplicates not yet stored with their original ({rules.store_source.citation}): {len(pending)}"]
        lines += [f"  {p.serial} ({names.get(p.precinct or '', p.precinct or '#unassigned')}): {p.state.value}; next: {p.next_step}"
                  for p in pending]
    if awaiting:
        lines += ["", f"Serials awaiting the board ({rules.missing_record_source.citation}): {', '.join(awaiting)}"]
    lines += _log_lines(store, {p.serial for p in pairs})
    return DuplicateReport(tuple(lines), tuple(rows), tuple(pending), awaiting, reconciled)


def _why_not_final(report: DuplicateReport) -> str:
    parts = [] if report.reconciled else ["`scanpipe reconcile` has not been run"]
    if report.unexamined:
        parts.append(f"{len(report.unexamined)} pair(s) not yet examined")
    if report.awaiting_board:
        parts.append(f"{len(report.awaiting_board)} serial(s) await the board")
    if report.pending_paper:
        parts.append(f"{len(report.pending_paper)} new duplicate(s) not yet printed, scanned back and stored with the original")
    return "; ".join(parts)


def _log_lines(store: Store, scanned: set[str]) -> list[str]:
    log = store.duplication_log()
    if not log:
        return []
    scopes = store.comparison_scopes()
    types = Counter(scopes[s].ballot_type.value for s in log if s in scopes)
    missing = sorted(set(log) - scanned)
    unknown = sorted(scanned - set(log))
    return ["", f"Canvass duplication log: {len(log)} serial(s) (" + ", ".join(f"{n} {t}" for t, n in sorted(types.items())) + ")",
            f"  expected by the log but not scanned ({len(missing)}): " + (", ".join(missing) or "none"),
            f"  scanned but not in the log ({len(unknown)}): " + (", ".join(unknown) or "none")]
