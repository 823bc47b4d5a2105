"""``scripts/snapshot_readings.py``: a deck read twice by the same code compares equal; a
changed reading (a style, a target's status, a score) is named and fails the comparison."""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "realballots" / "cedar2008primary"


def test_the_same_code_reads_the_same_and_a_change_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))  # importable by name: its workers unpickle its functions
    script = importlib.import_module("snapshot_readings")
    cards = tmp_path / "cards"
    cards.mkdir()
    for f in sorted((FIX / "voted").iterdir())[:2]:
        shutil.copy(f, cards / f.name)
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (first, second):
        assert script.main(["--election", str(FIX / "election.json"), "--cards", str(cards), "--out", str(out), "--jobs", "1"]) == 0
    assert script.main(["--compare", str(first), str(second)]) == 0
    assert "2 cards, " in capsys.readouterr().out
    lines = [json.loads(line) for line in second.read_text().splitlines()]
    lines[0]["targets"][0][2] = "unknown" if lines[0]["targets"][0][2] != "unknown" else "yes"
    lines[1]["style"] = ["another", 1]
    second.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert script.main(["--compare", str(first), str(second)]) == 1
    said = capsys.readouterr().out
    assert "cards read differently 1, targets with another status 1" in said, said
    assert f"{lines[1]['file']} page 1: " in said and "-> ['another', 1]" in said, said
    # every measure of a score is compared (a fill moved, the statuses alike, is a difference) ...
    lines = [json.loads(line) for line in first.read_text().splitlines()]
    assert all(len(t) == 3 + len(script.SCORE_FIELDS) for line in lines for t in line.get("targets", []))
    lines[0]["targets"][0][5] += 0.25  # its fill_score
    second.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert script.main(["--compare", str(first), str(second)]) == 1
    assert "largest difference of a score measure 0.25000" in capsys.readouterr().out
    # ... and a snapshot kept before the others were added (score and damage alone) is compared on those two
    older = [{**line, "targets": [t[:5] for t in line.get("targets", [])]} if "targets" in line else line
             for line in map(json.loads, first.read_text().splitlines())]
    second.write_text("".join(json.dumps(line) + "\n" for line in older))
    assert script.main(["--compare", str(second), str(first)]) == 0
