"""A blank reference scan learned from voted cards, where the board has no blank of a style.

The vendor's blank is the best reference; when none was kept (a set of backs, a style printed
for one precinct), the voted cards of the style hold the same print under different marks.
Every card is registered to one of them (the *seed*: the card whose ink is the median of all,
so neither a heavily marked nor a damaged one) by the same coarse-to-fine alignment ingest
uses; the blank is, per pixel, the :data:`BLANK_PERCENTILE` brightest value over the
registered cards. Print is on every card and survives; a voter's mark survives only where
more than ``100 - BLANK_PERCENTILE`` percent of the cards carry it at that very spot.

Pure: gray arrays in, a gray array and a report out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from scanpipe.errors import ConfigError
from scanpipe.imaging.align import Alignment, Refined, align_to_page, refine
from scanpipe.imaging.reference import ink_of, learn_page, reduce_to

BLANK_PERCENTILE = 75  # brightness percentile over the registered cards, per pixel
MIN_CARDS = 5  # fewer cards cannot outvote their marks


@dataclass(frozen=True)
class LearnedBlank:
    image: np.ndarray  # gray uint8, the seed card's frame and resolution
    seed: int  # index of the seed card
    used: tuple[int, ...]  # cards registered and merged
    skipped: tuple[tuple[int, str], ...]  # (card index, why)


def blank_from_cards(cards: Sequence[np.ndarray], dpi: float, *, frame_of: int | None = None) -> LearnedBlank:
    """The blank print common to ``cards`` (gray uint8 scans of one style and page), in the
    frame of card ``frame_of`` (default: the card of median ink)."""
    if len(cards) < MIN_CARDS:
        raise ConfigError(f"{len(cards)} card(s) given: a blank is learned from at least {MIN_CARDS} voted cards of one style")
    seed = _seed(cards, dpi) if frame_of is None else frame_of
    model = learn_page("seed", 1, cards[seed], dpi)
    stack, used, skipped = [cards[seed].astype(np.uint8)], [seed], []
    h, w = cards[seed].shape
    for k, card in enumerate(cards):
        if k == seed:
            continue
        aligned = align_to_page(card, model, dpi_hint=dpi)
        if not isinstance(aligned, Alignment):
            skipped.append((k, aligned.detail))
            continue
        upright = np.ascontiguousarray(np.rot90(card, 2)) if aligned.turned else card
        refined = refine(upright, model, aligned.matrix)
        if not isinstance(refined, Refined):
            skipped.append((k, refined.detail))
            continue
        warped = cv2.warpPerspective(upright, refined.matrix, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                     borderMode=cv2.BORDER_REPLICATE)
        stack.append(np.asarray(warped, np.uint8))
        used.append(k)
    if len(stack) < MIN_CARDS:
        raise ConfigError(f"only {len(stack)} of {len(cards)} cards could be registered to each other "
                          f"(need {MIN_CARDS}): are they one style and page?")
    blank = np.percentile(np.stack(stack), BLANK_PERCENTILE, axis=0).astype(np.uint8)
    return LearnedBlank(blank, seed, tuple(used), tuple(skipped))


def _seed(cards: Sequence[np.ndarray], dpi: float) -> int:
    """The card whose total ink is the median of all."""
    ink = [float(ink_of(reduce_to(c, dpi, 25.0)).sum()) for c in cards]
    order = np.argsort(ink)
    return int(order[len(order) // 2])
