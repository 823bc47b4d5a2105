"""Propose which option of which contest each target found on a blank page belongs to.

Pure: targets and OCR text lines (page pixels) plus the style's contests in, a proposal
with a confidence per assignment out. A person confirms it (the printed table and the
review overlay); nothing here is final.

The stages, per page, then over all pages of the style at once:

1. **labels** (:func:`label_targets`): a target's label is the text on its row that begins
   just right of it (or, on a page where most targets have nothing there, ends just left of
   it: Sequoia prints names left of the arrows), plus up to two lines indented under it (a
   running mate, "Not Yet Designated"); other text on the target's row (a party
   abbreviation, "(Write-in vote, if any)" under a write-in rule) is *row text* and belongs
   to the target too. A line that resembles a contest title is neither.
2. **blocks** (:func:`contest_blocks`): targets are grouped into columns by their x
   position; walking a column top to bottom, the free text lines (neither label nor row
   text) between targets are a block's header; a header starts a block when it resembles a
   contest title (:data:`TITLE_LIKE`) or a box border (a rule across the column) lies
   between it and the targets above. A contest is a block: a header and the targets under
   it.
3. **contests** (:func:`assign`): every block is scored against every contest: how much
   the best run of one to four header lines resembles the title, how well the labels match
   the option names, and whether the counts agree (:data:`BLOCK_WEIGHTS`). Pairs are taken
   greedily, best first, one block per contest; a block left over joins the contest whose
   option names its labels match (a contest continued in the next column).
4. **options**: within a block, targets and options are paired greedily by name
   similarity; a write-in option prefers a target with a write-in rule.
5. **inferred targets**: an option left without a target whose name is printed where a
   label would be, in its contest's column, on no target's row (a "SAMPLE" stamp printed
   over the oval hid it), gets a target there (``inferred``), for a person to check.
6. **printed order**: when a contest has as many targets left as options left (names
   unreadable), they are paired in printed order (``order``), with a lower confidence.

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
from enum import StrEnum

from scanpipe.imaging.page_text import TextLine
from scanpipe.imaging.targets import FoundTarget, Rect, TargetShape
from scanpipe.types import Contest, Option

COLUMN_GAP_IN = 0.5  # target centres further apart than this start a new column
LABEL_REACH_IN = 0.6  # a label begins at most this far from its target
ARROW_LABEL_REACH_IN = 1.2  # an arrow's head lies between the gap and the label
LABEL_CHAIN_GAP_IN = 0.35  # words further apart than this on one row are not one label
TITLE_LIKE = 0.55  # header text resembling a contest title at least this much starts a block
BLOCK_WEIGHTS = (0.45, 0.40, 0.15)  # title, option names, counts
MIN_BLOCK_SCORE = 0.35
MIN_NAME = 0.6  # a label resembling an option name at least this much names it
REVIEW_BELOW = 0.75  # assignments less sure than this are marked for a person to check
WRITE_IN_WORDS = ("write in", "writein", "write-in")


class How(StrEnum):
    NAME = "name"  # the label names the option
    WRITE_IN = "write-in rule"  # a write-in option's target with a rule beside it
    ORDER = "order"  # names not matched: the printed order within the contest
    INFERRED = "inferred"  # no target found, but the name is printed where a target's label would be


@dataclass(frozen=True, slots=True)
class PageScan:
    """What was found on one page: targets, text lines (None: OCR unavailable), rules."""

    page: int
    dpi: float
    targets: tuple[FoundTarget, ...]
    texts: tuple[TextLine, ...] | None
    write_in_rules: Mapping[int, Rect] = field(default_factory=dict)
    separators: tuple[Rect, ...] = ()  # other horizontal rules: the borders of contest boxes


@dataclass(frozen=True, slots=True)
class Label:
    text: str  # the label as read ("" when none), its lines joined
    row_text: str  # everything on the target's row, label included
    lines: tuple[str, ...] = ()  # the label's first line, then the lines under it
    line_ids: tuple[int, ...] = ()  # indices of those lines in the page's text lines
    row_ids: tuple[int, ...] = ()  # indices of the other lines on the target's row

    def says(self, name: str) -> float:
        """How much the label names ``name``: its first line, or the first line with those under it."""
        variants = [" ".join(self.lines[:k]) for k in range(1, len(self.lines) + 1)] or [self.text]
        return max(name_similarity(name, v) for v in variants)


@dataclass(frozen=True, slots=True)
class Block:
    """A contest as printed: header lines and targets (page, index into that page's targets)."""

    page: int
    header: tuple[str, ...]
    targets: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class Assignment:
    contest: str
    option: str
    page: int
    target: int | None  # index into the page's targets; None for an inferred target
    confidence: float
    how: How
    label: str
    box_px: Rect
    shape: TargetShape


@dataclass(frozen=True, slots=True)
class ContestMatch:
    contest: str
    page: int
    header: str  # the header lines read, joined
    score: float


@dataclass(frozen=True, slots=True)
class Proposal:
    assignments: tuple[Assignment, ...]
    contests: tuple[ContestMatch, ...]
    unassigned_targets: tuple[tuple[int, int, str], ...]  # page, target index, label read
    missing_options: tuple[tuple[str, str], ...]  # contest id, option id: no target found
    names_read: bool


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
# Stage 1: labels


def label_targets(scan: PageScan, titles: Sequence[str] = (), names: Sequence[str] = ()) -> tuple[tuple[Label, ...], frozenset[int]]:
    """A label per target, and the indices of the text lines used (labels and row text).

    Labels are looked for on one side for the whole page: right of the targets, or left when
    fewer than half of the targets have text on their right. Lines that resemble a contest
    title are never taken as a label's continuation or as row text; a line that begins like
    an option's name, or lies across a box border from the label, is not a continuation.
    """
    texts = scan.texts or ()
    titled = {i for i, t in enumerate(texts) if _title_like([t.text], titles)}
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
    on_row = [i for i, t in enumerate(texts) if i not in used and y - 0.35 * h <= _cy(t) <= y + 1.35 * h]
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
                 and -0.5 * t.box_px[3] <= t.box_px[1] - bottom <= 0.35 * t.box_px[3]]
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


