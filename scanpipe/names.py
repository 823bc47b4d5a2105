"""What a person reads: names for ids, plain words for reason codes, where a card sits on paper.

Pure: an :class:`~scanpipe.types.Election` and plain values in, strings out. Every page,
printable report and terminal table a person reads goes through here, so contest titles,
candidate names and precinct names replace ids, and a card is named by its place in the
paper (``B01 #57 (0057.png)``), never by its hex id. Machine formats (CVR, the contract's CSV
and JSON) keep their ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePath

from scanpipe.types import Election, Reason

UNASSIGNED = "#unassigned"


@dataclass(frozen=True, slots=True)
class CardPlace:
    """Where a card is in the paper: its batch, the sheet's place in the batch (files in the
    order ingest reads them: sorted by path, which for a scanner's numbered files is the
    feed order), the file name, and the page of a multi-page file."""

    card_id: str
    batch: str
    seq: int
    file: str
    page: int = 1
    page_count: int = 1

    @property
    def label(self) -> str:
        """``B01 #57 (0057.png)``; ``B01 #3 (sheet.pdf p2)`` for page 2 of a file."""
        page = f" p{self.page}" if self.page_count > 1 else ""
        return f"{self.batch} #{self.seq} ({self.file}{page})"

    @property
    def ref(self) -> str:
        """What a command accepts for this card: ``BATCH#SEQ`` (with ``/p<N>`` for a page)."""
        return f"{self.batch}#{self.seq}" + (f"/p{self.page}" if self.page_count > 1 else "")


def file_name(path: str) -> str:
    return PurePath(path).name


# --------------------------------------------------------------------------------------
# Reasons: a plain label and what a person does about it


@dataclass(frozen=True, slots=True)
class ReasonText:
    label: str  # a few words, for tables
    instruction: str  # what the person at the screen does


