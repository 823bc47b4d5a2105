"""Generate duplicates and originals (Md. Election Law §12-108) with the truth per serial.

The model of one serial (every draw comes from ``default_rng([seed, index])``, so a serial
does not depend on which process made it or on the others):

1. a *case* is drawn from the profile's mix (:data:`MIXES`): ``match``, a mismatch of some kind
   (``wrong_option``, ``omitted``, ``extra_mark``, ``overvote_created``), ``overvote_copied``
   (both cards overvoted: equal, so a match), a damaged original (``torn``, ``folded``,
   ``stained``, ``wrong_ink``), an original whose card code is unreadable, a ``provisional``
   original of another style (it carries contests the voter was not eligible for: compared
   only on the duplicate's contests, the deck's duplication log saying ``provisional``), a ``machine`` (BMD / VVPAT) original, sometimes with text
   that disagrees with its code, an original with an ``ambiguous`` mark, orphans and conflicts;
2. the voter's intent per contest of the duplicate's style; the original shows it with clear
   marks (vote kinds that any careful person reads as votes; nothing else on the targets)
   except where the case says otherwise; staff copied it onto a fresh card of the voter's
   style with full fills, and the case's error is applied to that copy;
3. a Code 128 ``DUP-<serial>`` / ``ORG-<serial>`` sticker is stuck anywhere the card has no
   print, at any angle (every page of a two-page style is labelled);
4. both cards are scanned with :func:`scanpipe.synth.scan.simulate_scan` and written.

The truth (``expected_pairs.json``) per serial: the status the contract's rules give from the
cards' *intended* readings (a damaged target or an ambiguous mark is pending), the contests
listed for a person, the voter's intent per contest (what auditors decide), the precinct the
serial is tallied in, and what counts after adjudication. :func:`write_pair_election` writes
the demo election plus a style ``S4`` (precinct ``P06``) without Question 2, so provisional
originals of style S1 carry a contest the voter was not eligible for.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scanpipe.synth.bmd import render_bmd_card
from scanpipe.synth.definition import election_json, write_demo_election
from scanpipe.synth.marks import (
    MarkKind,
    damaged_targets,
    draw_fold,
    draw_mark,
    draw_stain,
    draw_tear,
)
from scanpipe.synth.render import (
    PAPER,
    box_px,
    card_code_payload,
    code128_modules,
    draw_modules,
    render_card,
)
from scanpipe.synth.scan import PROFILES, choose_dpi, save_scan, simulate_scan
from scanpipe.types import Election

EXT = {"png": ".png", "jpg": ".jpg", "tif_g4": ".tif"}
CLEAR_VOTE_KINDS = (MarkKind.FULL_FILL, MarkKind.PARTIAL_FILL, MarkKind.CHECK, MarkKind.X_MARK)
AMBIGUOUS_KINDS = (MarkKind.CIRCLED, MarkKind.ERASURE, MarkKind.SMALL_PARTIAL)
MISMATCH_CASES = ("wrong_option", "omitted", "extra_mark", "overvote_created")
DAMAGE_CASES = ("torn", "folded", "stained", "wrong_ink")

MIXES: dict[str, dict[str, float]] = {
    "typical": {
        "match": 0.30, "overvote_copied": 0.03, "wrong_option": 0.06, "omitted": 0.05, "extra_mark": 0.05,
        "overvote_created": 0.03, "torn": 0.03, "folded": 0.04, "stained": 0.03, "wrong_ink": 0.03,
        "code_unreadable": 0.04, "provisional": 0.06, "machine": 0.08, "ambiguous": 0.04,
        "orphan_duplicate": 0.04, "orphan_original": 0.04, "conflict": 0.05,
    },
}

LABEL_CLEARANCE_IN = 0.25  # a sticker keeps this far from any print (targets, names, codes)
EXTRA_STYLE = "S4"
EXTRA_PRECINCT = ("P06", "Precinct 6 Westgate")
EXTRA_DROPS = "q2"  # the contest S4 voters are not eligible for


# --------------------------------------------------------------------------------------
# The election


def write_pair_election(out_dir: Path) -> Path:
    """The demo election plus style S4 (precinct P06: every demo contest but Question 2)."""
    path = write_demo_election(out_dir)
    definition = election_json()
    definition["precincts"].append({"id": EXTRA_PRECINCT[0], "name": EXTRA_PRECINCT[1], "county": "Demo"})
    s1 = next(s for s in definition["ballot_styles"] if s["id"] == "S1")
    definition["ballot_styles"].append({"id": EXTRA_STYLE, "precincts": [EXTRA_PRECINCT[0]],
                                        "contests": [c for c in s1["contests"] if c != EXTRA_DROPS],
                                        "layout": f"layouts/{EXTRA_STYLE}.json"})
    layout = json.loads((Path(out_dir) / "layouts" / "S1.json").read_text())
    layout["style"] = EXTRA_STYLE
    for page in layout["pages"]:
        page["targets"] = [t for t in page["targets"] if t["contest"] != EXTRA_DROPS]
    (Path(out_dir) / "layouts" / f"{EXTRA_STYLE}.json").write_text(json.dumps(layout, indent=1) + "\n")
    path.write_text(json.dumps(definition, indent=1) + "\n")
    return path


def render_style_page(election: Election, style_id: str, page: int, precinct: str, dpi: float, *, card_code: bool = True) -> np.ndarray:
    """A blank card of any style: the demo renderer, and S4 as S1 with Question 2 left off."""
    if style_id != EXTRA_STYLE:
        return render_card(election, style_id, page, precinct, dpi, card_code=card_code)
    payload = card_code_payload(election.id, style_id, precinct, page)
    rgb = render_card(election, "S1", page, precinct, dpi, card_code=card_code, code_payload=payload)
    dropped = [t for t in election.style("S1").layout.pages[page - 1].targets if t.contest == EXTRA_DROPS]
    x0 = min(t.box_in[0] for t in dropped) - 0.1
    y0 = min(t.box_in[1] for t in dropped) - 0.72
    y1 = max(t.box_in[1] + t.box_in[3] for t in dropped) + 0.12
    cv2.rectangle(rgb, (int(x0 * dpi), int(y0 * dpi)), (int((x0 + 2.4) * dpi), int(y1 * dpi)), (PAPER,) * 3, -1)
    return rgb


# --------------------------------------------------------------------------------------
# Labels stuck anywhere


def label_patch(text: str, dpi: float) -> np.ndarray:
    """A white sticker (RGB) with a Code 128 symbol of ``text`` and the text under it."""
    module_px = max(2, int(round(0.013 * dpi)))
    modules = code128_modules(text)
    bars_w = module_px * modules.size
    w = bars_w + int(0.5 * dpi)
    h = int(0.72 * dpi)
    patch = np.full((h, w, 3), 255, np.uint8)
    cv2.rectangle(patch, (0, 0), (w - 1, h - 1), (170, 170, 170), 1)
    bx, by, bh = int(0.25 * dpi), int(0.08 * dpi), int(0.40 * dpi)
    draw_modules(patch, modules[None, :], (bx, by, bars_w, bh))
    scale = 0.11 * dpi / 22.0
    cv2.putText(patch, text, (bx, by + bh + int(0.16 * dpi)), cv2.FONT_HERSHEY_SIMPLEX, scale, (20, 20, 20),
                max(1, int(round(0.11 * dpi / 9.0))), cv2.LINE_AA)
    return patch


def stick_label(rgb: np.ndarray, text: str, rng: np.random.Generator, dpi: float, *, tries: int = 300,
                right_angles_only: bool = False) -> tuple[float, float, float]:
    """Stick a label where the card has no print, at a random angle; returns ``(x_in, y_in, angle)``.

    It keeps :data:`LABEL_CLEARANCE_IN` from any print, or less on a crowded (or creased) card.
    """
    patch = label_patch(text, dpi)
    ink = (cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY) < 200).astype(np.uint8)
    h, w = rgb.shape[:2]
    margin = int(0.2 * dpi)
    for clearance in (LABEL_CLEARANCE_IN, LABEL_CLEARANCE_IN / 2, 0.04):
        occupied = cv2.dilate(ink, np.ones((int(clearance * 2 * dpi) | 1,) * 2, np.uint8))
        occupied[:margin], occupied[-margin:], occupied[:, :margin], occupied[:, -margin:] = 1, 1, 1, 1
        for k in range(tries):
            any_angle = k < tries // 2 and not right_angles_only
            angle = float(rng.uniform(0, 360)) if any_angle else float(rng.choice([0, 90, 180, 270]))
            turned, mask = _turn_patch(patch, angle)
            ph, pw = mask.shape
            if ph >= h or pw >= w:
                continue
            y, x = int(rng.integers(0, h - ph)), int(rng.integers(0, w - pw))
            if occupied[y:y + ph, x:x + pw][mask].any():
                continue
            region = rgb[y:y + ph, x:x + pw]
            region[mask] = turned[mask]
            return x / dpi, y / dpi, angle
    # A crowded card: a real sticker is stuck over print; keep it clear of the targets' column.
    angle = float(rng.choice([0, 90, 180, 270]))
    turned, mask = _turn_patch(patch, angle)
    ph, pw = mask.shape
    y, x = int(rng.integers(margin, max(margin + 1, h - ph - margin))), int(rng.integers(margin, max(margin + 1, w - pw - margin)))
    region = rgb[y:y + ph, x:x + pw]
    region[mask[:region.shape[0], :region.shape[1]]] = turned[:region.shape[0], :region.shape[1]][mask[:region.shape[0], :region.shape[1]]]
    return x / dpi, y / dpi, angle


def _turn_patch(patch: np.ndarray, angle: float) -> tuple[np.ndarray, np.ndarray]:
    h, w = patch.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    cos, sin = abs(m[0, 0]), abs(m[0, 1])
    nw, nh = int(h * sin + w * cos) + 2, int(h * cos + w * sin) + 2
    m[0, 2] += nw / 2 - w / 2
    m[1, 2] += nh / 2 - h / 2
    turned = cv2.warpAffine(patch, m, (nw, nh), flags=cv2.INTER_LINEAR, borderValue=(255, 255, 255))
    mask = cv2.warpAffine(np.full((h, w), 255, np.uint8), m, (nw, nh), flags=cv2.INTER_NEAREST) > 127
    return turned, mask


# --------------------------------------------------------------------------------------
# Intent and what each card shows


Votes = dict[str, list[str]]


def choose_intent(election: Election, style_id: str, rng: np.random.Generator, *, overvote_in: str | None = None) -> Votes:
    """The voter's choices per contest: mostly full, some undervotes (an overvote where asked)."""
    intent: Votes = {}
    for cid in election.style(style_id).contests:
        contest = election.contest(cid)
        options = [o.id for o in contest.options if not o.write_in]
        n = contest.vote_for + 1 if cid == overvote_in else (contest.vote_for if rng.random() < 0.85 else int(rng.integers(0, contest.vote_for)))
        picked = set(rng.choice(len(options), size=min(n, len(options)), replace=False).tolist()) if n else set()
        intent[cid] = [o for k, o in enumerate(options) if k in picked]
    return intent