def _line_names(name: str, text: str) -> float:
    """How much one printed line names an option: the whole name, or a part of it beginning
    with its first word (a name broken over two lines, or half hidden by a stamp)."""
    if not _same_first_word(name, text):
        return 0.0
    return max(name_similarity(name, text), 0.9 * name_similarity(text, name))


def _names(name: str, text: str) -> bool:
    return _line_names(name, text) >= MIN_NAME


def _row_lines(target: FoundTarget, texts: Sequence[TextLine], dpi: float, used: set[int], next_column: float) -> list[int]:
    """Other text on the target's row, up to the next column of targets."""
    x, y, w, h = target.box_px
    return [i for i, t in enumerate(texts) if i not in used and y - 0.5 * h <= _cy(t) <= y + h + 0.08 * dpi
            and x - 0.3 * dpi <= t.box_px[0] < min(x + w + 3.0 * dpi, next_column - 0.1 * dpi)]


def _cy(t: TextLine) -> float:
    return t.box_px[1] + t.box_px[3] / 2.0


# --------------------------------------------------------------------------------------
# Stage 2: blocks


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


def contest_blocks(scan: PageScan, used: frozenset[int], titles: Sequence[str]) -> list[Block]:
    """Blocks of one page, column by column, top to bottom (see the module docstring)."""
    texts = scan.texts or ()
    columns = columns_of(scan.targets, scan.dpi)
    starts = [min(scan.targets[i].box_px[0] for i in col) for col in columns]
    blocks: list[Block] = []
    for c, col in enumerate(columns):
        lo = starts[c] - 0.45 * scan.dpi
        hi = starts[c + 1] - 0.15 * scan.dpi if c + 1 < len(columns) else float("inf")
        free = [t for i, t in enumerate(texts) if i not in used and lo <= t.box_px[0] + t.box_px[2] / 2.0 < hi]
        x_in = min(scan.targets[i].box_px[0] + scan.targets[i].box_px[2] for i in col)
        borders = [r for r in scan.separators if r[0] <= x_in and r[0] + r[2] >= x_in + 0.5 * scan.dpi]
        items = sorted([(scan.targets[i].box_px[1], 1, i) for i in col] + [(t.box_px[1], 0, k) for k, t in enumerate(free)]
                       + [(r[1], 2, k) for k, r in enumerate(borders)])
        header: list[str] = []
        current: list[tuple[int, int]] = []
        current_header: tuple[str, ...] = ()
        bordered = False
        for _, kind, ref in items:
            if kind == 0:
                header.append(free[ref].text)
                continue
            if kind == 2:
                bordered = bordered or bool(current)
                continue
            if header and (not current or bordered or _title_like(header, titles)):
                if current:
                    blocks.append(Block(scan.page, current_header, tuple(current)))
                current, current_header = [], tuple(header)
            header, bordered = [], False
            current.append((scan.page, ref))
        if current:
            blocks.append(Block(scan.page, current_header, tuple(current)))
    return blocks


