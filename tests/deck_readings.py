"""Every card of a renderer's deck read as ingest reads it (issue 8): shared by the tests of the
independent renderers, which then compare each reading with the card's truth entry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scanpipe.classify import load_thresholds
from scanpipe.election import load_election
from scanpipe.interpret import InterpretContext, interpret_file, load_references
from scanpipe.types import CardHints, CardInterpretation


def read_deck(deck: Path) -> list[tuple[dict[str, Any], CardInterpretation]]:
    """``(truth entry, interpretation)`` of every card ``deck/expected.json`` lists, against the
    deck's election; a file of several pages (a sheet's front and back) is read once."""
    truth = json.loads((deck / "expected.json").read_text())
    election = load_election(deck / truth["election"])
    context = InterpretContext(election, load_thresholds(), load_references(election))
    files: dict[str, list[Any]] = {}
    out = []
    for card in truth["cards"]:
        if card["file"] not in files:
            files[card["file"]] = interpret_file(str(deck / card["file"]), context, CardHints(), "t")
        out.append((card, files[card["file"]][card["page_of_file"] - 1].interpretation))
    return out