def overvotable(election: Election, style_id: str) -> list[str]:
    return [c for c in election.style(style_id).contests
            if len([o for o in election.contest(c).options if not o.write_in]) > election.contest(c).vote_for]


def apply_copy_error(election: Election, intent: Votes, case: str, rng: np.random.Generator) -> tuple[Votes, str]:
    """The duplicate staff made: the intent with one error of kind ``case``; returns it and the contest."""
    copy = {c: list(v) for c, v in intent.items()}
    contests = list(intent)
    if case == "omitted":
        cid = str(rng.choice([c for c in contests if intent[c]] or contests))
        copy[cid] = []
        if not intent[cid]:  # nothing to omit: the voter chose nothing, copy an invented vote instead
            copy[cid] = [election.contest(cid).options[0].id]
        return copy, cid
    cid = str(rng.choice(contests))
    contest = election.contest(cid)
    options = [o.id for o in contest.options if not o.write_in]
    unchosen = [o for o in options if o not in intent[cid]]
    if case == "wrong_option":
        if intent[cid] and unchosen:
            copy[cid] = sorted(set(intent[cid][1:]) | {str(rng.choice(unchosen))}, key=options.index)
        else:
            copy[cid] = [options[0]] if not intent[cid] else []
    elif case == "extra_mark":
        copy[cid] = sorted(set(intent[cid]) | {str(rng.choice(unchosen))}, key=options.index) if unchosen else []
    elif case == "overvote_created":
        extra = [o for o in unchosen][: contest.vote_for + 1 - len(intent[cid])]
        copy[cid] = sorted(set(intent[cid]) | set(extra), key=options.index)
    else:
        raise AssertionError(f"not a copy error: {case}")
    return copy, cid