def _title_like(header: Sequence[str], titles: Sequence[str]) -> bool:
    return any(title_similarity(t, header)[0] >= TITLE_LIKE for t in titles)


# --------------------------------------------------------------------------------------
# Stages 3 and 4: contests and options


def assign(scans: Sequence[PageScan], contests: Sequence[Contest]) -> Proposal:
    """The proposal for a style's pages (see the module docstring)."""
    names_read = all(s.texts is not None for s in scans)
    if not names_read:
        return _assign_in_reading_order(scans, contests)
    labels: dict[tuple[int, int], Label] = {}
    blocks: list[Block] = []
    titles = [c.title for c in contests]
    for scan in scans:
        page_labels, used = label_targets(scan, titles, [o.name for c in contests for o in c.options if not o.write_in])
        labels.update({(scan.page, i): lab for i, lab in enumerate(page_labels)})
        blocks.extend(contest_blocks(scan, used, titles))
    rules = {(s.page, i) for s in scans for i in s.write_in_rules}
    pairs = _match_blocks(blocks, contests, labels)
    assignments: list[Assignment] = []
    matches: list[ContestMatch] = []
    for block_index, contest, score, header in pairs:
        block = blocks[block_index]
        matches.append(ContestMatch(contest.id, block.page, header, round(score, 3)))
        assignments.extend(_assign_options(block, contest, labels, rules, score, scans))
    assignments.extend(_infer_missing(scans, contests, blocks, pairs, assignments, labels))
    assignments.extend(_in_printed_order(blocks, pairs, assignments, labels, scans))
    return _proposal(assignments, matches, scans, contests, labels, names_read=True)


def _block_score(block: Block, contest: Contest, labels: Mapping[tuple[int, int], Label]) -> tuple[float, str]:
    title, header = title_similarity(contest.title, block.header)
    names = _names_score(block, contest, labels)
    n, m = len(block.targets), len(contest.options)
    counts = max(0.0, 1.0 - abs(n - m) / max(n, m))
    wt, wn, wc = BLOCK_WEIGHTS
    return wt * title + wn * names + wc * counts, header


def _match_blocks(blocks: Sequence[Block], contests: Sequence[Contest],
                  labels: Mapping[tuple[int, int], Label]) -> list[tuple[int, Contest, float, str]]:
    scored = []
    for b, block in enumerate(blocks):
        for contest in contests:
            score, header = _block_score(block, contest, labels)
            if score >= MIN_BLOCK_SCORE:
                scored.append((score, b, contest, header))
    scored.sort(key=lambda s: -s[0])
    taken_b: set[int] = set()
    taken_c: set[str] = set()
    out = []
    for score, b, contest, header in scored:
        if b not in taken_b and contest.id not in taken_c:
            taken_b.add(b)
            taken_c.add(contest.id)
            out.append((b, contest, score, header))
    for b, block in enumerate(blocks):  # a contest continued in another block: its names say so
        if b in taken_b:
            continue
        best = max(((_names_score(block, c, labels), c) for c in contests if c.id in taken_c), key=lambda s: s[0], default=None)
        if best is not None and best[0] >= MIN_NAME:
            taken_b.add(b)
            out.append((b, best[1], best[0], "(continued)"))
    return out


