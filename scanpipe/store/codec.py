"""Pure conversion between :class:`InterpretedCard` values and table rows (plain dicts).

``rows_to_card(*card_to_rows(card))`` gives back an equal card: tuples come back as tuples,
enums as enums, floats bit for bit (JSON and DOUBLE both keep them exactly).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, assert_never

from scanpipe.types import (
    CardCode,
    CardKind,
    CardSource,
    CodeSymbology,
    ContestOutcome,
    ContestReading,
    DamageCause,
    DecodedCode,
    InterpretedCard,
    MachinePrintedCard,
    MachineRecord,
    MarkStatus,
    PairingLabel,
    ReadCard,
    Reason,
    Registration,
    TargetReading,
    TargetScore,
    UnreadableCard,
)

Row = Mapping[Any, Any]  # a RowMapping or a dict

STATUS_READ = "read"
STATUS_MACHINE_PRINTED = "machine_printed"
STATUS_UNREADABLE = "unreadable"


# --------------------------------------------------------------------------------------
# value -> rows


def card_to_rows(card: InterpretedCard) -> tuple[dict[str, Any], list[tuple[Any, ...]], list[dict[str, Any]]]:
    """``(card row, target score rows, contest reading rows)`` without the store's own
    columns (times, sequence, thresholds source). Score rows are tuples in
    :data:`SCORE_COLUMNS` order (the hot path: about 40 per card)."""
    src = card.source
    row: dict[str, Any] = {
        "card_id": src.card_id, "sha256": src.sha256, "path": src.path,
        "page_index": src.page_index, "page_count": src.page_count, "batch": src.batch,
        "kind": card.kind.value, "card_code": _card_code_json(card.card_code),
        "codes": [_code_json(c) for c in card.codes], "seconds": float(card.seconds),
        **_label_columns(card.label), **_interpretation_columns(card.interpretation),
    }
    interp = card.interpretation
    targets = interp.targets if isinstance(interp, ReadCard) else ()
    contests = interp.contests if not isinstance(interp, UnreadableCard) else ()
    scores = [_score_row(src.card_id, i, t) for i, t in enumerate(targets)]
    readings = [_reading_row(src.card_id, i, c) for i, c in enumerate(contests)]
    return row, scores, readings


def _label_columns(label: PairingLabel | None) -> dict[str, Any]:
    if label is None:
        return {"label_kind": None, "label_serial": None, "base_serial": None, "label_revision": None}
    return {"label_kind": label.kind.value, "label_serial": label.serial,
            "base_serial": label.base_serial, "label_revision": label.revision}


_EMPTY_INTERPRETATION: dict[str, Any] = {
    "reason": None, "detail": None, "reasons": [], "style": None, "page": None, "precinct": None,
    "style_source": None, "registration": None, "machine_record": None, "printed_text": None,
}


def _interpretation_columns(interp: ReadCard | MachinePrintedCard | UnreadableCard) -> dict[str, Any]:
    cols = dict(_EMPTY_INTERPRETATION)
    match interp:
        case ReadCard():
            cols.update(status=STATUS_READ, reasons=[r.value for r in interp.reasons], style=interp.style,
                        page=interp.page, precinct=interp.precinct, style_source=interp.style_source,
                        registration=_registration_json(interp.registration))
        case MachinePrintedCard():
            rec = interp.record
            cols.update(status=STATUS_MACHINE_PRINTED, reasons=[r.value for r in interp.reasons],
                        style=rec.style, precinct=rec.precinct, printed_text=interp.printed_text,
                        machine_record={"election": rec.election, "style": rec.style, "precinct": rec.precinct,
                                        "selections": [[c, list(opts)] for c, opts in rec.selections]})
        case UnreadableCard():
            cols.update(status=STATUS_UNREADABLE, reason=interp.reason.value, detail=interp.detail)
        case _:
            assert_never(interp)
    return cols


def _registration_json(reg: Registration) -> dict[str, Any]:
    out = {"homography": list(reg.homography), "method": reg.method, "rotated_180": reg.rotated_180,
           "dpi": reg.dpi, "anchors_found": reg.anchors_found, "residual_px": reg.residual_px}
    if reg.quarter_turned:  # absent: as every card stored before cards fed sideways were read
        out["quarter_turned"] = True
    return out


def _card_code_json(code: CardCode | None) -> dict[str, Any] | None:
    if code is None:
        return None
    return {"election": code.election, "style": code.style, "precinct": code.precinct, "page": code.page}


def _code_json(code: DecodedCode) -> dict[str, Any]:
    return {"symbology": code.symbology.value, "text": code.text, "corners_px": [list(p) for p in code.corners_px]}


SCORE_COLUMNS = (
    "card_id", "contest", "option", "position", "score", "fill_score", "stroke_score", "ring_score",
    "damage_score", "write_in_score", "box_x", "box_y", "box_w", "box_h", "shift_x", "shift_y", "status", "why",
    "dot_in", "damage_cause",
)
"""The columns of a target score row, in the order of the tuples :func:`card_to_rows` gives."""


def _score_row(card_id: str, position: int, reading: TargetReading) -> tuple[Any, ...]:
    s = reading.score
    return (card_id, s.contest, s.option, position, s.score, s.fill_score, s.stroke_score, s.ring_score,
            s.damage_score, s.write_in_score, *s.box_px, *s.shift_px, reading.status.value, reading.why, s.dot_in,
            None if s.damage_cause is None else s.damage_cause.value)


def _reading_row(card_id: str, position: int, c: ContestReading) -> dict[str, Any]:
    return {"card_id": card_id, "contest": c.contest, "position": position, "votes": list(c.votes),
            "outcome": c.outcome.value, "undervotes": c.undervotes,
            "unknown_options": list(c.unknown_options), "source": c.source}


# --------------------------------------------------------------------------------------
# rows -> value


def rows_to_card(row: Row, scores: Sequence[Sequence[Any]], readings: Sequence[Row]) -> InterpretedCard:
    """Rebuild the card; ``scores`` (tuples in :data:`SCORE_COLUMNS` order) and ``readings``
    must be this card's rows, in position order."""
    source = CardSource(card_id=row["card_id"], sha256=row["sha256"], path=row["path"],
                        page_index=row["page_index"], page_count=row["page_count"], batch=row["batch"])
    contests = tuple(_reading_value(r) for r in readings)
    return InterpretedCard(
        source=source, kind=_CARD_KIND[row["kind"]], label=_label_value(row),
        card_code=_card_code_value(row["card_code"]),
        interpretation=_interpretation_value(row, tuple(_score_value(s) for s in scores), contests),
        codes=tuple(_code_value(c) for c in row["codes"]), seconds=row["seconds"],
    )