def counted(election: Election, cid: str, votes: Sequence[str] | None) -> tuple[str, ...] | str | None:
    """What a contest counts (None: pending), as the contract compares cards."""
    if votes is None:
        return None
    if len(votes) > election.contest(cid).vote_for:
        return "overvote"
    return tuple(sorted(votes))


def expected_comparison(election: Election, dup: Mapping[str, list[str] | None], org: Mapping[str, list[str] | None],
                        *, original_readable: bool = True, text_code_disagree: bool = False, ballot_type: str = "mail",
                        eligible: Sequence[str] | None = None) -> tuple[str, list[str]]:
    """Status and listed contests by the contract's rules, from intended readings (None = pending).

    A mailed ballot (or one of unknown type) is compared on every contest of either card; a
    provisional one on its eligible contests (default: the duplicate's)."""
    scope = list(dict.fromkeys((*dup, *org)))
    if ballot_type == "provisional":
        allowed = set(eligible if eligible is not None else dup)
        scope = [c for c in scope if c in allowed]
    differ: list[str] = []
    unknown: list[str] = []
    for cid in scope:
        if cid not in org:
            unknown.append(cid)
            continue
        o = counted(election, cid, org[cid])
        if cid not in dup:  # left out of the duplicate: a mismatch when the original votes there
            (unknown if o is None else differ if o else []).append(cid)
            continue
        d = counted(election, cid, dup[cid])
        if d is None or o is None:
            unknown.append(cid)
        elif d != o:
            differ.append(cid)
    listed = [c for c in scope if c in differ or c in unknown]
    if differ:
        return "mismatch", listed
    if unknown or not original_readable or text_code_disagree:
        return "needs_review", listed or list(dup)
    return "match", []