def _names_score(block: Block, contest: Contest, labels: Mapping[tuple[int, int], Label]) -> float:
    named = [max((labels[t].says(o.name) for o in contest.options), default=0.0) for t in block.targets]
    return sum(named) / len(named) if named else 0.0


def _option_score(option: Option, label: Label, has_rule: bool) -> tuple[float, How]:
    if option.write_in:
        said = is_write_in_text(label.row_text) or label.says(option.name) >= MIN_NAME
        if has_rule:
            return (0.95 if said else 0.85), How.WRITE_IN
        return (0.8 if said else 0.0), How.NAME
    score = label.says(option.name)
    if has_rule and score < MIN_NAME:
        return 0.0, How.NAME
    return score, How.NAME


def _where(scans: Sequence[PageScan], key: tuple[int, int]) -> tuple[Rect, TargetShape]:
    target = next(s for s in scans if s.page == key[0]).targets[key[1]]
    return target.box_px, target.shape


def _assign_options(block: Block, contest: Contest, labels: Mapping[tuple[int, int], Label],
                    rules: set[tuple[int, int]], block_score: float, scans: Sequence[PageScan]) -> list[Assignment]:
    scored = []
    for t in block.targets:
        for o in contest.options:
            score, how = _option_score(o, labels[t], t in rules)
            scored.append((score, t, o, how))
    scored.sort(key=lambda s: -s[0])
    done_t: set[tuple[int, int]] = set()
    done_o: set[str] = set()
    out = []
    for score, t, o, how in scored:
        if score >= MIN_NAME and t not in done_t and o.id not in done_o:
            done_t.add(t)
            done_o.add(o.id)
            out.append(Assignment(contest.id, o.id, t[0], t[1], round(score, 3), how, labels[t].text, *_where(scans, t)))
    return out


def _in_printed_order(blocks: Sequence[Block], pairs: Sequence[tuple[int, Contest, float, str]], assignments: Sequence[Assignment],
                      labels: Mapping[tuple[int, int], Label], scans: Sequence[PageScan]) -> list[Assignment]:
    """Per contest, the targets left in its blocks to the options left, in printed order, when
    as many of each are left (names unreadable: a stamp, a smudge)."""
    placed = {(a.page, a.target) for a in assignments}
    given = {(a.contest, a.option) for a in assignments}
    out = []
    for contest in {c.id: c for _, c, _, _ in pairs}.values():
        mine = sorted((b, score) for b, c, score, _ in pairs if c.id == contest.id)
        rest_t = [t for b, _ in mine for t in blocks[b].targets if t not in placed]
        rest_o = [o for o in contest.options if (contest.id, o.id) not in given]
        if rest_t and len(rest_t) == len(rest_o):
            confidence = round(0.5 * min(1.0, max(score for _, score in mine) + 0.2), 3)
            out.extend(Assignment(contest.id, o.id, t[0], t[1], confidence, How.ORDER, labels[t].text, *_where(scans, t))
                       for t, o in zip(rest_t, rest_o))
    return out


