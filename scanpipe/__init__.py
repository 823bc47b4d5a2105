"""scanpipe: read recount ballot cards, reconcile duplicates with originals, tally."""

__version__ = "0.1.0"
