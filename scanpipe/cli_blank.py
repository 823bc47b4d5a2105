"""``scanpipe calibrate blank``: a blank reference scan learned from voted cards of one style."""

from __future__ import annotations

from pathlib import Path

import click

from scanpipe.errors import ConfigError, SourceError


@click.command("blank")
@click.argument("cards", nargs=-1, required=True, type=click.Path(path_type=Path, exists=True))
@click.option("--dpi", type=float, default=None,
              help="Scan resolution of the cards (default: the files' tag, else the width over --width-in).")
@click.option("--width-in", type=float, default=8.5, show_default=True, help="Page width, to tell the resolution when no tag says it.")
@click.option("--like", type=click.Path(path_type=Path, exists=True), default=None,
              help="Make the blank in this card's frame (the card a layout's boxes were measured on).")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="The blank to write (PNG).")
def calibrate_blank(cards: tuple[Path, ...], dpi: float | None, width_in: float, like: Path | None, out: Path) -> None:
    """Learn a style's blank from its voted cards (where the board kept no blank scan).

    Give the card files (or folders) of ONE style and page; the blank is the print they all
    share. Check it by eye before using it as a layout's reference.
    """
    import cv2

    from scanpipe.calibration.blank import blank_from_cards
    from scanpipe.imaging.decode import ImageDecodeError, decode_card_bytes

    files = sorted(p for c in cards for p in ([c] if c.is_file() else c.rglob("*")) if p.is_file())
    images, tags = [], []
    for f in files:
        try:
            page = decode_card_bytes(f.read_bytes(), str(f))[0]
        except ImageDecodeError as e:
            raise SourceError(f"{f}: {e.detail}") from None
        images.append(page.image)
        tags.append(page.dpi)
    widths = {im.shape[1] for im in images}
    if dpi is None:
        tagged = {t for t in tags if t}
        dpi = tagged.pop() if len(tagged) == 1 else max(widths) / width_in
    if not images:
        raise ConfigError("no card files given")
    frame_of = None
    if like is not None:
        matches = [k for k, f in enumerate(files) if f.resolve() == like.resolve()]
        if not matches:
            raise ConfigError(f"--like {like}: not one of the cards given")
        frame_of = matches[0]
    learned = blank_from_cards(images, dpi, frame_of=frame_of)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(out), learned.image):
        raise SourceError(f"{out}: cannot write the blank")
    click.echo(f"blank of {len(learned.used)} card(s) at {dpi:.1f} dpi written to {out} (seed: {files[learned.seed]})")
    for k, why in learned.skipped:
        click.echo(f"  skipped {files[k]}: {why}")
    click.echo(f"use it as the layout's reference with \"reference_dpi\": {dpi:.1f}; check it by eye first")


@click.command("election")
@click.option("--apply", "apply_", is_flag=True, help="Record the thresholds (in the log, with provenance) and read every stored card again from its scores.")
@click.pass_context
def calibrate_election(click_ctx: click.Context, apply_: bool) -> None:
    """The election's own thresholds, from the scores of the cards already read (no labels).

    Prints where the empty and the marked targets fall and the thresholds that follow; keeps the
    reviewed ones when they fit. With --apply they are recorded and used from then on (later
    ingests too), and every stored card is read again from its stored scores (no rescan).
    """
    from scanpipe.cli import Ctx
    from scanpipe.workflow import calibrate_election as derive

    store = click_ctx.find_object(Ctx).store()  # type: ignore[union-attr]
    derived, changed = derive(store, apply=apply_, actor="calibrate election")
    click.echo(derived.summary())
    if apply_:
        click.echo(f"recorded for the election; {changed} stored card(s) read again with them")
    else:
        click.echo("nothing recorded (add --apply to use them)")
