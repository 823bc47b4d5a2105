"""Generate a deck of marked, scanned ballot cards with their exact expected readings.

The model of one sheet (every draw comes from ``default_rng([seed, sheet_index])``, so a sheet
does not depend on which process made it or on the other sheets):

1. pick a style (ours or another vendor's), one of its precincts, the scan dpi, the voter's pen;
2. per contest on each side, choose a realistic outcome: mostly clean votes (``vote_for``
   marks), some undervotes, some overvotes; each chosen target gets a *vote* mark drawn from
   the weighted vote kinds; other targets sometimes get a distractor (no-vote or ambiguous)
   kind; write-in names are written in the write-in area (name without a filled oval ->
   ambiguous); ``blank_fraction`` of the sheets stay unmarked;
3. paper damage with the profile's probabilities (fold, stain, tear) relabels the targets it
   lies over ``damaged`` (ambiguous; :func:`scanpipe.synth.marks.damaged_targets`); on a
   bilevel scan only damage still visible after the scanner flattens the paper counts (the
   middle of a large stain disappears); bleed-through is faint and relabels nothing;
4. scan (``scan.simulate_scan``) and write each side as its own file, or, sometimes, the
   sheet as one multi-page TIFF or PDF.

``expected.json`` lists, per card (side), every target of the page with its mark, ink and
intent, and each contest's expected outcome: ``pending`` when any target of the contest is
ambiguous, else ``overvote`` when the votes exceed ``vote_for``, else ``counted``.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from scanpipe.synth.definition import name_box_in
from scanpipe.synth.marks import (
    INTENT,
    PEN_INKS,
    BoxPx,
    MarkKind,
    circle_name,
    damaged_targets,
    draw_bleed_through,
    draw_fold,
    draw_mark,
    draw_stain,
    draw_tear,
    draw_write_in,
    ink_for,
)
from scanpipe.synth.render import box_px, render_card
from scanpipe.synth.scan import (
    PROFILES,
    ScanProfile,
    choose_dpi,
    save_multipage,
    save_scan,
    simulate_scan,
)
from scanpipe.types import Election, LayoutPage, MarkIntent

VOTE_KINDS = (MarkKind.FULL_FILL, MarkKind.PARTIAL_FILL, MarkKind.CHECK, MarkKind.X_MARK, MarkKind.LIGHT_PENCIL)
DISTRACTOR_KINDS = (MarkKind.HESITATION_DOT, MarkKind.FAINT_TRACE, MarkKind.STRAY_LINE, MarkKind.CIRCLED,
                    MarkKind.ERASURE, MarkKind.SMALL_PARTIAL)
DEFAULT_MARK_WEIGHTS: dict[str, float] = {
    "full_fill": 0.50, "partial_fill": 0.12, "check": 0.12, "x_mark": 0.12, "light_pencil": 0.14,
    "hesitation_dot": 0.18, "faint_trace": 0.15, "stray_line": 0.15, "circled": 0.17, "erasure": 0.18,
    "small_partial": 0.17,
}
EXT = {"png": ".png", "jpg": ".jpg", "tif_g4": ".tif"}


@dataclass(frozen=True, slots=True)
class DeckOptions:
    """What every sheet of a deck shares (sent to worker processes)."""

    election_path: str
    out_dir: str
    seed: int
    profile: str  # a PROFILES name or "mixed"
    blank_fraction: float
    include_vendor_styles: bool
    mark_weights: tuple[tuple[str, float], ...]
    overvote_p: float = 0.06
    undervote_p: float = 0.14
    distractor_p: float = 0.10
    write_in_p: float = 0.6
    stray_write_in_p: float = 0.03
    multipage_p: float = 0.3
    name_width: int = 4


_ELECTIONS: dict[str, Election] = {}


def _election(path: str) -> Election:
    if path not in _ELECTIONS:
        from scanpipe.election import load_election

        _ELECTIONS[path] = load_election(path)
    return _ELECTIONS[path]


def _weighted(rng: np.random.Generator, kinds: tuple[MarkKind, ...], weights: Mapping[str, float]) -> MarkKind:
    w = np.array([max(0.0, weights.get(k.value, 0.0)) for k in kinds], float)
    if w.sum() <= 0:
        w = np.ones(len(kinds))
    return kinds[int(rng.choice(len(kinds), p=w / w.sum()))]


@dataclass
class _Target:
    index: int
    contest: str
    option: str
    box_in: tuple[float, float, float, float]
    area_in: tuple[float, float, float, float] | None
    mark: MarkKind = MarkKind.NONE
    ink: str | None = None
    write_in: bool = False
    circled_name: bool = False
    damage: str | None = None
    damage_bilevel: str | None = None  # the damage still visible when the scan is bilevel

    @property
    def intent(self) -> MarkIntent:
        if self.damage is not None:
            return MarkIntent.AMBIGUOUS
        base = INTENT[self.mark]
        if self.write_in:
            return MarkIntent.VOTE if base is MarkIntent.VOTE else MarkIntent.AMBIGUOUS
        return base

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"contest": self.contest, "option": self.option,
                               "mark": MarkKind.DAMAGED.value if self.damage else self.mark.value,
                               "ink": self.ink, "intent": self.intent.value}
        if self.damage:
            out["drawn"] = self.mark.value
            out["damage"] = self.damage
        if self.write_in:
            out["write_in"] = True
        if self.circled_name:
            out["circled"] = "name"
        return out


def choose_marks(election: Election, page: LayoutPage, rng: np.random.Generator, opts: DeckOptions,
                 pen: str, blank: bool) -> list[_Target]:
    """Decide the mark of every target on a page (nothing is drawn yet)."""
    weights = dict(opts.mark_weights)
    targets = [_Target(i, t.contest, t.option, t.box_in, t.write_in_area_in) for i, t in enumerate(page.targets)]
    if blank:
        return targets
    for cid in dict.fromkeys(t.contest for t in targets):
        contest = election.contest(cid)
        mine = [t for t in targets if t.contest == cid]
        r = rng.random()
        if r < opts.overvote_p:
            n = min(len(mine), contest.vote_for + 1)
        elif r < opts.overvote_p + opts.undervote_p:
            n = int(rng.integers(0, contest.vote_for))
        else:
            n = contest.vote_for
        chosen = set(rng.choice(len(mine), size=n, replace=False).tolist()) if n else set()
        for j, t in enumerate(mine):
            option = next(o for o in contest.options if o.id == t.option)
            if j in chosen:
                t.mark = _weighted(rng, VOTE_KINDS, weights)
                t.write_in = option.write_in and rng.random() < opts.write_in_p
            else:
                if rng.random() < opts.distractor_p:
                    t.mark = _weighted(rng, DISTRACTOR_KINDS, weights)
                    t.circled_name = t.mark is MarkKind.CIRCLED and not option.write_in and rng.random() < 0.3
                t.write_in = option.write_in and rng.random() < opts.stray_write_in_p
            t.ink = ink_for(t.mark, pen) if t.mark is not MarkKind.NONE else (pen if t.write_in else None)
    return targets


def draw_targets(rgb: np.ndarray, election: Election, targets: list[_Target], rng: np.random.Generator,
                 dpi: float, pen: str) -> None:
    """Draw every chosen mark and write-in name on a rendered page."""
    names = {o.id: o.name for c in election.contests for o in c.options}
    for t in targets:
        box = box_px(t.box_in, dpi)
        if t.circled_name:
            circle_name(rgb, box, box_px(name_box_in(t.box_in, names[t.option]), dpi), rng, ink=pen, dpi=dpi)
        elif t.mark is not MarkKind.NONE:
            draw_mark(rgb, box, t.mark, rng, ink=pen, dpi=dpi)
        if t.write_in and t.area_in is not None:
            draw_write_in(rgb, box_px(t.area_in, dpi), rng, ink=pen, dpi=dpi)


def apply_damage(rgb: np.ndarray, targets: list[_Target], profile: ScanProfile, rng: np.random.Generator,
                 dpi: float, forced: tuple[str, ...] = ()) -> list[str]:
    """Fold, stain and tear the page with the profile's odds; relabel the targets they touch."""
    boxes: dict[int, BoxPx] = {t.index: box_px(t.box_in, dpi) for t in targets}
    done = []
    for kind, p in (("fold", profile.fold_p), ("stain", profile.stain_p), ("tear", profile.tear_p)):
        if kind not in forced and rng.random() >= p:
            continue
        if kind == "fold":
            damage = draw_fold(rgb, rng, dpi=dpi)
        elif kind == "stain":
            near = boxes[int(rng.integers(len(boxes)))] if boxes and rng.random() < 0.7 else None
            damage = draw_stain(rgb, rng, dpi=dpi, near_px=(near[0], near[1]) if near else None)
        else:
            damage = draw_tear(rgb, rng, dpi=dpi)
        for i in damaged_targets(damage, boxes, dpi=dpi):
            targets[i].damage = targets[i].damage or kind
        for i in damaged_targets(damage, boxes, dpi=dpi, bilevel=True):
            targets[i].damage_bilevel = targets[i].damage_bilevel or kind
        done.append(kind)
    return done


