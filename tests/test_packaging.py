"""A regular install (a built wheel, not ``pip install -e``) works from any folder.

The wheel is built from this checkout, installed into a folder of its own with ``--no-deps``
(the test virtualenv already has the dependencies), and a fresh Python process that imports
scanpipe from that folder only, run from an unrelated working directory, must load the
definition, read cards with the shipped thresholds and serve the review app's templates.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "ballot_images"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding scanpipe installed from a wheel built from this checkout."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    # Build from a copy: the build must not depend on anything outside what git tracks.
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, tracked):
        rel = Path(name.decode())
        if rel.parts[0] in ("fixtures", "tests", "docs", "scripts") or not (ROOT / rel).is_file():
            continue
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, source / rel)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"), str(source)],
                           capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    (wheel,) = (work / "dist").glob("scanpipe-*.whl")
    site = work / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return site


def _run(site: Path, cwd: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SCANPIPE_CALIBRATION", "SCANPIPE_DB")}
    env["PYTHONPATH"] = str(site)  # ahead of the editable install's finder
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, check=False)


def test_the_wheel_carries_every_data_file_the_program_reads(installed: Path) -> None:
    (wheel,) = installed.parent.glob("dist/scanpipe-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("scanpipe/calibration/thresholds.json", "scanpipe/exports/nist_cvr_schema.json",
                   "scanpipe/review/templates/base.html", "scanpipe/review/assets/review.js",
                   "scanpipe/store/migrations/env.py", "scanpipe/store/migrations/versions/0001_initial_schema.py",
                   "scanpipe/exports/nist_err_schema.json", "scanpipe/recount/templates/report.html"):
        assert needed in names, f"{needed} is not in the wheel"


def test_an_installed_scanpipe_reads_cards_from_another_folder(installed: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    db = tmp_path / "county.db"
    cards = sorted((FIXTURES / "deck" / "cards").iterdir())[:4]
    code = f"""
import json, scanpipe
from pathlib import Path
assert scanpipe.__file__.startswith({str(installed)!r}), scanpipe.__file__
from scanpipe.cli import main
import sys
for argv in (["--db", "sqlite:///{db}", "init", "--election", "{FIXTURES / 'election' / 'election.json'}"],
             ["--db", "sqlite:///{db}", "ingest", *{[str(c) for c in cards]!r}, "--batch", "B1"],
             ["--db", "sqlite:///{db}", "export", "cvr", "--out", "cvr.json"]):
    try:
        main(argv)
    except SystemExit as e:
        print("exit", argv[2], e.code, file=sys.stderr)
from scanpipe.review import create_app
from scanpipe.store.repository import Store
client = create_app(Store.open("sqlite:///{db}")).test_client()
page, script = client.get("/login"), client.get("/assets/review.js")
print("pages", page.status_code, script.status_code, b"<form" in page.data)
"""
    done = _run(installed, elsewhere, code)
    assert "thresholds file not found" not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "pages 200 200 True" in done.stdout, done.stdout + done.stderr
    assert (elsewhere / "cvr.json").exists(), done.stdout + done.stderr
    cvr = json.loads((elsewhere / "cvr.json").read_text())
    snapshots = [s for c in cvr["CVR"] for s in c["CVRSnapshot"] if s["Type"] == "interpreted"]
    indications = [p["HasIndication"] for s in snapshots for cc in s.get("CVRContest", [])
                   for sel in cc.get("CVRContestSelection", []) for p in sel["SelectionPosition"]]
    assert len(snapshots) >= len(cards)  # a multi-page file is one card per page
    assert indications and indications.count("yes") + indications.count("no") > 0.8 * len(indications)
