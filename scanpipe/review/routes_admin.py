"""Tallies (observers), accounts, the audit log and the index refresh (administrators)."""

from __future__ import annotations

import threading
from typing import Any

from flask import Flask, Response, g, redirect, render_template, request, url_for
from sqlalchemy import func, select

from scanpipe.audit import append_event, verify_chain
from scanpipe.audit_verify import tally_digest
from scanpipe.review import accounts, index
from scanpipe.review.app import election, refuse, store
from scanpipe.review.security import ADMIN, BOARD, OBSERVER, allow
from scanpipe.store.models import (
    batch_table,
    card_table,
    decision_table,
    event_table,
    pair_table,
    utcnow,
)
from scanpipe.store.models_review import ROLES
from scanpipe.tally import TallyRow, tally_csv

_TALLY_LOCK = threading.Lock()
_TALLY_CACHE: dict[str, tuple[tuple[Any, ...], list[TallyRow]]] = {}


def _data_version() -> tuple[Any, ...]:
    """Changes whenever what counts may have changed: cards, readings, decisions, pairs, voids."""
    with store()._read() as conn:
        cards = conn.execute(select(func.count(), func.max(card_table.c.interpreted_at)).select_from(card_table)).one()
        decisions = conn.execute(select(func.count(), func.max(decision_table.c.id)).select_from(decision_table)).one()
        pairs = conn.execute(select(func.max(pair_table.c.updated_at))).scalar()
        voids = conn.execute(select(func.count()).select_from(batch_table).where(batch_table.c.voided_at.is_not(None))).scalar()
    return (store().url, tuple(cards), tuple(decisions), pairs, voids)


def tally_rows() -> list[TallyRow]:
    """The library's tally, computed again only when the data changed."""
    from scanpipe.workflow import tally

    version = _data_version()
    with _TALLY_LOCK:
        cached = _TALLY_CACHE.get(store().url)
        if cached is not None and cached[0] == version:
            return cached[1]
        rows = tally(store())
        _TALLY_CACHE[store().url] = (version, rows)
        return rows


@allow(OBSERVER, BOARD, ADMIN)
def tally_page() -> Any:
    from scanpipe.recount.service import active_scope
    from scanpipe.reports.model import build_tally

    rows, scope = tally_rows(), active_scope(store())
    if scope is not None and request.args.get("all") != "1":  # an open recount case: its contest in its precincts
        rows = [r for r in rows if r.precinct in scope.precincts and r.contest == scope.contest]
    return render_template("tally.html", report=build_tally(election(), rows), progress=index.progress(store()),
                           scope=scope if request.args.get("all") != "1" else None)


PAPERS = {("tally", "html"), ("tally", "pdf"), ("duplicates", "html"), ("duplicates", "pdf"), ("duplicates", "csv")}


@allow(OBSERVER, BOARD, ADMIN)
def paper(name: str, fmt: str) -> Any:
    """A printable paper (the same as ``scanpipe report``): the tally or the duplicates report."""
    from scanpipe.reports import printable
    from scanpipe.reports.model import build_duplicates, build_tally

    if (name, fmt) not in PAPERS:
        return refuse(404, f"there is no printable {name}.{fmt}")
    if name == "tally":
        tally_report = build_tally(election(), tally_rows())
        body: str | bytes = printable.tally_pdf(tally_report) if fmt == "pdf" else printable.tally_html(tally_report)
    else:
        dup_report = build_duplicates(store(), election())
        body = (printable.duplicates_pdf(dup_report) if fmt == "pdf" else printable.duplicates_html(dup_report) if fmt == "html"
                else printable.duplicates_csv(dup_report))
    with store()._write() as conn:
        append_event(conn, "export", {"what": f"{name}.{fmt}"}, g.session.user.username, utcnow())
    mimetype = {"html": "text/html", "pdf": "application/pdf", "csv": "text/csv"}[fmt]
    response = Response(body, mimetype=mimetype)
    if fmt != "html":
        response.headers["Content-Disposition"] = f"attachment; filename={name}.{fmt}"
    else:  # a paper to print: its own inline styles, nothing else
        response.headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"
    return response


@allow(OBSERVER, BOARD, ADMIN)
def tally_export() -> Any:
    rows = tally_rows()
    with store()._write() as conn:
        append_event(conn, "export", {"what": "tally.csv", "rows": len(rows)}, g.session.user.username, utcnow())
        append_event(conn, "tally", {"sha256": tally_digest(rows), "rows": len(rows), "out": "review tally.csv"}, g.session.user.username, utcnow())
    response = Response(tally_csv(rows), mimetype="text/csv")
    response.headers["Content-Disposition"] = "attachment; filename=tally.csv"
    return response


@allow(ADMIN)
def users() -> Any:
    return render_template("users.html", users=accounts.list_users(store()), roles=ROLES, lockouts=accounts.lockouts(store()))


@allow(ADMIN)
def user_approve(username: str) -> Any:
    """A second administrator approves an account (never the one who added it)."""
    accounts.approve_user(store(), username, approver=g.session.user.username)
    return redirect(url_for("users"))


@allow(ADMIN)
def user_unlock(username: str) -> Any:
    """Let an account try to log in again (from one address, or from everywhere)."""
    accounts.unlock_user(store(), username, remote=request.form.get("remote") or None, actor=g.session.user.username)
    return redirect(url_for("users"))


@allow(ADMIN)
def user_add() -> Any:
    form = request.form
    accounts.add_user(store(), form.get("username", "").strip(), form.get("role", ""), form.get("password", ""), actor=g.session.user.username)
    return redirect(url_for("users"))


@allow(ADMIN)
def user_disable(username: str) -> Any:
    if username == g.session.user.username:
        return refuse(400, "You cannot disable your own account here; use `scanpipe user disable`.")
    accounts.disable_user(store(), username, actor=g.session.user.username)
    return redirect(url_for("users"))


@allow(ADMIN)
def audit() -> Any:
    with store()._read() as conn:
        report = verify_chain(conn)
        recent = conn.execute(select(event_table).order_by(event_table.c.id.desc()).limit(200)).mappings().all()
    return render_template("audit.html", report=report, events=recent)


@allow(ADMIN)
def refresh() -> Any:
    n = index.refresh_all(store())
    with store()._write() as conn:
        append_event(conn, "review_index_refreshed", {"items": n}, g.session.user.username, utcnow())
    return redirect(url_for("queue"))


def register(app: Flask) -> None:
    app.add_url_rule("/tally", "tally", tally_page)
    app.add_url_rule("/tally.csv", "tally_export", tally_export)
    app.add_url_rule("/print/<name>.<fmt>", "paper", paper)
    app.add_url_rule("/users", "users", users)
    app.add_url_rule("/users/add", "user_add", user_add, methods=["POST"])
    app.add_url_rule("/users/<username>/disable", "user_disable", user_disable, methods=["POST"])
    app.add_url_rule("/users/<username>/approve", "user_approve", user_approve, methods=["POST"])
    app.add_url_rule("/users/<username>/unlock", "user_unlock", user_unlock, methods=["POST"])
    app.add_url_rule("/audit", "audit", audit)
    app.add_url_rule("/admin/refresh", "refresh", refresh, methods=["POST"])
