"""Labels of the targets found on a blank page: the text read beside each target.

Pure: targets and OCR text lines (page pixels) in, labels out. Stage 1 of
:mod:`scanpipe.layout_assign`:

a target's label is the text on its row that begins just right of it (or, on a page where
most targets have nothing there, ends just left of it: Sequoia prints names left of the
arrows), plus up to two lines under it (a running mate, "Not Yet Designated"); other text
on the target's row (a party abbreviation, "(Write-in vote, if any)" under a write-in rule)
is *row text* and belongs to the target too. A line that resembles a contest title is
neither; a line that begins like an option's name, or lies across a box border from the
label, is no continuation.

Similarity is edit similarity of lowercase letters and digits, spaces ignored (OCR drops
spaces in bold capitals: ``UNITEDSTATESSENATOR``), with partial matching so a printed
``FOR UNITED STATES SENATOR`` or ``Glenn A. Burkett DEM`` still matches ``United States
Senator`` or ``Glenn A. Burkett``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from scanpipe.imaging.page_text import TextLine
from scanpipe.imaging.targets import FoundTarget, Rect, TargetShape

COLUMN_GAP_IN = 0.5  # target centres further apart than this start a new column
LABEL_REACH_IN = 0.6  # a label begins at most this far from its target
ARROW_LABEL_REACH_IN = 1.2  # an arrow's head lies between the gap and the label
LABEL_CHAIN_GAP_IN = 0.35  # words further apart than this on one row are not one label
TITLE_LIKE = 0.55  # header text resembling a contest title at least this much starts a block
MIN_NAME = 0.6  # a label resembling an option name at least this much names it
WRITE_IN_WORDS = ("write in", "writein", "write-in")


@dataclass(frozen=True, slots=True)
class PageScan:
    """What was found on one page: targets, text lines (None: OCR unavailable), rules."""

    page: int
    dpi: float
    targets: tuple[FoundTarget, ...]
    texts: tuple[TextLine, ...] | None
    write_in_rules: Mapping[int, Rect] = field(default_factory=dict)
    separators: tuple[Rect, ...] = ()  # other horizontal rules: the borders of contest boxes
    text_source: str = ""  # "pdf" (the PDF's own text), "ocr", or "" (not read)


@dataclass(frozen=True, slots=True)
class Label:
    text: str  # the label as read ("" when none), its lines joined
    row_text: str  # everything on the target's row, label included
    lines: tuple[str, ...] = ()  # the label's first line, then the lines under it
    line_ids: tuple[int, ...] = ()  # indices of those lines in the page's text lines
    row_ids: tuple[int, ...] = ()  # indices of the other lines on the target's row

    def says(self, name: str) -> float:
        """How much the label names ``name``: its first line, or the first line with those under it,
        or its first line is the first part of ``name`` (``Rick Scott`` of ``Rick Scott / Not Yet
        Designated``)."""
        variants = [" ".join(self.lines[:k]) for k in range(1, len(self.lines) + 1)] or [self.text]
        whole = max(name_similarity(name, v) for v in variants)
        return max(whole, line_names(name, self.lines[0])) if self.lines else whole  # or the name's first line


# --------------------------------------------------------------------------------------
# Similarity


def squash(text: str) -> str:
    """Lowercase letters and digits only."""
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def name_similarity(name: str, text: str) -> float:
    """How much ``text`` (as read) says ``name``: edit similarity, partial when ``text`` is longer."""
    a, b = squash(name), squash(text)
    if not a or not b:
        return 0.0
    full = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
    if len(b) <= len(a):
        return full
    best = max(difflib.SequenceMatcher(None, a, b[i : i + len(a)], autojunk=False).ratio() for i in range(len(b) - len(a) + 1))
    return max(full, best * (0.85 + 0.15 * len(a) / len(b)))


def title_similarity(title: str, header: Sequence[str]) -> tuple[float, str]:
    """The best run of one to four consecutive header lines against a contest title."""
    best, text = 0.0, ""
    for i in range(len(header)):
        for j in range(i + 1, min(len(header), i + 4) + 1):
            window = " ".join(header[i:j])
            score = name_similarity(title, window)
            if score > best:
                best, text = score, window
    return best, text


def is_write_in_text(text: str) -> bool:
    t = " ".join(re.sub(r"[^a-z]+", " ", text.lower()).split())
    return any(w in t for w in WRITE_IN_WORDS)


# --------------------------------------------------------------------------------------
# Labels


def label_targets(scan: PageScan, titles: Sequence[str] = (), names: Sequence[str] = ()) -> tuple[tuple[Label, ...], frozenset[int]]:
    """A label per target, and the indices of the text lines used (labels and row text).

    Labels are looked for on one side for the whole page: right of the targets, or left when
    fewer than half of the targets have text on their right. Lines that resemble a contest
    title are never taken as a label's continuation or as row text; a line that begins like
    an option's name, or lies across a box border from the label, is not a continuation.
    """
    texts = scan.texts or ()
    titled = {i for i, t in enumerate(texts) if title_like([t.text], titles)}
    named = {i for i, t in enumerate(texts) if any(_names(n, t.text) for n in names)}
    used: set[int] = set()
    side = "right"
    firsts = [_label_lines(t, texts, scan.dpi, set(), side) for t in scan.targets]
    if sum(1 for f in firsts if f) * 2 < len(scan.targets):
        side = "left"
    labels = []
    for target in scan.targets:
        label_idx = _label_lines(target, texts, scan.dpi, used, side)
        used.update(label_idx)
        labels.append(label_idx)
    columns = columns_of(scan.targets, scan.dpi)
    starts = [min(scan.targets[i].box_px[0] for i in col) for col in columns]
    next_start = {i: (starts[c + 1] if c + 1 < len(starts) else float("inf")) for c, col in enumerate(columns) for i in col}
    out = []
    for index, (target, label_idx) in enumerate(zip(scan.targets, labels)):
        below = _continuation_lines(label_idx, texts, scan.dpi, used | titled | named, scan.separators)
        used.update(below)
        row = _row_lines(target, texts, scan.dpi, used | titled, next_start[index])
        used.update(row)
        first = " ".join(texts[i].text for i in label_idx)
        lines = ((first,) if first else ()) + tuple(texts[i].text for i in below)
        row_text = " ".join(texts[i].text for i in sorted({*label_idx, *below, *row}, key=lambda i: texts[i].box_px[0]))
        out.append(Label(" ".join(lines), row_text, lines, (*label_idx, *below), tuple(row)))
    return tuple(out), frozenset(used)


def _label_lines(target: FoundTarget, texts: Sequence[TextLine], dpi: float, used: set[int], side: str) -> list[int]:
    x, y, w, h = target.box_px
    reach = (ARROW_LABEL_REACH_IN if target.shape is TargetShape.ARROW else LABEL_REACH_IN) * dpi
    on_row = [i for i, t in enumerate(texts) if i not in used and y - 0.35 * h <= cy(t) <= y + 1.35 * h]
    if side == "left":
        left = [i for i in on_row if x - reach <= texts[i].box_px[0] + texts[i].box_px[2] <= x + 0.1 * dpi]
        return [max(left, key=lambda i: texts[i].box_px[0] + texts[i].box_px[2])] if left else []
    right = sorted((i for i in on_row if x + w - 0.1 * dpi <= texts[i].box_px[0] <= x + w + reach), key=lambda i: texts[i].box_px[0])
    if not right:
        return []
    chain = [right[0]]
    for i in sorted(on_row, key=lambda i: texts[i].box_px[0]):
        last = texts[chain[-1]].box_px
        if i not in chain and 0 <= texts[i].box_px[0] - (last[0] + last[2]) <= LABEL_CHAIN_GAP_IN * dpi:
            chain.append(i)
    return chain


def _continuation_lines(label_idx: Sequence[int], texts: Sequence[TextLine], dpi: float, used: set[int],
                        separators: Sequence[Rect] = ()) -> list[int]:
    if not label_idx:
        return []
    first = texts[label_idx[0]].box_px
    out: list[int] = []
    bottom = max(texts[i].box_px[1] + texts[i].box_px[3] for i in label_idx)
    for _ in range(2):
        below = [i for i, t in enumerate(texts) if i not in used and i not in out
                 and first[0] - 0.05 * dpi <= t.box_px[0] <= first[0] + 1.0 * dpi
                 and -0.5 * t.box_px[3] <= t.box_px[1] - bottom <= 0.6 * t.box_px[3]]
        below = [i for i in below if not _rule_between(separators, first[0], bottom - 0.02 * dpi, texts[i].box_px[1] + texts[i].box_px[3] / 2)]
        if not below:
            break
        nxt = min(below, key=lambda i: texts[i].box_px[1])
        out.append(nxt)
        bottom = texts[nxt].box_px[1] + texts[nxt].box_px[3]
    return out


def _rule_between(separators: Sequence[Rect], x: float, top: float, bottom: float) -> bool:
    """Whether a box border crosses the column at ``x`` between rows ``top`` and ``bottom``."""
    return any(r[0] <= x <= r[0] + r[2] and top <= r[1] + r[3] / 2 <= bottom for r in separators)


def line_names(name: str, text: str) -> float:
    """How much one printed line names an option: the whole name, or a part of it beginning
    with its first word (a name broken over two lines, or half hidden by a stamp)."""
    if not same_first_word(name, text):
        return 0.0
    return max(name_similarity(name, text), 0.9 * name_similarity(text, name))


def _names(name: str, text: str) -> bool:
    return line_names(name, text) >= MIN_NAME


def _row_lines(target: FoundTarget, texts: Sequence[TextLine], dpi: float, used: set[int], next_column: float) -> list[int]:
    """Other text on the target's row, up to the next column of targets."""
    x, y, w, h = target.box_px
    return [i for i, t in enumerate(texts) if i not in used and y - 0.5 * h <= cy(t) <= y + h + 0.08 * dpi
            and x - 0.3 * dpi <= t.box_px[0] < min(x + w + 3.0 * dpi, next_column - 0.1 * dpi)]


