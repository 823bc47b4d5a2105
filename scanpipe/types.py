"""Frozen values shared by the stages of scanpipe. No I/O and no domain logic here.

Units are in the names: ``_in`` is inches on the printed page (x right, y down, as the
contract's layouts say), ``_px`` is pixels of an image.  Points in pixels are ``(x, y)`` =
``(col, row)`` because that is what OpenCV and zxing speak; arrays are indexed ``[row, col]``.

The flow of values through the stages::

    DecodedPage -> Registration -> TargetScore[] -> TargetReading[] -> ContestReading[]
                -> CardInterpretation (ReadCard | UnreadableCard) -> IngestedCard
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TypeAlias

Box: TypeAlias = tuple[float, float, float, float]
"""``(x, y, w, h)`` in inches from the printed page's top-left corner."""

PointPx: TypeAlias = tuple[float, float]
"""``(x, y)`` = ``(col, row)`` in pixels."""


class MarkStatus(StrEnum):
    """What the machine says of one target (``HasIndication`` in the CVR)."""

    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"  # needs a person


class MarkIntent(StrEnum):
    """What a careful person would say of a mark (ground truth of synthetic ballots)."""

    VOTE = "vote"
    NO_VOTE = "no_vote"
    AMBIGUOUS = "ambiguous"


class CardKind(StrEnum):
    BALLOT = "ballot"  # a regular card, counted on its own
    DUPLICATE = "duplicate"
    ORIGINAL = "original"
    UNKNOWN = "unknown"  # could not be told: queued as kind_unknown


class DecisionState(StrEnum):
    """Where a person's decision of voter intent stands (the two-people rule)."""

    FIRST_HALF = "first_half"  # one auditor of two: waits for the second
    FINAL = "final"
    ESCALATED = "escalated"  # two auditors disagreed: the board decides
    SUPERSEDED = "superseded"  # replaced by a later decision of the same contest


class ItemKind(StrEnum):
    """What a decision is about: one card, or a pair (a base serial)."""

    CARD = "card"
    PAIR = "pair"


class Reason(StrEnum):
    """Queue reason codes (contract section 5). Values are the exact codes."""

    UNREADABLE_IMAGE = "unreadable_image"
    IMAGE_TOO_LARGE = "image_too_large"
    NO_FIDUCIALS = "no_fiducials"
    UNKNOWN_STYLE = "unknown_style"
    AMBIGUOUS_STYLE = "ambiguous_style"
    STYLE_CONFLICT = "style_conflict"
    WRONG_ELECTION = "wrong_election"
    NO_PRECINCT = "no_precinct"
    KIND_UNKNOWN = "kind_unknown"
    LABEL_UNREADABLE = "label_unreadable"
    MARGINAL_MARK = "marginal_mark"
    WRITE_IN = "write_in"
    PAIR_MISMATCH = "pair_mismatch"
    PAIR_NEEDS_REVIEW = "pair_needs_review"
    TEXT_CODE_DISAGREE = "text_code_disagree"
    ORPHAN_DUPLICATE = "orphan_duplicate"
    ORPHAN_ORIGINAL = "orphan_original"
    CONFLICT = "conflict"
    AWAITING_SECOND_AUDITOR = "awaiting_second_auditor"
    ESCALATED = "escalated"
    # scanpipe's own additions (documented in the README)
    UNKNOWN_PAGE = "unknown_page"  # the style is known but the page number is not in its layout
    LABEL_CONFLICT = "label_conflict"  # two different pairing labels on one card
    SUPERSEDED_LABEL = "superseded_label"  # a label whose serial was already superseded
    TEXT_UNREAD = "text_unread"  # a machine-printed record's printed text could not be read (no OCR)
    NO_SERIAL = "no_serial"  # stated a duplicate or original (--kind) but carries no readable serial
    REGISTRATION_FAILED = "registration_failed"  # the card does not fit its blank (measured residual in the detail)
    LOW_RESOLUTION = "low_resolution"  # scanned below the resolution marks can be read at
    INTERNAL_ERROR = "internal_error"  # reading this card raised an unexpected error (a bug; traceback logged)
    FILE_UNREAD = "file_unread"  # a card file (or folder) found by ingest could not be read at all
    BLANK_PAGE = "blank_page"  # nothing printed on the page (a card's blank back, a sheet fed by mistake)
    SCANNER_STREAK = "scanner_streak"  # a dark line down the whole scan (dirt on the glass) crosses targets: a person reads them
    BLANK_BACK = "blank_back"  # the blank back of a card printed on one side, its front read: nothing for a person


