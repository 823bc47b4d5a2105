"""The ``scanpipe`` command line: parse arguments, build the edges, call the library.

Exit status (contract section 5): 2 when the command as a whole cannot run (arguments,
definition, database, a missing path), with a message naming the file and the reason;
``ingest``, ``identify``, ``adjudicate``, ``tally`` (and later ``scan``, ``reconcile``)
exit 1 when the queue is not empty afterwards; everything else 0 on success. Errors are
mapped to messages and codes in one place: :func:`main`.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import click

from scanpipe.errors import ScanpipeError
from scanpipe.types import CardHints, CardKind

if TYPE_CHECKING:
    from scanpipe.store.repository import Store

DEFAULT_DB = "sqlite:///scanpipe.db"


class Ctx:
    def __init__(self, db: str) -> None:
        self.db = db
        self._store: Store | None = None

    def store(self, *, migrate: bool = False) -> Store:
        from scanpipe.store.repository import Store

        if self._store is None:
            store = Store.open(self.db, create=migrate)
            if migrate:
                store.migrate()
            else:
                store.require_schema()
            self._store = store
        return self._store


pass_ctx = click.make_pass_decorator(Ctx)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--db", envvar="SCANPIPE_DB", default=DEFAULT_DB, show_default=True, help="SQLAlchemy database URL (env SCANPIPE_DB).")
@click.version_option(package_name="scanpipe")
@click.pass_context
def cli(ctx: click.Context, db: str) -> None:
    """scanpipe: read recount ballot cards, reconcile duplicates with originals, tally."""
    ctx.obj = Ctx(db)


def _exit_for_queue(store, verb: str, *, changed: bool = True) -> None:  # noqa: ANN001
    """Exit 1 when something awaits a person; after a change, refresh the review's index."""
    from scanpipe.workflow import queue

    items = queue(store)
    if changed:
        from scanpipe.review.index import refresh_all, review_in_use

        if review_in_use(store):  # else `scanpipe review` builds the index when it starts
            refresh_all(store, items)
    if items:
        from scanpipe.names import reason_label

        reasons = Counter(reason_label(i.reason) for i in items)
        detail = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
        click.echo(f"{verb}: {len(items)} item(s) await a person ({detail}); see `scanpipe queue`", err=True)
        sys.exit(1)


# --------------------------------------------------------------------------------------


@cli.command()
@click.option("--election", "election_path", required=True, type=click.Path(path_type=Path), help="election.json")
@click.option("--force", is_flag=True, help="Load a definition that changes how stored cards are read or counted (logged).")
@click.option("--accept-blank-marks", is_flag=True,
              help="Load reference scans the check takes for voted cards (marks in their targets), after looking at them "
                   "(logged): those targets are then always read by a person.")
