"""Builders shared by the review tests (no tests here): a small store with queued cards and
accounts, a logged-in test client, and the app served on a free port."""

from __future__ import annotations

import hashlib
import re
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np
from argon2 import PasswordHasher
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select, update

from scanpipe.review import accounts, create_app
from scanpipe.review.accounts import add_user, approve_user
from scanpipe.review.index import refresh_all
from scanpipe.store import ledger
from scanpipe.store.models import card_table
from scanpipe.store.repository import Store
from scanpipe.types import Election, MarkStatus
from scanpipe.workflow import init_election
from tests.helpers import read_card, unreadable_card

# argon2id at its production cost takes ~0.1 s a hash; the tests use a cheap one (same code path).
accounts._HASHER = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)

ELECTION = Path(__file__).parent.parent / "fixtures" / "ballot_images" / "election" / "election.json"
PASSWORDS = {"alice": "alice-password", "bob": "bob-password", "carol": "carol-password", "dave": "dave-password",
             "erin": "erin-password", "olga": "olga-password", "root": "root-password", "ruth": "ruth-password"}
ROLES = {"root": "admin", "ruth": "admin", "alice": "auditor", "bob": "auditor", "carol": "board", "dave": "board", "erin": "board",
         "olga": "observer"}
SETUP_ADMINS = ("root", "ruth")  # the first two accounts: administrators added at set-up; they add and approve the others
MARGINAL = "a" * 64  # gov: gov-a unclear
MARGINAL_2 = "b" * 64  # gov: gov-b unclear
CLEAN = "c" * 64  # gov-b read as a vote


def _png_bytes() -> bytes:
    image = np.full((220, 170), 255, np.uint8)
    cv2.rectangle(image, (20, 40), (40, 52), 0, 2)
    return bytes(cv2.imencode(".png", image)[1])


PNG = _png_bytes()
UNREADABLE = hashlib.sha256(PNG).hexdigest()  # a real card id: identify reads the file again


@dataclass
class ReviewWorld:
    store: Store
    election: Election
    app: Flask
    folder: Path


def _png(path: Path) -> Path:
    path.write_bytes(PNG)
    return path


_TEMPLATE: dict[str, Path] = {}


def build_world(tmp_path: Path) -> ReviewWorld:
    """A migrated SQLite store with the fixture election, four cards, accounts; index built.
    Built once per process (hashing seven passwords and loading the election take a while),
    then copied for each test."""
    if "db" not in _TEMPLATE:
        folder = Path(tempfile.mkdtemp(prefix="scanpipe-review-"))
        _build(folder)
        _TEMPLATE["db"] = folder
    shutil.copy(_TEMPLATE["db"] / "review.db", tmp_path / "review.db")
    shutil.copy(_TEMPLATE["db"] / "card.png", tmp_path / "card.png")
    store = Store.open(f"sqlite:///{tmp_path / 'review.db'}")
    with store._write() as conn:  # the cards point at this test's copy of the image (a change the audit log records)
        ledger.before(conn, "card", conn.execute(select(card_table.c.card_id)).scalars().all())
        conn.execute(update(card_table).values(path=str(tmp_path / "card.png")))
    return ReviewWorld(store, store.current_election(), create_app(store), tmp_path)


def _build(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'review.db'}")
    store.migrate()
    election, _ = init_election(store, ELECTION)
    image = _png(tmp_path / "card.png")
    cards = [read_card(MARGINAL, election, "S1", "P01", {"gov": {"gov-a": MarkStatus.UNKNOWN}}),
             read_card(MARGINAL_2, election, "S1", "P01", {"gov": {"gov-b": MarkStatus.UNKNOWN}}),
             read_card(CLEAN, election, "S1", "P01", {"gov": {"gov-b": MarkStatus.YES}}),
             unreadable_card(UNREADABLE)]
    store.save_cards([replace(c, source=replace(c.source, path=str(image), sha256=UNREADABLE)) for c in cards])  # all are card.png
    for name in SETUP_ADMINS:
        add_user(store, name, "admin", PASSWORDS[name])
    for name, role in ROLES.items():
        if name not in SETUP_ADMINS:
            add_user(store, name, role, PASSWORDS[name], actor="root")
            approve_user(store, name, approver="ruth")
    refresh_all(store)
    store.close()


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None, "no CSRF field on the page"
    return found.group(1)


def form_token_of(html: str, contest: str | None = None) -> str:
    """The one-time token of the decision form for ``contest`` (the first form when None)."""
    start = html.index(f'data-contest="{contest}"') if contest else 0
    found = re.search(r'name="form_token" value="([^"]+)"', html[start:])
    assert found is not None
    return found.group(1)


def login(app: Flask, user: str) -> FlaskClient:
    client = app.test_client()
    page = client.get("/login")
    r = client.post("/login", data={"csrf": csrf_of(page.text), "username": user, "password": PASSWORDS[user]})
    assert r.status_code == 302, r.text
    return client


def decide(client: FlaskClient, card_id: str, contest: str, votes: list[str], rule: str = "md-fill") -> tuple[int, str]:
    page = client.get(f"/card/{card_id}")
    assert page.status_code == 200, page.text
    data = {"csrf": csrf_of(page.text), "form_token": form_token_of(page.text, contest), "contest": contest,
            "votes": votes, "rule": rule}
    if not votes:
        data["novote"] = "1"
    r = client.post(f"/card/{card_id}/decide", data=data)
    return r.status_code, r.text


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(app: Flask) -> Iterator[str]:
    """The app on 127.0.0.1 on a free port in a thread; yields its base URL."""
    import logging

    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    server = make_server("127.0.0.1", free_port(), app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(5)


def add_mismatched_pair(world: ReviewWorld, serial: str = "A0042") -> None:
    """A duplicate reading gov-a and its original reading gov-b; reconciled, index rebuilt."""
    from scanpipe.reconcile.service import reconcile
    from scanpipe.types import CardKind, PairingLabel

    def labelled(seed: str, kind: CardKind, option: str):
        card = read_card(seed * 64, world.election, "S1", "P01", {"gov": {option: MarkStatus.YES}}, kind=kind)
        return replace(card, label=PairingLabel(kind, serial, serial, None), source=replace(card.source, path=str(world.folder / "card.png"), sha256=UNREADABLE))

    world.store.save_cards([labelled("1", CardKind.DUPLICATE, "gov-a"), labelled("2", CardKind.ORIGINAL, "gov-b")])
    reconcile(world.store)
    refresh_all(world.store)
