"""What changed between two election definitions, and whether it would alter stored readings.

Pure: two definitions (``election.json`` content and layouts, as loaded) in, a list of
changes out. A change of a name, a title or the date only changes what people read, and one of
the jurisdiction changes the rules people's decisions follow, not what was read; a change
of ids, vote-for counts, the styles' contests or precincts, or any layout (where targets are
printed) changes how stored cards were, or would be, read and counted: ``init`` refuses it
over stored cards unless ``--force``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class DefinitionChange:
    text: str
    alters_readings: bool


def _by_id(items: Any) -> dict[str, dict[str, Any]]:
    return {str(x["id"]): x for x in items or []}


def _layout_of(definition: Mapping[str, Any], layouts: Mapping[str, Any], style_id: str) -> Any:
    style = _by_id(definition.get("ballot_styles"))[style_id]
    return layouts.get(str(style.get("layout")))


def definition_changes(old: Mapping[str, Any], old_layouts: Mapping[str, Any], new: Mapping[str, Any],
                       new_layouts: Mapping[str, Any]) -> list[DefinitionChange]:
    """Every difference a person should see before a new definition replaces the stored one."""
    out: list[DefinitionChange] = []

    def add(text: str, alters: bool) -> None:
        out.append(DefinitionChange(text, alters))

    for key, alters in (("id", True), ("jurisdiction", False), ("name", False), ("date", False)):  # rules apply to decisions, not readings
        if old.get(key) != new.get(key):
            add(f"election {key}: {old.get(key)!r} -> {new.get(key)!r}", alters)
    _compare_named(out, "precinct", _by_id(old.get("precincts")), _by_id(new.get("precincts")), "name")
    old_c, new_c = _by_id(old.get("contests")), _by_id(new.get("contests"))
    _compare_named(out, "contest", old_c, new_c, "title")
    for cid in sorted(set(old_c) & set(new_c)):
        a, b = old_c[cid], new_c[cid]
        if a.get("vote_for") != b.get("vote_for"):
            add(f"contest {cid} ({b.get('title')}): vote for {a.get('vote_for')} -> {b.get('vote_for')}", True)
        oa, ob = _by_id(a.get("options")), _by_id(b.get("options"))
        _compare_named(out, f"option of {b.get('title')}", oa, ob, "name", added_alters=True)
        for oid in sorted(set(oa) & set(ob)):
            if bool(oa[oid].get("write_in")) != bool(ob[oid].get("write_in")):
                add(f"option {oid} ({ob[oid].get('name')}): write-in {bool(oa[oid].get('write_in'))} -> {bool(ob[oid].get('write_in'))}", True)
    old_s, new_s = _by_id(old.get("ballot_styles")), _by_id(new.get("ballot_styles"))
    for sid in sorted(set(old_s) - set(new_s)):
        add(f"ballot style {sid} removed", True)
    for sid in sorted(set(new_s) - set(old_s)):
        add(f"ballot style {sid} added", False)
    for sid in sorted(set(old_s) & set(new_s)):
        for key in ("precincts", "contests"):
            if list(old_s[sid].get(key) or []) != list(new_s[sid].get(key) or []):
                add(f"ballot style {sid}: {key} {', '.join(old_s[sid].get(key) or [])} -> {', '.join(new_s[sid].get(key) or [])}", True)
        if _layout_of(old, old_layouts, sid) != _layout_of(new, new_layouts, sid):
            add(f"ballot style {sid}: its layout changed (where targets, fiducials or codes are printed)", True)
    return out


def _compare_named(out: list[DefinitionChange], what: str, old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]],
                   name_key: str, *, added_alters: bool = False) -> None:
    for i in sorted(set(old) - set(new)):
        out.append(DefinitionChange(f"{what} {i} ({old[i].get(name_key)}) removed", True))
    for i in sorted(set(new) - set(old)):
        out.append(DefinitionChange(f"{what} {i} ({new[i].get(name_key)}) added", added_alters))
    for i in sorted(set(old) & set(new)):
        if old[i].get(name_key) != new[i].get(name_key):
            out.append(DefinitionChange(f"{what} {i}: {name_key} {old[i].get(name_key)!r} -> {new[i].get(name_key)!r}", False))