# Reasons of a stored page that holds nothing of a voter's and nothing for a person to decide:
# kept (its image, hash and reason) but neither counted nor queued
NOTHING_TO_DECIDE = frozenset({Reason.BLANK_BACK})


# --------------------------------------------------------------------------------------
# Election definition


@dataclass(frozen=True, slots=True)
class Option:
    id: str
    name: str
    write_in: bool = False


@dataclass(frozen=True, slots=True)
class Contest:
    id: str
    title: str
    kind: str  # "candidate" | "question"
    vote_for: int
    options: tuple[Option, ...]


@dataclass(frozen=True, slots=True)
class Precinct:
    id: str
    name: str
    county: str | None = None


@dataclass(frozen=True, slots=True)
class TargetDef:
    contest: str
    option: str
    box_in: Box
    write_in_area_in: Box | None = None


@dataclass(frozen=True, slots=True)
class LayoutPage:
    page: int
    size_in: tuple[float, float]  # (width, height)
    targets: tuple[TargetDef, ...]
    fiducials_in: tuple[Box, ...] = ()  # TL, TR, BL, BR when present
    qr_in: Box | None = None
    reference: Path | None = None  # absolute path of a blank scan of this page
    reference_dpi: float | None = None
    distinguish_in: tuple[Box, ...] = ()


@dataclass(frozen=True, slots=True)
class Layout:
    style: str
    pages: tuple[LayoutPage, ...]
    path: Path | None = None


@dataclass(frozen=True, slots=True)
class BallotStyle:
    id: str
    precincts: tuple[str, ...]
    contests: tuple[str, ...]
    layout: Layout


@dataclass(frozen=True, slots=True)
class Election:
    id: str
    name: str
    date: str
    jurisdiction: str
    precincts: tuple[Precinct, ...]
    contests: tuple[Contest, ...]
    ballot_styles: tuple[BallotStyle, ...]
    path: Path | None = None

    def contest(self, contest_id: str) -> Contest:
        return next(c for c in self.contests if c.id == contest_id)

    def style(self, style_id: str) -> BallotStyle:
        return next(s for s in self.ballot_styles if s.id == style_id)

    def has_style(self, style_id: str) -> bool:
        return any(s.id == style_id for s in self.ballot_styles)

    def has_precinct(self, precinct_id: str) -> bool:
        return any(p.id == precinct_id for p in self.precincts)


# --------------------------------------------------------------------------------------
# Images and codes


class CodeSymbology(StrEnum):
    QR = "qr"
    CODE128 = "code128"


@dataclass(frozen=True, slots=True)
class DecodedCode:
    """One barcode found on a card image."""

    symbology: CodeSymbology
    text: str
    corners_px: tuple[PointPx, ...]  # clockwise from the symbol's own top-left


@dataclass(frozen=True, slots=True)
class CardCode:
    """A parsed ``SPB1`` card code."""

    election: str
    style: str
    precinct: str | None
    page: int


@dataclass(frozen=True, slots=True)
class PairingLabel:
    """A parsed ``DUP-<serial>`` / ``ORG-<serial>`` Code 128 label."""

    kind: CardKind  # DUPLICATE or ORIGINAL
    serial: str  # as printed, e.g. "A0042-R1"
    base_serial: str  # "A0042"
    revision: int | None  # 1 for "-R1", None when absent


@dataclass(frozen=True, slots=True)
class MachineRecord:
    """A parsed ``SPV1`` payload of a BMD summary card or VVPAT record."""

    election: str
    style: str
    precinct: str | None
    selections: tuple[tuple[str, tuple[str, ...]], ...]  # (contest, options), in payload order


# --------------------------------------------------------------------------------------
# Registration and scores


@dataclass(frozen=True, slots=True)
class Registration:
    """How a layout page sits on an (upright) card image.

    ``homography`` maps layout inches ``(x, y, 1)`` to image pixels ``(col, row, 1)``
    of the image *after* the 180-degree turn when ``rotated_180`` is true, and after a quarter
    turn clockwise before that when ``quarter_turned`` is (a card fed sideways: the scan stood a
    quarter turn from every blank).
    """

    homography: tuple[float, ...]  # 9 values, row-major 3x3
    method: str  # "fiducials" | "fiducial corners" (squares a tear or the scanner's edge took part of) | "reference"
    rotated_180: bool
    dpi: float
    anchors_found: int  # fiducials found (3 or 4), or inlier matches for a reference
    residual_px: float
    quarter_turned: bool = False


