"""Load and validate an election definition (``election.json``) and its layouts.

Validation is a pipeline of small checks that each *append* problems instead of raising, so
a board sees every problem of a definition at once (file, JSON path, reason). Only when the
whole definition is clean is it turned into frozen :mod:`scanpipe.types` values; otherwise
:class:`scanpipe.errors.DefinitionError` carries the full list and nothing is written anywhere.

Before any field is read, each file's JSON as a whole is checked for what no field may hold
and what the store could not keep (:func:`check_json_values`): nesting deeper than
:data:`MAX_JSON_DEPTH`, ``NaN`` or infinite numbers (Python's JSON reader accepts them),
integers beyond a 32-bit column, strings with a NUL character or a lone surrogate. Every
field is then checked for its type before it is used as an id, so a list where an id
belongs is a problem like any other, never a crash. Sizes have plausible bounds
(:data:`MIN_BOX_IN`, :data:`MAX_PAGE_IN`): a definition that passes ``init`` can be read
into the store and used to read cards.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

from scanpipe.errors import DefinitionError, Problem
from scanpipe.rules import JURISDICTIONS
from scanpipe.types import (
    BallotStyle,
    Box,
    Contest,
    Election,
    Layout,
    LayoutPage,
    Option,
    Precinct,
    TargetDef,
)

ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
CONTEST_KINDS = ("candidate", "question")
# A definition is about six levels deep; anything much deeper is not a definition (and
# Python's JSON reader fails with a RecursionError near 1,000 levels).
MAX_JSON_DEPTH = 32
MAX_JSON_INT = 2**31 - 1  # page numbers, vote_for, dpi: what a 32-bit integer column holds
# Boxes smaller than this are under a pixel at 50 dpi: nothing can be measured there.
MIN_BOX_IN = 0.02
# The longest ballot cards printed are 22-25 inches; a page far larger would make every
# registered card an enormous image.
MAX_PAGE_IN = 40.0


class _Problems:
    """Collects problems for one file."""

    def __init__(self, file: str, sink: list[Problem]) -> None:
        self.file = file
        self.sink = sink

    def add(self, path: str, reason: str) -> None:
        self.sink.append(Problem(self.file, path, reason))

    def field(self, obj: Any, key: str, path: str, kind: type | tuple[type, ...], *, required: bool = True) -> Any:
        """Return ``obj[key]`` when it has the right type, else note a problem and return None."""
        if not isinstance(obj, dict):
            return None
        if key not in obj:
            if required:
                self.add(path, f"missing required field '{key}'")
            return None
        value = obj[key]
        ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in _as_tuple(kind))
        if not ok:
            self.add(f"{path}.{key}", f"must be {_kind_name(kind)}, not {type(value).__name__}")
            return None
        return value

    def list_of_dicts(self, obj: Any, key: str, path: str, *, required: bool = True) -> list[dict[str, Any]]:
        items = self.field(obj, key, path, list, required=required)
        if items is None:
            return []
        good = []
        for i, item in enumerate(items):
            if isinstance(item, dict):
                good.append(item)
            else:
                self.add(f"{path}.{key}[{i}]", f"must be an object, not {type(item).__name__}")
        return good

    def ident(self, obj: dict[str, Any], path: str, key: str = "id") -> str | None:
        value = self.field(obj, key, path, str)
        if value is not None and not ID_RE.match(value):
            self.add(f"{path}.{key}", f"'{value}' is not a valid id (letters, digits, _ . -; 1-64 chars)")
            return None
        return value

    def ids(self, obj: dict[str, Any], key: str, path: str, what: str) -> list[str]:
        """``obj[key]`` as a list of strings; each element that is not one is a problem."""
        items = self.field(obj, key, path, list) or []
        good = []
        for j, item in enumerate(items):
            if isinstance(item, str):
                good.append(item)
            else:
                self.add(f"{path}.{key}[{j}]", f"must be {what} id (a string), not {type(item).__name__}")
        return good

    def box(self, value: Any, path: str, size_in: tuple[float, float] | None) -> Box | None:
        if not (isinstance(value, list) and len(value) == 4 and all(_is_number(v) for v in value)):
            self.add(path, "must be a box [x, y, w, h] of 4 numbers (inches)")
            return None
        x, y, w, h = (float(v) for v in value)
        if w < MIN_BOX_IN or h < MIN_BOX_IN:
            self.add(path, f"box width and height must be at least {MIN_BOX_IN} in, got {w} x {h}")
            return None
        if size_in is not None and (x < 0 or y < 0 or x + w > size_in[0] + 1e-9 or y + h > size_in[1] + 1e-9):
            self.add(path, f"box {value} lies outside the {size_in[0]} x {size_in[1]} in page")
            return None
        return (x, y, w, h)


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", float: "a number", list: "a list", dict: "an object", bool: "true or false"}
    return " or ".join(names.get(k, k.__name__) for k in _as_tuple(kind))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_json_values(value: Any, file: str, problems: list[Problem]) -> bool:
    """Note every value of a parsed JSON document that no definition may hold (see the
    module docstring); returns whether there was none. Iterative: any depth is safe."""
    before = len(problems)
    stack: list[tuple[Any, str, int]] = [(value, "$", 0)]
    while stack:
        node, path, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            problems.append(Problem(file, path, f"nested more than {MAX_JSON_DEPTH} levels deep: not an election definition"))
            continue
        if isinstance(node, dict):
            for key in node:
                key_problem = _text_problem(key)
                if key_problem:
                    problems.append(Problem(file, path, f"a key {key_problem}"))
            stack.extend((v, f"{path}.{k}", depth + 1) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in reversed(list(enumerate(node))))
        elif isinstance(node, float) and not math.isfinite(node):
            problems.append(Problem(file, path, f"{node} is not a number (JSON has no NaN or infinity)"))
        elif isinstance(node, int) and not isinstance(node, bool) and abs(node) > MAX_JSON_INT:
            problems.append(Problem(file, path, f"{node} is too large a number (at most {MAX_JSON_INT})"))
        elif isinstance(node, str) and _text_problem(node):
            problems.append(Problem(file, path, f"the text {_text_problem(node)}"))
    return len(problems) == before


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode (a lone surrogate escape)"
    return None


# --------------------------------------------------------------------------------------
# Reading files


def read_definition(election_path: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Read ``election.json`` and every layout it names, as plain JSON.

    Returns ``(definition, layouts)`` where ``layouts`` maps the layout path as written in the
    definition to its JSON. Raises :class:`DefinitionError` listing every file that is
    missing or is not JSON.
    """
    problems: list[Problem] = []
    definition = _read_json(election_path, problems)
    layouts: dict[str, dict[str, Any]] = {}
    if isinstance(definition, dict):
        styles = definition.get("ballot_styles")
        for i, style in enumerate(styles if isinstance(styles, list) else []):
            rel = style.get("layout") if isinstance(style, dict) else None
            if isinstance(rel, str) and rel not in layouts:
                layout_path = election_path.parent / rel
                if not layout_path.is_file():
                    problems.append(Problem(str(election_path), f"$.ballot_styles[{i}].layout", f"layout file {layout_path} does not exist"))
                    continue
                data = _read_json(layout_path, problems)
                if isinstance(data, dict):
                    layouts[rel] = data
                elif data is not None:
                    problems.append(Problem(str(layout_path), "$", "a layout must be a JSON object"))
    elif definition is not None:
        problems.append(Problem(str(election_path), "$", "the election definition must be a JSON object"))
    if problems:
        raise DefinitionError(problems)
    assert isinstance(definition, dict)
    return definition, layouts