REASONS: dict[str, ReasonText] = {
    Reason.UNREADABLE_IMAGE: ReasonText("image could not be read",
                                        "The file could not be opened as an image. Find the paper card by its batch and position, "
                                        "rescan it; once the rescan is stored, the board sets this scan aside (`scanpipe board set-aside`)."),
    Reason.IMAGE_TOO_LARGE: ReasonText("image too large",
                                       "The file is too large to be a card scan. Check the scanner settings and rescan the card."),
    Reason.NO_FIDUCIALS: ReasonText("card corners not found",
                                    "The machine could not find the card's corner marks. Look at the image: if it is a ballot "
                                    "card, state its style and precinct below so it is read again; otherwise pull the paper."),
    Reason.UNKNOWN_STYLE: ReasonText("ballot style not recognised",
                                     "The machine could not tell which ballot style this is. Compare the card with the styles "
                                     "and state its style (and precinct) below; it is then read again. A page that is no ballot of this "
                                     "election (a batch header, another election's card) goes to the board, which sets it "
                                     "aside (`scanpipe board set-aside`)."),
    Reason.AMBIGUOUS_STYLE: ReasonText("ballot style unclear",
                                       "The card looks like more than one ballot style. State which one it is below."),
    Reason.STYLE_CONFLICT: ReasonText("styles disagree",
                                      "The card's code names a different style from the one stated for the batch, or the two "
                                      "sides of its sheet are read as two different ballot styles (or as the same side twice): "
                                      "one of them is misread, or the file holds two cards. Look at both sides and state the "
                                      "card's real style below."),
    Reason.WRONG_ELECTION: ReasonText("card of another election",
                                      "The card's code names another election. Pull the paper card and give it to the board, which "
                                      "sets the scan aside (`scanpipe board set-aside`)."),
    Reason.NO_PRECINCT: ReasonText("precinct not known",
                                   "The ballot style serves several precincts and the card does not say which. State the "
                                   "precinct below."),
    Reason.KIND_UNKNOWN: ReasonText("duplicate or original not known",
                                    "The machine could not tell whether this is a regular ballot, a duplicate or an original. "
                                    "State its kind below."),
    Reason.LABEL_UNREADABLE: ReasonText("pairing label not readable",
                                        "The card carries a label that could not be read; it may be an original. Read the "
                                        "serial on the paper and state it with `scanpipe identify --serial`."),
    Reason.MARGINAL_MARK: ReasonText("mark for a person to read",
                                     "A mark in this contest is neither clearly a vote nor clearly not one. Look at the "
                                     "outlined targets and record what the voter intended."),
    Reason.WRITE_IN: ReasonText("write-in",
                                "The voter wrote a name in a write-in space. Record whether it is a vote, and type the "
                                "name as written."),
    Reason.PAIR_MISMATCH: ReasonText("duplicate differs from original",
                                     "The duplicate does not match the voter's original in the contests shown. Read the "
                                     "ORIGINAL and record the voter's intent; if it differs from the duplicate, a new "
                                     "duplicate is made from your decision."),
    Reason.PAIR_NEEDS_REVIEW: ReasonText("pair needs a person",
                                         "The machine could not compare the duplicate with the original in the contests "
                                         "shown (an unclear mark or a card it could not read). Read the ORIGINAL and record "
                                         "the voter's intent."),
    Reason.TEXT_CODE_DISAGREE: ReasonText("printed text and code disagree",
                                          "The machine-printed original's text and its code say different things. Read the "
                                          "printed text the voter verified and record it."),
    Reason.ORPHAN_DUPLICATE: ReasonText("duplicate without its original",
                                        "No original with this serial was scanned. Look for the original in the batches. "
                                        "Nothing of the serial counts until the board rules on it (Orphans and conflicts page); "
                                        "if the board rules that a new duplicate be made, read each contest here."),
    Reason.ORPHAN_ORIGINAL: ReasonText("original without its duplicate",
                                       "No duplicate with this serial was scanned. Look for the duplicate. Nothing of the serial "
                                       "counts until the board rules on it (Orphans and conflicts page); if the board rules that "
                                       "a new duplicate be made, read the voter's intent on the original, contest by contest, here."),
    Reason.CONFLICT: ReasonText("serial used more than once",
                                "Two duplicates or two originals carry this serial. Nothing of the serial counts until the board "
                                "rules which card counts (Orphans and conflicts page); if it rules that a new duplicate be made, "
                                "read the voter's intent on the original, contest by contest, here."),
    Reason.AWAITING_SECOND_AUDITOR: ReasonText("awaiting a second auditor",
                                               "One auditor has recorded a reading. A second, different auditor reads the "
                                               "card without seeing it and records theirs."),
    Reason.ESCALATED: ReasonText("with the board",
                                 "The two auditors read this contest differently. The board decides it on the board page."),
    Reason.UNKNOWN_PAGE: ReasonText("page not in the style",
                                    "The card's code names a page its ballot style does not have. State the style and page."),
    Reason.LABEL_CONFLICT: ReasonText("two different labels",
                                      "The card carries two different pairing labels. Read the paper and state its serial."),
    Reason.SUPERSEDED_LABEL: ReasonText("label of a superseded serial",
                                        "The card carries a serial that people already resolved with a new duplicate. Give "
                                        "the paper to the board."),
    Reason.TEXT_UNREAD: ReasonText("printed text not read",
                                   "The machine-printed record's text could not be read by the machine. Read it and record "
                                   "the voter's choices."),
    Reason.REGISTRATION_FAILED: ReasonText("card does not fit its layout",
                                           "The machine could not line this card up with its ballot style's blank. Look at the "
                                           "image: if it is torn, folded or badly fed, rescan the paper; if it is another style, "
                                           "state its style and precinct below so it is read again."),
    Reason.LOW_RESOLUTION: ReasonText("scanned at too low a resolution",
                                      "The card was scanned below the resolution marks can be read at. Rescan the paper card at "
                                      "the scanner's normal setting (200 dpi or more)."),
    Reason.INTERNAL_ERROR: ReasonText("the program failed on this card",
                                      "Reading this card stopped on an error in the program (the error is in the log). Tell "
                                      "the administrator; look at the card and state its style and precinct so it is read again."),
    Reason.NO_SERIAL: ReasonText("serial not found",
                                 "The batch holds duplicates or originals but this card's serial could not be read. Read "
                                 "the serial on the paper and state it with `scanpipe identify --serial`."),
    Reason.BLANK_PAGE: ReasonText("blank page",
                                  "Nothing is printed on this page. Find the paper by its batch and position: a card fed face "
                                  "down, or a ballot side scanned blank, is rescanned; a sheet fed by mistake, a card's blank "
                                  "back scanned as a file of its own, or a page rescanned, the board sets aside "
                                  "(`scanpipe board set-aside`)."),
    Reason.SCANNER_STREAK: ReasonText("scanner streak across marks",
                                      "A dark line runs down the whole scan (dirt or a scratch on the scanner's glass) across "
                                      "the outlined targets: the machine cannot tell a mark from the line there. Read those "
                                      "targets on the image or on the paper and record what the voter intended; tell the "
                                      "scanner's operator to clean the glass before the next batch."),
    Reason.BLANK_BACK: ReasonText("blank back of a one-sided card",
                                  "The blank back of a card printed on one side, scanned with its front (the front is read "
                                  "as the card). Nothing is printed on it and nothing is for a person to decide: it is kept "
                                  "with its sheet and counts nothing."),
    Reason.FILE_UNREAD: ReasonText("card file not read",
                                   "Ingest found this file (or folder) but could not read it at all: no read permission, a "
                                   "link to nothing, a pipe, a name that is not UTF-8. Fix what the ingest summary said "
                                   "(permissions, a share not mounted, a rename) and ingest the folder again."),
}


