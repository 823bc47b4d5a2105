"""Propose which option of which contest each target found on a blank page belongs to.

Pure: targets and OCR text lines (page pixels) plus the style's contests in, a proposal
with a confidence per assignment out. A person confirms it (the printed table and the
review overlay); nothing here is final.

The stages, per page, then over all pages of the style at once:

1. **labels** (:func:`scanpipe.layout_labels.label_targets`): the text read beside each
   target, and the text on its row.
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

Similarity of names and titles: :mod:`scanpipe.layout_labels`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from scanpipe.imaging.targets import Rect, TargetShape
from scanpipe.layout_labels import (
    LABEL_REACH_IN,
    MIN_NAME,
    Label,
    PageScan,
    columns_of,
    cy,
    is_write_in_text,
    label_targets,
    line_names,
    name_similarity,
    title_like,
    title_similarity,
)
from scanpipe.types import Contest, Option

__all__ = ["Assignment", "Block", "ContestMatch", "How", "PageScan", "Proposal", "assign", "contest_blocks", "name_similarity",
           "title_similarity"]

BLOCK_WEIGHTS = (0.45, 0.40, 0.15)  # title, option names, counts
MIN_BLOCK_SCORE = 0.35
REVIEW_BELOW = 0.75  # assignments less sure than this are marked for a person to check


class How(StrEnum):
    NAME = "name"  # the label names the option
    WRITE_IN = "write-in rule"  # a write-in option's target with a rule beside it
    ORDER = "order"  # names not matched: the printed order within the contest
    INFERRED = "inferred"  # no target found, but the name is printed where a target's label would be


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
# Stage 2: blocks


def contest_blocks(scan: PageScan, used: frozenset[int], titles: Sequence[str]) -> list[Block]:
    """Blocks of one page, column by column, top to bottom (see the module docstring)."""
    texts = scan.texts or ()
    columns = columns_of(scan.targets, scan.dpi)
    starts = [min(scan.targets[i].box_px[0] for i in col) for col in columns]
    # the last column is as wide as the widest before it: a column whose targets were all lost
    # (a stamp) beyond it lends no text to it
    pitch = max((b - a for a, b in zip(starts, starts[1:])), default=float("inf"))
    lowest = [max(scan.targets[i].box_px[1] for i in col) for col in columns]

    def right_end(c: int, y: float) -> float:
        # the next column to the right that has a target at or below the text line ends the
        # column there: a column whose targets all lie above it (a stray oval-like glyph in
        # the page's header, a precinct official's box) takes no contest header from it
        ends = [starts[d] for d in range(c + 1, len(columns)) if lowest[d] >= y]
        return (ends[0] if ends else starts[c] + pitch) - 0.15 * scan.dpi

    blocks: list[Block] = []
    for c, col in enumerate(columns):
        lo = starts[c] - 0.45 * scan.dpi
        free = [t for i, t in enumerate(texts) if i not in used and lo <= t.box_px[0] + t.box_px[2] / 2.0 < right_end(c, t.box_px[1])]
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
            if header and (not current or bordered or title_like(header, titles)):
                if current:
                    blocks.append(Block(scan.page, current_header, tuple(current)))
                current, current_header = [], tuple(header)
            header, bordered = [], False
            current.append((scan.page, ref))
        if current:
            blocks.append(Block(scan.page, current_header, tuple(current)))
    return blocks


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
    # a contest's write-in lines are alike: its write-in options take them in printed order
    # (paired by score they would follow the OCR's slips: "Wrte-ln" on the first line)
    write_ins = [o.id for o in contest.options if o.write_in and o.id in done_o]
    if len(write_ins) > 1:
        printed = {t: k for k, t in enumerate(block.targets)}
        lines = sorted((a for a in out if a.option in write_ins), key=lambda a: printed.get((a.page, a.target if a.target is not None else -1), len(printed)))
        by_line = {id(a): option for a, option in zip(lines, write_ins)}
        out = [replace(a, option=by_line[id(a)]) if id(a) in by_line else a for a in out]
    return out


def _in_printed_order(blocks: Sequence[Block], pairs: Sequence[tuple[int, Contest, float, str]], assignments: Sequence[Assignment],
                      labels: Mapping[tuple[int, int], Label], scans: Sequence[PageScan]) -> list[Assignment]:
    """Per contest, the targets left in its blocks to the options left, in printed order, when
    as many of each are left (names unreadable: a stamp, a smudge)."""
    placed = {(a.page, a.target) for a in assignments}
    given = {(a.contest, a.option) for a in assignments}
    out: list[Assignment] = []
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
            box = (x, int(round(cy(line) - h / 2)), w, h)
            if any(_overlaps(box, t.box_px) for t in scan.targets) or any(_overlaps(box, a.box_px) for a in out if a.page == scan.page):
                continue
            taken.add(index)
            given.add((contest.id, option.id))
            out.append(Assignment(contest.id, option.id, scan.page, None, round(0.5 * score, 3), How.INFERRED, line.text, box, scan.targets[block.targets[0][1]].shape))
    return out


def _name_beside_column(scan: PageScan, option: Option, x: int, w: int, rows: tuple[float, float], taken: set[int]) -> tuple[int, float] | None:
    best: tuple[int, float] | None = None
    for i, line in enumerate(scan.texts or ()):
        if i in taken or not rows[0] <= cy(line) <= rows[1] or not x + w - 0.1 * scan.dpi <= line.box_px[0] <= x + w + LABEL_REACH_IN * scan.dpi:
            continue
        score = line_names(option.name, line.text)
        if score >= MIN_NAME and (best is None or score > best[1]):
            best = (i, score)
    return best


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