def contest_outcomes(election: Election, targets: list[_Target]) -> dict[str, dict[str, Any]]:
    """Expected outcome per contest on the page, from the targets' intents."""
    out: dict[str, dict[str, Any]] = {}
    for cid in dict.fromkeys(t.contest for t in targets):
        contest = election.contest(cid)
        mine = [t for t in targets if t.contest == cid]
        order = [o.id for o in contest.options]
        votes = sorted((t.option for t in mine if t.intent is MarkIntent.VOTE), key=order.index)
        if any(t.intent is MarkIntent.AMBIGUOUS for t in mine):
            outcome = "pending"
        elif len(votes) > contest.vote_for:
            outcome = "overvote"
        else:
            outcome = "counted"
        out[cid] = {"votes": votes, "outcome": outcome}
    return out


def _pick_style(election: Election, rng: np.random.Generator, vendor: bool) -> str:
    ids = [s.id for s in election.ballot_styles if vendor or s.layout.pages[0].fiducials_in]
    return ids[int(rng.integers(len(ids)))]


def make_sheet(opts: DeckOptions, index: int, override: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Render, mark, damage, scan and write one sheet; return its cards' expected entries."""
    ov = dict(override or {})
    rng = np.random.default_rng([opts.seed, index])
    election = _election(opts.election_path)
    profile_name = ov.get("profile") or (["clean", "typical", "hardest"][index % 3] if opts.profile == "mixed" else opts.profile)
    profile = PROFILES[profile_name]
    style_id = ov.get("style") or _pick_style(election, rng, opts.include_vendor_styles)
    style = election.style(style_id)
    precinct = ov.get("precinct") or style.precincts[int(rng.integers(len(style.precincts)))]
    dpi = int(ov.get("dpi") or choose_dpi(profile, rng))
    pen = PEN_INKS[int(rng.choice(4, p=[0.45, 0.35, 0.1, 0.1]))]
    blank = bool(ov["blank"]) if "blank" in ov else bool(rng.random() < opts.blank_fraction)
    label = ov.get("label")
    pages = []
    for lp in style.layout.pages:
        rgb = render_card(election, style_id, lp.page, precinct, dpi, label=label if lp.page == 1 else None)
        targets = choose_marks(election, lp, rng, opts, pen, blank)
        draw_targets(rgb, election, targets, rng, dpi, pen)
        damage = apply_damage(rgb, targets, profile, rng, dpi, tuple(ov.get("damage", ())))
        pages.append((lp, rgb, targets, damage))
    bleed = [rng.random() < profile.bleed_p for _ in pages]
    sides = [p[1] for p in pages]
    for k, (_lp, rgb, _targets, damage) in enumerate(pages):
        if bleed[k]:
            other = sides[1 - k].copy() if len(sides) == 2 else rgb.copy()
            draw_bleed_through(rgb, other, rng, dpi=dpi)
            damage.append("bleed_through")
    return _scan_and_write(opts, index, ov, rng, election, profile, style_id, precinct, dpi, label, pages)


def _scan_and_write(opts: DeckOptions, index: int, ov: dict[str, Any], rng: np.random.Generator, election: Election,
                    profile: ScanProfile, style_id: str, precinct: str, dpi: int, label: str | None,
                    pages: list[tuple[LayoutPage, np.ndarray, list[_Target], list[str]]]) -> list[dict[str, Any]]:
    container = ov.get("container")
    if container is None:
        container = ("tif" if rng.random() < 0.5 else "pdf") if len(pages) > 1 and rng.random() < opts.multipage_p else "file"
    flip = ov.get("flip180", bool(rng.random() < profile.flip180_p))
    fmt = ov.get("format")
    color = ov.get("color")
    scans = []
    for _lp, rgb, _, _ in pages:
        image, meta = simulate_scan(rgb, profile, rng, dpi=dpi, fmt=fmt, flip180=flip, color=color)
        fmt, color = meta.format, meta.color  # one sheet: one format and mode for both sides
        scans.append((image, meta))
    stem = f"cards/{index + 1:0{opts.name_width}d}"
    out = Path(opts.out_dir)
    files: list[tuple[str, int, str, int | None, bool]] = []
    if container == "file":
        for k, (image, meta) in enumerate(scans):
            name = stem + (f"-p{k + 1}" if len(scans) > 1 else "") + EXT[meta.format]
            save_scan(out / name, image, meta.format, quality=meta.jpeg_quality, dpi=dpi)
            files.append((name, 1, meta.format, meta.jpeg_quality, meta.color))
    else:
        quality = int(rng.integers(profile.jpeg_quality[0], profile.jpeg_quality[1] + 1))
        name = stem + (".tif" if container == "tif" else ".pdf")
        written = save_multipage(out / name, [s[0] for s in scans], dpi=dpi, quality=quality)
        files = [(name, k + 1, written, quality if written == "pdf" else None, scans[k][1].color and written == "pdf")
                 for k in range(len(scans))]
    entries = []
    for (lp, _, targets, damage), (_, meta), (name, page_of_file, fmt_name, jpeg_quality, is_color) in zip(pages, scans, files):
        if fmt_name == "tif_g4":  # a bilevel scanner flattens the paper: only damage still visible counts
            for t in targets:
                t.damage = t.damage_bilevel
        entry: dict[str, Any] = {
            "file": name, "page_of_file": page_of_file, "style": style_id, "page": lp.page, "precinct": precinct,
            "kind": ov.get("kind", "ballot"), "rotated_180": meta.rotated_180, "dpi": dpi, "format": fmt_name,
            "color": bool(is_color), "expect": ov.get("expect", "read"),
            "targets": [t.as_json() for t in targets],
            "contests": contest_outcomes(election, targets),
            "profile": profile.name, "jpeg_quality": jpeg_quality, "damage": damage,
            "scan": {"rotation_deg": round(meta.rotation_deg, 3), "scale": [round(v, 5) for v in meta.scale],
                     "shift_in": [round(v, 4) for v in meta.shift_in], "blur_sigma_px": round(meta.blur_sigma_px, 3),
                     "noise_sigma": round(meta.noise_sigma, 3)},
        }
        if label:
            entry["label"] = label
        entries.append(entry)
    return entries


def _run(args: tuple[DeckOptions, int, Mapping[str, Any] | None]) -> list[dict[str, Any]]:
    return make_sheet(*args)


def generate_deck(election_path: Path, out_dir: Path, *, cards: int, seed: int, profile: str = "typical",
                  blank_fraction: float = 0.05, include_vendor_styles: bool = True, jobs: int = 1,
                  mark_weights: Mapping[str, float] | None = None,
                  overrides: Mapping[int, Mapping[str, Any]] | None = None) -> Path:
    """Write ``cards`` sheets (a 2-page style gives 2 cards) and ``expected.json``; return its path.

    ``profile`` is a :data:`PROFILES` name or ``"mixed"`` (clean/typical/hardest in turn);
    ``overrides`` maps a 0-based sheet index to forced choices (``style``, ``precinct``,
    ``profile``, ``dpi``, ``blank``, ``flip180``, ``format``, ``color``, ``container``
    (``file``/``tif``/``pdf``), ``damage`` (kinds), ``label``, ``kind``, ``expect``).
    """
    if profile != "mixed" and profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {sorted(PROFILES)} or 'mixed'")
    election_path, out_dir = Path(election_path).resolve(), Path(out_dir).resolve()
    (out_dir / "cards").mkdir(parents=True, exist_ok=True)
    weights = dict(DEFAULT_MARK_WEIGHTS)
    weights.update(mark_weights or {})
    opts = DeckOptions(str(election_path), str(out_dir), seed, profile, blank_fraction, include_vendor_styles,
                       tuple(sorted(weights.items())), name_width=max(4, len(str(cards))))
    tasks = [(opts, i, (overrides or {}).get(i)) for i in range(cards)]
    if jobs > 1:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("forkserver")) as pool:
            results = list(pool.map(_run, tasks, chunksize=max(1, cards // (jobs * 8))))
    else:
        results = [_run(t) for t in tasks]
    expected = {"election": os.path.relpath(election_path, out_dir), "seed": seed, "profile": profile,
                "cards": [entry for sheet in results for entry in sheet]}
    path = out_dir / "expected.json"
    path.write_text(json.dumps(expected, indent=1) + "\n")
    return path