@pass_ctx
def init(ctx: Ctx, election_path: Path, force: bool, accept_blank_marks: bool) -> None:
    """Create or migrate the database and load the definition and layouts."""
    from scanpipe.workflow import load_election_file

    store = ctx.store(migrate=True)
    loaded = load_election_file(store, election_path, force=force, accept_blank_marks=accept_blank_marks)
    election = loaded.election
    for change in loaded.changes:
        click.echo(f"  changed: {change.text}" + ("  (alters how stored cards are read or counted)" if change.alters_readings else ""))
    if loaded.changed and loaded.cards and any(c.alters_readings for c in loaded.changes):
        click.echo(f"  --force: loaded over {loaded.cards} stored card(s) (logged); run `scanpipe reconcile` and check the queue", err=True)
    for warning in loaded.warnings:
        click.echo(f"  look at the layout: {warning}", err=True)
    if any(not page.fiducials_in for s in election.ballot_styles for page in s.layout.pages):
        from scanpipe.imaging.page_text import ocr_available

        if not ocr_available():
            click.echo("  note: OCR is not installed, so a card that differs from a vendor blank in one letter or digit "
                       "alone (\"Split B\" where the blank prints \"Split A\") is told from it only where the election "
                       "has that other style too; a card of a style it lacks may then be read as the blank. Install it: "
                       "pip install --no-deps 'rapidocr-onnxruntime>=1.4' && pip install 'scanpipe[ocr]'", err=True)
    styles = len(election.ballot_styles)
    verb = ("loaded" if not loaded.changes else "loaded (changed)") if loaded.changed else "already loaded (unchanged)"
    click.echo(f"election {election.id} ({election.name}): {verb}; {len(election.precincts)} precincts, {len(election.contests)} contests, {styles} ballot styles")


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--kind", type=click.Choice(["auto", "ballot", "duplicate", "original"]), default="auto", show_default=True)
@click.option("--batch", default=None, help="Batch name (default: the first path's folder name).")
@click.option("--style", default=None, help="Ballot style of every card without a card code (remembered for the batch).")
@click.option("--precinct", default=None, help="Precinct of every card whose style serves several (remembered for the batch).")
@click.option("--workers", type=int, default=1, show_default=True, help="Worker processes.")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True)
@click.option("--scheduler", default=None, help="Dask scheduler address (implies --executor dask; default: a local cluster).")
@click.option("--watch", is_flag=True, help="Keep reading files as they appear (hot folder).")
@click.option("--duplex", is_flag=True,
              help="The files are a duplex scan's sides, a file each: in each folder, in name order, two by two one sheet's "
                   "front and back (told as one sheet: one style, blank backs, each side's show-through of the other). "
                   "Without it, two files next to each other that read as one style's front and back are tried for "
                   "the other side's show-through alone, taken out only where the sides measure it.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@pass_ctx
def ingest(ctx: Ctx, paths: tuple[str, ...], kind: str, batch: str | None, style: str | None, precinct: str | None,
           workers: int, executor: str, scheduler: str | None, watch: bool, duplex: bool, quiet: bool) -> None:
    """Read card images (files or folders, recursively), interpret and store each card."""
    from tqdm import tqdm

    from scanpipe.workflow import ingest_paths

    if workers < 1:
        raise click.BadParameter("must be at least 1", param_hint="--workers")
    executor = _executor_for(executor, scheduler)
    store = ctx.store()
    batch_name = batch or _default_batch(paths)
    hints = CardHints(style=style, precinct=precinct, kind=None if kind == "auto" else CardKind(kind))
    if watch and duplex:
        raise click.UsageError("--duplex reads a folder's files two by two once all are there; it does not go with --watch")
    if watch:
        from scanpipe.sources.watch import watch_folder

        summary = watch_folder(store, paths, batch=batch_name, hints=hints, workers=workers)
        for line in summary.lines():
            click.echo(line)
        _exit_for_queue(store, "ingest")
        return
    bar = tqdm(total=0, unit="file", disable=quiet or None, file=sys.stderr, dynamic_ncols=True)

    def total(n: int) -> None:
        bar.reset(total=n)

    summary = ingest_paths(store, paths, batch=batch_name, hints=hints, workers=workers, executor=executor,
                           scheduler=scheduler, on_file=lambda r: bar.update(1), on_total=total, duplex=duplex)
    bar.close()
    for line in summary.lines():
        click.echo(line)
    _exit_for_queue(store, "ingest")


def _executor_for(executor: str, scheduler: str | None) -> str:
    """``--scheduler`` implies ``--executor dask``; with ``--executor local`` it is an error."""
    if scheduler is None:
        return executor
    source = click.get_current_context().get_parameter_source("executor")
    if executor == "local" and source is not click.core.ParameterSource.DEFAULT:
        raise click.UsageError("--scheduler names a Dask scheduler, but --executor local runs without Dask: "
                               "drop --scheduler, or use --executor dask")
    if executor != "dask":
        click.echo(f"--scheduler {scheduler}: running on Dask (--scheduler implies --executor dask)", err=True)
    return "dask"


def _default_batch(paths: tuple[str, ...]) -> str:
    p = Path(paths[0]).resolve()
    return (p if p.is_dir() else p.parent).name or "batch"


@cli.group()
def batch() -> None:
    """List or void batches."""


@batch.command("list")
@pass_ctx
def batch_list(ctx: Ctx) -> None:
    """List batches with their hints and card counts."""
    store = ctx.store()
    counts = store.batch_card_counts()
    for b in store.list_batches():
        state = f"VOIDED ({b.void_reason})" if b.voided else "active"
        hints = " ".join(f"{k}={v}" for k, v in (("style", b.style), ("precinct", b.precinct), ("kind", b.kind and b.kind.value)) if v)
        click.echo(f"{b.name}\t{counts.get(b.name, 0)} cards\t{state}\t{hints}")


@batch.command("void")
@click.argument("name")
@click.option("--reason", required=True)
@pass_ctx
def batch_void(ctx: Ctx, name: str, reason: str) -> None:
    """Void a batch (e.g. a stack fed twice) so none of its cards count."""
    store = ctx.store()
    store.void_batch(name, reason)
    store.log_event("batch_void", {"batch": name, "reason": reason})
    click.echo(f"batch {name} voided: {reason}")


@cli.command("queue")
@click.option("--json", "as_json", is_flag=True, help="Print the contract's JSON array instead of the table.")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Write the JSON array to this file (FILE.json).")
@pass_ctx
def queue_cmd(ctx: Ctx, as_json: bool, out: Path | None) -> None:
    """What needs a person: a table with batch, position and file (--json: the JSON array)."""
    from scanpipe.workflow import queue

    store = ctx.store()
    items = queue(store)
    text = json.dumps([i.as_json() for i in items], indent=2)
    if out is not None:
        out.write_text(text + "\n", encoding="utf-8")
        click.echo(f"{len(items)} item(s) written to {out}", err=True)
    elif as_json:
        click.echo(text)
    if out is not None or as_json:
        return
    from scanpipe.reports.model import queue_rows
    from scanpipe.reports.text import queue_table

    for line in queue_table(queue_rows(store, store.current_election(), items)):
        click.echo(line)


@cli.command()
@click.argument("card")
@click.option("--style", default=None)
@click.option("--page", type=int, default=None)
@click.option("--precinct", default=None)
@click.option("--kind", type=click.Choice(["ballot", "duplicate", "original"]), default=None)
@click.option("--serial", default=None)
@pass_ctx
def identify(ctx: Ctx, card: str, style: str | None, page: int | None, precinct: str | None, kind: str | None, serial: str | None) -> None:
    """State what the machine could not tell about a card; it is interpreted again."""
    from scanpipe.workflow import identify as do_identify

    store = ctx.store()
    result = do_identify(store, card, style=style, page=page, precinct=precinct, kind=CardKind(kind) if kind else None, serial=serial)
    from scanpipe.names import Names
    from scanpipe.scan import describe_card

    place = store.card_place(result.source.card_id)
    click.echo(f"{place.label if place is not None else result.source.card_id}: {describe_card(result, Names(store.current_election()))}")
    _exit_for_queue(store, "identify")


@cli.command("reconcile")
@click.option("--render-dir", type=click.Path(path_type=Path), default=Path("new-duplicates"), show_default=True,
              help="Where printable new duplicates (PNG and PDF) are written.")
@pass_ctx
def reconcile_cmd(ctx: Ctx, render_dir: Path) -> None:
    """Pair duplicates with originals, compare them contest by contest, record statuses."""
    from scanpipe.reconcile.service import reconcile

    store = ctx.store()
    for line in reconcile(store, render_dir=render_dir).lines():
        click.echo(line)
    _exit_for_queue(store, "reconcile")


@cli.command()
@click.argument("item")
@click.option("--contest", required=True)
@click.option("--votes", required=True, help='Options the voter intended, comma-separated; "" for no choice.')
@click.option("--auditor", "auditors", multiple=True, required=True,
              help="A review account (`scanpipe user list`), who types their password; repeat for two auditors attesting jointly.")
@click.option("--password-stdin", is_flag=True, help="Read each auditor's password from stdin, one line each, in --auditor order (scripts).")
@click.option("--no-accounts", is_flag=True, help="A test deck without review accounts: record the --auditor names as given (logged).")
@click.option("--override", is_flag=True, help="Decide a contest of a card that nothing queued (changes the machine's clear reading); needs --reason.")
@click.option("--reason", default=None, help="Why a contest nothing queued is overridden (logged).")
@click.option("--rule", default=None, help="The voter-intent rule the decision rests on.")
@click.option("--note", default=None)
@click.option("--write-in", "write_in_names", multiple=True,
              help="The name written in a write-in space the decision counts (repeat for several, in ballot order).")
@click.option("--render-dir", type=click.Path(path_type=Path), default=Path("new-duplicates"), show_default=True,
              help="Where a new duplicate's printable card goes (for a serial).")
@pass_ctx
def adjudicate(ctx: Ctx, item: str, contest: str, votes: str, auditors: tuple[str, ...], password_stdin: bool, no_accounts: bool,
               override: bool, reason: str | None, rule: str | None, note: str | None, write_in_names: tuple[str, ...],
               render_dir: Path) -> None:
    """Record a person's decision of voter intent for one contest of a card (id, id prefix,
    BATCH#POSITION or path) or a serial.

    Auditors are review accounts, each proving it with their password; the two halves of a
    decision come from two accounts and two logins (contract section 5, "Two people")."""
    from scanpipe.cli_people import attest_auditors
    from scanpipe.names import Names
    from scanpipe.reconcile.service import adjudicate_pair
    from scanpipe.workflow import adjudicate_card, resolve_card

    if override != bool(reason and reason.strip()):
        raise click.UsageError("--override needs --reason TEXT (and --reason goes with --override)")
    store = ctx.store()
    election = store.current_election()
    chosen = [v.strip() for v in votes.split(",") if v.strip()]
    write_ins = _write_ins(election, contest, chosen, write_in_names)
    attestation = attest_auditors(store, list(auditors), no_accounts=no_accounts, password_stdin=password_stdin,
                                  override=reason.strip() if override and reason else None)
    who = [a.strip().lower() for a in auditors] if attestation.accounts else list(auditors)
    if store.get_card(item) is None and store.find_card_by_path(item) is None and store.get_pair(item) is not None:
        what = f"serial {item}"
        outcome = adjudicate_pair(store, item, contest=contest, votes=chosen, auditors=who, rule=rule, note=note,
                                  render_dir=render_dir, attestation=attestation, write_ins=write_ins)
    else:
        card_id = resolve_card(store, item).card_id
        place = store.card_place(card_id)
        what = place.label if place is not None else card_id
        outcome = adjudicate_card(store, card_id, contest=contest, votes=chosen, auditors=who, rule=rule, note=note,
                                  attestation=attestation, write_ins=write_ins)
    names = Names(election)
    reading = names.votes(chosen, write_ins=write_ins) if contest in {c.id for c in election.contests} else votes
    click.echo(f"decision {outcome.decision_id} on {what} / {names.contest(contest)} ({reading}): {outcome.message}")
    for serial in outcome.new_duplicates:
        click.echo(f"new duplicate {serial} made: its printable card is {render_dir / (serial + '.pdf')} "
                   f"(print, scan back and store it: `scanpipe duplicates pending`)")
    _exit_for_queue(store, "adjudicate")


def _write_ins(election: object, contest: str, chosen: list[str], names: tuple[str, ...]) -> dict[str, str]:
    """``--write-in`` names paired, in ballot order, with the write-in options ``--votes`` counts."""
    if not names:
        return {}
    from scanpipe.errors import DecisionError

    found = [c for c in election.contests if c.id == contest]  # type: ignore[attr-defined]
    if not found:
        raise DecisionError(f"--contest {contest}: no such contest")
    options = [o.id for o in found[0].options if o.write_in and o.id in chosen]
    if len(options) != len(names):
        raise DecisionError(f"--write-in: {len(names)} name(s) given, but --votes counts {len(options)} write-in option(s) of "
                            f"{found[0].title}")
    return dict(zip(options, names))


@cli.command()
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Write the CSV here instead of stdout.")
@click.option("--scope", "scoped", is_flag=True, help="Only the open recount case's contest in its precincts.")
@pass_ctx
def tally(ctx: Ctx, out: Path | None, scoped: bool) -> None:
    """Per-precinct tallies of what counts (CSV)."""
    from scanpipe.audit_verify import tally_digest
    from scanpipe.tally import tally_csv
    from scanpipe.workflow import tally as do_tally

    store = ctx.store()
    rows = do_tally(store)
    store.log_event("tally", {"sha256": tally_digest(rows), "rows": len(rows), "out": str(out) if out else None})
    if scoped:
        from scanpipe.recount.service import active_scope

        scope = active_scope(store)
        if scope is None:
            raise click.UsageError("--scope: no recount case is open")
        rows = [r for r in rows if r.precinct in scope.precincts and r.contest == scope.contest]
    text = tally_csv(rows)
    if out is None:
        click.echo(text, nl=False)
    else:
        out.write_text(text, encoding="utf-8", newline="")
        click.echo(f"tally written to {out}", err=True)
    _exit_for_queue(store, "tally", changed=False)


@cli.group()
def export() -> None:
    """Export cast vote records and other files."""


@export.command("cvr")
@click.option("--out", type=click.Path(path_type=Path), required=True)
@click.option("--validate/--no-validate", default=True, show_default=True, help="Check the report against the NIST schema before writing.")
@pass_ctx
def export_cvr(ctx: Ctx, out: Path, validate: bool) -> None:
    """NIST SP 1500-103 cast vote records (JSON), one CVR per card."""
    from scanpipe.exports.service import export_cvr_file

    n = export_cvr_file(ctx.store(), out, validate=validate)
    click.echo(f"{n} CVR(s) written to {out}")


@export.command("pairs")
@click.option("--out", type=click.Path(path_type=Path), required=True)
@pass_ctx
def export_pairs(ctx: Ctx, out: Path) -> None:
    """One row per serial: status, duplicate, original, contests, what counts (CSV)."""
    from scanpipe.reconcile.service import pairs_csv

    text = pairs_csv(ctx.store())
    out.write_text(text, encoding="utf-8", newline="")
    click.echo(f"{text.count(chr(10)) - 1} serial(s) written to {out}")


@cli.group()
def report() -> None:
    """Reports for the board."""


@report.command("duplicates")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="FILE.csv (one row per precinct), FILE.html or FILE.pdf (printable, every serial listed); default: a table on stdout.")
@pass_ctx
def report_duplicates(ctx: Ctx, out: Path | None) -> None:
    """Duplicate reconciliation report per precinct and per serial (run `reconcile` first); exit 1 while it is not final."""
    from scanpipe.cli_view import write_duplicates_report

    write_duplicates_report(ctx.store(), out)


