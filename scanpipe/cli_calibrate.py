"""``scanpipe calibrate``: thresholds from a labelled sample, layouts from a blank scan.

* ``calibrate thresholds --deck expected.json``: interprets every card of a labelled deck (a
  generated test deck, or a hand-labelled sample in the same ``expected.json`` form), pairs each
  target's raw score with the label a careful person gave it, derives the marginal and
  definite thresholds (:func:`scanpipe.calibration.derive_thresholds`) and writes them, with
  their provenance, in ``scanpipe/calibration/`` (or ``$SCANPIPE_CALIBRATION``).
* ``calibrate layout --blank scan.png``: finds the empty targets on a blank card and assigns
  them, in reading order, to the contest list; writes a layout file of the contract's form.
"""

from __future__ import annotations

import json
import multiprocessing
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
    from scanpipe.classify import default_thresholds_path

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
    thresholds = derive_thresholds(samples, source=f"derived from {deck} ({len(samples)} targets)")
    target = out or default_thresholds_path()
    write_thresholds(thresholds, target, provenance={
        "deck": str(deck), "seed": expected.get("seed"), "profile": expected.get("profile"), "targets": len(samples),
        "derived_at": datetime.now(UTC).isoformat(timespec="seconds"), "command": "scanpipe calibrate thresholds",
    })
    report = calibration_report(samples, thresholds)
    click.echo(f"{len(samples)} labelled targets; thresholds written to {target}")
    click.echo(report.summary())


@calibrate.command("layout")
@click.option("--blank", type=click.Path(path_type=Path, exists=True), required=True, help="A scan of a blank card.")
@click.option("--dpi", type=float, required=True, help="Resolution of the blank scan.")
@click.option("--election", "election_path", type=click.Path(path_type=Path, exists=True), required=True)
@click.option("--style", required=True, help="The ballot style whose contests the card carries.")
@click.option("--page", type=int, default=1, show_default=True)
@click.option("--contests", default=None, help="Contest ids on this page in reading order (comma-separated); default: the style's, in order.")
@click.option("--reference", is_flag=True, help="Record the blank scan as the page's reference (cards without our fiducials).")
@click.option("--out", type=click.Path(path_type=Path), required=True)
def calibrate_layout(blank: Path, dpi: float, election_path: Path, style: str, page: int, contests: str | None, reference: bool, out: Path) -> None:
    """Turn a blank scan plus the contest list in reading order into a layout file."""
    import cv2

    from scanpipe.layout_from_blank import layout_from_blank

    definition = json.loads(election_path.read_text())
    by_id = {c["id"]: c for c in definition.get("contests", [])}
    style_def = next((s for s in definition.get("ballot_styles", []) if s.get("id") == style), None)
    if style_def is None:
        raise ConfigError(f"{election_path}: no ballot style '{style}'")
    ids = [c.strip() for c in contests.split(",")] if contests else list(style_def["contests"])
    missing = [c for c in ids if c not in by_id]
    if missing:
        raise ConfigError(f"--contests: {', '.join(missing)} not defined in {election_path}")
    image = cv2.imread(str(blank), cv2.IMREAD_GRAYSCALE)
    if image is None:
        raise SourceError(f"{blank}: not an image scanpipe can read")
    ordered = [(cid, [o["id"] for o in by_id[cid]["options"]]) for cid in ids]
    ref = str(Path(blank).resolve().relative_to(out.parent.resolve())) if reference and _inside(blank, out.parent) else (str(blank.resolve()) if reference else None)
    layout = layout_from_blank(image, dpi, style=style, page=page, contests_in_reading_order=ordered, reference_path=ref)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(layout, indent=2) + "\n", encoding="utf-8")
    n = sum(len(p.get("targets", [])) for p in layout.get("pages", [layout]))
    click.echo(f"{n} targets found and assigned; layout written to {out}")


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True