class DamageCause(StrEnum):
    """What gave a target's damage score its value (the strongest of the measures), so that a
    person sent a damaged target is told what the machine saw over it."""

    STAIN = "stain"  # a stain's even darkening over the target
    FOLD = "fold"  # a fold or crease across it
    TEAR = "tear"  # the paper torn or missing there
    CROSSING = "crossing"  # a stroke from outside runs through it (a stamp's letter, a signature, a line)
    INK_ACROSS = "ink_across"  # a stamp or signature across the card, seen from the whole page, enters it
    MARKED_ON_BLANK = "marked_on_blank"  # the layout's blank itself is marked there
    CUT_OFF = "cut_off"  # part of the target is not on the scan (stored before 7 December for a target a stamp covers)
    PRINTED_OVER = "printed_over"  # the blank's own print covers it (a "SAMPLE" stamp printed across the target)
    STREAK = "streak"  # a scanner's streak runs through it


@dataclass(frozen=True, slots=True)
class TargetScore:
    """Raw measurements of one target; every one is stored, none is a verdict."""

    contest: str
    option: str
    score: float  # the mark score in [0, 1] that classification compares with thresholds
    fill_score: float  # mean ink darkness inside the target (against a blank: where it leaves paper), in [0, 1]
    stroke_score: float  # how far dark strokes run through the target, in [0, 1]
    ring_score: float  # ink around but outside the target (circled option), in [0, 1]
    damage_score: float  # broad smooth darkening over the target (fold, stain), in [0, 1]
    write_in_score: float  # ink in the write-in area, in [0, 1]; 0 when there is none
    box_px: tuple[float, float, float, float]  # (x, y, w, h) where the target was found
    shift_px: tuple[float, float] = (0.0, 0.0)  # local refinement applied
    dot_in: float = 0.0  # the extent (in) of a lone dot of ink in the target (a pen rested); 0 when there is none
    damage_cause: DamageCause | None = None  # what the damage score measured; None where it measured nothing


@dataclass(frozen=True, slots=True)
class TargetReading:
    score: TargetScore
    status: MarkStatus
    why: str  # e.g. "score 0.412 between 0.080 and 0.600"


class ContestOutcome(StrEnum):
    COUNTED = "counted"  # votes <= vote_for (fewer is an undervote)
    OVERVOTE = "overvote"  # more than vote_for: nothing counts
    PENDING = "pending"  # a person must decide first


@dataclass(frozen=True, slots=True)
class ContestReading:
    contest: str
    votes: tuple[str, ...]  # option ids read as votes, in definition order
    outcome: ContestOutcome
    undervotes: int  # vote_for - len(votes) when counted, else 0
    unknown_options: tuple[str, ...] = ()  # options that need a person
    source: str = "machine"  # "machine" | "adjudicated"


@dataclass(frozen=True, slots=True)
class CardHints:
    """What a batch or a person states about cards (``--style``, ``identify``...)."""

    style: str | None = None
    page: int | None = None
    precinct: str | None = None
    kind: CardKind | None = None
    serial: str | None = None
    style_is_hypothesis: bool = False  # a guess to verify (an original read with its duplicate's style)


@dataclass(frozen=True, slots=True)
class ReadCard:
    """A card the machine could register and score. ``reasons`` lists what a person
    must still look at (marginal marks, write-ins, no precinct, kind unknown...)."""

    style: str
    page: int
    precinct: str | None
    registration: Registration
    targets: tuple[TargetReading, ...]
    contests: tuple[ContestReading, ...]
    reasons: tuple[Reason, ...] = ()
    style_source: str = "code"  # "code" | "reference" | "hint"


@dataclass(frozen=True, slots=True)
class MachinePrintedCard:
    """A BMD summary card or VVPAT record read from its SPV1 code (issue 3 reads the text)."""

    record: MachineRecord
    contests: tuple[ContestReading, ...]
    reasons: tuple[Reason, ...] = ()
    printed_text: str | None = None


@dataclass(frozen=True, slots=True)
class UnreadableCard:
    reason: Reason
    detail: str  # a sentence for a person, naming what was looked for


CardInterpretation: TypeAlias = ReadCard | MachinePrintedCard | UnreadableCard


@dataclass(frozen=True, slots=True)
class CardSource:
    """Where a card came from. ``card_id`` is the CVR UniqueId (contract section 5)."""

    card_id: str
    sha256: str  # of the whole file
    path: str  # as ingest found it
    page_index: int  # 1-based page of a multi-page file
    page_count: int
    batch: str


@dataclass(frozen=True, slots=True)
class InterpretedCard:
    """One card after interpretation, ready to store: what ingest produces per card."""

    source: CardSource
    kind: CardKind
    label: PairingLabel | None
    card_code: CardCode | None
    interpretation: CardInterpretation
    codes: tuple[DecodedCode, ...] = field(default=())
    seconds: float = 0.0
