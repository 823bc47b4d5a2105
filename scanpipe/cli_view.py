"""``scanpipe status`` and the printable papers: ``report tally``, ``report duplicates``,
``report pull-list``. Registered on the main group by :func:`register`.

Every one of them names precincts, contests and candidates, and every card by its batch,
position and file; ``--out`` chooses the format by the file's extension.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from scanpipe.store.repository import Store

if TYPE_CHECKING:
    from scanpipe.reports.model import DuplicatesReport


def _store(ctx: object) -> Store:
    return ctx.store()  # type: ignore[attr-defined,no-any-return]


@click.command()
@click.pass_obj
def status(ctx: object) -> None:
    """A staffer's screen: cards read, what waits for a person (by reason and precinct),
    pairs, new duplicates to print."""
    from scanpipe.reports.model import build_status
    from scanpipe.reports.text import status_lines
    from scanpipe.workflow import queue

    store = _store(ctx)
    for line in status_lines(build_status(store, store.current_election(), queue(store))):
        click.echo(line)


@click.command("tally")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="FILE.html or FILE.pdf (printable, with signature lines), FILE.txt; default: text on stdout.")
@click.pass_obj
def report_tally(ctx: object, out: Path | None) -> None:
    """The tally per precinct with names and totals, for the board to sign."""
    from scanpipe.reports.model import build_tally
    from scanpipe.reports.printable import output_format, tally_html, tally_pdf, write_paper
    from scanpipe.reports.text import tally_lines
    from scanpipe.workflow import tally

    store = _store(ctx)
    report = build_tally(store.current_election(), tally(store))
    if out is None:
        click.echo("\n".join(tally_lines(report)))
        return
    fmt = output_format(out, (".html", ".pdf", ".txt"))
    if fmt == ".pdf":
        write_paper(out, pdf=tally_pdf(report))
    elif fmt == ".html":
        write_paper(out, html=tally_html(report))
    else:
        write_paper(out, text="\n".join(tally_lines(report)) + "\n")
    store.log_event("report", {"what": "tally", "file": str(out)})
    click.echo(f"tally written to {out}", err=True)


def write_duplicates_report(store: Store, out: Path | None) -> None:
    """``report duplicates``: a table on stdout, or CSV / HTML / PDF by ``out``'s extension;
    exit 1 while the report is not final under the election's rule set."""
    from scanpipe.reports.model import build_duplicates
    from scanpipe.reports.text import duplicates_lines

    report = build_duplicates(store, store.current_election())
    if out is None:
        click.echo("\n".join(duplicates_lines(report)))
    else:
        _write_duplicates(store, report, out)
    if not report.final:
        click.echo(f"report duplicates: NOT FINAL: {report.why_not_final}", err=True)
        sys.exit(1)


def _write_duplicates(store: Store, report: DuplicatesReport, out: Path) -> None:
    from scanpipe.reports.printable import duplicates_csv, duplicates_html, duplicates_pdf, output_format, write_paper
    from scanpipe.reports.text import duplicates_lines

    fmt = output_format(out, (".csv", ".html", ".pdf", ".txt"))
    if fmt == ".csv":
        write_paper(out, text=duplicates_csv(report))
    elif fmt == ".html":
        write_paper(out, html=duplicates_html(report))
    elif fmt == ".pdf":
        write_paper(out, pdf=duplicates_pdf(report))
    else:
        write_paper(out, text="\n".join(duplicates_lines(report)) + "\n")
    store.log_event("report", {"what": "duplicates", "file": str(out)})
    click.echo(f"report written to {out}", err=True)


@click.command("pull-list")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="FILE.html or FILE.pdf; default: a table on stdout.")
@click.pass_obj
def report_pull_list(ctx: object, out: Path | None) -> None:
    """The cards a person must see, by batch and position, to pull from the stacks."""
    from scanpipe.reports.model import Heading, pull_list
    from scanpipe.reports.printable import output_format, pull_list_html, pull_list_pdf, write_paper
    from scanpipe.reports.text import table
    from scanpipe.workflow import queue

    store = _store(ctx)
    election = store.current_election()
    rows = pull_list(store, election, queue(store))
    heading = Heading.of(election, "Pull list: cards a person must see")
    if out is None:
        body = [(x.place.batch, x.place.seq, x.place.file + (f" p{x.place.page}" if x.place.page_count > 1 else ""),
                 x.serial or "-", x.role, x.reason_text, x.precinct) for x in rows]
        for line in table(("batch", "position", "file", "serial", "card", "why", "precinct"), body, right=(1,)):
            click.echo(line)
        click.echo(f"{len(rows)} card(s)")
        return
    fmt = output_format(out, (".html", ".pdf"))
    if fmt == ".pdf":
        write_paper(out, pdf=pull_list_pdf(heading, rows))
    else:
        write_paper(out, html=pull_list_html(heading, rows))
    click.echo(f"pull list of {len(rows)} card(s) written to {out}", err=True)


def register(group: click.Group) -> None:
    """Add ``status`` to the main group and ``tally`` / ``pull-list`` to ``report``."""
    group.add_command(status)
    report = group.commands["report"]
    assert isinstance(report, click.Group)
    report.add_command(report_tally)
    report.add_command(report_pull_list)
