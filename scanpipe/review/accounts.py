"""Accounts, login sessions and login throttling of the review app.

Passwords are hashed with argon2id (argon2-cffi's defaults: 64 MiB, 3 passes). A session is
a random token in an HttpOnly cookie; the store keeps only its SHA-256, the CSRF secret of
the session, an absolute end and the last time it was seen (idle timeout).

**No one person is two.** An account is usable (log in, be named as an auditor) only once a
*second* administrator approved it: the admin who adds an account can never approve it, and
nobody approves their own. So one administrator alone cannot make the two auditors the
two-person rule needs. Set-up is the one exception: the first two accounts of a database are
administrators added without approval (``scanpipe user add NAME --role admin`` from the
server's shell), logged as ``bootstrap``; the board's procedure is that two named people add
them, each typing their own password. Accounts added before approval existed (revision
0005) count as approved.

**Throttling.** Failed logins are rows keyed by account and address. Each *pair* (one
account from one address) gets :attr:`ThrottlePolicy.free_failures` failures, then waits
before each further attempt, the wait doubling per failure up to a cap (the app answers HTTP
429 without checking the password). A pair is never throttled by another account's failures,
so a room of auditors behind one TLS proxy is never locked out as a whole; an administrator
can unlock an account (from one address or all) on the users page or with
``scanpipe user unlock``. Every login, failed login, throttled attempt, logout, account
change and unlock is appended to the audit log.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy import Connection, delete, func, select, update

from scanpipe.audit import append_event
from scanpipe.errors import ConfigError, DecisionError
from scanpipe.store import ledger
from scanpipe.store.models import utcnow
from scanpipe.store.models_review import (
    ROLES,
    login_failure_table,
    user_table,
    web_session_table,
)
from scanpipe.store.repository import Store

MIN_PASSWORD = 10
BOOTSTRAP_ADMINS = 2  # the first accounts of a database: administrators, added without approval
USERNAME = re.compile(r"[a-z][a-z0-9_.-]{1,63}")
_HASHER = PasswordHasher()
_DUMMY_HASH = _HASHER.hash("scanpipe-dummy-password")  # equalizes timing for unknown names


@dataclass(frozen=True, slots=True)
class ThrottlePolicy:
    """Failed logins of one account from one address: ``free_failures`` are free, then each
    attempt waits ``first_wait * 2**(failures - free_failures)`` (at most ``max_wait``) after
    the last failure; failures older than ``window`` are forgotten. Local policy, chosen so a
    person who mistypes a few times waits seconds while guessing stays at argon2's cost plus
    minutes per guess (OWASP Authentication Cheat Sheet: throttle per account, avoid lockouts
    an attacker can trigger for others)."""

    free_failures: int = 5
    first_wait: timedelta = timedelta(seconds=30)
    max_wait: timedelta = timedelta(minutes=15)
    window: timedelta = timedelta(hours=1)

    def wait_after(self, failures: int) -> timedelta:
        if failures < self.free_failures:
            return timedelta(0)
        return min(self.max_wait, self.first_wait * 2 ** min(failures - self.free_failures, 20))


POLICY = ThrottlePolicy()


@dataclass(frozen=True, slots=True)
class User:
    id: int
    username: str
    role: str
    disabled: bool
    approved: bool = True
    created_by: str | None = None
    approved_by: str | None = None

    @property
    def active(self) -> bool:
        return self.approved and not self.disabled

    @property
    def state(self) -> str:
        return "disabled" if self.disabled else "active" if self.approved else "awaiting approval"


@dataclass(frozen=True, slots=True)
class Session:
    user: User
    csrf: str
    token_sha256: str
    expires_at: datetime


def _sha(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _user(r: object) -> User:
    return User(r.id, r.username, r.role, r.disabled_at is not None, r.approved_at is not None,  # type: ignore[attr-defined]
                r.created_by, r.approved_by)  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------
# accounts


def add_user(store: Store, username: str, role: str, password: str, *, actor: str | None = None) -> User:
    """Create an account. ``actor`` is the administrator adding it (a username); the account
    then awaits another administrator's approval. Without an administrator (``actor`` None or
    not an active admin) only set-up is allowed: one of the first two accounts, an admin.
    ConfigError for a bad name, role, short password, a taken name or a refused actor."""
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
        admin = _active_admin(conn, actor)
        accounts = conn.execute(select(func.count()).select_from(t)).scalar_one()
        bootstrap = admin is None and accounts < BOOTSTRAP_ADMINS
        if admin is None and not bootstrap:
            who = f"{actor!r} is not an active administrator" if actor and actor != "cli" else "no administrator was named"
            raise ConfigError(f"adding an account needs an administrator ({who}): `scanpipe user add NAME --role R --as ADMIN`, "
                              "or the users page of the review")
        if bootstrap and role != "admin":
            raise ConfigError(f"set-up: the first {BOOTSTRAP_ADMINS} accounts are administrators (--role admin); "
                              "they then add and approve every other account")
        values = {"username": username, "role": role, "password_hash": digest, "created_at": now,
                  "created_by": admin, "approved_at": now if bootstrap else None}
        new_id = conn.execute(t.insert().returning(t.c.id), values).scalar_one()
        ledger.inserted(conn, "user_account", [new_id])
        detail = {"user": username, "role": role, "bootstrap": True} if bootstrap else {"user": username, "role": role, "awaiting_approval": True}
        append_event(conn, "user_added", detail, admin or actor, now)
        row = conn.execute(select(t).where(t.c.id == new_id)).first()
    return _user(row)


def _active_admin(conn: Connection, name: str | None) -> str | None:
    if not name:
        return None
    t = user_table
    row = conn.execute(select(t.c.username).where(t.c.username == name, t.c.role == "admin", t.c.disabled_at.is_(None),
                                                  t.c.approved_at.is_not(None))).first()
    return None if row is None else str(row.username)


def approve_user(store: Store, username: str, *, approver: str) -> User:
    """A second administrator approves an account: never the admin who added it, never the
    account itself. Approving an approved account changes nothing."""
    t = user_table
    now = utcnow()
    with store._write() as conn:
        row = conn.execute(select(t).where(t.c.username == username).with_for_update()).first()
        if row is None:
            raise ConfigError(f"there is no user {username!r}")
        if _active_admin(conn, approver) is None:
            raise ConfigError(f"{approver!r} is not an active administrator: only an administrator approves an account")
        if row.approved_at is None:
            if approver == row.username:
                raise ConfigError(f"{approver} cannot approve their own account")
            if approver == row.created_by:
                raise ConfigError(f"{approver} added {username}; a second administrator must approve it")
            if row.disabled_at is not None:
                raise ConfigError(f"user {username!r} is disabled")
            ledger.before(conn, "user_account", [row.id])
            conn.execute(update(t).where(t.c.id == row.id).values(approved_by=approver, approved_at=now))
            append_event(conn, "user_approved", {"user": username, "role": row.role, "added_by": row.created_by}, approver, now)
        row = conn.execute(select(t).where(t.c.id == row.id)).first()
    return _user(row)


def disable_user(store: Store, username: str, *, actor: str | None = None) -> User:
    """Disable an account and end its sessions; disabling it again changes nothing."""
    t = user_table
    now = utcnow()
    with store._write() as conn:
        row = conn.execute(select(t).where(t.c.username == username).with_for_update()).first()
        if row is None:
            raise ConfigError(f"there is no user {username!r}")
        if row.disabled_at is None:
            ledger.before(conn, "user_account", [row.id])
            conn.execute(update(t).where(t.c.id == row.id).values(disabled_at=now))
            s = web_session_table
            conn.execute(update(s).where(s.c.user_id == row.id, s.c.ended_at.is_(None)).values(ended_at=now))
            append_event(conn, "user_disabled", {"user": username}, actor, now)
        row = conn.execute(select(t).where(t.c.id == row.id)).first()
    return _user(row)


def list_users(store: Store) -> list[User]:
    with store._read() as conn:
        return [_user(r) for r in conn.execute(select(user_table).order_by(user_table.c.username))]


def any_accounts(store: Store) -> bool:
    """Whether the database has any review account at all (a test deck has none)."""
    with store._read() as conn:
        return conn.execute(select(user_table.c.id).limit(1)).first() is not None


def usernames_with_role(store: Store, role: str) -> list[str]:
    """The active (approved, not disabled) accounts of a role."""
    t = user_table
    with store._read() as conn:
        q = select(t.c.username).where(t.c.role == role, t.c.disabled_at.is_(None), t.c.approved_at.is_not(None))
        return list(conn.execute(q.order_by(t.c.username)).scalars())


# --------------------------------------------------------------------------------------
# login


class Throttled(Exception):
    """Too many failed logins for this account from this address: try again later."""


def _throttle(conn: Connection, username: str, remote: str, now: datetime) -> timedelta:
    """How long this account must still wait from this address (zero: go ahead)."""
    f = login_failure_table
    failures, last = conn.execute(select(func.count(), func.max(f.c.at)).where(
        f.c.username == username, f.c.remote == remote, f.c.at > now - POLICY.window)).one()
    if not failures or last is None:
        return timedelta(0)
    from scanpipe.store.models import UtcDateTime

    if not isinstance(last, datetime):  # SQLite's aggregate loses the column type
        last = UtcDateTime().process_result_value(datetime.fromisoformat(str(last)), conn.dialect)
    assert last is not None
    last = last if last.tzinfo is not None else last.replace(tzinfo=now.tzinfo)
    return max(timedelta(0), last + POLICY.wait_after(int(failures)) - now)


def _wait_text(wait: timedelta) -> str:
    seconds = max(1, int(wait.total_seconds() + 0.999))
    return f"{seconds} seconds" if seconds < 120 else f"{-(-seconds // 60)} minutes"


def _verify(conn: Connection, username: str, password: str, remote: str, now: datetime) -> object | None:
    """Throttle, then check the password: the user's row, or None (failure recorded and logged).
    Raises :class:`Throttled` (logged) without checking the password."""
    wait = _throttle(conn, username, remote, now)
    if wait > timedelta(0):
        append_event(conn, "login_throttled", {"user": username, "remote": remote}, None, now)
        raise Throttled(f"too many failed logins for {username!r} from {remote}; try again in {_wait_text(wait)}, "
                        "or ask an administrator to unlock the account")
    row = conn.execute(select(user_table).where(user_table.c.username == username)).first()
    ok = _password_ok(row.password_hash if row is not None else _DUMMY_HASH, password)
    if not ok or row is None or row.disabled_at is not None:
        conn.execute(login_failure_table.insert(), {"username": username, "remote": remote, "at": now})
        append_event(conn, "login_failed", {"user": username, "remote": remote}, None, now)
        return None
    return row


def login(store: Store, username: str, password: str, remote: str, *, idle: timedelta, absolute: timedelta) -> tuple[str, Session] | None:
    """Check the password and open a session: ``(cookie token, session)``; None when the name
    or password is wrong or the account disabled (one answer for all three). Raises
    :class:`Throttled` when this account failed too often lately from this address (the
    password is not checked), and ConfigError for an account awaiting approval."""
    now = utcnow()
    username = username.strip().lower()[:64]
    remote = remote[:64]
    throttled: Throttled | None = None
    with store._write() as conn:  # the throttle's log entry is kept: not inside the raise
        try:
            row = _verify(conn, username, password, remote, now)
        except Throttled as e:
            throttled, row = e, None
        if row is not None and row.approved_at is None:  # type: ignore[attr-defined]
            append_event(conn, "login_refused", {"user": username, "remote": remote, "why": "awaiting approval"}, None, now)
            pending = True
        else:
            pending = False
        if row is not None and not pending:
            f = login_failure_table
            conn.execute(delete(f).where(f.c.username == username, f.c.remote == remote))
            token, csrf = secrets.token_urlsafe(32), secrets.token_hex(32)
            conn.execute(web_session_table.insert(), {"token_sha256": _sha(token), "user_id": row.id, "csrf": csrf,  # type: ignore[attr-defined]
                                                      "created_at": now, "expires_at": now + absolute, "last_seen": now})
            append_event(conn, "login", {"user": username, "remote": remote, "role": row.role}, username, now)  # type: ignore[attr-defined]
    if throttled is not None:
        raise throttled
    if row is None:
        return None
    if pending:
        raise ConfigError(f"the account {username!r} awaits a second administrator's approval")
    return token, Session(_user(row), csrf, _sha(token), now + absolute)


def authenticate(store: Store, username: str, password: str, *, operator: str) -> User:
    """A person proves at the command line that they are this account (their password):
    the same throttle and log as a login, keyed by account and operator. DecisionError when
    refused (the reason does not say whether the name or the password was wrong)."""
    now = utcnow()
    name = username.strip().lower()[:64]
    throttled: Throttled | None = None
    with store._write() as conn:
        try:
            row = _verify(conn, name, password, operator[:64], now)
        except Throttled as e:
            throttled, row = e, None
        if row is not None:
            f = login_failure_table
            conn.execute(delete(f).where(f.c.username == name, f.c.remote == operator[:64]))
            append_event(conn, "authenticated", {"user": name, "operator": operator}, name, now)
    if throttled is not None:
        raise DecisionError(str(throttled))
    if row is None:
        raise DecisionError(f"{name}: wrong user name or password, or the account is disabled")
    return _user(row)


def _password_ok(digest: str, password: str) -> bool:
    try:
        return _HASHER.verify(digest, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


@dataclass(frozen=True, slots=True)
class Lockout:
    """An account that must wait before trying again from an address."""

    username: str
    remote: str
    failures: int
    wait: timedelta


def lockouts(store: Store) -> list[Lockout]:
    """Every account and address pair waiting now (for the users page)."""
    f = login_failure_table
    now = utcnow()
    with store._read() as conn:
        pairs = conn.execute(select(f.c.username, f.c.remote, func.count()).where(f.c.at > now - POLICY.window)
                             .group_by(f.c.username, f.c.remote).having(func.count() >= POLICY.free_failures)).all()
        found = [Lockout(u, r, int(n), _throttle(conn, u, r, now)) for u, r, n in pairs]
    return sorted((x for x in found if x.wait > timedelta(0)), key=lambda x: (x.username, x.remote))


def unlock_user(store: Store, username: str, *, remote: str | None = None, actor: str | None = None) -> int:
    """An administrator lets an account try again (from ``remote`` only, or from everywhere):
    its failed logins are forgotten; logged. Returns how many were forgotten."""
    f = login_failure_table
    now = utcnow()
    with store._write() as conn:
        if conn.execute(select(user_table.c.id).where(user_table.c.username == username)).first() is None:
            raise ConfigError(f"there is no user {username!r}")
        cond = f.c.username == username
        if remote is not None:
            cond = cond & (f.c.remote == remote)
        n = conn.execute(delete(f).where(cond)).rowcount
        append_event(conn, "login_unlocked", {"user": username, "remote": remote, "failures_forgotten": n}, actor, now)
    return int(n)


def session_for(store: Store, token: str, *, idle: timedelta) -> Session | None:
    """The live session of a cookie token (None when unknown, ended, idle or expired)."""
    if not token or len(token) > 100:
        return None
    now = utcnow()
    s, u = web_session_table, user_table
    q = select(s.c.token_sha256, s.c.csrf, s.c.expires_at, s.c.last_seen, s.c.ended_at, u.c.id, u.c.username, u.c.role,
               u.c.disabled_at, u.c.approved_at, u.c.created_by, u.c.approved_by).join(u, u.c.id == s.c.user_id).where(s.c.token_sha256 == _sha(token))
    with store._read() as conn:
        row = conn.execute(q).first()
    if row is None or row.ended_at is not None or row.disabled_at is not None or row.approved_at is None:
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
