"""The store: SQLAlchemy models, the repository (the only code opening database sessions)
and Alembic migrations. ``Store.open(url)`` then ``migrate()`` gives a ready database."""

from scanpipe.store.records import (
    BatchRecord,
    DecisionRecord,
    DecisionState,
    ElectionRecord,
    EventRecord,
    ItemKind,
    SkippedFile,
    StoredCard,
)
from scanpipe.store.repository import Store, election_from_json

__all__ = [
    "BatchRecord",
    "DecisionRecord",
    "DecisionState",
    "ElectionRecord",
    "EventRecord",
    "ItemKind",
    "SkippedFile",
    "Store",
    "StoredCard",
    "election_from_json",
]
