"""``scanpipe recount ...``: the recount case (contract section 8).

Every verb prints JSON on stdout. Exit 0 when the request is accepted, 1 when the rules refuse
it (the JSON's ``reasons`` say why; nothing is written), 2 for bad input or a missing case
(raised as :class:`~scanpipe.errors.ScanpipeError`, mapped in :func:`scanpipe.cli.main`).
"""

from __future__ import annotations

import json
import sys
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from scanpipe.cli import Ctx

pass_ctx = click.pass_obj  # the group's Ctx (imported from scanpipe.cli only for typing: `python -m scanpipe.cli` runs it as __main__)


def _echo(doc: Any) -> None:
    click.echo(json.dumps(doc, indent=2, ensure_ascii=False))


def _day(value: str | None, option: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date (YYYY-MM-DD)", param_hint=option) from None


def _verdict(doc: Any, accepted: bool, verb: str) -> None:
    _echo(doc)
    if not accepted:
        click.echo(f"recount {verb}: refused: " + "; ".join(doc.get("reasons", [])), err=True)
        sys.exit(1)


@click.group()
def recount() -> None:
    """The recount case: certified results, petition, status, costs, report, certification."""


@recount.command("certified")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--election", "election_id", default=None, help="The election the file certifies (must be the loaded one).")
@pass_ctx
def certified_cmd(ctx: Ctx, file: Path, election_id: str | None) -> None:
    """Import the certified canvass results (CSV precinct,contest,option,votes or NIST SP 1500-100 v2 JSON)."""
    from scanpipe.recount.service import import_certified

    if not file.is_file():
        from scanpipe.errors import SourceError

        raise SourceError(f"{file}: no such file")
    _echo(import_certified(ctx.store(), file, election_id=election_id))


@recount.command("petition")
@click.option("--contest", required=True)
@click.option("--petitioner", required=True, help="A candidate's option id; for a question, the voter's name.")
@click.option("--side", default=None, help="A question: the option the petition supports.")
@click.option("--precincts", default=None, help="Comma-separated precinct ids (default: every precinct where the contest was on the ballot).")
@click.option("--filed", required=True, help="YYYY-MM-DD")
@click.option("--certified-on", required=True, help="YYYY-MM-DD: the day the results were certified.")
@click.option("--unofficial-on", default=None, help="Arkansas: YYYY-MM-DD of the preliminary and unofficial results.")
@click.option("--overseas-could-change", is_flag=True, help="Arkansas §7-5-319(a)(3): outstanding overseas ballots could change the result.")
@click.option("--counter", is_flag=True, help="A counterpetition: adds its precincts to the open case.")
@click.option("--determined-on", default=None, help="A counterpetition: YYYY-MM-DD the recount found the outcome changed.")
@pass_ctx
def petition_cmd(ctx: Ctx, contest: str, petitioner: str, side: str | None, precincts: str | None, filed: str, certified_on: str,
                 unofficial_on: str | None, overseas_could_change: bool, counter: bool, determined_on: str | None) -> None:
    """File a recount petition (or counterpetition): eligibility, deadline, scope; opens the case."""
    from scanpipe.recount.petition import PetitionRequest
    from scanpipe.recount.service import petition

    req = PetitionRequest(contest=contest, petitioner=petitioner, side=side,
                          precincts=tuple(p.strip() for p in precincts.split(",")) if precincts is not None else None,
                          filed=_day(filed, "--filed"), certified_on=_day(certified_on, "--certified-on"),  # type: ignore[arg-type]
                          unofficial_on=_day(unofficial_on, "--unofficial-on"), overseas_could_change=overseas_could_change,
                          counter=counter, determined_on=_day(determined_on, "--determined-on"))
    doc, accepted = petition(ctx.store(), req)
    _verdict(doc, accepted, "petition")


@recount.command("status")
@pass_ctx
def status_cmd(ctx: Ctx) -> None:
    """The case, its scope, per precinct the cards counted and what awaits a person; complete or not."""
    from scanpipe.recount.service import status

    _echo(status(ctx.store()))


@recount.command("terminate")
@click.option("--requested-by", required=True, help="The petitioner (or counterpetitioner) asking to stop (§12-106(c)).")
@click.option("--reason", required=True)
@click.option("--finished", default=None, help="Comma-separated precincts the board declares recounted to the end (default: computed).")
@pass_ctx
def terminate_cmd(ctx: Ctx, requested_by: str, reason: str, finished: str | None) -> None:
    """Stop the recount at a precinct boundary: unfinished precincts keep their certified figures."""
    from scanpipe.recount.service import terminate

    done = [p.strip() for p in finished.split(",") if p.strip()] if finished is not None else None
    doc, accepted = terminate(ctx.store(), requested_by=requested_by, reason=reason, finished=done)
    _verdict(doc, accepted, "terminate")


@recount.command("costs")
@click.option("--actual-cost", default=None, help="The recount's actual cost in dollars (Arkansas charges the least of it and the caps).")
@pass_ctx
def costs_cmd(ctx: Ctx, actual_cost: str | None) -> None:
    """Who pays and how much: every statutory test with its inputs, arithmetic and result."""
    from scanpipe.recount.service import costs

    amount = None
    if actual_cost is not None:
        try:
            amount = Decimal(actual_cost)
        except InvalidOperation:
            raise click.BadParameter(f"{actual_cost!r} is not an amount", param_hint="--actual-cost") from None
        if amount < 0 or not amount.is_finite():
            raise click.BadParameter(f"{actual_cost!r} is not an amount", param_hint="--actual-cost")
    _echo(costs(ctx.store(), actual_cost=amount))


@recount.command("report")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Folder for report.html, report.pdf, report.json, results.json.")
@pass_ctx
def report_cmd(ctx: Ctx, out: Path) -> None:
    """Write the report the board certifies (HTML, PDF, JSON, NIST SP 1500-100 results)."""
    from scanpipe.recount.service import write_report

    doc = write_report(ctx.store(), out)
    _echo(doc)
    if doc["stale"]:
        click.echo("recount report: the data changed after the board certified this recount: this report says so", err=True)


@recount.command("certify")
@click.option("--member", "members", multiple=True, required=True, help="A board member present (repeat for each).")
@click.option("--report", "report_dir", type=click.Path(path_type=Path), required=True, help="The folder `recount report` wrote.")
@pass_ctx
def certify_cmd(ctx: Ctx, members: tuple[str, ...], report_dir: Path) -> None:
    """The board certifies the recount: members recorded, the report frozen with its hash."""
    from scanpipe.recount.service import certify

    doc, accepted = certify(ctx.store(), members=members, report_dir=report_dir)
    _verdict(doc, accepted, "certify")


def register(cli: click.Group) -> None:
    cli.add_command(recount)
