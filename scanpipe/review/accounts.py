"""Accounts, login sessions and login throttling of the review app.

Passwords are hashed with argon2id (argon2-cffi's defaults: 64 MiB, 3 passes). A session is
a random token in an HttpOnly cookie; the store keeps only its SHA-256, the CSRF secret of
the session, an absolute end and the last time it was seen (idle timeout). Failed logins are
rows; :data:`MAX_FAILURES` in :data:`FAILURE_WINDOW` for one user name or one address
throttles further attempts (the app answers HTTP 429) without checking the password.
Every login, failed login, logout and account change is appended to the audit log.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy import delete, func, select, update

from scanpipe.audit import append_event
from scanpipe.errors import ConfigError
from scanpipe.store.models import utcnow
from scanpipe.store.models_review import (
    ROLES,
    login_failure_table,
    user_table,
    web_session_table,
)
from scanpipe.store.repository import Store

MAX_FAILURES = 5
FAILURE_WINDOW = timedelta(minutes=15)
MIN_PASSWORD = 10
USERNAME = re.compile(r"[a-z][a-z0-9_.-]{1,63}")
_HASHER = PasswordHasher()
_DUMMY_HASH = _HASHER.hash("scanpipe-dummy-password")  # equalizes timing for unknown names


@dataclass(frozen=True, slots=True)
class User:
    id: int
    username: str
    role: str
    disabled: bool


@dataclass(frozen=True, slots=True)
class Session:
    user: User
    csrf: str
    token_sha256: str
    expires_at: datetime


def _sha(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _user(r: object) -> User:
    return User(r.id, r.username, r.role, r.disabled_at is not None)  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------
# accounts


def add_user(store: Store, username: str, role: str, password: str, *, actor: str | None = None) -> User:
    """Create an account; ConfigError for a bad name, role, short password or a taken name."""
    if not USERNAME.fullmatch(username):
        raise ConfigError(f"user name {username!r}: use 2-64 lowercase letters, digits, '.', '_' or '-', starting with a letter")
    if role not in ROLES:
        raise ConfigError(f"role {role!r}: one of {', '.join(ROLES)}")
    if len(password) < MIN_PASSWORD:
        raise ConfigError(f"the password must have at least {MIN_PASSWORD} characters")
    digest = _HASHER.hash(password)
    now = utcnow()
    t = user_table
    with store._write() as conn:
        if conn.execute(select(t.c.id).where(t.c.username == username)).first() is not None:
            raise ConfigError(f"user {username!r} exists already")
        new_id = conn.execute(t.insert().returning(t.c.id), {"username": username, "role": role, "password_hash": digest,
                                                               "created_at": now}).scalar_one()
        append_event(conn, "user_added", {"user": username, "role": role}, actor, now)
    return User(new_id, username, role, False)


def disable_user(store: Store, username: str, *, actor: str | None = None) -> User:
    """Disable an account and end its sessions; disabling it again changes nothing."""
    t = user_table
    now = utcnow()
    with store._write() as conn:
        row = conn.execute(select(t).where(t.c.username == username)).first()
        if row is None:
            raise ConfigError(f"there is no user {username!r}")
        if row.disabled_at is None:
            conn.execute(update(t).where(t.c.id == row.id).values(disabled_at=now))
            s = web_session_table
            conn.execute(update(s).where(s.c.user_id == row.id, s.c.ended_at.is_(None)).values(ended_at=now))
            append_event(conn, "user_disabled", {"user": username}, actor, now)
        row = conn.execute(select(t).where(t.c.id == row.id)).first()
    return _user(row)


def list_users(store: Store) -> list[User]:
    with store._read() as conn:
        return [_user(r) for r in conn.execute(select(user_table).order_by(user_table.c.username))]


def usernames_with_role(store: Store, role: str) -> list[str]:
    t = user_table
    with store._read() as conn:
        return list(conn.execute(select(t.c.username).where(t.c.role == role, t.c.disabled_at.is_(None)).order_by(t.c.username)).scalars())


# --------------------------------------------------------------------------------------
# login


class Throttled(Exception):
    """Too many failed logins for this user name or address: try again later."""


def login(store: Store, username: str, password: str, remote: str, *, idle: timedelta, absolute: timedelta) -> tuple[str, Session] | None:
    """Check the password and open a session: ``(cookie token, session)``; None when the name
    or password is wrong or the account disabled (one answer for all three). Raises
    :class:`Throttled` when too many attempts failed lately (the password is not checked)."""
    now = utcnow()
    username = username.strip().lower()[:64]
    remote = remote[:64]
    with store._write() as conn:
        f = login_failure_table
        since = now - FAILURE_WINDOW
        by_name = conn.execute(select(func.count()).where(f.c.username == username, f.c.at > since)).scalar_one()
        by_addr = conn.execute(select(func.count()).where(f.c.remote == remote, f.c.at > since)).scalar_one()
        throttled = by_name >= MAX_FAILURES or by_addr >= MAX_FAILURES * 4
        if throttled:
            append_event(conn, "login_throttled", {"user": username, "remote": remote}, None, now)
            row = None
        else:
            row = conn.execute(select(user_table).where(user_table.c.username == username)).first()
            ok = _password_ok(row.password_hash if row is not None else _DUMMY_HASH, password)
            if not ok or row is None or row.disabled_at is not None:
                conn.execute(f.insert(), {"username": username, "remote": remote, "at": now})
                append_event(conn, "login_failed", {"user": username, "remote": remote}, None, now)
                row = None
        if row is None:
            token = ""
        else:
            conn.execute(delete(f).where(f.c.username == username))
            token, csrf = secrets.token_urlsafe(32), secrets.token_hex(32)
            conn.execute(web_session_table.insert(), {"token_sha256": _sha(token), "user_id": row.id, "csrf": csrf,
                                                      "created_at": now, "expires_at": now + absolute, "last_seen": now})
            append_event(conn, "login", {"user": username, "remote": remote, "role": row.role}, username, now)
    if throttled:
        raise Throttled(f"too many failed logins for {username!r} or from {remote}; wait {FAILURE_WINDOW.seconds // 60} minutes")
    if row is None:
        return None
    return token, Session(_user(row), csrf, _sha(token), now + absolute)


def _password_ok(digest: str, password: str) -> bool:
    try:
        return _HASHER.verify(digest, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def session_for(store: Store, token: str, *, idle: timedelta) -> Session | None:
    """The live session of a cookie token (None when unknown, ended, idle or expired)."""
    if not token or len(token) > 100:
        return None
    now = utcnow()
    s, u = web_session_table, user_table
    q = select(s.c.token_sha256, s.c.csrf, s.c.expires_at, s.c.last_seen, s.c.ended_at, u.c.id, u.c.username, u.c.role,
               u.c.disabled_at).join(u, u.c.id == s.c.user_id).where(s.c.token_sha256 == _sha(token))
    with store._read() as conn:
        row = conn.execute(q).first()
    if row is None or row.ended_at is not None or row.disabled_at is not None:
        return None
    if row.expires_at <= now or row.last_seen + idle <= now:
        return None
    if now - row.last_seen > timedelta(seconds=30):
        with store._write() as conn:
            conn.execute(update(s).where(s.c.token_sha256 == row.token_sha256).values(last_seen=now))
    return Session(_user(row), row.csrf, row.token_sha256, row.expires_at)


def logout(store: Store, session: Session) -> None:
    now = utcnow()
    s = web_session_table
    with store._write() as conn:
        conn.execute(update(s).where(s.c.token_sha256 == session.token_sha256).values(ended_at=now))
        append_event(conn, "logout", {"user": session.user.username}, session.user.username, now)
