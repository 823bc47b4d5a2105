"""The demo's recount: the miscount it stages, what its auditors decide, and the demo end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanpipe.demo_recount import miscount, people_read
from tests.helpers import tiny_election


def test_the_staged_miscount_puts_the_runner_up_ahead_or_level() -> None:
    e = tiny_election()
    certified = {(p, "gov", o): 0 for p in ("P01", "P02", "P03") for o in ("gov-a", "gov-b", "gov-w")}
    certified.update({("P01", "gov", "gov-a"): 10, ("P02", "gov", "gov-a"): 3, ("P01", "gov", "gov-b"): 6, ("P03", "gov", "gov-b"): 2})
    leader, second, changed = miscount(certified, e, "gov")
    a = sum(n for (_, _, o), n in certified.items() if o == "gov-a")
    b = sum(n for (_, _, o), n in certified.items() if o == "gov-b")
    assert (leader, second, changed) == ("gov-a", "gov-b", ["P01"]) and b >= a and b - a <= 1


def test_the_demo_auditors_read_circled_and_partial_marks_as_votes_and_erasures_as_none() -> None:
    card = {"contests": {"gov": {"votes": [], "outcome": "pending"}},
            "targets": [{"contest": "gov", "option": "gov-a", "mark": "circled", "intent": "ambiguous"},
                        {"contest": "gov", "option": "gov-b", "mark": "erasure", "intent": "ambiguous"}]}
    assert people_read(card, "gov")[0] == ["gov-a"]


@pytest.mark.slow
def test_the_demo_runs_a_recount_end_to_end(tmp_path: Path) -> None:
    from scanpipe.demo import run_demo

    lines = run_demo(tmp_path / "demo", cards=12, seed=5, workers=1)
    text = "\n".join(lines)
    assert "petition by" in text and "accepted" in text and "outcome changed: yes" in text, text
    report = json.loads((tmp_path / "demo" / "recount-report" / "report.json").read_text())
    assert report["outcome_changed"] and any(r["change"] for r in report["precincts"])
    assert (tmp_path / "demo" / "recount-report" / "report.pdf").read_bytes().startswith(b"%PDF-")
