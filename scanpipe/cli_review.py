"""``scanpipe review``, ``scanpipe user add|disable|list`` and ``scanpipe audit verify``.

Registered on the main group by :func:`register` (``cli_review.register(cli)`` in cli.py).
"""

from __future__ import annotations

import sys
from datetime import timedelta

import click


def _store(ctx: object):
    return ctx.store()  # type: ignore[attr-defined]


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8080, show_default=True)
@click.option("--idle-minutes", type=click.IntRange(1, 24 * 60), default=30, show_default=True, help="Sessions end after this long unused.")
@click.option("--session-hours", type=click.IntRange(1, 72), default=12, show_default=True, help="Sessions end this long after login.")
@click.option("--secure-cookies", is_flag=True, help="Mark cookies Secure (serve over HTTPS, e.g. behind a TLS proxy).")
@click.option("--no-refresh", is_flag=True, help="Do not rebuild the queue index at start.")
@click.option("--threads", type=click.IntRange(1, 64), default=8, show_default=True)
@click.option("--trusted-proxy", "trusted_proxies", multiple=True, metavar="ADDR",
              help="The address of a TLS proxy in front of the review: its X-Forwarded-For names the client (repeatable).")
@click.pass_obj
def review(ctx: object, host: str, port: int, idle_minutes: int, session_hours: int, secure_cookies: bool,
           no_refresh: bool, threads: int, trusted_proxies: tuple[str, ...]) -> None:
    """Serve the auditors' web review (accounts: `scanpipe user add`)."""
    from scanpipe.review import ReviewConfig, create_app
    from scanpipe.review.accounts import list_users
    from scanpipe.review.index import refresh_all

    store = _store(ctx)
    if not no_refresh:
        click.echo(f"queue index: {refresh_all(store)} item(s)", err=True)
    if not list_users(store):
        click.echo("no accounts yet: set-up adds two administrators (`scanpipe user add NAME --role admin`, each typing their own "
                   "password); they add and approve every other account", err=True)
    app = create_app(store, ReviewConfig(idle=timedelta(minutes=idle_minutes), absolute=timedelta(hours=session_hours),
                                         secure_cookies=secure_cookies, trusted_proxies=frozenset(trusted_proxies)))
    click.echo(f"scanpipe review on http://{host}:{port}/ (Ctrl-C stops)", err=True)
    try:
        from waitress import serve  # type: ignore[import-untyped]
    except ImportError:
        from werkzeug.serving import run_simple

        run_simple(host, port, app, threaded=True)
        return
    serve(app, host=host, port=port, threads=threads, ident="scanpipe")


@click.group()
def user() -> None:
    """Manage review accounts (roles: admin, auditor, board, observer)."""


def _admin(store: object, name: str | None, password_stdin: bool) -> str | None:
    """An administrator proves who they are (their password); their user name."""
    if name is None:
        return None
    from scanpipe.cli_people import cli_operator
    from scanpipe.review.accounts import authenticate

    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt(f"password of {name}", hide_input=True, err=True)
    return authenticate(store, name, password, operator=cli_operator()).username  # type: ignore[arg-type]


@user.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(["admin", "auditor", "board", "observer"]), required=True)
@click.option("--as", "admin", default=None, metavar="ADMIN", help="The administrator adding it (their password is asked); "
              "not needed for the first two accounts, administrators added at set-up.")
@click.option("--password-stdin", is_flag=True, help="Read the new password from the first line of stdin, and the "
              "administrator's from the second (scripts).")
@click.pass_obj
def user_add(ctx: object, name: str, role: str, admin: str | None, password_stdin: bool) -> None:
    """Add an account; it is usable once a second administrator approves it (`user approve`)."""
    from scanpipe.review.accounts import add_user

    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt("password", hide_input=True, confirmation_prompt=True)
    store = _store(ctx)
    actor = _admin(store, admin, password_stdin)
    added = add_user(store, name, role, password, actor=actor)
    click.echo(f"user {added.username} added ({added.role}, {added.state})")


@user.command("approve")
@click.argument("name")
@click.option("--as", "admin", required=True, metavar="ADMIN", help="The approving administrator (not the one who added it).")
@click.option("--password-stdin", is_flag=True, help="Read the administrator's password from stdin.")
@click.pass_obj
def user_approve(ctx: object, name: str, admin: str, password_stdin: bool) -> None:
    """A second administrator approves an account."""
    from scanpipe.review.accounts import approve_user

    store = _store(ctx)
    approver = _admin(store, admin, password_stdin)
    assert approver is not None
    approved = approve_user(store, name, approver=approver)
    click.echo(f"user {approved.username} approved by {approver} ({approved.state})")


@user.command("unlock")
@click.argument("name")
@click.option("--address", default=None, help="Only from this address (default: from everywhere).")
@click.pass_obj
def user_unlock(ctx: object, name: str, address: str | None) -> None:
    """Let an account try to log in again after failed logins (logged)."""
    from scanpipe.review.accounts import unlock_user

    n = unlock_user(_store(ctx), name, remote=address, actor="cli")
    click.echo(f"user {name} unlocked{' from ' + address if address else ''} ({n} failed login(s) forgotten)")


@user.command("disable")
@click.argument("name")
@click.pass_obj
def user_disable(ctx: object, name: str) -> None:
    """Disable an account and end its sessions."""
    from scanpipe.review.accounts import disable_user

    disable_user(_store(ctx), name, actor="cli")
    click.echo(f"user {name} disabled")


@user.command("list")
@click.pass_obj
def user_list(ctx: object) -> None:
    """List accounts: name, role, state, added by, approved by."""
    from scanpipe.review.accounts import list_users

    for u in list_users(_store(ctx)):
        click.echo(f"{u.username}\t{u.role}\t{u.state}\t{u.created_by or 'set-up'}\t{u.approved_by or ('set-up' if u.approved else '-')}")


@click.group()
def audit() -> None:
    """The hash-chained audit log."""


@audit.command("verify")
@click.option("--head", "expected_head", default=None, help="A head hash written down earlier: fail unless the chain still contains it.")
@click.pass_obj
def audit_verify(ctx: object, expected_head: str | None) -> None:
    """Check every entry of the audit log and every row it covers (cards and their readings,
    decisions, new duplicates, batches, identifications, the duplication log, accounts);
    recompute the tally from verified data and compare. Exit 1 naming each problem."""
    from scanpipe.audit_verify import verify_store

    report = verify_store(_store(ctx), expected_head=expected_head)
    for b in report.chain.breaks:
        click.echo(f"BROKEN: {b.problem}", err=True)
    if report.head_found is False:
        click.echo(f"BROKEN: no entry has the hash {expected_head}: the log was cut or rewritten after it", err=True)
    for p in report.rows:
        click.echo(f"BROKEN: {p.problem}", err=True)
    for line in report.tally:
        click.echo(f"TALLY: {line}", err=True)
    if not report.logged_tally_ok:
        click.echo(f"TALLY: {report.logged_tally}", err=True)
    for note in report.pair_notes:
        click.echo(f"note: {note} (after an ingest, run `scanpipe reconcile`; otherwise the pair row was edited)", err=True)
    if not report.ok:
        sys.exit(1)
    click.echo(f"audit log intact: {report.chain.entries} entries, head {report.chain.head}")
    click.echo(f"every row that can change a count agrees with the log; tally recomputed from verified data "
               f"({report.tally_rows} rows): {report.logged_tally}")


def register(group: click.Group) -> None:
    """Add ``review``, ``user`` and ``audit`` to the main command group."""
    for command in (review, user, audit):
        group.add_command(command)
