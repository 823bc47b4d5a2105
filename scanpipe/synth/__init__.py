"""Synthetic ballots: a demo definition, rendered cards, catalogued marks, simulated scans, decks.

``definition`` writes the demo election; ``render`` prints blank cards; ``marks`` draws voter
marks and damage (docs/mark-catalogue.md); ``scan`` simulates the scanner and writes files; ``deck``
puts them together with exact expected readings (``expected.json``).
"""

from scanpipe.synth.deck import generate_deck
from scanpipe.synth.definition import write_demo_election

__all__ = ["generate_deck", "write_demo_election"]