def reason_label(code: str) -> str:
    found = REASONS.get(code)
    return found.label if found is not None else code.replace("_", " ")


def reason_instruction(code: str) -> str:
    found = REASONS.get(code)
    return found.instruction if found is not None else ""


PAIR_STATUS = {"match": "match", "mismatch": "mismatch", "needs_review": "needs a person", "resolved": "resolved",
               "orphan_duplicate": "duplicate without original", "orphan_original": "original without duplicate",
               "conflict": "serial used more than once"}


PAIR_STATUS_SHORT = {"match": "Match", "mismatch": "Mismatch", "needs_review": "Needs a person", "resolved": "Resolved",
                     "orphan_duplicate": "No original", "orphan_original": "No duplicate", "conflict": "Serial twice"}


def pair_status_short(status: str) -> str:
    """A column heading for a pair status."""
    return PAIR_STATUS_SHORT.get(status, status.replace("_", " "))


def pair_status_label(status: str) -> str:
    return PAIR_STATUS.get(status, status.replace("_", " "))


# --------------------------------------------------------------------------------------
# The election's names


class Names:
    """Names of one election's precincts, contests and options."""

    def __init__(self, election: Election) -> None:
        self.election = election
        self._precincts = {p.id: p.name for p in election.precincts}
        self._contests = {c.id: c for c in election.contests}
        self._options = {o.id: o for c in election.contests for o in c.options}

    def precinct(self, precinct_id: str | None) -> str:
        if precinct_id is None:
            return "precinct not known"
        if precinct_id == UNASSIGNED:
            return "cards without a known precinct or style"
        return self._precincts.get(precinct_id, precinct_id)

    def contest(self, contest_id: str) -> str:
        c = self._contests.get(contest_id)
        return c.title if c is not None else contest_id

    def contests(self, contest_ids: Iterable[str]) -> str:
        return ", ".join(self.contest(c) for c in contest_ids)

    def option(self, option_id: str, write_in_name: str | None = None) -> str:
        o = self._options.get(option_id)
        if o is None:
            return {"#overvotes": "overvotes", "#undervotes": "undervotes", "#pending": "awaiting a person"}.get(option_id, option_id)
        if o.write_in and write_in_name:
            return f"{o.name}: {write_in_name}"
        return o.name

    def votes(self, option_ids: Sequence[str], *, write_ins: dict[str, str] | None = None, empty: str = "no vote") -> str:
        """The options a reading counts, by name (``no vote`` when none)."""
        names = [self.option(o, (write_ins or {}).get(o)) for o in option_ids]
        return ", ".join(names) if names else empty

    def reading(self, reading: dict[str, object] | None) -> str:
        """A stored contest reading (``reading_to_json``'s form) in words."""
        if reading is None:
            return "contest not on this card"
        votes = [str(v) for v in _items(reading.get("votes"))]
        unknown = [str(v) for v in _items(reading.get("unknown_options"))]
        outcome = reading.get("outcome")
        if outcome == "overvote":
            text = f"overvote ({self.votes(votes)}): nothing counts"
        elif outcome == "pending":
            text = f"unclear ({self.votes(unknown, empty='a mark')} for a person)" + (f"; read: {self.votes(votes)}" if votes else "")
        else:
            text = self.votes(votes)
        return text


def _items(value: object) -> list[object]:
    """A stored JSON list, or nothing."""
    return list(value) if isinstance(value, list | tuple) else []