@cli.group("import")
def import_group() -> None:
    """Import records kept elsewhere."""


@import_group.command("duplication-log")
@click.argument("csv_file", type=click.Path(path_type=Path))
@pass_ctx
def import_duplication_log(ctx: Ctx, csv_file: Path) -> None:
    """The canvass duplication log (CSV: serial, precinct, reason[, ballot_type, eligible_contests])."""
    from scanpipe.reconcile.duplog import read_duplication_log

    store = ctx.store()
    if not csv_file.is_file():
        raise click.BadParameter(f"{csv_file}: no such file", param_hint="CSV_FILE")
    entries = read_duplication_log(csv_file, store.current_election())
    n = store.import_duplication_log(entries, str(csv_file))
    types = Counter(e.ballot_type.value for e in entries)
    click.echo(f"{n} serial(s) imported from {csv_file} (" + ", ".join(f"{k} {t}" for t, k in sorted(types.items())) + "); "
               "run `scanpipe reconcile` to compare them by ballot type")


@cli.command()
@click.option("--cards", type=int, default=60, show_default=True, help="Synthetic cards to make.")
@click.option("--dir", "directory", type=click.Path(path_type=Path), default=Path("scanpipe-demo"), show_default=True)
@click.option("--seed", type=int, default=2026, show_default=True)
@click.option("--workers", type=int, default=min(2, os.cpu_count() or 1), show_default=True)
def demo(cards: int, directory: Path, seed: int, workers: int) -> None:
    """Make a synthetic election and card images, run the whole pipeline on SQLite, print a summary."""
    from scanpipe.demo import run_demo

    for line in run_demo(directory, cards=cards, seed=seed, workers=workers):
        click.echo(line)


from scanpipe.cli_calibrate import register as _register_calibrate  # noqa: E402  (calibrate)
from scanpipe.cli_review import register as _register_review  # noqa: E402  (review, user, audit)
from scanpipe.cli_scan import register as _register_scan  # noqa: E402  (scan, devices)
from scanpipe.cli_statute import register as _register_statute  # noqa: E402  (duplicates, board, rules)
from scanpipe.cli_view import register as _register_view  # noqa: E402  (status, report tally, report pull-list)

_register_scan(cli)
_register_calibrate(cli)
_register_review(cli)
_register_statute(cli)
from scanpipe.cli_recount import register as _register_recount  # noqa: E402  (recount)

_register_recount(cli)
_register_view(cli)


def main(argv: list[str] | None = None) -> None:
    """Entry point: map operational errors to exit status 2 in one place."""
    try:
        cli.main(args=argv, prog_name="scanpipe", standalone_mode=False)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.ClickException as e:
        e.show()
        sys.exit(2)
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("interrupted: what was stored is kept; run the same command again to resume", err=True)
        sys.exit(130)
    except ScanpipeError as e:
        click.echo(f"scanpipe: error: {e}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
