"""``scanpipe duplicates``, ``scanpipe board`` and ``scanpipe rules``: §12-108 as the statute reads.

* ``duplicates pending|print|stored``: a new duplicate's paper, from the decision to the shelf;
* ``board rule``: the board's ruling on an orphan or a conflict (§12-108(c));
* ``board sign-off``: the board's examination of matched pairs, one decision per batch;
* ``rules``: the election's rule set, every rule with its source.

Registered on the main group by :func:`register` (``cli_statute.register(cli)`` in cli.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click


def _store(ctx: object):  # noqa: ANN202 - Store
    return ctx.store()  # type: ignore[attr-defined]


def _board_vote(who: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The options of a board decision at the command line: each member's vote, who enters
    it, a note, and how the members show who they are (``who``: the help of ``--by``)."""
    options = (
        click.option("--member", "members", multiple=True, required=True, help="NAME=for|against|abstain, one per member present."),
        click.option("--by", "by", required=True, help=who),
        click.option("--note", default=None),
        click.option("--no-accounts", is_flag=True, help="A database without review accounts (a test deck): accept the names given (logged)."),
        click.option("--password-stdin", is_flag=True, help="Each member's password from stdin, one line each, in --member order (scripts)."),
    )

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        for option in reversed(options):
            command = option(command)
        return command
    return decorate


def _board_votes(ctx: object, members: tuple[str, ...], *, no_accounts: bool, password_stdin: bool):  # noqa: ANN202 - (Store, votes)
    """The store and the members' votes, each member having typed their own password (unless
    ``no_accounts``: a test deck without accounts)."""
    from scanpipe.cli_people import authenticate_members

    store = _store(ctx)
    votes = _members(members)
    if not no_accounts:
        authenticate_members(store, list(votes), password_stdin=password_stdin)
    return store, votes


def _members(values: tuple[str, ...]) -> dict[str, str]:
    """``NAME=for|against|abstain`` per member present."""
    out: dict[str, str] = {}
    for v in values:
        name, sep, vote = v.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{v!r}: give NAME=for, NAME=against or NAME=abstain", param_hint="--member")
        if name.strip() in out:
            raise click.BadParameter(f"{name.strip()} is named twice", param_hint="--member")
        out[name.strip()] = vote.strip().lower()
    return out


@click.group()
def duplicates() -> None:
    """New duplicates on paper: printed, scanned back as decided, stored with the original."""


@duplicates.command("pending")
@click.option("--json", "as_json", is_flag=True, help="A JSON array instead of lines.")
@click.option("--all", "show_all", is_flag=True, help="Also the new duplicates already stored.")
@click.pass_obj
def duplicates_pending(ctx: object, as_json: bool, show_all: bool) -> None:
    """New duplicates not yet printed, scanned back and stored with their original (the next step of each)."""
    from scanpipe.reconcile.paper import paper_statuses, pending_new_duplicates

    store = _store(ctx)
    items = paper_statuses(store) if show_all else pending_new_duplicates(store)
    if as_json:
        click.echo(json.dumps([p.as_json() for p in items], indent=2))
        return
    for p in items:
        extra = f" ({p.problem})" if p.problem else ""
        click.echo(f"{p.serial}\t{p.precinct or '#unassigned'}\t{p.state.value}{extra}\tnext: {p.next_step}")
    click.echo(f"{sum(1 for p in items if p.state.value != 'stored')} new duplicate(s) pending", err=True)


@duplicates.command("print")
@click.argument("serials", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Every new duplicate not yet printed.")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Folder for the PDFs (and PNGs).")
@click.option("--by", "by", required=True, help="Who prints them (recorded).")
@click.pass_obj
def duplicates_print(ctx: object, serials: tuple[str, ...], every: bool, out: Path, by: str) -> None:
    """Write new duplicates' PDFs for printing and record who printed them."""
    from scanpipe.reconcile.paper import PaperState, paper_statuses, print_new_duplicate

    store = _store(ctx)
    if every == bool(serials):
        raise click.UsageError("name the new duplicates to print, or say --all (not both)")
    chosen = list(serials) or [p.serial for p in paper_statuses(store) if p.state is PaperState.TO_PRINT]
    election = store.current_election()
    for serial in chosen:
        click.echo(f"{serial}: {print_new_duplicate(store, election, serial, out, by=by)}")
    click.echo(f"{len(chosen)} new duplicate(s) written for printing", err=True)


@duplicates.command("stored")
@click.argument("serial")
@click.option("--by", "by", required=True, help="Who stored it with the original (recorded).")
@click.option("--where", required=True, help="The envelope, box or container of the original it is stored with.")
@click.pass_obj
def duplicates_stored(ctx: object, serial: str, by: str, where: str) -> None:
    """Record that a printed, scanned-back new duplicate is stored with its original."""
    from scanpipe.reconcile.paper import store_new_duplicate

    store_new_duplicate(_store(ctx), serial, by=by, where=where)
    click.echo(f"{serial}: stored with its original ({where})")