def write_duplication_log(path: Path, serials: Sequence[Mapping[str, Any]]) -> Path:
    """The canvass duplication log of a deck (contract section 5a), from the truth."""
    lines = ["serial,precinct,reason,ballot_type,eligible_contests"]
    for t in serials:
        if t.get("duplicates"):
            lines.append(f"{t['serial']},{t['precinct']},{t['case']},{t['ballot_type']},")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------
# Drawing and writing one card


@dataclass(frozen=True, slots=True)
class PairOptions:
    election_path: str
    out_dir: str
    seed: int
    profile: str
    mix: tuple[tuple[str, float], ...]
    serial_prefix: str = "S"
    vote_kinds: tuple[str, ...] = tuple(k.value for k in CLEAR_VOTE_KINDS)  # how voters mark originals
    right_angles_only: bool = False  # labels at 0/90/180/270 degrees only


_ELECTIONS: dict[str, Election] = {}


def _election(path: str) -> Election:
    if path not in _ELECTIONS:
        from scanpipe.election import load_election

        _ELECTIONS[path] = load_election(path)
    return _ELECTIONS[path]


def mark_card(election: Election, style_id: str, precinct: str, votes: Votes, dpi: int, rng: np.random.Generator, *,
              kinds: Sequence[MarkKind], ink: str = "black", card_code: bool = True,
              ambiguous: Mapping[str, str] | None = None) -> list[tuple[np.ndarray, dict[int, tuple[str, str]]]]:
    """Render and mark every page; per page the RGB image and target index -> (contest, option)."""
    pages = []
    for lp in election.style(style_id).layout.pages:
        rgb = render_style_page(election, style_id, lp.page, precinct, dpi, card_code=card_code)
        index = {}
        for i, t in enumerate(lp.targets):
            index[i] = (t.contest, t.option)
            if t.option in votes.get(t.contest, ()):
                draw_mark(rgb, box_px(t.box_in, dpi), kinds[int(rng.integers(len(kinds)))], rng, ink=ink, dpi=dpi)
            elif (ambiguous or {}).get(t.contest) == t.option:
                draw_mark(rgb, box_px(t.box_in, dpi), AMBIGUOUS_KINDS[int(rng.integers(len(AMBIGUOUS_KINDS)))], rng, ink=ink, dpi=dpi)
        pages.append((rgb, index))
    return pages


