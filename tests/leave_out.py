"""A deck's cards of one style read against its election without that style (issue 8, bad
input: a card of a style the election lacks must be queued, never read as its neighbour)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scanpipe.classify import load_thresholds
from scanpipe.election import load_election
from scanpipe.interpret import InterpretContext, interpret_file, load_references
from scanpipe.types import CardHints, CardInterpretation


def read_without_style(deck: Path, style: str) -> list[tuple[dict[str, Any], CardInterpretation]]:
    """Each truth entry of ``style``'s cards in ``deck`` (a folder with ``expected.json``) with
    its reading against the deck's election less that style (written beside it)."""
    truth = json.loads((deck / "expected.json").read_text())
    definition = json.loads((deck / truth["election"]).read_text())
    definition["ballot_styles"] = [s for s in definition["ballot_styles"] if s["id"] != style]
    lacking = (deck / truth["election"]).with_name(f"election-without-{style}.json")
    lacking.write_text(json.dumps(definition))
    election = load_election(lacking)
    context = InterpretContext(election, load_thresholds(), load_references(election, cache=False))
    cards = [c for c in truth["cards"] if c["style"] == style]
    assert cards, f"the deck has no card of {style}"
    return [(card, interpret_file(str(deck / card["file"]), context, CardHints(), "t")[card["page_of_file"] - 1].interpretation)
            for card in cards]
