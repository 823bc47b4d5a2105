"""The new duplicate on paper, from the decision to the shelf (§12-108(c)(2), (d)(2)(i)).

One path for every new duplicate, whichever way it was decided (``scanpipe adjudicate``, the
web review, the board): :func:`scanpipe.reconcile.service.reconcile` makes the record and
:func:`render_paper` renders its pages from the style's layout alone
(:mod:`scanpipe.exports.paper`) into the database at once. Its life after that:

1. **to print**: print the PDF (``scanpipe duplicates print``, or the review's print button);
2. **to scan**: ingest the printed card and reconcile; it attaches to its record only when it
   reads as decided (else **reads differently**: reprint it);
3. **to store**: store it with the voter's original and record where
   (``scanpipe duplicates stored``);
4. stored.

A new duplicate counts from the moment its decision is final (the statute counts the new
duplicate the board made); the recount is not complete, and the duplicate report is not
final, while any new duplicate is not yet stored (:func:`pending_new_duplicates`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from scanpipe.errors import DecisionError, SourceError
from scanpipe.exports.paper import DEFAULT_DPI, PaperSpec, pdf_bytes, png_bytes, render_new_duplicate
from scanpipe.store.pairs import NewDuplicateRecord
from scanpipe.store.repository import Store
from scanpipe.types import Election


class PaperState(StrEnum):
    TO_PRINT = "to_print"
    TO_SCAN = "to_scan"
    READS_DIFFERENTLY = "reads_differently"
    TO_STORE = "to_store"
    STORED = "stored"


NEXT_STEP = {
    PaperState.TO_PRINT: "print it (scanpipe duplicates print, or the review's print button)",
    PaperState.TO_SCAN: "scan the printed card (scanpipe ingest) and run scanpipe reconcile",
    PaperState.READS_DIFFERENTLY: "the scanned card does not read as decided: print it again and scan the new print",
    PaperState.TO_STORE: "store it with the voter's original and record it (scanpipe duplicates stored)",
    PaperState.STORED: "nothing: stored with its original",
}


@dataclass(frozen=True, slots=True)
class PaperStatus:
    serial: str
    base_serial: str
    precinct: str | None
    state: PaperState
    created_at: datetime
    printed_at: datetime | None
    printed_by: str | None
    scanned_card_id: str | None
    problem: str | None
    stored_at: datetime | None
    stored_by: str | None
    stored_where: str | None

    @property
    def next_step(self) -> str:
        return NEXT_STEP[self.state]

    def as_json(self) -> dict[str, object]:
        return {"serial": self.serial, "base_serial": self.base_serial, "precinct": self.precinct, "state": self.state.value,
                "next_step": self.next_step, "printed_at": _iso(self.printed_at), "printed_by": self.printed_by,
                "scanned_card": self.scanned_card_id, "problem": self.problem, "stored_at": _iso(self.stored_at),
                "stored_by": self.stored_by, "stored_where": self.stored_where}


def _iso(t: datetime | None) -> str | None:
    return t.isoformat() if t is not None else None


def paper_state(nd: NewDuplicateRecord) -> PaperState:
    if nd.stored_at is not None:
        return PaperState.STORED
    if nd.scanned_card_id is not None:
        return PaperState.TO_STORE
    if nd.scan_problem is not None:
        return PaperState.READS_DIFFERENTLY
    if nd.printed_at is not None:
        return PaperState.TO_SCAN
    return PaperState.TO_PRINT


def paper_statuses(store: Store) -> list[PaperStatus]:
    """Every current new duplicate (a superseded one is not the voter's) with its paper's state."""
    return [PaperStatus(nd.serial, nd.base_serial, nd.precinct, paper_state(nd), nd.created_at, nd.printed_at, nd.printed_by,
                        nd.scanned_card_id, nd.scan_problem, nd.stored_at, nd.stored_by, nd.stored_where)
            for nd in store.new_duplicates()]


def pending_new_duplicates(store: Store) -> list[PaperStatus]:
    """The new duplicates not yet printed, scanned back as decided and stored with their
    original: the duplicate report and the recount's completion wait for every one."""
    return [p for p in paper_statuses(store) if p.state is not PaperState.STORED]


def render_paper(store: Store, election: Election, serial: str, *, dpi: int = DEFAULT_DPI) -> None:
    """Render a new duplicate's pages from its style's layout and keep them in the database."""
    nd = _record(store, serial)
    vendor = any(not p.fiducials_in for p in election.style(nd.style).layout.pages)
    pages = render_new_duplicate(election, PaperSpec(nd.serial, nd.style, nd.precinct, nd.contests), dpi=dpi,
                                 references=store.reference_scans() if vendor else None)
    store.set_new_duplicate_pages(nd.serial, [png_bytes(p, dpi) for p in pages], dpi=dpi)


def paper_pdf(store: Store, election: Election, serial: str) -> bytes:
    """The new duplicate's PDF (rendered first if it never was)."""
    pages = store.new_duplicate_pages(serial)
    if not pages:
        render_paper(store, election, serial)
        pages = store.new_duplicate_pages(serial)
    return pdf_bytes([p for p, _ in pages], pages[0][1])


def write_paper_files(store: Store, election: Election, serial: str, out_dir: Path) -> tuple[Path, Path]:
    """Write the new duplicate's PNG (page 1; further pages ``-p<N>``) and PDF; remember where."""
    pages = store.new_duplicate_pages(serial)
    if not pages:
        render_paper(store, election, serial)
        pages = store.new_duplicate_pages(serial)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        png = out_dir / f"{serial}.png"
        for i, (data, _) in enumerate(pages, start=1):
            (png if i == 1 else out_dir / f"{serial}-p{i}.png").write_bytes(data)
        pdf = out_dir / f"{serial}.pdf"
        pdf.write_bytes(pdf_bytes([p for p, _ in pages], pages[0][1]))
    except OSError as e:
        raise SourceError(f"{out_dir}: the new duplicate {serial} cannot be written: {e.strerror or e}") from e
    import hashlib

    store.set_new_duplicate_files(serial, image_path=str(png), image_sha256=hashlib.sha256(pages[0][0]).hexdigest(), pdf_path=str(pdf))
    return png, pdf


def print_new_duplicate(store: Store, election: Election, serial: str, out_dir: Path, *, by: str) -> Path:
    """Write the new duplicate's PDF for printing and record who printed it; returns the PDF."""
    nd = _record(store, serial)
    if nd.superseded_by is not None:
        raise DecisionError(f"new duplicate {serial} was superseded by {nd.superseded_by}: print that one")
    _, pdf = write_paper_files(store, election, serial, out_dir)
    store.mark_new_duplicate_printed(serial, by=by)
    return pdf


def store_new_duplicate(store: Store, serial: str, *, by: str, where: str) -> None:
    """Record that the printed new duplicate is stored with its original (refused before it
    was scanned back and read as decided)."""
    if not where.strip():
        raise DecisionError("say where it is stored (--where: the envelope, box or container of the original)")
    if not by.strip():
        raise DecisionError("say who stored it (--by)")
    store.mark_new_duplicate_stored(serial, by=by.strip(), where=where.strip())


def _record(store: Store, serial: str) -> NewDuplicateRecord:
    nd = next((n for n in store.new_duplicates(current_only=False, base_serial=serial.partition("-R")[0]) if n.serial == serial), None)
    if nd is None:
        raise DecisionError(f"there is no new duplicate {serial}")
    return nd
