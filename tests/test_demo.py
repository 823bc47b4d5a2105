"""``scanpipe demo`` shows the job: duplicates with mismatches, an orphan and a conflict among
the cards, the papers, and how to open the review app with two demo accounts."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from scanpipe.demo import DEMO_ADMINS, DEMO_AUDITORS, run_demo
from scanpipe.review import accounts
from scanpipe.review.accounts import list_users
from scanpipe.store.repository import Store


@pytest.mark.slow
def test_the_demo_has_pairs_papers_and_review_accounts(tmp_path: Path) -> None:
    lines = run_demo(tmp_path / "demo", cards=3, seed=7, workers=1)
    text = "\n".join(lines)
    store = Store.open(f"sqlite:///{tmp_path / 'demo' / 'scanpipe.db'}")
    statuses = sorted(p.status for p in store.pairs())
    assert statuses == ["conflict", "match", "match", "match", "mismatch", "mismatch", "mismatch", "orphan_duplicate"]
    assert "8 of 8 serials have the status the generator intended" in text
    assert {u.username: u.role for u in list_users(store) if u.active} == {**{name: "auditor" for name in DEMO_AUDITORS},
                                                                          **{name: "admin" for name in DEMO_ADMINS}}
    assert "scanpipe review" in text and "http://127.0.0.1:8080/" in text
    passwords = dict(re.findall(r"^  ([\w-]+) +password (\S+)  \(", text, re.M))
    assert set(passwords) == {*DEMO_AUDITORS, *DEMO_ADMINS}
    for name, password in passwords.items():  # the printed passwords open the printed accounts
        assert accounts.login(store, name, password, "127.0.0.1", idle=timedelta(minutes=5), absolute=timedelta(hours=1)) is not None
    for paper in ("tally.html", "duplicates.html", "pull-list.html", "pairs.csv", "queue.json", "cvr.json"):
        assert (tmp_path / "demo" / paper).stat().st_size > 0, paper
    assert "serial used more than once" in (tmp_path / "demo" / "duplicates.html").read_text()
