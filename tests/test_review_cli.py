"""``scanpipe user add|approve|disable|list`` and the review app's accounts."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from scanpipe.cli import cli
from scanpipe.cli_review import register
from scanpipe.errors import ConfigError
from scanpipe.review.accounts import login
from scanpipe.store.repository import Store
from tests.test_review_support import accounts  # noqa: F401  (the cheap password hasher)

if "user" not in cli.commands:
    register(cli)


def test_user_add_list_disable(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'u.db'}"
    Store.open(url).migrate()
    runner = CliRunner()

    def add(name: str, role: str, lines: str, *extra: str):
        return runner.invoke(cli, ["--db", url, "user", "add", name, "--role", role, "--password-stdin", *extra], input=lines)

    first = add("ann", "auditor", "a-long-password\n")
    assert first.exit_code != 0 and "the first 2 accounts are administrators" in str(first.exception)
    assert add("root", "admin", "root-password\n").output == "user root added (admin, active)\n"
    assert add("ruth", "admin", "ruth-password\n").exit_code == 0
    alone = add("ann", "auditor", "a-long-password\n")
    assert alone.exit_code != 0 and "adding an account needs an administrator" in str(alone.exception)
    added = add("ann", "auditor", "a-long-password\nroot-password\n", "--as", "root")
    assert added.exit_code == 0 and "user ann added (auditor, awaiting approval)" in added.output
    short = add("ben", "auditor", "short\nroot-password\n", "--as", "root")
    assert short.exit_code != 0 and "at least 10 characters" in str(short.exception or short.output)
    twice = add("ann", "admin", "a-long-password\nroot-password\n", "--as", "root")
    assert twice.exit_code != 0 and "exists already" in str(twice.exception or twice.output)
    store = Store.open(url)
    with pytest.raises(ConfigError, match="awaits a second administrator's approval"):
        login(store, "ann", "a-long-password", "t", idle=timedelta(minutes=5), absolute=timedelta(hours=1))
    own = runner.invoke(cli, ["--db", url, "user", "approve", "ann", "--as", "root", "--password-stdin"], input="root-password\n")
    assert own.exit_code != 0 and "root added ann; a second administrator must approve it" in str(own.exception)
    ok = runner.invoke(cli, ["--db", url, "user", "approve", "ann", "--as", "ruth", "--password-stdin"], input="ruth-password\n")
    assert ok.exit_code == 0 and "approved by ruth (active)" in ok.output
    listed = runner.invoke(cli, ["--db", url, "user", "list"]).output.splitlines()
    assert listed == ["ann\tauditor\tactive\troot\truth", "root\tadmin\tactive\tset-up\tset-up", "ruth\tadmin\tactive\tset-up\tset-up"]
    assert login(store, "ann", "a-long-password", "t", idle=timedelta(minutes=5), absolute=timedelta(hours=1)) is not None
    assert runner.invoke(cli, ["--db", url, "user", "disable", "ann"]).exit_code == 0
    assert runner.invoke(cli, ["--db", url, "user", "list"]).output.splitlines()[0] == "ann\tauditor\tdisabled\troot\truth"
    assert login(store, "ann", "a-long-password", "t", idle=timedelta(minutes=5), absolute=timedelta(hours=1)) is None
    stored = store.events("user_added")[-1]
    assert stored.detail["user"] == "ann" and stored.detail["awaiting_approval"] and stored.actor == "root" and stored.hash is not None
    assert [e.detail["bootstrap"] for e in store.events("user_added")[:2]] == [True, True]
    assert not any(p in str([e.detail for e in store.events()]) for p in ("a-long-password", "root-password", "ruth-password"))
