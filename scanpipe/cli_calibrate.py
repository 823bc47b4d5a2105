"""``scanpipe calibrate``: thresholds from a labelled sample, layouts from a blank scan.

* ``calibrate thresholds --deck expected.json``: interprets every card of a labelled deck (a
  generated test deck, or a hand-labelled sample in the same ``expected.json`` form), pairs each
  target's raw score with the label a careful person gave it, derives the marginal and
  definite thresholds (:func:`scanpipe.calibration.derive_thresholds`) and writes them, with
  their provenance, in ``scanpipe/calibration/`` (or ``$SCANPIPE_CALIBRATION``).
* ``calibrate layout --blank scan.tif|sample.pdf``: finds the empty targets on a blank card
  (a scan, or the vendor's sample-ballot PDF rendered at ``--dpi``), reads the names beside
  them with OCR and proposes their assignment to the style's contests
  (:mod:`scanpipe.layout_from_blank`); prints the table, writes a layout file of the
  contract's form and, on request, a review overlay.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from scanpipe.errors import ConfigError, SourceError
from scanpipe.types import CardHints, MarkIntent, ReadCard, TargetScore


def _deck_samples(args: tuple[str, str, list[dict[str, Any]]]) -> list[tuple[TargetScore, MarkIntent]]:
    """Interpret one deck file and pair its target scores with their labels (a worker task)."""
    from scanpipe.classify import load_thresholds
    from scanpipe.election import load_election
    from scanpipe.interpret import InterpretContext, interpret_file, load_references

    election_path, path, truths = args
    election = _ELECTIONS.get(election_path)
    if election is None:
        loaded = load_election(election_path)
        election = _ELECTIONS[election_path] = InterpretContext(loaded, load_thresholds(), load_references(loaded))
    out = []
    for card in interpret_file(path, election, CardHints(), "calibration"):
        truth = next((t for t in truths if t.get("page_of_file", 1) == card.source.page_index), None)
        if truth is None or not isinstance(card.interpretation, ReadCard):
            continue
        labels = {(t["contest"], t["option"]): MarkIntent(t["intent"]) for t in truth["targets"]}
        for reading in card.interpretation.targets:
            label = labels.get((reading.score.contest, reading.score.option))
            if label is not None:
                out.append((reading.score, label))
    return out


_ELECTIONS: dict[str, Any] = {}


def register(group: click.Group) -> None:
    from scanpipe.cli_blank import calibrate_blank, calibrate_election

    calibrate.add_command(calibrate_blank)
    calibrate.add_command(calibrate_election)
    group.add_command(calibrate)


@click.group()
def calibrate() -> None:
    """Derive thresholds and layouts (results are data with their provenance, reviewed like code)."""


@calibrate.command("thresholds")
@click.option("--deck", "deck", type=click.Path(path_type=Path, exists=True), required=True, help="expected.json of a labelled deck")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Default: the thresholds file in use ($SCANPIPE_CALIBRATION/thresholds.json, else scanpipe/calibration/thresholds.json)")
@click.option("--jobs", type=int, default=2, show_default=True)
def calibrate_thresholds(deck: Path, out: Path | None, jobs: int) -> None:
    """Derive the marginal and definite thresholds from a labelled sample."""
    from scanpipe.calibration import (
        calibration_report,
        derive_thresholds,
        write_thresholds,
    )
    from scanpipe.classify import default_thresholds_path, load_thresholds

    expected = json.loads(deck.read_text())
    election_path = str((deck.parent / expected["election"]).resolve())
    by_file: dict[str, list[dict[str, Any]]] = {}
    for card in expected["cards"]:
        by_file.setdefault(str((deck.parent / card["file"]).resolve()), []).append(card)
    tasks = [(election_path, path, truths) for path, truths in sorted(by_file.items())]
    samples: list[tuple[TargetScore, MarkIntent]] = []
    with ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=multiprocessing.get_context("forkserver")) as pool:
        for got in pool.map(_deck_samples, tasks, chunksize=4):
            samples.extend(got)
    if not samples:
        raise ConfigError(f"{deck}: no labelled target could be read; nothing to derive from")
    reviewed = load_thresholds()
    thresholds = derive_thresholds(samples, source=f"derived from {deck} ({len(samples)} targets)",
                                   hesitation_dot_in=reviewed.hesitation_dot_in, voter_reach=reviewed.voter_reach)
    target = out or default_thresholds_path()
    write_thresholds(thresholds, target, provenance={
        "deck": str(deck), "seed": expected.get("seed"), "profile": expected.get("profile"), "targets": len(samples),
        "derived_at": datetime.now(UTC).isoformat(timespec="seconds"), "command": "scanpipe calibrate thresholds",
    })
    report = calibration_report(samples, thresholds)
    click.echo(f"{len(samples)} labelled targets; thresholds written to {target}")
    click.echo(report.summary())


@calibrate.command("layout")
@click.option("--blank", "blanks", type=click.Path(path_type=Path, exists=True, dir_okay=False), required=True, multiple=True,
              help="A scan of a blank card, or the vendor's sample-ballot PDF; give it once per page, in page order.")
@click.option("--election", "election_path", type=click.Path(path_type=Path, exists=True), required=True)
@click.option("--style", required=True, help="The ballot style the blank is.")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="The layout file to write (layouts/<style>.json).")
@click.option("--dpi", type=float, default=None,
              help="A scan: its resolution (default: the file's own tag). A PDF: the resolution to render it at (default 200).")
@click.option("--pdf-page", "pdf_pages", default=None, help="PDF pages to use, comma-separated (default: every page, one layout page each).")
@click.option("--page", type=int, default=1, show_default=True, help="Layout page number of the first page given.")
@click.option("--contests", default=None, help="Contest ids on these pages (comma-separated); default: the style's.")
@click.option("--overlay", type=click.Path(path_type=Path), default=None,
              help="Write a review image (PNG) with the targets and the names assigned; page N > 1 adds -pN to the name.")
@click.option("--no-ocr", is_flag=True, help="Do not read names: assign in reading order (only when the counts agree).")
@click.option("--reference", is_flag=True, hidden=True, help="Kept for old scripts: the blank is recorded as the reference anyway.")
def calibrate_layout(blanks: tuple[Path, ...], election_path: Path, style: str, out: Path, dpi: float | None, pdf_pages: str | None,
                     page: int, contests: str | None, overlay: Path | None, no_ocr: bool, reference: bool) -> None:
    """Find the targets on a blank (scan or vendor PDF), read the names beside them, propose the layout.

    Prints what it assigned to which contest option, with a confidence, and what it could
    not assign; writes the layout (assigned targets only) and, with --overlay, a picture
    to check it against. A person confirms the layout before `scanpipe init`. Exit 1 when a
    target or an option is left unassigned (the layout is still written, for editing).
    """
    from scanpipe.layout_from_blank import contests_of_style, layout_document, proposal_report, propose_layout

    definition = _read_definition(election_path)
    wanted = [c.strip() for c in contests.split(",") if c.strip()] if contests else None
    contest_values = contests_of_style(definition, style, wanted, file=str(election_path))
    pages = _blank_pages(blanks, dpi, pdf_pages, page, out)
    proposal, scans = propose_layout(pages, contest_values, read_names=not no_ocr)
    for line in proposal_report(proposal, scans, contest_values):
        click.echo(line)
    if not proposal.assignments:
        click.echo(f"nothing could be assigned; no layout written to {out}", err=True)
        sys.exit(1)
    layout = layout_document(proposal, scans, pages, style=style, contests=contest_values)
    out.parent.mkdir(parents=True, exist_ok=True)
    for blank in pages:
        if blank.reference is not None and blank.source is not None:
            _write_png(blank.gray, out.parent / blank.reference)
    _write_text(out, json.dumps(layout, indent=2) + "\n")
    if overlay is not None:
        _write_overlays(overlay, pages, scans, proposal, contest_values)
    n = len(proposal.assignments)
    click.echo(f"\n{n} target(s) assigned; layout written to {out}" + (f"; overlay {overlay}" if overlay else ""))
    if proposal.unassigned_targets or proposal.missing_options:
        click.echo(f"calibrate layout: {len(proposal.unassigned_targets)} target(s) and {len(proposal.missing_options)} option(s) "
                   f"left unassigned; edit {out} before `scanpipe init`", err=True)
        sys.exit(1)


def _read_definition(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read as JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the election definition must be a JSON object")
    return data


def _blank_pages(blanks: tuple[Path, ...], dpi: float | None, pdf_pages: str | None, first: int, out: Path) -> list[Any]:
    """Every page given, as :class:`BlankPage` values numbered from ``first``."""
    from scanpipe.layout_from_blank import BlankPage

    pages: list[BlankPage] = []
    for path in blanks:
        for gray, page_dpi, size_in, rendered, texts in _read_blank(path, dpi, pdf_pages):
            number = first + len(pages)
            if rendered:  # a PDF page or a page of a multi-page file: its image is written beside the layout
                ref = f"{out.stem}-p{number}.png"
                pages.append(BlankPage(number, gray, page_dpi, size_in, ref, source=path, texts=texts))
            else:
                pages.append(BlankPage(number, gray, page_dpi, size_in, _relative_to(path, out.parent)))
    return pages


_Blank = tuple[Any, float, tuple[float, float] | None, bool, Any]  # image, dpi, page size, one of several pages, text layer


def _read_blank(path: Path, dpi: float | None, pdf_pages: str | None) -> list[_Blank]:
    from scanpipe.imaging.decode import ImageDecodeError, decode_card_bytes, sniff_format

    data = path.read_bytes()
    if sniff_format(data) == "pdf":
        return _render_pdf(path, data, dpi or 200.0, pdf_pages)
    if pdf_pages:
        raise ConfigError(f"--pdf-page: {path} is not a PDF")
    try:
        decoded = decode_card_bytes(data, str(path))
    except ImageDecodeError as exc:
        raise SourceError(f"{path}: {exc.detail}") from exc
    out: list[_Blank] = []
    for page in decoded:
        page_dpi = dpi or (round(page.dpi, 1) if page.dpi else None)  # a PNG stores pixels per metre: 199.9996
        if page_dpi is None:
            raise ConfigError(f"{path}: the file does not say its resolution; give --dpi")
        width_in = page.image.shape[1] / page_dpi
        if not 2.5 <= width_in <= 14.5:
            raise ConfigError(f"{path}: at {page_dpi:g} dpi the page would be {width_in:.1f} in wide; give the scan's real --dpi")
        out.append((page.image, float(page_dpi), None, len(decoded) > 1, None))
    return out


def _render_pdf(path: Path, data: bytes, dpi: float, pdf_pages: str | None) -> list[_Blank]:
    import numpy as np
    import pypdfium2 as pdfium

    from scanpipe.imaging.page_text import pdf_text_lines

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise SourceError(f"{path}: not a PDF that can be read ({exc})") from exc
    try:
        count = len(pdf)
        try:
            wanted = [int(p) for p in pdf_pages.split(",")] if pdf_pages else list(range(1, count + 1))
        except ValueError as exc:
            raise ConfigError(f"--pdf-page: '{pdf_pages}' is not a list of page numbers") from exc
        bad = [p for p in wanted if not 1 <= p <= count]
        if bad:
            raise ConfigError(f"--pdf-page: {path} has {count} page(s); no page {', '.join(map(str, bad))}")
        out: list[_Blank] = []
        for number in wanted:
            page = pdf[number - 1]
            width_pt, height_pt = page.get_size()
            gray = np.ascontiguousarray(page.render(scale=dpi / 72.0, grayscale=True).to_numpy())
            if gray.ndim == 3:
                gray = np.ascontiguousarray(gray[:, :, 0])
            out.append((gray, dpi, (round(width_pt / 72.0, 3), round(height_pt / 72.0, 3)), True, pdf_text_lines(page, dpi)))
        return out
    finally:
        pdf.close()


def _relative_to(path: Path, folder: Path) -> str:
    """``path`` as the layout records it: relative to the layout's folder when it lies there or
    one level up (``election/blanks/`` beside ``election/layouts/``), else absolute."""
    resolved, base = path.resolve(), folder.resolve()
    if resolved.is_relative_to(base) or resolved.is_relative_to(base.parent):
        return os.path.relpath(resolved, base)
    return str(resolved)


def _write_png(gray: Any, target: Path) -> None:
    import cv2

    if not cv2.imwrite(str(target), gray):
        raise SourceError(f"{target}: the rendered page could not be written")


def _write_text(target: Path, text: str) -> None:
    """Write whole or not at all: a temporary file beside it, then a rename."""
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)


def _write_overlays(overlay: Path, pages: list[Any], scans: Any, proposal: Any, contests: Any) -> None:
    import cv2

    from scanpipe.layout_overlay import draw_overlay

    overlay.parent.mkdir(parents=True, exist_ok=True)
    for k, (blank, scan) in enumerate(zip(pages, scans)):
        target = overlay if k == 0 else overlay.with_name(f"{overlay.stem}-p{blank.page}{overlay.suffix or '.png'}")
        if not cv2.imwrite(str(target), draw_overlay(blank.gray, scan, proposal, contests)):
            raise SourceError(f"{target}: the overlay could not be written")
