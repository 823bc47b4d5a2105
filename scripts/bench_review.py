#!/usr/bin/env python3
"""Benchmark of the review pages: with N cards and M queued items in the store, how long the
queue, card and pair pages take, server time to the last byte (p50 / p95 / max); and what
reading every card (``standing``) and reconciling one serial (a pair decision) cost there.

Synthetic rows go straight into the store (cards through ``Store.save_cards``, pairs and
review index rows inserted directly), so the setup takes a minute or two, not hours.

    /work/venv/bin/python scripts/bench_review.py [--cards 100000] [--items 10000] [--db URL]
"""

from __future__ import annotations

import argparse
import http.client
import re
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scanpipe.review import create_app
from scanpipe.review.accounts import add_user, approve_user
from scanpipe.store.models import pair_table, utcnow
from scanpipe.store.models_review import review_item_table
from scanpipe.store.repository import Store
from scanpipe.types import CardKind, MarkStatus, PairingLabel
from scanpipe.workflow import init_election
from tests.helpers import read_card
from tests.test_review_support import ELECTION, serving

PRECINCTS = ("P01", "P02")


def populate(store: Store, n_cards: int, n_items: int, image: Path) -> tuple[list[str], list[str]]:
    """Cards, pairs (one in five queued items) and the review index; returns queued ids."""
    election, _ = init_election(store, ELECTION)
    n_pairs = n_items // 5
    card_items, serials = [], []
    chunk = []
    started = time.perf_counter()
    for i in range(n_cards):
        cid = f"{i:064x}"
        marginal = i < n_items - n_pairs
        marks = {"gov": {"gov-a": MarkStatus.UNKNOWN if marginal else MarkStatus.YES}}
        kind = CardKind.BALLOT
        pair_at = i - (n_items - n_pairs)
        label = None
        if 0 <= pair_at < 2 * n_pairs:
            kind = CardKind.DUPLICATE if pair_at % 2 == 0 else CardKind.ORIGINAL
            label = PairingLabel(kind, f"S{pair_at // 2:06d}", f"S{pair_at // 2:06d}", None)
        card = read_card(cid, election, "S1", PRECINCTS[i % 2], marks, kind=kind)
        chunk.append(replace(card, label=label, source=replace(card.source, path=str(image))))
        if marginal:
            card_items.append(cid)
        if len(chunk) == 5000:
            store.save_cards(chunk)
            chunk = []
            print(f"  {i + 1} cards ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    store.save_cards(chunk)
    now = utcnow()
    base = n_items - n_pairs
    pairs = [{"serial": f"S{k:06d}", "status": "mismatch", "precinct": PRECINCTS[k % 2], "duplicates": [f"{base + 2 * k:064x}"],
              "originals": [f"{base + 2 * k + 1:064x}"], "contests": ["gov"], "counted": "none", "updated_at": now,
              "detail": {"differences": [{"contest": "gov", "difference": "votes", "duplicate": None, "original": None}],
                         "base_status": "mismatch", "waiting": ["gov"], "decided": {}, "auditors": [], "style": "S1"}}
             for k in range(n_pairs)]
    serials = [p["serial"] for p in pairs]
    rows = [{"item": cid, "reason": "marginal_mark", "kind": "card", "precinct": PRECINCTS[int(cid, 16) % 2], "batch": "b1",
             "contests": ["gov"], "units": 1, "state": "open", "first_auditors": [], "updated_at": now} for cid in card_items]
    rows += [{"item": p["serial"], "reason": "pair_mismatch", "kind": "pair", "precinct": p["precinct"], "batch": "b1",
              "contests": ["gov"], "units": 1, "state": "open", "first_auditors": [], "updated_at": now} for p in pairs]
    with store._write() as conn:
        conn.execute(pair_table.insert(), pairs)
        conn.execute(review_item_table.insert(), rows)
    return card_items, serials


def measure(base: str, cookie: str, paths: list[str]) -> list[float]:
    """Milliseconds from sending each request to reading its last byte."""
    host, port = base.removeprefix("http://").split(":")
    out = []
    conn = http.client.HTTPConnection(host, int(port))
    for path in paths:
        t0 = time.perf_counter()
        conn.request("GET", path, headers={"Cookie": cookie})
        response = conn.getresponse()
        body = response.read()
        out.append((time.perf_counter() - t0) * 1000)
        assert response.status == 200, (path, response.status, body[:300])
    conn.close()
    return out


def login_cookie(base: str) -> str:
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port))
    conn.request("GET", "/login")
    r = conn.getresponse()
    page = r.read().decode()
    login_cookie_value = r.getheader("Set-Cookie", "").split(";")[0]
    token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    body = f"csrf={token}&username=bench&password=bench-password"
    conn.request("POST", "/login", body=body, headers={"Content-Type": "application/x-www-form-urlencoded", "Cookie": login_cookie_value})
    r = conn.getresponse()
    r.read()
    assert r.status == 302, r.status
    return r.getheader("Set-Cookie", "").split(";")[0]


def timed_standing(store: Store, serial: str) -> None:
    """What counting costs at this size: reading every card, and reconciling one serial
    (what a pair decision does), each the median of 3."""
    from scanpipe.reconcile.service import reconcile
    from scanpipe.workflow import standing

    for name, call in (("standing (every card)", lambda: standing(store)),
                       (f"reconcile one serial ({serial})", lambda: reconcile(store, serial=serial))):
        times = []
        for _ in range(3):
            t = time.perf_counter()
            call()
            times.append(time.perf_counter() - t)
        print(f"{name:30} median {statistics.median(times) * 1000:8.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=100_000)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--db", default=None, help="database URL (default: a new SQLite file in a temp folder)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="scanpipe-bench-review-"))
    store = Store.open(args.db or f"sqlite:///{folder / 'bench.db'}")
    store.migrate()
    image = folder / "card.png"
    image.write_bytes((ROOT / "fixtures/ballot_images/defaced/good.png").read_bytes())
    t0 = time.perf_counter()
    cards, serials = populate(store, args.cards, args.items, image)
    for admin in ("bench-admin-a", "bench-admin-b"):  # set-up: two administrators; one adds, the other approves
        add_user(store, admin, "admin", f"{admin}-password")
    add_user(store, "bench", "auditor", "bench-password", actor="bench-admin-a")
    approve_user(store, "bench", approver="bench-admin-b")
    print(f"setup: {store.count_cards()} cards, {len(cards) + len(serials)} queued items in {time.perf_counter() - t0:.0f} s")
    timed_standing(store, serials[0])
    app = create_app(store)
    n = args.requests
    with serving(app) as base:
        cookie = login_cookie(base)
        pages = {
            "queue (page 1)": ["/queue"] * n,
            "queue (filtered, deep page)": [f"/queue?precinct=P02&reason=marginal_mark&page={20 + i % 50}" for i in range(n)],
            "card": [f"/card/{cards[(i * 37) % len(cards)]}" for i in range(n)],
            "pair": [f"/pair/{serials[(i * 13) % len(serials)]}" for i in range(n)],
        }
        measure(base, cookie, ["/queue", f"/card/{cards[0]}", f"/pair/{serials[0]}"])  # warm up
        print(f"{'page':30} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
        for name, paths in pages.items():
            ms = sorted(measure(base, cookie, paths))
            p95 = ms[int(0.95 * (len(ms) - 1))]
            print(f"{name:30} {statistics.median(ms):8.1f} {p95:8.1f} {ms[-1]:8.1f}")
    store.close()


if __name__ == "__main__":
    main()
