"""``scanpipe scan`` and ``scanpipe devices``: acquisition at the scanner workstation.

Registered on the main group by ``scanpipe.cli`` calling :func:`register`. Exit status:
0 when the batch is scanned and nothing awaits a person; 1 when the queue is not empty
afterwards (also after ``--stop-on-flag`` paused on a card); 2 when the command cannot
run or the device failed (no such device, empty feeder, jam, device gone), after saying
which pages are kept and how to resume.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from scanpipe.types import CardHints, CardKind


@click.command()
@click.option("--device", required=True, help="test:0 (SANE), twain:<name> (Windows), replay:/folder (a recorded stack).")
@click.option("--batch", default=None, help="Batch name (default: scan-<date>-<time>; with --resume, the newest batch in --out).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("scans"), show_default=True,
              help="Folder of batch folders; pages go to <out>/<batch>/<seq>.png.")
@click.option("--dpi", type=click.IntRange(50, 1200), default=200, show_default=True)
@click.option("--mode", type=click.Choice(["gray", "color"]), default="gray", show_default=True)
@click.option("--duplex", is_flag=True, help="Scan both sides (each side is a card).")
@click.option("--stop-on-flag", is_flag=True, help="Stop the feed at the first card that needs a person, and name it.")
@click.option("--resume", is_flag=True, help="Carry on a batch: store pages left unstored, number on after the last.")
@click.option("--pages", type=click.IntRange(min=1), default=None, help="Scan at most this many pages.")
@click.option("--style", default=None, help="Ballot style of every card without a card code (remembered for the batch).")
@click.option("--precinct", default=None, help="Precinct of the batch's cards (remembered for the batch).")
@click.option("--kind", type=click.Choice(["auto", "ballot", "duplicate", "original"]), default="auto", show_default=True)
@click.pass_obj
def scan(ctx: object, device: str, batch: str | None, out_dir: Path, dpi: int, mode: str, duplex: bool,
         stop_on_flag: bool, resume: bool, pages: int | None, style: str | None, precinct: str | None, kind: str) -> None:
    """Acquire cards from a scanner: write and hash each page, interpret and store it as it lands."""
    from scanpipe.scan import default_batch_name, open_source, scan_batch
    from scanpipe.sources.base import ScanSettings

    store = ctx.store()  # type: ignore[attr-defined]
    name = batch or (_newest_batch(out_dir) if resume else None) or default_batch_name()
    if resume and batch is None:
        click.echo(f"resuming batch {name}", err=True)
    settings = ScanSettings(dpi=dpi, mode=mode, duplex=duplex, max_pages=pages)  # type: ignore[arg-type]
    hints = CardHints(style=style, precinct=precinct, kind=None if kind == "auto" else CardKind(kind))
    summary = scan_batch(store, open_source(device, settings), batch=name, out_dir=out_dir, stop_on_flag=stop_on_flag,
                         resume=resume, on_line=click.echo, hints=hints)
    for line in summary.lines():
        click.echo(line)
    message = summary.stop_message()
    if message is not None:
        click.echo(message, err=True)
    if summary.error is not None:
        sys.exit(2)
    from scanpipe.cli import _exit_for_queue

    _exit_for_queue(store, "scan")


@click.command()
def devices() -> None:
    """List the scanners that can be used with `scan --device`."""
    import shutil

    from scanpipe.scan import list_devices

    found = list_devices()
    for d in found:
        click.echo(d.line())
    if not found:
        why = ("scanimage is not installed (Debian: apt-get install sane-utils)" if shutil.which("scanimage") is None
               else "SANE sees no scanner: check the cable and power, and `sane-find-scanner`")
        click.echo(f"no scanner found: {why}", err=True)
        click.echo("a recorded stack can still be replayed with --device replay:/path/to/folder", err=True)


def register(group: click.Group) -> None:
    """Add ``scan`` and ``devices`` to the main command group."""
    group.add_command(scan)
    group.add_command(devices)


def _newest_batch(out_dir: Path) -> str | None:
    from scanpipe.scan import MANIFEST

    manifests = sorted(out_dir.glob(f"*/{MANIFEST}"), key=lambda p: p.stat().st_mtime) if out_dir.is_dir() else []
    return manifests[-1].parent.name if manifests else None
