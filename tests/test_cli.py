"""End to end through the real command line on the committed fixtures."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

pytestmark = pytest.mark.slow  # end to end through the real command line

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "ballot_images"
ELECTION = FIX / "election" / "election.json"


def run(db: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scanpipe.cli", "--db", db, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.fixture()
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'scan.db'}"
    r = run(url, "init", "--election", str(ELECTION))
    assert r.returncode == 0, r.stderr
    return url


def test_defaced_cards_each_have_their_exact_outcome(db: str, tmp_path: Path) -> None:
    r = run(db, "ingest", str(FIX / "defaced"), "--batch", "defaced", "-q")
    assert r.returncode == 1, r.stderr  # defaced cards await a person
    assert "await a person" in r.stderr
    out = tmp_path / "queue.json"
    assert run(db, "queue", "--out", str(out)).returncode == 0
    queued = {item["item"]: item["reason"] for item in json.loads(out.read_text())}
    expected = json.loads((FIX / "defaced" / "expected.json").read_text())
    import hashlib

    for card in expected["cards"]:
        cid = hashlib.sha256((FIX / "defaced" / card["file"]).read_bytes()).hexdigest()
        if card["expect"] == "read":
            assert queued.get(cid) in (None, "marginal_mark", "write_in"), (card["file"], queued.get(cid))
        else:
            assert queued.get(cid) == card["expect"], (card["file"], queued.get(cid))


def test_ingest_tally_export_and_reingest_changes_nothing(db: str, tmp_path: Path) -> None:
    deck = FIX / "deck" / "cards"
    first = run(db, "ingest", str(deck), "--batch", "deck", "-q")
    assert first.returncode == 1, first.stderr
    assert "7 item(s) await a person (7 mark for a person to read)" in first.stderr  # the deck's marginal marks
    assert "card(s) stored" in first.stdout
    tally1 = tmp_path / "t1.csv"
    run(db, "tally", "--out", str(tally1))
    again = run(db, "ingest", str(deck), "--batch", "deck", "-q", "--workers", "2")
    assert again.returncode == 1, again.stderr  # the same marginal marks still await a person
    assert " 0 card(s) stored" in again.stdout
    tally2 = tmp_path / "t2.csv"
    run(db, "tally", "--out", str(tally2))
    assert tally1.read_text() == tally2.read_text()
    lines = tally1.read_text().splitlines()
    assert lines[0] == "precinct,contest,option,votes"
    cvr = tmp_path / "cvr.json"
    r = run(db, "export", "cvr", "--out", str(cvr))
    assert r.returncode == 0, r.stderr
    report = json.loads(cvr.read_text())
    schema = json.loads((ROOT / "scanpipe" / "exports" / "nist_cvr_schema.json").read_text())
    jsonschema.Draft4Validator(schema).validate(report)
    expected = json.loads((FIX / "deck" / "expected.json").read_text())
    assert len(report["CVR"]) == len(expected["cards"])


def test_bad_files_are_stored_as_unreadable_and_the_batch_goes_on(db: str, tmp_path: Path) -> None:
    batch = tmp_path / "bad"
    batch.mkdir()
    (batch / "empty.png").write_bytes(b"")
    good = FIX / "defaced" / "good.png"
    (batch / "truncated.png").write_bytes(good.read_bytes()[:5000])
    (batch / "notes.jpg").write_text("this is not an image")
    (batch / "readme.txt").write_text("skip me")
    shutil.copy(good, batch / "good.png")
    r = run(db, "ingest", str(batch), "-q")
    assert r.returncode == 1, r.stderr
    assert "4 card(s) stored" in r.stdout
    assert "unreadable: 3 x unreadable_image" in r.stdout
    named = {line.split(": ")[0].rsplit("/", 1)[-1]: line for line in r.stdout.splitlines() if line.startswith("  unreadable ")}
    assert set(named) == {"empty.png", "truncated.png", "notes.jpg"}  # each file named with its reason
    assert named["empty.png"].endswith("unreadable_image: zero-byte file")
    assert "truncated PNG" in named["truncated.png"] and "not an image" in named["notes.jpg"]
    assert "skipped" in r.stdout and "readme.txt" in r.stdout
    assert "await a person" in r.stderr
    queue = json.loads(run(db, "queue", "--json").stdout)
    assert sum(1 for q in queue if q["reason"] == "unreadable_image") == 3


def test_a_malformed_definition_is_refused_with_every_problem(tmp_path: Path) -> None:
    election = json.loads(ELECTION.read_text())
    election["contests"][0]["vote_for"] = 0
    election["precincts"][0]["id"] = "bad id!"
    shutil.copytree(ELECTION.parent / "layouts", tmp_path / "layouts")
    (tmp_path / "election.json").write_text(json.dumps(election))
    url = f"sqlite:///{tmp_path / 'x.db'}"
    r = run(url, "init", "--election", str(tmp_path / "election.json"))
    assert r.returncode == 2
    assert "$.contests[0].vote_for: must be at least 1, got 0" in r.stderr
    assert "$.precincts[0].id: 'bad id!' is not a valid id" in r.stderr
    r = run(url, "tally")
    assert r.returncode == 2 and "no election" in r.stderr or "not initialized" in r.stderr


def test_operational_errors_exit_2_naming_the_file(db: str, tmp_path: Path) -> None:
    r = run(db, "ingest", str(tmp_path / "nope"))
    assert r.returncode == 2 and f"{tmp_path / 'nope'}: no such file or folder" in r.stderr
    r = run(f"sqlite:///{tmp_path / 'missing' / 'x.db'}", "tally")
    assert r.returncode == 2 and "missing" in r.stderr
    r = run(db, "ingest", str(FIX / "defaced" / "good.png"), "--style", "S9")
    assert r.returncode == 2 and "S9" in r.stderr


def test_adjudicate_a_card_with_two_auditors_changes_the_tally(db: str, tmp_path: Path) -> None:
    run(db, "ingest", str(FIX / "defaced" / "good.png"), "-q")
    import hashlib

    cid = hashlib.sha256((FIX / "defaced" / "good.png").read_bytes()).hexdigest()
    before = {tuple(row.split(",")[:3]): int(row.split(",")[3]) for row in run(db, "tally").stdout.splitlines()[1:]}
    args = ("adjudicate", cid, "--contest", "gov", "--votes", "gov-w")
    r = run(db, *args, "--auditor", "ann")
    assert r.returncode == 2 and "this database has no review accounts (a test deck?)" in r.stderr and "--no-accounts" in r.stderr
    r = run(db, *args, "--auditor", "ann", "--no-accounts")
    assert r.returncode == 2 and "Governor ('gov') is not queued for a person" in r.stderr and "--override --reason" in r.stderr
    r = run(db, *args, "--auditor", "ann", "--no-accounts", "--override")
    assert r.returncode == 2 and "--override needs --reason TEXT" in r.stderr
    r = run(db, *args, "--auditor", "ann", "--no-accounts", "--override", "--reason", "a write-in the scan hides")
    assert r.returncode == 1, r.stderr
    assert "awaiting a second, different auditor" in r.stdout
    r = run(db, *args, "--auditor", "ann", "--no-accounts")
    assert r.returncode == 2 and "a different auditor must confirm it" in r.stderr
    r = run(db, *args, "--auditor", "bob", "--no-accounts")
    assert "final" in r.stdout
    after = {tuple(row.split(",")[:3]): int(row.split(",")[3]) for row in run(db, "tally").stdout.splitlines()[1:]}
    precinct = next(k[0] for k in after if k[1] == "gov")
    from scanpipe.store.repository import Store

    logged = [e.detail for e in Store.open(db).events("decision")]
    assert [(d["accounts"], d.get("override"), d["operator"].startswith("cli:")) for d in logged] == [
        (False, "a write-in the scan hides", True), (False, None, True)]
    assert after[(precinct, "gov", "gov-w")] == before[(precinct, "gov", "gov-w")] + 1
