"""A deck for the benchmarks: any folder of cards with an election, layouts and a truth file.

``--deck DIR`` of ``bench_accuracy.py`` and ``bench_ingest.py`` takes a folder that someone
(this project's generator, another renderer, a person labelling real ballots) filled with:

* card image files (anywhere under the folder);
* ``election.json`` with its layouts (contract sections 2 and 3);
* a truth file, ``expected.json`` or ``truth.json``, of the shape ``scanpipe.synth`` writes::

    {"election": "election/election.json",            # optional: path relative to the truth file
     "cards": [{"file": "cards/0001.png",             # relative to the truth file
                "page_of_file": 1,                    # optional, default 1
                "style": "S1", "page": 1,             # optional: checked when given
                "expect": "read",                     # optional: "read" (default) or anything else
                "targets": [{"contest": "gov", "option": "gov-a",
                             "intent": "vote" | "no_vote" | "ambiguous",
                             "mark": "full_fill"}],   # optional mark kind, for the confusion table
                "contests": {"gov": {"votes": ["gov-a"], "outcome": "counted"}}}]}  # optional

Without an ``election`` key the election is ``election.json`` in the folder, else the only
``election.json`` below it. Everything is checked before any card is read: a missing file,
an option the election lacks, an intent that is not one of the three: :class:`DeckError`
naming the file and the entry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TRUTH_NAMES = ("expected.json", "truth.json")
INTENTS = ("vote", "no_vote", "ambiguous")


class DeckError(Exception):
    """A deck that cannot be used, with the file and the reason."""


@dataclass(frozen=True)
class Deck:
    root: Path  # the folder of the truth file
    truth_path: Path
    election_path: Path
    cards: tuple[dict[str, Any], ...]  # truth entries, defaults filled in
    seed: object = None
    profile: object = None

    @property
    def files(self) -> list[Path]:
        """Every distinct card file, sorted."""
        return sorted({self.root / c["file"] for c in self.cards})

    def describe(self) -> str:
        made = f"seed {self.seed}, profile {self.profile}" if self.seed is not None else "labelled elsewhere"
        return f"deck {self.root} ({self.truth_path.name}: {len(self.cards)} cards in {len(self.files)} files; {made})"


def find_truth(folder: Path) -> Path:
    for name in TRUTH_NAMES:
        if (folder / name).is_file():
            return folder / name
    raise DeckError(f"{folder}: no truth file ({' or '.join(TRUTH_NAMES)})")


def _election_path(truth: Path, data: dict[str, Any]) -> Path:
    if "election" in data:
        path = (truth.parent / str(data["election"])).resolve()
        if not path.is_file():
            raise DeckError(f"{truth}: election {data['election']!r} not found ({path})")
        return path
    if (truth.parent / "election.json").is_file():
        return (truth.parent / "election.json").resolve()
    found = sorted(truth.parent.rglob("election.json"))
    if len(found) != 1:
        raise DeckError(f"{truth}: no 'election' key and {len(found)} election.json files under {truth.parent}")
    return found[0].resolve()


def load_deck(folder: Path) -> Deck:
    """Read and check a deck folder (see the module docstring)."""
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise DeckError(f"{folder}: not a folder")
    truth = find_truth(folder)
    try:
        data = json.loads(truth.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DeckError(f"{truth}: cannot be read as JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cards"), list):
        raise DeckError(f"{truth}: expected an object with a 'cards' list")
    election_path = _election_path(truth, data)
    options = _options_of(election_path)
    cards = tuple(_card(truth, i, entry, options) for i, entry in enumerate(data["cards"]))
    return Deck(folder, truth, election_path, cards, data.get("seed"), data.get("profile"))


def _options_of(election_path: Path) -> dict[str, str]:
    """Option id -> contest id, from the election definition (validated by scanpipe)."""
    from scanpipe.election import load_election
    from scanpipe.errors import ScanpipeError

    try:
        election = load_election(election_path)
    except ScanpipeError as exc:
        raise DeckError(f"{election_path}: not a usable election definition: {exc}") from None
    return {o.id: c.id for c in election.contests for o in c.options}


def _card(truth: Path, index: int, entry: Any, options: dict[str, str]) -> dict[str, Any]:
    where = f"{truth}: cards[{index}]"
    if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
        raise DeckError(f"{where}: expected an object with a 'file'")
    if not (truth.parent / entry["file"]).is_file():
        raise DeckError(f"{where}: card file {entry['file']!r} not found")
    targets = entry.get("targets", [])
    if not isinstance(targets, list):
        raise DeckError(f"{where}: 'targets' must be a list")
    checked = []
    for k, t in enumerate(targets):
        if not isinstance(t, dict) or t.get("intent") not in INTENTS:
            raise DeckError(f"{where}.targets[{k}]: 'intent' must be one of {', '.join(INTENTS)}")
        option = t.get("option")
        if option not in options:
            raise DeckError(f"{where}.targets[{k}]: option {option!r} is not in the election")
        if t.get("contest", options[option]) != options[option]:
            raise DeckError(f"{where}.targets[{k}]: option {option!r} belongs to contest {options[option]!r}, not {t['contest']!r}")
        checked.append({**t, "contest": options[option], "mark": t.get("mark") or _mark_of(t["intent"])})
    return {**entry, "page_of_file": int(entry.get("page_of_file", 1)), "expect": entry.get("expect", "read"),
            "targets": checked}


def _mark_of(intent: str) -> str:
    """A row name for the confusion table when the truth names no mark kind."""
    return {"vote": "(vote)", "no_vote": "(no vote)", "ambiguous": "(ambiguous)"}[intent]
