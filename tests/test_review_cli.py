"""``scanpipe user add|disable|list`` and the review app's accounts."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from scanpipe.cli import cli
from scanpipe.cli_review import register
from scanpipe.review.accounts import login
from scanpipe.store.repository import Store
from tests.test_review_support import accounts  # noqa: F401  (the cheap password hasher)

if "user" not in cli.commands:
    register(cli)


def test_user_add_list_disable(tmp_path: Path) -> None:
    from datetime import timedelta

    url = f"sqlite:///{tmp_path / 'u.db'}"
    Store.open(url).migrate()
    runner = CliRunner()
    added = runner.invoke(cli, ["--db", url, "user", "add", "ann", "--role", "auditor", "--password-stdin"], input="a-long-password\n")
    assert added.exit_code == 0 and "user ann added (auditor)" in added.output
    short = runner.invoke(cli, ["--db", url, "user", "add", "ben", "--role", "auditor", "--password-stdin"], input="short\n")
    assert short.exit_code != 0 and "at least 10 characters" in str(short.exception or short.output)
    twice = runner.invoke(cli, ["--db", url, "user", "add", "ann", "--role", "admin", "--password-stdin"], input="a-long-password\n")
    assert twice.exit_code != 0 and "exists already" in str(twice.exception or twice.output)
    assert runner.invoke(cli, ["--db", url, "user", "list"]).output == "ann\tauditor\tactive\n"
    store = Store.open(url)
    assert login(store, "ann", "a-long-password", "t", idle=timedelta(minutes=5), absolute=timedelta(hours=1)) is not None
    assert runner.invoke(cli, ["--db", url, "user", "disable", "ann"]).exit_code == 0
    assert runner.invoke(cli, ["--db", url, "user", "list"]).output == "ann\tauditor\tdisabled\n"
    assert login(store, "ann", "a-long-password", "t", idle=timedelta(minutes=5), absolute=timedelta(hours=1)) is None
    stored = store.events("user_added")[0]
    assert stored.detail == {"user": "ann", "role": "auditor"} and stored.hash is not None
    assert "a-long-password" not in str([e.detail for e in store.events()])