def damage_card(pages: list[tuple[np.ndarray, dict[int, tuple[str, str]]]], election: Election, style_id: str, kind: str,
                rng: np.random.Generator, dpi: int) -> set[str]:
    """Tear, fold or stain page 1; returns the contests with a target under the damage."""
    rgb, index = pages[0]
    lp = election.style(style_id).layout.pages[0]
    draw = {"torn": draw_tear, "folded": draw_fold, "stained": draw_stain}[kind]
    damage = draw(rgb, rng, dpi=dpi)
    boxes = {i: box_px(t.box_in, dpi) for i, t in enumerate(lp.targets)}
    return {index[i][0] for i in damaged_targets(damage, boxes, dpi=dpi)}


def write_card(opts: PairOptions, name: str, pages: Sequence[np.ndarray], label: str, rng: np.random.Generator,
               dpi: int) -> list[dict[str, Any]]:
    """Label, scan and write each page as its own file; returns ``{file, label_at}`` per page."""
    profile = PROFILES[opts.profile]
    out = []
    fmt = color = flip = None
    for k, rgb in enumerate(pages):
        x, y, angle = stick_label(rgb, label, rng, dpi, right_angles_only=opts.right_angles_only)
        image, meta = simulate_scan(rgb, profile, rng, dpi=dpi, fmt=fmt, color=color, flip180=flip)
        fmt, color, flip = meta.format, meta.color, meta.rotated_180
        rel = f"cards/{name}" + (f"-p{k + 1}" if len(pages) > 1 else "") + EXT[meta.format]
        save_scan(Path(opts.out_dir) / rel, image, meta.format, quality=meta.jpeg_quality, dpi=dpi)
        out.append({"file": rel, "label_at_in": [round(x, 2), round(y, 2)], "label_angle": round(angle, 1),
                    "format": meta.format, "dpi": dpi, "rotated_180": meta.rotated_180})
    return out


def serial_for(opts: PairOptions, index: int, rng: np.random.Generator) -> str:
    """A serial ``[A-Z0-9]{1,16}``: the prefix, the index, and sometimes a random tail."""
    tail = "".join(rng.choice(list("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"), size=int(rng.integers(0, 6))))
    return f"{opts.serial_prefix}{index:05d}{tail}"[:16]


# --------------------------------------------------------------------------------------
# One serial


