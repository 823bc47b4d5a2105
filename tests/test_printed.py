"""Reading the printed selections of machine-printed records (OCR) and matching them to the code."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scanpipe.classify import load_thresholds
from scanpipe.election import load_election
from scanpipe.imaging import printed
from scanpipe.imaging.codes import parse_machine_record
from scanpipe.imaging.printed import compare_with_code, match_printed_lines, read_printed_selections, with_printed_check
from scanpipe.interpret import InterpretContext, read_machine_record
from scanpipe.synth.bmd import record_payload, render_bmd_card
from scanpipe.synth.scan import PROFILES, simulate_scan
from scanpipe.types import Reason

ELECTION = load_election(Path(__file__).resolve().parent.parent / "fixtures" / "ballot_images" / "pairs" / "election" / "election.json")
SELECTED = {"gov": ["gov-b"], "council": ["council-a", "council-d"], "judge": [], "q1": ["q1-for"], "q2": ["q2-against"]}


def test_ocr_lines_with_errors_match_titles_and_options_fuzzily() -> None:
    lines = ["OFFICIAL BALLOT SUMMARY", "Governor", "Ben Br0oks", "County Counci1", "Dara Diaz", "Gus Grant",
             "Retain Judge lvers?", "No selection", "Question 1", "For", "Question 2", "Against"]
    reading = match_printed_lines(lines, ELECTION, "S1")
    assert dict(reading.selections) == {"gov": ("gov-b",), "council": ("council-a", "council-d"), "judge": (),
                                        "q1": ("q1-for",), "q2": ("q2-against",)}
    assert reading.unmatched == ("OFFICIAL BALLOT SUMMARY",)


def test_a_contest_whose_text_is_missing_or_differs_is_a_disagreement() -> None:
    record = parse_machine_record(record_payload(ELECTION, "S1", "P01", SELECTED))
    lines = ["Governor", "Ada Alvarez", "County Council", "Dara Diaz", "Gus Grant", "Question 1", "For", "Question 2", "Against"]
    assert compare_with_code(match_printed_lines(lines, ELECTION, "S1"), record, ELECTION) == ("gov", "judge")


@pytest.mark.parametrize("printed_gov, disagree", [(["gov-b"], False), (["gov-c"], True)])
def test_a_scanned_record_upside_down_reads_and_flags_text_that_disagrees(printed_gov: list[str], disagree: bool, ocr_engine: None) -> None:
    rgb = render_bmd_card(ELECTION, "S1", "P01", SELECTED, 150, printed={**SELECTED, "gov": printed_gov})
    image, _ = simulate_scan(rgb, PROFILES["typical"], np.random.default_rng(3), dpi=150, fmt="png", flip180=True, color=False)
    reading = read_printed_selections(image, ELECTION, "S1", dpi=150)
    assert reading.contest("gov") == tuple(printed_gov)
    record = parse_machine_record(record_payload(ELECTION, "S1", "P01", SELECTED))
    card = read_machine_record(record, InterpretContext(ELECTION, load_thresholds()))
    checked = with_printed_check(image, card, ELECTION, dpi=150)
    assert (Reason.TEXT_CODE_DISAGREE in checked.reasons) is disagree
    assert "Governor" in checked.printed_text


def test_without_the_ocr_extra_a_record_is_queued_text_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)  # import fails as when not installed
    monkeypatch.setattr("scanpipe.imaging.printed._engine", getattr(printed._engine, "__wrapped__", printed._engine))
    rgb = render_bmd_card(ELECTION, "S1", "P01", SELECTED, 150)
    image, _ = simulate_scan(rgb, PROFILES["typical"], np.random.default_rng(3), dpi=150, fmt="png", color=False)
    card = read_machine_record(parse_machine_record(record_payload(ELECTION, "S1", "P01", SELECTED)), InterpretContext(ELECTION, load_thresholds()))
    checked = with_printed_check(image, card, ELECTION, dpi=150)
    assert Reason.TEXT_UNREAD in checked.reasons and checked.printed_text is None


def test_pairing_sticker_text_run_into_a_line_is_dropped_but_ocr_slips_are_kept() -> None:
    from scanpipe.imaging.printed import without_sticker_text

    assert without_sticker_text("Against ORG-S00350Q1U") == "Against"
    assert without_sticker_text("Fay Fischer -S00535B6S2") == "Fay Fischer"
    assert without_sticker_text("Ben Br0oks") == "Ben Br0oks"
    assert without_sticker_text("Demo County General 2026") == "Demo County General 2026"
    lines = ["Governor", "Ben Brooks", "County Council", "Dara Diaz", "Gus Grant ORG-S1234", "Retain Judge Ivers?",
             "No selection", "Question 1", "For", "Question 2", "Against DUP-A0042"]
    reading = match_printed_lines(lines, ELECTION, "S1")
    assert dict(reading.selections)["council"] == ("council-a", "council-d")
    assert dict(reading.selections)["q2"] == ("q2-against",)