def _infer_missing(scans: Sequence[PageScan], contests: Sequence[Contest], blocks: Sequence[Block],
                   pairs: Sequence[tuple[int, Contest, float, str]], assignments: Sequence[Assignment],
                   labels: Mapping[tuple[int, int], Label]) -> list[Assignment]:
    """Targets for options whose name is printed where a label would be but no target was found
    (a stamp printed over the oval): placed in the column of their contest's other targets, on
    the name's line, the page's target size; for a person to check (:data:`How.INFERRED`)."""
    given = {(a.contest, a.option) for a in assignments}
    out: list[Assignment] = []
    for block_index, contest, _, _ in pairs:
        block = blocks[block_index]
        scan = next(s for s in scans if s.page == block.page)
        missing = [o for o in contest.options if (contest.id, o.id) not in given and not o.write_in]
        if not missing or not block.targets:
            continue
        boxes = [scan.targets[i].box_px for _, i in block.targets]
        x, w, h = (int(sorted(v)[len(v) // 2]) for v in zip(*[(b[0], b[2], b[3]) for b in boxes]))
        taken = {i for (p, _), lab in labels.items() if p == block.page for i in (*lab.line_ids, *lab.row_ids)}
        lo, hi = min(b[1] for b in boxes) - 1.5 * scan.dpi, max(b[1] for b in boxes) + 1.5 * scan.dpi
        for option in missing:
            found = _name_beside_column(scan, option, x, w, (lo, hi), taken)
            if found is None:
                continue
            index, score = found
            line = (scan.texts or ())[index]
            box = (x, int(round(_cy(line) - h / 2)), w, h)
            if any(_overlaps(box, t.box_px) for t in scan.targets) or any(_overlaps(box, a.box_px) for a in out if a.page == scan.page):
                continue
            taken.add(index)
            given.add((contest.id, option.id))
            out.append(Assignment(contest.id, option.id, scan.page, None, round(0.5 * score, 3), How.INFERRED, line.text, box, scan.targets[block.targets[0][1]].shape))
    return out


def _name_beside_column(scan: PageScan, option: Option, x: int, w: int, rows: tuple[float, float], taken: set[int]) -> tuple[int, float] | None:
    best: tuple[int, float] | None = None
    for i, line in enumerate(scan.texts or ()):
        if i in taken or not rows[0] <= _cy(line) <= rows[1] or not x + w - 0.1 * scan.dpi <= line.box_px[0] <= x + w + LABEL_REACH_IN * scan.dpi:
            continue
        score = _line_names(option.name, line.text)
        if score >= MIN_NAME and (best is None or score > best[1]):
            best = (i, score)
    return best


def _same_first_word(name: str, text: str) -> bool:
    """A line that names an option begins with its first word (not a running mate's line)."""
    a, b = (re.findall(r"[a-z0-9]+", v.lower()) for v in (name, text))
    return bool(a and b) and difflib.SequenceMatcher(None, a[0], b[0], autojunk=False).ratio() >= 0.75


def _overlaps(a: Rect, b: Rect) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def _assign_in_reading_order(scans: Sequence[PageScan], contests: Sequence[Contest]) -> Proposal:
    """Without OCR: targets in reading order to the options in the order given, if the counts agree."""
    ordered = [(s.page, i) for s in scans for col in columns_of(s.targets, s.dpi) for i in col]
    options = [(c, o) for c in contests for o in c.options]
    assignments: list[Assignment] = []
    if len(ordered) == len(options):
        assignments = [Assignment(c.id, o.id, p, i, 0.5, How.ORDER, "", *_where(scans, (p, i))) for (p, i), (c, o) in zip(ordered, options)]
    empty = {(s.page, i): Label("", "") for s in scans for i in range(len(s.targets))}
    return _proposal(assignments, [], scans, contests, empty, names_read=False)


def _proposal(assignments: Sequence[Assignment], matches: Sequence[ContestMatch], scans: Sequence[PageScan],
              contests: Sequence[Contest], labels: Mapping[tuple[int, int], Label], *, names_read: bool) -> Proposal:
    placed = {(a.page, a.target) for a in assignments if a.target is not None}
    given = {(a.contest, a.option) for a in assignments}
    unassigned = tuple((s.page, i, labels[(s.page, i)].row_text) for s in scans for i in range(len(s.targets)) if (s.page, i) not in placed)
    missing = tuple((c.id, o.id) for c in contests for o in c.options if (c.id, o.id) not in given)
    order = {(c.id, o.id): k for k, (c, o) in enumerate((c, o) for c in contests for o in c.options)}
    return Proposal(tuple(sorted(assignments, key=lambda a: order[(a.contest, a.option)])), tuple(matches), unassigned, missing, names_read)
