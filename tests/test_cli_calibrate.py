"""`scanpipe calibrate`: thresholds from a labelled deck, a layout from a blank scan."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from PIL import Image

from scanpipe.election import load_election
from scanpipe.synth.render import render_card

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "ballot_images"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scanpipe.cli", *args], capture_output=True, text=True, timeout=300)


def test_thresholds_are_derived_from_a_labelled_deck_with_their_provenance(tmp_path: Path) -> None:
    out = tmp_path / "thresholds.json"
    r = run("calibrate", "thresholds", "--deck", str(FIX / "deck" / "expected.json"), "--out", str(out), "--jobs", "1")
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert 0 < data["marginal"] < data["definite"] < 1
    assert data["provenance"]["targets"] > 100 and "expected.json" in data["provenance"]["deck"]
    assert "clear unknown 0.00%" in r.stdout


def test_a_layout_is_found_on_a_blank_scan_in_reading_order(tmp_path: Path) -> None:
    election_path = FIX / "election" / "election.json"
    election = load_election(election_path)
    Image.fromarray(render_card(election, "S1", 1, "P01", 200)).convert("L").save(tmp_path / "blank.png")
    truth = json.loads((FIX / "election" / "layouts" / "S1.json").read_text())["pages"][0]
    order = list(dict.fromkeys(t["contest"] for t in sorted(truth["targets"], key=lambda t: (t["box"][0] // 1, t["box"][1]))))
    out = tmp_path / "S1.json"
    r = run("calibrate", "layout", "--blank", str(tmp_path / "blank.png"), "--dpi", "200", "--election", str(election_path),
            "--style", "S1", "--contests", ",".join(order), "--out", str(out))
    assert r.returncode == 0, r.stderr
    found = {(t["contest"], t["option"]): t["box"] for t in json.loads(out.read_text())["pages"][0]["targets"]}
    for t in truth["targets"]:
        assert max(abs(a - b) for a, b in zip(found[(t["contest"], t["option"])], t["box"])) < 0.02, t
    r = run("calibrate", "layout", "--blank", str(tmp_path / "blank.png"), "--dpi", "200", "--election", str(election_path),
            "--style", "S1", "--contests", "gov", "--out", str(out))
    assert r.returncode == 2 and "ovals on the blank scan but the contests list" in r.stderr
