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
@click.option("--behind-proxy", is_flag=True,
              help="Served through one reverse proxy (nginx, caddy): take the client's address and scheme from its X-Forwarded-* headers.")
@click.pass_obj
def review(ctx: object, host: str, port: int, idle_minutes: int, session_hours: int, secure_cookies: bool,
           no_refresh: bool, threads: int, behind_proxy: bool) -> None:
    """Serve the auditors' web review (accounts: `scanpipe user add`)."""
    from scanpipe.review import ReviewConfig, create_app
    from scanpipe.review.accounts import list_users
    from scanpipe.review.index import refresh_all

    store = _store(ctx)
    if not no_refresh:
        click.echo(f"queue index: {refresh_all(store)} item(s)", err=True)
    if not list_users(store):
        click.echo("no accounts yet: add one with `scanpipe user add NAME --role admin`", err=True)
    app = create_app(store, ReviewConfig(idle=timedelta(minutes=idle_minutes), absolute=timedelta(hours=session_hours),
                                         secure_cookies=secure_cookies))
    if behind_proxy:  # one proxy in front: trust exactly one hop of X-Forwarded-For/-Proto/-Host
        from werkzeug.middleware.proxy_fix import ProxyFix

        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=1, x_proto=1, x_host=1)  # type: ignore[method-assign]
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


@user.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(["admin", "auditor", "board", "observer"]), required=True)
@click.option("--password-stdin", is_flag=True, help="Read the password from the first line of stdin (scripts).")
@click.pass_obj
def user_add(ctx: object, name: str, role: str, password_stdin: bool) -> None:
    """Add an account; the password is asked for (twice) unless --password-stdin."""
    from scanpipe.review.accounts import add_user

    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt("password", hide_input=True, confirmation_prompt=True)
    added = add_user(_store(ctx), name, role, password, actor="cli")
    click.echo(f"user {added.username} added ({added.role})")


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
    """List accounts."""
    from scanpipe.review.accounts import list_users

    for u in list_users(_store(ctx)):
        click.echo(f"{u.username}\t{u.role}\t{'disabled' if u.disabled else 'active'}")


@click.group()
def audit() -> None:
    """The hash-chained audit log."""


@audit.command("verify")
@click.option("--head", "expected_head", default=None, help="A head hash written down earlier: fail unless the chain still contains it.")
@click.pass_obj
def audit_verify(ctx: object, expected_head: str | None) -> None:
    """Check every entry of the audit log; exit 1 naming each edited, moved or deleted entry."""
    from scanpipe.audit import verify_chain

    store = _store(ctx)
    with store._read() as conn:
        report = verify_chain(conn)
        heads = _contains_head(conn, expected_head) if expected_head else True
    for b in report.breaks:
        click.echo(f"BROKEN: {b.problem}", err=True)
    if not heads:
        click.echo(f"BROKEN: no entry has the hash {expected_head}: the log was cut or rewritten after it", err=True)
    if report.breaks or not heads:
        sys.exit(1)
    click.echo(f"audit log intact: {report.entries} entries, head {report.head}")


def _contains_head(conn: object, digest: str) -> bool:
    from sqlalchemy import select

    from scanpipe.store.models import event_table

    return conn.execute(select(event_table.c.id).where(event_table.c.hash == digest)).first() is not None  # type: ignore[attr-defined]


def register(group: click.Group) -> None:
    """Add ``review``, ``user`` and ``audit`` to the main command group."""
    for command in (review, user, audit):
        group.add_command(command)
