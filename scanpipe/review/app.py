"""The Flask application: one ``before_request`` guard for every route, headers, errors.

The guard finds the session from the cookie, refuses a request without one (a page:
redirect to ``/login``; anything else: 401), refuses a role the route does not allow (403;
a route that declares no roles allows nobody), and refuses a state-changing request without
the session's CSRF token (403). Library errors become a page naming the problem (400/409).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from flask import Flask, Response, g, redirect, render_template, request, url_for

from scanpipe.errors import DecisionError, ScanpipeError
from scanpipe.review import accounts
from scanpipe.review.security import PUBLIC, SAFE_METHODS, csrf_ok, roles_of
from scanpipe.store.repository import Store
from scanpipe.types import Election

_log = logging.getLogger("scanpipe.review")

SESSION_COOKIE = "sp_session"
LOGIN_COOKIE = "sp_login"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'; connect-src 'self'")


@dataclass
class ReviewConfig:
    idle: timedelta = timedelta(minutes=30)
    absolute: timedelta = timedelta(hours=12)
    secure_cookies: bool = False  # set when served over HTTPS (behind a proxy that terminates TLS)
    trusted_proxies: frozenset[str] = frozenset()  # addresses whose X-Forwarded-For names the client


def client_address() -> str:
    """The client's address: the connection's, or, when the connection comes from a trusted
    proxy, the last address that proxy appended to ``X-Forwarded-For`` (what a client sends
    itself in that header is never believed)."""
    remote = request.remote_addr or "?"
    if remote in config().trusted_proxies:
        forwarded = [a.strip() for a in request.headers.get("X-Forwarded-For", "").split(",") if a.strip()]
        if forwarded:
            return forwarded[-1][:64]
    return remote


class ElectionCache:
    """The current election, parsed once per loaded definition (not once per request)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._key: str | None = None
        self._election: Election | None = None

    def get(self) -> Election:
        record = self.store.current_election_record()
        if record.sha256 != self._key or self._election is None:
            self._election = self.store.current_election()
            self._key = record.sha256
        return self._election


def create_app(store: Store, config: ReviewConfig | None = None) -> Flask:
    """The review app over an open, migrated store."""
    from scanpipe.review import routes_admin, routes_auth, routes_recount, routes_review, routes_statute

    app = Flask(__name__, static_folder=None)
    app.config["SCANPIPE"] = config or ReviewConfig()
    app.extensions["scanpipe_store"] = store
    app.extensions["scanpipe_election"] = ElectionCache(store)
    app.jinja_env.autoescape = True
    for module in (routes_auth, routes_review, routes_admin, routes_statute, routes_recount):
        module.register(app)
    app.before_request(_guard)
    app.after_request(_headers)
    app.register_error_handler(ScanpipeError, _library_error)
    app.register_error_handler(500, _server_error)
    app.context_processor(lambda: {"me": getattr(g, "session", None), "csrf": _csrf_value()})
    return app


def store() -> Store:
    from flask import current_app

    return current_app.extensions["scanpipe_store"]  # type: ignore[no-any-return]


def election() -> Election:
    from flask import current_app

    return current_app.extensions["scanpipe_election"].get()  # type: ignore[no-any-return]


def config() -> ReviewConfig:
    from flask import current_app

    return current_app.config["SCANPIPE"]  # type: ignore[no-any-return]


def _csrf_value() -> str:
    s = getattr(g, "session", None)
    return s.csrf if s is not None else request.cookies.get(LOGIN_COOKIE, "")


def _guard() -> Any:
    endpoint = request.endpoint
    if endpoint is None:
        return None  # 404 / 405 follow
    if endpoint in PUBLIC:
        if request.method not in SAFE_METHODS and not csrf_ok(request.cookies.get(LOGIN_COOKIE, ""), request.form.get("csrf")):
            return refuse(403, "The login form's token is missing or wrong; reload the login page.")
        return None
    g.session = accounts.session_for(store(), request.cookies.get(SESSION_COOKIE, ""), idle=config().idle)
    if g.session is None:
        if request.method == "GET":
            return redirect(url_for("login_form", next=request.full_path if request.query_string else request.path))
        return refuse(401, "Log in first.")
    allowed = roles_of(_view(endpoint))
    if g.session.user.role not in allowed:
        return refuse(403, f"A {g.session.user.role} may not use this page.")
    if request.method not in SAFE_METHODS:
        given = request.form.get("csrf") or request.headers.get("X-CSRF-Token")
        if not csrf_ok(g.session.csrf, given):
            return refuse(403, "The request's CSRF token is missing or wrong; reload the page and try again.")
    return None


def _view(endpoint: str) -> Any:
    from flask import current_app

    return current_app.view_functions.get(endpoint)


def _headers(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def refuse(status: int, message: str) -> tuple[str, int]:
    return render_template("message.html", title=_TITLES.get(status, "Refused"), message=message, status=status), status


_TITLES = {400: "Refused", 401: "Log in first", 403: "Not allowed", 404: "Not found", 409: "Already done", 429: "Too many attempts",
           500: "Server error"}


def _server_error(e: Exception) -> tuple[str, int]:
    """An unexpected failure: logged with its traceback; the person is told nothing half-done
    was kept (every state change is one transaction) and what to do."""
    original = getattr(e, "original_exception", None) or e
    _log.error("review: %s %s failed", request.method, request.path, exc_info=(type(original), original, original.__traceback__))
    return refuse(500, "The server failed while handling this request. Nothing from it was recorded (each change is one "
                       "transaction): reload the page and try again; if it fails again, tell the administrator (the error is in the server's log).")


def _library_error(e: ScanpipeError) -> tuple[str, int]:
    return refuse(409 if isinstance(e, DecisionError) and "already" in str(e) else 400, str(e))
