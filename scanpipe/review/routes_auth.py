"""Log in, log out, and the two static assets (the only routes open without a session)."""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, Response, g, redirect, render_template, request, url_for

from scanpipe.errors import ConfigError
from scanpipe.review import accounts
from scanpipe.review.app import LOGIN_COOKIE, SESSION_COOKIE, client_address, config, refuse, store
from scanpipe.review.security import ALL_ROLES, allow

ASSETS = {"review.js": "text/javascript", "review.css": "text/css"}  # names only: no path from the client
_HERE = Path(__file__).parent / "assets"


def login_form() -> Any:
    token = request.cookies.get(LOGIN_COOKIE) or secrets.token_hex(32)
    response = Response(render_template("login.html", login_csrf=token, next=_safe_next(request.args.get("next"))))
    response.set_cookie(LOGIN_COOKIE, token, httponly=True, samesite="Strict", secure=config().secure_cookies, path="/login")
    return response


def login() -> Any:
    username, password = request.form.get("username", ""), request.form.get("password", "")
    try:
        opened = accounts.login(store(), username, password, client_address(), idle=config().idle, absolute=config().absolute)
    except accounts.Throttled as e:
        return refuse(429, str(e))
    except ConfigError as e:  # the password was right, but the account awaits approval
        return refuse(403, str(e))
    if opened is None:
        token = request.cookies.get(LOGIN_COOKIE, "")
        return render_template("login.html", login_csrf=token, next=_safe_next(request.form.get("next")),
                               error="Wrong user name or password, or the account is disabled."), 401
    token, _session = opened
    response = redirect(_safe_next(request.form.get("next")) or url_for("dashboard"))
    response.set_cookie(SESSION_COOKIE, token, httponly=True, samesite="Strict", secure=config().secure_cookies,
                        max_age=int(config().absolute.total_seconds()))
    return response


@allow(*ALL_ROLES)
def logout() -> Any:
    accounts.logout(store(), g.session)
    response = redirect(url_for("login_form"))
    response.delete_cookie(SESSION_COOKIE)
    return response


def asset(name: str) -> Any:
    if name not in ASSETS:
        return refuse(404, "No such asset.")
    response = Response((_HERE / name).read_bytes(), mimetype=ASSETS[name])
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response


_LOCAL_PATH = re.compile(r"/(?![/\\])[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*")


def _safe_next(target: str | None) -> str | None:
    """Only a path of this site is followed after login: it starts with one ``/`` and holds
    only the printable characters a URL path and query may hold (no whitespace or control
    character, which browsers drop, so ``/\t/evil.example`` would become ``//evil.example``;
    no backslash, which browsers read as ``/``; no ``#``)."""
    if target and len(target) <= 2000 and _LOCAL_PATH.fullmatch(target) and urlsplit(target).netloc == "":
        return target
    return None


def register(app: Flask) -> None:
    app.add_url_rule("/login", "login_form", login_form, methods=["GET"])
    app.add_url_rule("/login", "login", login, methods=["POST"])
    app.add_url_rule("/logout", "logout", logout, methods=["POST"])
    app.add_url_rule("/assets/<name>", "asset", asset, methods=["GET"])
