"""Election definitions in the store: the digest that tells versions apart, the reference
scans read at ``init``, and the typed rebuild from stored JSON."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scanpipe.election import parse_election
from scanpipe.errors import ConfigError
from scanpipe.types import BallotStyle, Election


def election_from_json(definition: dict[str, Any], layouts: dict[str, dict[str, Any]], *,
                       base: Path | None = None) -> Election:
    """Rebuild typed election values from stored JSON (reference files are not checked)."""
    return parse_election(definition, layouts, base=base, check_files=False)


def read_references(election: Election, given: Mapping[tuple[str, int], bytes] | None = None,
                    ) -> dict[tuple[str, int], tuple[str, bytes]]:
    """``(style, page) -> (file name, bytes)`` of every reference scan: the ``given`` bytes
    where the caller already read them, else the file."""
    refs = {}
    for style in election.ballot_styles:
        for page in style.layout.pages:
            if page.reference is None:
                continue
            key = (style.id, page.page)
            if given is not None and key in given:
                refs[key] = (page.reference.name, given[key])
                continue
            try:
                refs[key] = (page.reference.name, page.reference.read_bytes())
            except OSError as e:
                raise ConfigError(f"reference scan {page.reference} of style {style.id} page {page.page} "
                                  f"cannot be read: {e.strerror or e}") from e
    return refs


def definition_sha256(definition: dict[str, Any], layouts: dict[str, dict[str, Any]],
                       references: Mapping[tuple[str, int], tuple[str, bytes]]) -> str:
    refs = {f"{s}/{p}": hashlib.sha256(data).hexdigest() for (s, p), (_, data) in sorted(references.items())}
    blob = json.dumps({"definition": definition, "layouts": layouts, "references": refs},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def with_references(election: Election, paths: Mapping[tuple[str, int], Path]) -> Election:
    def style(s: BallotStyle) -> BallotStyle:
        pages = tuple(dataclasses.replace(p, reference=paths[(s.id, p.page)]) if (s.id, p.page) in paths else p
                      for p in s.layout.pages)
        return dataclasses.replace(s, layout=dataclasses.replace(s.layout, pages=pages))

    return dataclasses.replace(election, ballot_styles=tuple(style(s) for s in election.ballot_styles))
