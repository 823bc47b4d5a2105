"""Alembic environment of scanpipe. Run through :meth:`scanpipe.store.Store.migrate`, which
hands over an open connection (``config.attributes["connection"]``); no alembic.ini is needed."""

from __future__ import annotations

from typing import Any, Literal

from alembic import context

from scanpipe.store.models import Base, UtcDateTime


def _render_item(kind: str, obj: Any) -> str | Literal[False]:
    """Revisions spell plain SQLAlchemy types, never scanpipe's own (they must not change)."""
    if kind == "type" and isinstance(obj, UtcDateTime):
        return "sa.DateTime(timezone=True)"
    return False


config = context.config
connection = config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run scanpipe migrations through scanpipe.store.Store.migrate()")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=True,  # SQLite cannot ALTER most things: rebuild tables in batch mode
    compare_type=True,
    render_item=lambda kind, obj, autogen: _render_item(kind, obj),
)
with context.begin_transaction():
    context.run_migrations()
