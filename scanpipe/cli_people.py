"""Who is at the command line: auditors proved by their passwords, and the operator.

``adjudicate`` names auditors by review account; each types their own password (or, for
scripts, ``--password-stdin`` gives one line per auditor). The operator is the login of the
process on this host (from the operating system's user database, not from the environment),
recorded with every decision: the second half of a decision may not come from the operator
that recorded the first. A database without any account (a test deck) takes free names only
with ``--no-accounts``, and the decision is logged as such.
"""

from __future__ import annotations

import os
import socket
import sys

import click

from scanpipe.decisions import Attestation
from scanpipe.errors import DecisionError
from scanpipe.store.repository import Store


def cli_operator() -> str:
    """``cli:<login>@<host>``: the operating-system account running this command."""
    try:
        import pwd

        login = pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):  # Windows, or a uid without a name
        import getpass

        login = getpass.getuser()
    return f"cli:{login}@{socket.gethostname()}"


def read_passwords(names: list[str], *, from_stdin: bool) -> list[str]:
    """One password per name: lines of stdin, or asked on the terminal (not echoed)."""
    if from_stdin:
        lines = [sys.stdin.readline().rstrip("\r\n") for _ in names]
        if any(not line for line in lines):
            raise click.UsageError(f"--password-stdin: give one password line per --auditor ({len(names)})")
        return lines
    return [click.prompt(f"password of {name}", hide_input=True, err=True) for name in names]


def authenticate_members(store: Store, names: list[str], *, password_stdin: bool) -> None:
    """Each board member named at the command line proves it is them (their password), so a
    vote recorded for a member is that member's own act; a test deck without accounts skips this."""
    from scanpipe.review.accounts import any_accounts, authenticate

    if not any_accounts(store):
        return  # the library refuses free names unless --no-accounts
    operator = cli_operator()
    for name, password in zip(names, read_passwords(names, from_stdin=password_stdin), strict=True):
        authenticate(store, name, password, operator=operator)


def attest_auditors(store: Store, auditors: list[str], *, no_accounts: bool, password_stdin: bool,
                    override: str | None) -> Attestation:
    """The attestation of a command-line decision, once every named auditor proved who they are."""
    from scanpipe.review.accounts import any_accounts, authenticate

    operator = cli_operator()
    if no_accounts:
        return Attestation(operator=operator, accounts=False, override=override)  # refused by the library if accounts exist
    if not any_accounts(store):
        raise DecisionError("this database has no review accounts (a test deck?): add auditors with `scanpipe user add` and name "
                            "them with --auditor, or pass --no-accounts to record the names as given (logged)")
    names = [a.strip().lower() for a in auditors]
    for name, password in zip(names, read_passwords(names, from_stdin=password_stdin), strict=True):
        authenticate(store, name, password, operator=operator)
    return Attestation(operator=operator, accounts=True, override=override)
