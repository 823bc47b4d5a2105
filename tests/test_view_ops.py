"""Operations a staffer or an IT person meets: init over stored cards, database URLs, a
database never initialised, --scheduler without Dask."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from scanpipe.cli import main
from scanpipe.election_diff import definition_changes
from scanpipe.store.repository import Store
from tests.helpers import read_card

ELECTION = Path(__file__).parent.parent / "fixtures" / "ballot_images" / "election"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        main(list(argv))
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    shutil.copytree(ELECTION, tmp_path / "election")
    return tmp_path / "election" / "election.json"


def _edit(path: Path, change) -> None:  # noqa: ANN001
    definition = json.loads(path.read_text())
    change(definition)
    path.write_text(json.dumps(definition))


def test_init_over_stored_cards_shows_changes_and_refuses_one_that_alters_readings_unless_forced(
        tmp_path: Path, copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'county.db'}"
    assert run(capsys, "--db", db, "init", "--election", str(copy))[0] == 0
    store = Store.open(db)
    store.save_cards([read_card("c" * 64, store.current_election(), "S1", "P01", {})])
    _edit(copy, lambda d: d["contests"][0]["options"][0].update(name="Ada M. Alvarez"))
    code, out, _ = run(capsys, "--db", db, "init", "--election", str(copy))
    assert code == 0 and "changed: option of Governor gov-a: name 'Ada Alvarez' -> 'Ada M. Alvarez'" in out and "loaded (changed)" in out
    loaded = len(store.elections())
    _edit(copy, lambda d: d["contests"][1].update(vote_for=3))
    code, out, err = run(capsys, "--db", db, "init", "--election", str(copy))
    assert code == 2 and "differs from the one 1 stored card(s) were read with" in err and "vote for 2 -> 3" in err and "--force" in err
    assert len(store.elections()) == loaded  # nothing was loaded
    code, out, err = run(capsys, "--db", db, "init", "--election", str(copy), "--force")
    assert code == 0 and "(alters how stored cards are read or counted)" in out and len(store.elections()) == loaded + 1
    forced = store.events("election_forced")
    assert len(forced) == 1 and forced[0].detail["cards"] == 1 and any("vote for 2 -> 3" in c for c in forced[0].detail["changes"])


def test_definition_changes_say_which_alter_readings() -> None:
    old = json.loads((ELECTION / "election.json").read_text())
    layouts = {s["layout"]: {"style": s["id"], "pages": []} for s in old["ballot_styles"]}
    new = json.loads(json.dumps(old))
    new["name"] = "Renamed"
    new["precincts"][0]["name"] = "North"
    new["ballot_styles"][0]["contests"] = new["ballot_styles"][0]["contests"][:-1]
    moved = {k: ({**v, "pages": [{"page": 1}]} if v["style"] == "S2" else v) for k, v in layouts.items()}
    changes = {c.text: c.alters_readings for c in definition_changes(old, layouts, new, moved)}
    assert changes[f"election name: {old['name']!r} -> 'Renamed'"] is False
    assert changes[f"precinct P01: name {old['precincts'][0]['name']!r} -> 'North'"] is False
    assert any(text.startswith("ballot style S1: contests ") and alters for text, alters in changes.items())
    assert changes["ballot style S2: its layout changed (where targets, fiducials or codes are printed)"] is True
    assert definition_changes(old, layouts, old, layouts) == []


def test_database_urls_people_type_get_the_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "--db", "county.db", "status")
    assert code == 2 and "write sqlite:///county.db" in err and f"sqlite:///{tmp_path / 'county.db'}" in err
    code, _, err = run(capsys, "--db", "postgres://ann:secret@db.example/recount", "status")
    assert code == 2 and "write postgresql+psycopg://ann:***@db.example/recount" in err and "scanpipe[postgres]" in err
    assert "secret" not in err
    code, _, err = run(capsys, "--db", f"sqlite:///{tmp_path / 'never.db'}", "queue")
    assert code == 2 and "does not exist: run 'scanpipe init --election FILE'" in err
    assert not (tmp_path / "never.db").exists()  # no empty database left behind


def test_scheduler_needs_dask(tmp_path: Path, copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'county.db'}"
    assert run(capsys, "--db", db, "init", "--election", str(copy))[0] == 0
    code, _, err = run(capsys, "--db", db, "ingest", str(tmp_path), "--executor", "local", "--scheduler", "tcp://127.0.0.1:1")
    assert code == 2 and "--scheduler names a Dask scheduler, but --executor local runs without Dask" in err
