"""Alembic environment of scanpipe. Run through :meth:`scanpipe.store.Store.migrate`, which
hands over an open connection (``config.attributes["connection"]``); no alembic.ini is needed."""

from __future__ import annotations

from alembic import context

from scanpipe.store.models import Base

config = context.config
connection = config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run scanpipe migrations through scanpipe.store.Store.migrate()")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=True,  # SQLite cannot ALTER most things: rebuild tables in batch mode
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