def _read_json(path: Path, problems: list[Problem]) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        problems.append(Problem(str(path), "$", "file does not exist"))
        return None
    except (OSError, UnicodeDecodeError) as e:
        problems.append(Problem(str(path), "$", f"cannot be read: {e}"))
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        problems.append(Problem(str(path), "$", f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}"))
        return None
    except RecursionError:
        problems.append(Problem(str(path), "$", f"nested too deeply to read (more than {MAX_JSON_DEPTH} levels "
                                                "is not an election definition)"))
        return None
    return value if check_json_values(value, str(path), problems) else None


def load_election(election_path: Path | str) -> Election:
    """Read, validate and parse an election definition and its layouts."""
    path = Path(election_path).resolve()
    definition, layouts = read_definition(path)
    return parse_election(definition, layouts, base=path.parent, file=str(path))


# --------------------------------------------------------------------------------------
# Parsing and validation


def parse_election(
    definition: dict[str, Any],
    layouts: dict[str, dict[str, Any]],
    *,
    base: Path | None,
    file: str = "election.json",
    check_files: bool = True,
) -> Election:
    """Validate the definition as a whole and return it as typed values.

    ``layouts`` maps each style's ``layout`` path (as written) to the layout's JSON.
    ``base`` is the folder of ``election.json`` (reference scans are found relative to their
    layout file); with ``check_files=False`` reference paths are not checked on disk (a
    definition rebuilt from the database).
    """
    problems: list[Problem] = []
    p = _Problems(file, problems)
    head = _parse_head(definition, p)
    precincts = _parse_precincts(definition, p)
    contests = _parse_contests(definition, p)
    _check_unique_ids(definition, p)
    contest_by_id = {c.id: c for c in contests}
    precinct_ids = {pr.id for pr in precincts}
    styles = []
    for i, style in enumerate(p.list_of_dicts(definition, "ballot_styles", "$")):
        parsed = _parse_style(style, f"$.ballot_styles[{i}]", p, contest_by_id, precinct_ids, layouts, base, problems, check_files)
        if parsed is not None:
            styles.append(parsed)
    if isinstance(definition.get("ballot_styles"), list) and not definition["ballot_styles"]:
        p.add("$.ballot_styles", "an election needs at least one ballot style")
    if problems:
        raise DefinitionError(problems)
    return Election(
        id=head["id"], name=head["name"], date=head["date"], jurisdiction=head["jurisdiction"],
        precincts=tuple(precincts), contests=tuple(contests), ballot_styles=tuple(styles),
        path=(base / Path(file).name) if base is not None else None,
    )


def _parse_head(definition: dict[str, Any], p: _Problems) -> dict[str, str]:
    head: dict[str, str] = {}
    head["id"] = p.ident(definition, "$") or ""
    head["name"] = p.field(definition, "name", "$", str) or ""
    date = p.field(definition, "date", "$", str)
    if date is not None and not DATE_RE.match(date):
        p.add("$.date", f"'{date}' is not a date of the form YYYY-MM-DD")
    head["date"] = date or ""
    jurisdiction = p.field(definition, "jurisdiction", "$", str)
    if jurisdiction is not None and jurisdiction not in JURISDICTIONS:
        p.add("$.jurisdiction", f"'{jurisdiction}' has no recount rule set; known: {', '.join(sorted(JURISDICTIONS))}")
    head["jurisdiction"] = jurisdiction or ""
    return head


def _parse_precincts(definition: dict[str, Any], p: _Problems) -> list[Precinct]:
    out = []
    items = p.list_of_dicts(definition, "precincts", "$")
    if isinstance(definition.get("precincts"), list) and not definition["precincts"]:
        p.add("$.precincts", "an election needs at least one precinct")
    for i, item in enumerate(items):
        path = f"$.precincts[{i}]"
        pid = p.ident(item, path)
        name = p.field(item, "name", path, str)
        county = p.field(item, "county", path, str, required=False)
        if pid is not None and name is not None:
            out.append(Precinct(pid, name, county))
    return out


def _parse_contests(definition: dict[str, Any], p: _Problems) -> list[Contest]:
    out = []
    for i, item in enumerate(p.list_of_dicts(definition, "contests", "$")):
        path = f"$.contests[{i}]"
        cid = p.ident(item, path)
        title = p.field(item, "title", path, str)
        kind = p.field(item, "kind", path, str)
        if kind is not None and kind not in CONTEST_KINDS:
            p.add(f"{path}.kind", f"'{kind}' is not one of {', '.join(CONTEST_KINDS)}")
        vote_for = p.field(item, "vote_for", path, int)
        options = []
        for j, opt in enumerate(p.list_of_dicts(item, "options", path)):
            opath = f"{path}.options[{j}]"
            oid = p.ident(opt, opath)
            oname = p.field(opt, "name", opath, str)
            write_in = p.field(opt, "write_in", opath, bool, required=False) or False
            if oid is not None and oname is not None:
                options.append(Option(oid, oname, write_in))
        if isinstance(item.get("options"), list) and not item["options"]:
            p.add(f"{path}.options", "a contest needs at least one option")
        if vote_for is not None and vote_for < 1:
            p.add(f"{path}.vote_for", f"must be at least 1, got {vote_for}")
        elif vote_for is not None and options and vote_for > len(options):
            p.add(f"{path}.vote_for", f"vote_for {vote_for} exceeds the {len(options)} options")
        if cid is not None and title is not None and kind is not None and vote_for is not None:
            out.append(Contest(cid, title, kind, vote_for, tuple(options)))
    return out


def _check_unique_ids(definition: dict[str, Any], p: _Problems) -> None:
    ids: list[tuple[str, str]] = []

    def collect(items: Any, path: str) -> list[Any]:
        items = items if isinstance(items, list) else []
        for i, item in enumerate(items):
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                ids.append((item["id"], f"{path}[{i}].id"))
        return items

    if isinstance(definition.get("id"), str):
        ids.append((definition["id"], "$.id"))
    collect(definition.get("precincts"), "$.precincts")
    for i, c in enumerate(collect(definition.get("contests"), "$.contests")):
        if isinstance(c, dict):
            collect(c.get("options"), f"$.contests[{i}].options")
    collect(definition.get("ballot_styles"), "$.ballot_styles")
    counts = Counter(i for i, _ in ids)
    first: dict[str, str] = {}
    for value, path in ids:
        if counts[value] > 1:
            if value in first:
                p.add(path, f"id '{value}' is already used at {first[value]}; ids must be unique across the election")
            else:
                first[value] = path


def _parse_style(
    style: dict[str, Any], path: str, p: _Problems, contests: dict[str, Contest], precinct_ids: set[str],
    layouts: dict[str, dict[str, Any]], base: Path | None, problems: list[Problem], check_files: bool,
) -> BallotStyle | None:
    sid = p.ident(style, path)
    sprecincts = p.ids(style, "precincts", path, "a precinct")
    before = len(problems)
    scontests = p.ids(style, "contests", path, "a contest")
    contests_listed = len(problems) == before  # else the layout's targets are not checked against a broken list
    rel = p.field(style, "layout", path, str)
    for j, pid in enumerate(sprecincts):
        if pid not in precinct_ids:
            p.add(f"{path}.precincts[{j}]", f"precinct '{pid}' is not defined in $.precincts")
    for j, cid in enumerate(scontests):
        if cid not in contests:
            p.add(f"{path}.contests[{j}]", f"contest '{cid}' is not defined in $.contests")
    if not style.get("precincts") and isinstance(style.get("precincts"), list):
        p.add(f"{path}.precincts", "a ballot style must serve at least one precinct")
    if sid is None or rel is None or not contests_listed:
        return None
    if rel not in layouts:
        return None  # read_definition already reported the missing file
    layout_file = (base / rel) if base is not None else Path(rel)
    lp = _Problems(str(layout_file), problems)
    style_contests = {cid: contests[cid] for cid in scontests if cid in contests}
    layout = _parse_layout(layouts[rel], sid, style_contests, lp, layout_file, check_files)
    if layout is None:
        return None
    return BallotStyle(sid, tuple(sprecincts), tuple(scontests), layout)


def _parse_layout(
    data: dict[str, Any], style_id: str, contests: dict[str, Contest], p: _Problems, layout_file: Path, check_files: bool,
) -> Layout | None:
    before = len(p.sink)
    lstyle = p.field(data, "style", "$", str)
    if lstyle is not None and lstyle != style_id:
        p.add("$.style", f"layout is for style '{lstyle}' but the election uses it for style '{style_id}'")
    pages = []
    seen: Counter[tuple[str, str]] = Counter()
    for i, page in enumerate(p.list_of_dicts(data, "pages", "$")):
        raw_targets = page.get("targets")
        for t in raw_targets if isinstance(raw_targets, list) else []:
            if isinstance(t, dict) and isinstance(t.get("contest"), str) and isinstance(t.get("option"), str):
                seen[(t["contest"], t["option"])] += 1
        parsed = _parse_page(page, f"$.pages[{i}]", p, contests, layout_file, check_files)
        if parsed is not None:
            pages.append(parsed)
    numbers = Counter(pg.page for pg in pages)
    for n, count in numbers.items():
        if count > 1:
            p.add("$.pages", f"page {n} appears {count} times")
    for cid, contest in contests.items():
        for opt in contest.options:
            if seen[(cid, opt.id)] == 0:
                p.add("$.pages", f"option '{opt.id}' of contest '{cid}' has no target on any page")
            elif seen[(cid, opt.id)] > 1:
                p.add("$.pages", f"option '{opt.id}' of contest '{cid}' has {seen[(cid, opt.id)]} targets")
    if len(p.sink) > before:
        return None
    return Layout(style_id, tuple(sorted(pages, key=lambda pg: pg.page)), layout_file)


def _parse_page(
    page: dict[str, Any], path: str, p: _Problems, contests: dict[str, Contest], layout_file: Path, check_files: bool,
) -> LayoutPage | None:
    before = len(p.sink)
    number = p.field(page, "page", path, int)
    if number is not None and number < 1:
        p.add(f"{path}.page", f"page numbers start at 1, got {number}")
    size = p.field(page, "size", path, list)
    size_in: tuple[float, float] | None = None
    if size is not None:
        if len(size) == 2 and all(_is_number(v) and 1.0 <= v <= MAX_PAGE_IN for v in size):
            size_in = (float(size[0]), float(size[1]))
        else:
            p.add(f"{path}.size", f"must be [width, height] in inches, each from 1 to {MAX_PAGE_IN:g}")
    fiducials = _parse_boxes(page, "fiducials", path, p, size_in)
    if fiducials and len(fiducials) != 4:
        p.add(f"{path}.fiducials", f"must list 4 boxes (TL, TR, BL, BR), got {len(fiducials)}")
    qr = p.box(page["qr"], f"{path}.qr", size_in) if "qr" in page else None
    distinguish = _parse_boxes(page, "distinguish", path, p, size_in)
    reference, reference_dpi = _parse_reference(page, path, p, layout_file, check_files)
    if not fiducials and reference is None:
        p.add(path, "a page needs fiducials, a reference scan, or both")
    targets = _parse_targets(page, path, p, contests, size_in)
    if len(p.sink) > before or number is None or size_in is None:
        return None
    return LayoutPage(
        page=number, size_in=size_in, targets=tuple(targets), fiducials_in=tuple(fiducials), qr_in=qr,
        reference=reference, reference_dpi=reference_dpi, distinguish_in=tuple(distinguish),
    )


def _parse_boxes(page: dict[str, Any], key: str, path: str, p: _Problems, size_in: tuple[float, float] | None) -> list[Box]:
    raw = p.field(page, key, path, list, required=False) or []
    boxes = [p.box(b, f"{path}.{key}[{i}]", size_in) for i, b in enumerate(raw)]
    return [b for b in boxes if b is not None]


def _parse_reference(page: dict[str, Any], path: str, p: _Problems, layout_file: Path, check_files: bool) -> tuple[Path | None, float | None]:
    rel = p.field(page, "reference", path, str, required=False)
    dpi = p.field(page, "reference_dpi", path, (int, float), required=False)
    if rel is None:
        if dpi is not None:
            p.add(f"{path}.reference_dpi", "given without a reference")
        return None, None
    if dpi is None:
        p.add(f"{path}.reference", "a reference needs its reference_dpi")
    elif not 50 <= dpi <= 1200:
        p.add(f"{path}.reference_dpi", f"{dpi} is not a plausible scan resolution (50-1200)")
    ref = (layout_file.parent / rel).resolve()
    if check_files and not ref.is_file():
        p.add(f"{path}.reference", f"reference scan {ref} does not exist")
    elif check_files:
        problem = _reference_problem(ref)
        if problem is not None:
            p.add(f"{path}.reference", f"reference scan {ref}: {problem}")
    return ref, float(dpi) if dpi is not None else None


def _reference_problem(ref: Path) -> str | None:
    """Why a reference scan could not serve (not an image, over the decode limits), else None:
    every ingest worker decodes it, so a bomb here would be a bomb in every worker."""
    from scanpipe.imaging.decode import LIMITS, ImageDecodeError, read_header, too_large_file

    try:
        if ref.stat().st_size > LIMITS.file_bytes:
            return too_large_file(ref.stat().st_size).detail
        read_header(ref.read_bytes(), str(ref))
    except OSError as e:
        return f"cannot be read: {e.strerror or e}"
    except ImageDecodeError as e:
        return e.detail
    return None


def _parse_targets(page: dict[str, Any], path: str, p: _Problems, contests: dict[str, Contest], size_in: tuple[float, float] | None) -> list[TargetDef]:
    out = []
    for i, t in enumerate(p.list_of_dicts(page, "targets", path)):
        tpath = f"{path}.targets[{i}]"
        cid = p.field(t, "contest", tpath, str)
        oid = p.field(t, "option", tpath, str)
        box = p.box(t["box"], f"{tpath}.box", size_in) if "box" in t else None
        if "box" not in t:
            p.add(tpath, "missing required field 'box'")
        area = p.box(t["write_in_area"], f"{tpath}.write_in_area", size_in) if "write_in_area" in t else None
        contest = contests.get(cid) if cid is not None else None
        if cid is not None and contest is None:
            p.add(f"{tpath}.contest", f"contest '{cid}' is not on this ballot style")
            continue
        option = next((o for o in contest.options if o.id == oid), None) if contest else None
        if contest is not None and oid is not None and option is None:
            p.add(f"{tpath}.option", f"option '{oid}' is not an option of contest '{cid}'")
            continue
        if area is not None and option is not None and not option.write_in:
            p.add(f"{tpath}.write_in_area", f"option '{oid}' is not a write-in option")
        if cid is not None and oid is not None and box is not None:
            out.append(TargetDef(cid, oid, box, area))
    return out