def cy(t: TextLine) -> float:
    return t.box_px[1] + t.box_px[3] / 2.0


def columns_of(targets: Sequence[FoundTarget], dpi: float) -> list[list[int]]:
    """Target indices by column (left to right), each top to bottom."""
    order = sorted(range(len(targets)), key=lambda i: _cx(targets[i]))
    columns: list[list[int]] = []
    for i in order:
        if columns and _cx(targets[i]) - _cx(targets[columns[-1][-1]]) <= COLUMN_GAP_IN * dpi:
            columns[-1].append(i)
        else:
            columns.append([i])
    return [sorted(col, key=lambda i: targets[i].box_px[1]) for col in columns]


def _cx(t: FoundTarget) -> float:
    return t.box_px[0] + t.box_px[2] / 2.0


def title_like(header: Sequence[str], titles: Sequence[str]) -> bool:
    return any(title_similarity(t, header)[0] >= TITLE_LIKE for t in titles)


def same_first_word(name: str, text: str) -> bool:
    """A line that names an option begins with its first word (not a running mate's line)."""
    a, b = (re.findall(r"[a-z0-9]+", v.lower()) for v in (name, text))
    return bool(a and b) and difflib.SequenceMatcher(None, a[0], b[0], autojunk=False).ratio() >= 0.75