@click.group()
def board() -> None:
    """The board: rulings on orphans and conflicts and on pages that are no ballot, sign-off of matched pairs."""


@board.command("rule")
@click.argument("serial")
@click.option("--ruling", type=click.Choice(["counts-as-is", "new-duplicate", "nothing"]), required=True)
@click.option("--card", default=None, help="The duplicate that counts as it is (a serial on several), or the new duplicate's basis.")
@_board_vote("Who enters the board's ruling.")
@click.pass_obj
def board_rule(ctx: object, serial: str, ruling: str, card: str | None, members: tuple[str, ...], by: str, note: str | None,
               no_accounts: bool, password_stdin: bool) -> None:
    """The board's ruling on an orphan or a conflict: whether and how the serial counts.
    Each member present types their own password (their vote is theirs to cast)."""
    from scanpipe.reconcile.board import rule_on_serial
    from scanpipe.reconcile.rulings import RulingKind

    store, votes = _board_votes(ctx, members, no_accounts=no_accounts, password_stdin=password_stdin)
    made = rule_on_serial(store, serial, ruling=RulingKind(ruling.replace("-", "_")), card=card, members=votes, actor=by,
                          note=note, no_accounts=no_accounts)
    click.echo(f"ruling {made.id} on {serial} ({made.matter.value}): {made.ruling.value}; for: {', '.join(made.ayes)} [{made.rule_set}]")


@board.command("set-aside")
@click.argument("cards", nargs=-1)
@click.option("--blank-pages-of", "batch", default=None, help="Every page of this batch found blank (blank_page) not yet set aside.")
@click.option("--why", required=True, help="What the board saw on the paper (a blank sheet, a batch header, another election's card).")
@_board_vote("Who enters the board's ruling.")
@click.pass_obj
def board_set_aside(ctx: object, cards: tuple[str, ...], batch: str | None, why: str, members: tuple[str, ...], by: str,
                    note: str | None, no_accounts: bool, password_stdin: bool) -> None:
    """The board's ruling that stored pages are no ballot cards (a sheet fed by mistake, a
    batch header, another election's card, the blank backs of a stack scanned on both sides):
    they count nothing and leave the queue; their images and readings are kept. Only for pages
    read as no card of the election and carrying no serial. One decision for all the pages
    named (and, with --blank-pages-of, the batch's blank pages). Each member present types
    their own password."""
    from scanpipe.reconcile.board import blank_pages_of, set_aside_pages

    chosen = [*cards, *(blank_pages_of(_store(ctx), batch) if batch is not None else [])]  # a batch that is not there: before any password
    store, votes = _board_votes(ctx, members, no_accounts=no_accounts, password_stdin=password_stdin)
    made = set_aside_pages(store, chosen, why=why, members=votes, actor=by, note=note, no_accounts=no_accounts)
    for ruling in made:
        click.echo(f"page ruling {ruling.id}: card {ruling.card} is not a ballot card ({ruling.why})")
    click.echo(f"{len(made)} page(s) set aside by the board; for: {', '.join(made[0].ayes)} [{made[0].rule_set}]")


@board.command("sign-off")
@click.argument("serials", nargs=-1, required=True)
@_board_vote("Who enters the board's decision.")
@click.pass_obj
def board_sign_off(ctx: object, serials: tuple[str, ...], members: tuple[str, ...], by: str, note: str | None, no_accounts: bool,
                   password_stdin: bool) -> None:
    """The board examined these matched pairs (one decision for the batch, logged). Each
    member present types their own password."""
    from scanpipe.reconcile.board import sign_off_pairs

    store, votes = _board_votes(ctx, members, no_accounts=no_accounts, password_stdin=password_stdin)
    signoff = sign_off_pairs(store, list(serials), members=votes, actor=by, note=note, no_accounts=no_accounts)
    click.echo(f"sign-off {signoff}: {len(serials)} matched pair(s) examined by the board")


@board.command("unexamined")
@click.pass_obj
def board_unexamined(ctx: object) -> None:
    """Matched pairs the board has not signed off (one serial a line)."""
    from scanpipe.reconcile.board import unexamined_pairs

    for serial in unexamined_pairs(_store(ctx)):
        click.echo(serial)


@click.command("rules")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def rules_cmd(ctx: object, as_json: bool) -> None:
    """The election's rule set: every rule with its source (statute, regulation, local policy)."""
    from scanpipe.rules import rule_set, sources

    rules = rule_set(_store(ctx).current_election().jurisdiction)
    listed = sources(rules)
    if as_json:
        click.echo(json.dumps({"rule_set": rules.id, "jurisdiction": rules.name, "rules": [
            {"rule": r, "source": {"kind": s.kind.value, "citation": s.citation, "says": s.says}} for r, s in listed]}, indent=2))
        return
    click.echo(f"{rules.id} ({rules.name})")
    for rule, source in listed:
        click.echo(f"  {rule}\n      {source}: {source.says}")


def register(cli: click.Group) -> None:
    for command in (duplicates, board, rules_cmd):
        cli.add_command(command)

