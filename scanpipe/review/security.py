"""Who may do what, checked on the server for every request.

Every route declares its roles with :func:`allow`; a route that declares none is refused to
everybody (deny by default), except the few in :data:`PUBLIC` (the login form and the two
static assets). State-changing requests carry the session's CSRF token (form field ``csrf``
or header ``X-CSRF-Token``); decision forms also carry a one-time token bound to the
session and to what the form decides, so a double submission is refused and changes nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from typing import Any, TypeVar

from scanpipe.store.models import utcnow
from scanpipe.store.models_review import form_use_table
from scanpipe.store.repository import Store

F = TypeVar("F", bound=Callable[..., Any])

ADMIN, AUDITOR, BOARD, OBSERVER = "admin", "auditor", "board", "observer"
ALL_ROLES = frozenset({ADMIN, AUDITOR, BOARD, OBSERVER})
PUBLIC = frozenset({"login_form", "login", "asset"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def allow(*roles: str) -> Callable[[F], F]:
    """Declare the roles that may call a view (checked by the app's ``before_request``)."""
    assert roles and set(roles) <= ALL_ROLES, roles

    def mark(view: F) -> F:
        view.scanpipe_roles = frozenset(roles)  # type: ignore[attr-defined]
        return view

    return mark


def roles_of(view: Callable[..., Any] | None) -> frozenset[str]:
    """The roles a view allows (empty: nobody)."""
    return frozenset(getattr(view, "scanpipe_roles", frozenset()))


def csrf_ok(expected: str, given: str | None) -> bool:
    return bool(given) and hmac.compare_digest(expected.encode(), (given or "").encode())


# --------------------------------------------------------------------------------------
# one-time form tokens


def _mac(secret: str, nonce: str, purpose: str) -> str:
    return hmac.new(secret.encode(), f"{nonce}|{purpose}".encode(), hashlib.sha256).hexdigest()[:32]


def issue_form_token(secret: str, purpose: str) -> str:
    """A token for one form: ``nonce.mac``, the mac over the nonce and what the form decides."""
    nonce = secrets.token_hex(16)
    return f"{nonce}.{_mac(secret, nonce, purpose)}"


def consume_form_token(store: Store, secret: str, token: str | None, purpose: str, user_id: int) -> str | None:
    """Use a form token once; None when fine, else the reason it is refused."""
    nonce, _, mac = (token or "").partition(".")
    if not nonce or not hmac.compare_digest(_mac(secret, nonce, purpose).encode(), mac.encode()):
        return "this form's token is missing or does not belong to this form and session; reload the page"
    t = form_use_table
    with store._write() as conn:
        used = conn.execute(store._insert(t).on_conflict_do_nothing(index_elements=["nonce"]).returning(t.c.nonce),
                            {"nonce": nonce, "user_id": user_id, "used_at": utcnow()}).first()
    if used is None:
        return "this form was already submitted (a double click?); nothing more was recorded"
    return None
