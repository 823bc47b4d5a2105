"""Thresholds of one election from its own cards, without labels.

The reviewed thresholds (``scanpipe/calibration/thresholds.json``) were derived on a labelled
deck. A county's scanner, paper and pens can shift every score a little: darker paper lifts the
empty targets, a faint bilevel scan lowers the marks. The scores of an election's targets fall
in two clusters, empty and marked, with a sparse gap between (where the ambiguous marks are).

:func:`derive_for_election` finds that gap: the widest run of score bins (0.02 wide) holding
at most :data:`SPARSE_SHARE` of the targets each, between a populated bin below (the empty
cluster ends there) and one above (the marked cluster starts there). Then:

* when the reviewed thresholds already sit inside the gap (the empty cluster ends below
  ``marginal`` and the marked one starts above ``definite``), they are kept: the election fits;
* otherwise each threshold that the election's own cluster crosses moves into the gap, by
  :data:`SAFETY` of the gap's width away from the cluster; the other stays. A threshold only
  ever moves to get a cluster out of the band that goes to a person, never to narrow it
  below :data:`MIN_BAND`: an election whose clusters leave no such band is refused (a person
  calibrates it with labels: ``calibrate thresholds --deck``).

Flags (ring, damage, write-in) are not derived here: they are not mark scores.
Pure: scores in, thresholds and a report out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from scanpipe.classify import Thresholds
from scanpipe.errors import ConfigError

BINS = 50  # score bins of 0.02
SPARSE_SHARE = 0.002  # a bin holding at most this share of the targets is part of a gap
SAFETY = 0.25
MIN_BAND = 0.15
MIN_TARGETS = 200


@dataclass(frozen=True)
class ElectionThresholds:
    thresholds: Thresholds
    kept: bool  # the reviewed thresholds fit the election
    empty_top: float  # where the empty cluster ends
    marked_bottom: float  # where the marked cluster starts
    targets: int

    def summary(self) -> str:
        t = self.thresholds
        what = "kept (the election's clusters lie outside them)" if self.kept else "moved into the election's gap"
        return (f"{self.targets} targets: empty cluster up to {self.empty_top:.3f}, marked cluster from "
                f"{self.marked_bottom:.3f}; thresholds {what}: marginal {t.marginal:.3f}, definite {t.definite:.3f}")


def _gap(values: np.ndarray) -> tuple[float, float]:
    """The widest run of sparse score bins between the empty and the marked cluster."""
    counts, edges = np.histogram(values, bins=BINS, range=(0.0, 1.0))
    sparse = counts <= max(1, SPARSE_SHARE * len(values))
    best = (0, 0)
    k = 0
    while k < BINS:
        if sparse[k] and k > 0 and not sparse[k - 1]:
            j = k
            while j < BINS and sparse[j]:
                j += 1
            if j < BINS and j - k > best[1] - best[0]:
                best = (k, j)
            k = j
        else:
            k += 1
    if best == (0, 0):
        raise ConfigError("the election's scores show no gap between empty and marked targets")
    return float(edges[best[0]]), float(edges[best[1]])


def derive_for_election(scores: Sequence[float], reviewed: Thresholds, *, election: str) -> ElectionThresholds:
    """The election's thresholds from its targets' scores (see the module docstring)."""
    values = np.sort(np.asarray([s for s in scores if np.isfinite(s)], np.float64))
    if len(values) < MIN_TARGETS:
        raise ConfigError(f"only {len(values)} targets are read: the election's own thresholds need at least {MIN_TARGETS}")
    empty_top, marked_bottom = _gap(values)
    marginal, definite = reviewed.marginal, reviewed.definite
    gap = marked_bottom - empty_top
    if empty_top >= marginal:
        marginal = empty_top + SAFETY * gap
    if marked_bottom <= definite:
        definite = marked_bottom - SAFETY * gap
    if definite - marginal < MIN_BAND:  # keep a band for a person: push the other level into the gap
        if empty_top >= reviewed.marginal:
            definite = max(definite, min(marginal + MIN_BAND, marked_bottom - SAFETY * gap))
        else:
            marginal = min(marginal, max(definite - MIN_BAND, empty_top + SAFETY * gap))
    kept = (marginal, definite) == (reviewed.marginal, reviewed.definite)
    if not kept and definite - marginal < MIN_BAND - 1e-9:
        raise ConfigError(f"the election's scores leave no safe band for a person: empty targets up to {empty_top:.3f}, "
                          f"marks from {marked_bottom:.3f}; calibrate with a labelled sample (calibrate thresholds --deck)")
    source = (f"election {election}: {len(values)} targets, empty up to {empty_top:.3f}, marked from {marked_bottom:.3f}; "
              + ("reviewed thresholds kept" if kept else f"derived from the reviewed ({reviewed.source})"))
    derived = replace(reviewed, marginal=round(marginal, 4), definite=round(definite, 4), source=source)
    return ElectionThresholds(derived, kept, empty_top, marked_bottom, len(values))