def _interpretation_value(
    row: Row, targets: tuple[TargetReading, ...], contests: tuple[ContestReading, ...],
) -> ReadCard | MachinePrintedCard | UnreadableCard:
    status = row["status"]
    reasons = tuple(Reason(r) for r in row["reasons"])
    if status == STATUS_READ:
        return ReadCard(style=row["style"], page=row["page"], precinct=row["precinct"],
                        registration=_registration_value(row["registration"]), targets=targets,
                        contests=contests, reasons=reasons, style_source=row["style_source"])
    if status == STATUS_MACHINE_PRINTED:
        rec = row["machine_record"]
        record = MachineRecord(election=rec["election"], style=rec["style"], precinct=rec["precinct"],
                               selections=tuple((c, tuple(opts)) for c, opts in rec["selections"]))
        return MachinePrintedCard(record=record, contests=contests, reasons=reasons, printed_text=row["printed_text"])
    assert status == STATUS_UNREADABLE, f"unknown card status {status!r}"
    return UnreadableCard(reason=Reason(row["reason"]), detail=row["detail"])


def _label_value(row: Row) -> PairingLabel | None:
    if row["label_serial"] is None:
        return None
    return PairingLabel(kind=CardKind(row["label_kind"]), serial=row["label_serial"],
                        base_serial=row["base_serial"], revision=row["label_revision"])


def _card_code_value(data: dict[str, Any] | None) -> CardCode | None:
    if data is None:
        return None
    return CardCode(election=data["election"], style=data["style"], precinct=data["precinct"], page=data["page"])


def _code_value(data: dict[str, Any]) -> DecodedCode:
    return DecodedCode(symbology=CodeSymbology(data["symbology"]), text=data["text"],
                       corners_px=tuple((p[0], p[1]) for p in data["corners_px"]))


def _registration_value(data: dict[str, Any]) -> Registration:
    return Registration(homography=tuple(data["homography"]), method=data["method"],
                        rotated_180=data["rotated_180"], dpi=data["dpi"],
                        anchors_found=data["anchors_found"], residual_px=data["residual_px"],
                        quarter_turned=bool(data.get("quarter_turned", False)))


_MARK_STATUS = {m.value: m for m in MarkStatus}
_CARD_KIND = {k.value: k for k in CardKind}  # dict lookups: Enum(value) is slow over millions of rows
_OUTCOME = {o.value: o for o in ContestOutcome}
_DAMAGE_CAUSE = {c.value: c for c in DamageCause}


def _score_value(r: Sequence[Any]) -> TargetReading:
    """A target from a score row tuple in :data:`SCORE_COLUMNS` order (no per-row name lookups:
    loading 100,000 cards builds millions of these)."""
    (_, contest, option, _, score, fill, stroke, ring, damage, write_in, bx, by, bw, bh, sx, sy, status, why, dot, cause) = r
    value = TargetScore(contest=contest, option=option, score=score, fill_score=fill, stroke_score=stroke,
                        ring_score=ring, damage_score=damage, write_in_score=write_in, box_px=(bx, by, bw, bh),
                        shift_px=(sx, sy), dot_in=dot, damage_cause=None if cause is None else _DAMAGE_CAUSE[cause])
    return TargetReading(score=value, status=_MARK_STATUS[status], why=why)


def _reading_value(r: Row) -> ContestReading:
    return ContestReading(contest=r["contest"], votes=tuple(r["votes"]), outcome=_OUTCOME[r["outcome"]],
                          undervotes=r["undervotes"], unknown_options=tuple(r["unknown_options"]),
                          source=r["source"])


def stamp(row: dict[str, Any], *, now: datetime, thresholds_source: str | None, seq: int) -> dict[str, Any]:
    """The card row with the store's own columns filled in."""
    return {**row, "ingested_at": now, "interpreted_at": now, "thresholds_source": thresholds_source,
            "interpretation_seq": seq}