def make_pair(opts: PairOptions, index: int, override: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Draw, render, scan and write the cards of one serial; return its truth."""
    ov = dict(override or {})
    rng = np.random.default_rng([opts.seed, index])
    election = _election(opts.election_path)
    names, weights = zip(*opts.mix)
    case = ov.get("case") or str(rng.choice(names, p=np.array(weights) / sum(weights)))
    serial = ov.get("serial") or serial_for(opts, index, rng)
    dup_style = ov.get("style") or _dup_style(election, case, rng)
    precinct = election.style(dup_style).precincts[int(rng.integers(len(election.style(dup_style).precincts)))]
    dpi = int(ov.get("dpi") or choose_dpi(PROFILES[opts.profile], rng))
    over = str(rng.choice(overvotable(election, dup_style))) if case == "overvote_copied" else None
    intent = choose_intent(election, dup_style, rng, overvote_in=over)
    truth: dict[str, Any] = {"serial": serial, "case": case, "style": dup_style, "precinct": precinct, "dpi": dpi,
                             "ballot_type": "provisional" if case == "provisional" else "mail"}
    dup_votes: Votes = {c: list(v) for c, v in intent.items()}
    if case in MISMATCH_CASES:
        dup_votes, truth["error_contest"] = apply_copy_error(election, intent, case, rng)
    writer = _Writer(opts, index, rng, dpi)
    if case == "orphan_original":
        return _orphan_original(opts, election, rng, writer, truth, dup_style, precinct, intent)
    plan = _plan_original(election, rng, truth, case, dup_style, precinct, intent, dup_votes, ov) if case not in (
        "orphan_duplicate", "conflict") else {}
    dup_files = writer.hand("", dup_style, precinct, dup_votes, f"DUP-{serial}", kinds=(MarkKind.FULL_FILL,))
    truth["duplicates"] = [dup_files]
    if case == "orphan_duplicate":
        truth.update(status="orphan_duplicate", contests=[], intent=dup_votes, counted_after="new")
        return truth
    if case == "conflict":
        return _conflict(opts, election, rng, writer, truth, dup_style, precinct, intent, serial)
    org = _draw_original(rng, writer, plan, case, serial)
    status, listed = expected_comparison(election, dup_votes, org["reading"], original_readable=True,
                                         text_code_disagree=org.get("text_code_disagree", False), ballot_type=truth["ballot_type"])
    decided = org["intent"]
    same = all(counted(election, c, decided[c]) == counted(election, c, dup_votes[c]) for c in listed)
    truth.update(status=status, contests=listed, intent=decided, originals=[org["files"]],
                 original=org["describe"], counted_after="duplicate" if status == "match" or same else "new")
    return truth


def _dup_style(election: Election, case: str, rng: np.random.Generator) -> str:
    if case == "provisional" and election.has_style(EXTRA_STYLE) and rng.random() < 0.7:
        return EXTRA_STYLE
    ids = [s.id for s in election.ballot_styles]
    return ids[int(rng.integers(len(ids)))]


class _Writer:
    """Renders, labels, scans and writes the cards of one serial."""

    def __init__(self, opts: PairOptions, index: int, rng: np.random.Generator, dpi: int) -> None:
        self.opts, self.index, self.rng, self.dpi = opts, index, rng, dpi
        self.election = _election(opts.election_path)
        self.n = 0
        self.vote_kinds = tuple(MarkKind(k) for k in opts.vote_kinds)

    def _name(self) -> str:
        self.n += 1
        return f"{self.index:05d}-{self.n}"

    def hand(self, _unused: str, style: str, precinct: str, votes: Votes, label: str, *, kinds: Sequence[MarkKind],
             ink: str = "black", card_code: bool = True, damage: str | None = None,
             ambiguous: Mapping[str, str] | None = None) -> dict[str, Any]:
        pages = mark_card(self.election, style, precinct, votes, self.dpi, self.rng, kinds=kinds, ink=ink,
                          card_code=card_code, ambiguous=ambiguous)
        hit = damage_card(pages, self.election, style, damage, self.rng, self.dpi) if damage in ("torn", "folded", "stained") else set()
        files = write_card(self.opts, self._name(), [p[0] for p in pages], label, self.rng, self.dpi)
        return {"label": label, "style": style, "precinct": precinct, "files": [f["file"] for f in files], "scan": files,
                "damaged_contests": sorted(hit)}

    def machine(self, style: str, precinct: str, code: Votes, printed: Votes, label: str) -> dict[str, Any]:
        rgb = render_bmd_card(self.election, style, precinct, code, self.dpi, printed=printed)
        files = write_card(self.opts, self._name(), [rgb], label, self.rng, self.dpi)
        return {"label": label, "style": style, "precinct": precinct, "files": [f["file"] for f in files], "scan": files,
                "damaged_contests": []}


def _plan_original(election: Election, rng: np.random.Generator, truth: dict[str, Any], case: str, dup_style: str,
                   precinct: str, intent: Votes, dup_votes: Votes, ov: Mapping[str, Any]) -> dict[str, Any]:
    """What the original shows (and any change of the copy it causes), before anything is drawn."""
    reading: dict[str, list[str] | None] = {c: list(v) for c, v in intent.items()}
    plan: dict[str, Any] = {"style": dup_style, "precinct": precinct, "reading": reading,
                            "intent": {c: list(v) for c, v in intent.items()}, "ambiguous": None, "text_code_disagree": False}
    if case == "machine":
        code, printed = {c: list(v) for c, v in intent.items()}, {c: list(v) for c, v in intent.items()}
        disagree, copied_code = rng.random() < 0.4, rng.random() < 0.5
        disagree = bool(ov.get("text_code_disagree", disagree))
        copied_code = ov.get("staff_copied", "code" if copied_code else "text") == "code"
        if disagree:  # the code says otherwise in one contest; the voter verified the text
            wrong, cid = apply_copy_error(election, intent, "wrong_option", rng)
            code[cid] = wrong[cid]
            truth["code_differs_in"] = cid
            plan["text_code_disagree"] = True
            if copied_code:  # staff copied what the code says
                dup_votes.update({c: list(v) for c, v in code.items()})
        plan.update(code=code, printed=printed, reading={c: list(v) for c, v in code.items()}, intent=printed)
        return plan
    if case == "provisional":
        style = ov.get("original_style") or _other_style(election, dup_style, rng)
        plan.update(style=style, precinct=election.style(style).precincts[0])
        for cid in election.style(style).contests:
            if cid not in intent:  # the voter marked a contest they were not eligible for
                opts = [o.id for o in election.contest(cid).options if not o.write_in]
                reading[cid] = [opts[int(rng.integers(len(opts)))]]
        if ov.get("copy_error", rng.random() < 0.4):  # and staff made a copy error too
            copied, truth["error_contest"] = apply_copy_error(election, intent, "wrong_option", rng)
            dup_votes.update(copied)
    if case == "ambiguous":
        cid = str(rng.choice(list(intent)))
        free = [o.id for o in election.contest(cid).options if o.id not in intent[cid] and not o.write_in]
        if free:
            plan["ambiguous"] = {cid: free[0]}
            reading[cid] = None
    return plan


def _draw_original(rng: np.random.Generator, writer: _Writer, plan: dict[str, Any], case: str, serial: str) -> dict[str, Any]:
    label = f"ORG-{serial}"
    if case == "machine":
        files = writer.machine(plan["style"], plan["precinct"], plan["code"], plan["printed"], label)
        return {**plan, "files": files, "describe": {"kind": "machine", "text_code_disagree": plan["text_code_disagree"]}}
    reading = plan["reading"]
    marks = {c: v for c, v in reading.items() if v}
    for cid in (plan["ambiguous"] or {}):
        marks[cid] = list(plan["intent"][cid])
    ink = str(rng.choice(["red", "green"])) if case == "wrong_ink" else "black"
    files = writer.hand("", plan["style"], plan["precinct"], marks, label, kinds=writer.vote_kinds, ink=ink,
                        card_code=case != "code_unreadable", damage=case, ambiguous=plan["ambiguous"])
    for cid in files["damaged_contests"]:
        reading[cid] = None
    return {**plan, "files": files,
            "describe": {"kind": "hand", "style": plan["style"], "precinct": plan["precinct"],
                         "damage": case if case in DAMAGE_CASES else None, "code_unreadable": case == "code_unreadable",
                         "ambiguous": plan["ambiguous"] or {}}}


def _other_style(election: Election, style: str, rng: np.random.Generator) -> str:
    """Another style carrying every contest of ``style`` (a provisional voter's original has
    the contests they were eligible for, and perhaps more), preferring one with more."""
    mine = set(election.style(style).contests)
    wider = [s.id for s in election.ballot_styles if s.id != style and set(s.contests) > mine]
    same = [s.id for s in election.ballot_styles if s.id != style and set(s.contests) >= mine]
    others = wider or same or [style]
    return others[int(rng.integers(len(others)))]


def _orphan_original(opts: PairOptions, election: Election, rng: np.random.Generator, writer: _Writer, truth: dict[str, Any],
                     style: str, precinct: str, intent: Votes) -> dict[str, Any]:
    files = writer.hand("", style, precinct, intent, f"ORG-{truth['serial']}", kinds=writer.vote_kinds)
    truth.update(status="orphan_original", contests=[], intent=intent, originals=[files], duplicates=[], counted_after="new")
    return truth


def _conflict(opts: PairOptions, election: Election, rng: np.random.Generator, writer: _Writer, truth: dict[str, Any],
              style: str, precinct: str, intent: Votes, serial: str) -> dict[str, Any]:
    """A serial on two duplicates or on two originals (the second from another voter)."""
    other = choose_intent(election, style, rng)
    if rng.random() < 0.5:
        second = writer.hand("", style, precinct, other, f"DUP-{serial}", kinds=(MarkKind.FULL_FILL,))
        truth["duplicates"].append(second)
        originals = [writer.hand("", style, precinct, intent, f"ORG-{serial}", kinds=writer.vote_kinds)]
    else:
        originals = [writer.hand("", style, precinct, v, f"ORG-{serial}", kinds=writer.vote_kinds) for v in (intent, other)]
    truth.update(status="conflict", contests=[], intent=intent, originals=originals, counted_after="new")
    return truth


# --------------------------------------------------------------------------------------
# The deck


def _run(args: tuple[PairOptions, int, Mapping[str, Any] | None]) -> dict[str, Any]:
    return make_pair(*args)


def generate_pair_deck(election_path: Path, out_dir: Path, *, pairs: int, seed: int, profile: str = "typical", jobs: int = 1,
                       mix: Mapping[str, float] | None = None, overrides: Mapping[int, Mapping[str, Any]] | None = None,
                       serial_prefix: str = "S", vote_kinds: Sequence[str] | None = None,
                       right_angles_only: bool = False) -> Path:
    """Write ``pairs`` serials' cards under ``out_dir/cards`` and ``expected_pairs.json``; return its path.

    ``mix`` replaces :data:`MIXES` ``["typical"]`` (case -> weight); ``overrides`` maps a 0-based
    serial index to forced choices (``case``, ``serial``, ``style``, ``dpi``).
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {sorted(PROFILES)}")
    election_path, out_dir = Path(election_path).resolve(), Path(out_dir).resolve()
    (out_dir / "cards").mkdir(parents=True, exist_ok=True)
    chosen = dict(mix or MIXES["typical"])
    opts = PairOptions(str(election_path), str(out_dir), seed, profile, tuple(sorted(chosen.items())), serial_prefix,
                       tuple(vote_kinds or (k.value for k in CLEAR_VOTE_KINDS)), right_angles_only)
    tasks = [(opts, i, (overrides or {}).get(i)) for i in range(pairs)]
    if jobs > 1:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("forkserver")) as pool:
            results = list(pool.map(_run, tasks, chunksize=max(1, pairs // (jobs * 8))))
    else:
        results = [_run(t) for t in tasks]
    serials = [r["serial"] for r in results]
    assert len(set(serials)) == len(serials), "serials must be unique per deck"
    expected = {"election": os.path.relpath(election_path, out_dir), "seed": seed, "profile": profile,
                "serials": {r["serial"]: r for r in sorted(results, key=lambda r: r["serial"])}}
    path = out_dir / "expected_pairs.json"
    path.write_text(json.dumps(expected, indent=1) + "\n")
    write_duplication_log(out_dir / "duplication_log.csv", sorted(results, key=lambda r: r["serial"]))
    return path
