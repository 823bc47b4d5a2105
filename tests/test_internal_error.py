"""One card never stops a batch: an unexpected error while reading a card is that card's value.

The failure is injected into the real command line (and its worker processes) through a
``sitecustomize`` module that wraps :func:`scanpipe.interpret.interpret_page` so that it raises
for one file only; every other card must be read and stored, the failing card stored and
queued as ``internal_error`` naming its file, and the traceback logged.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "ballot_images"

INJECT = '''
import scanpipe.interpret as _interpret
_real = _interpret.interpret_page

def _failing(page, context, hints, source):
    if "boom" in source.path:
        raise ValueError("injected failure for a test")
    return _real(page, context, hints, source)

_interpret.interpret_page = _failing
'''


def _cli(db: str, *args: str, inject: Path | None = None, state: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if inject is not None:
        env["PYTHONPATH"] = str(inject)
    if state is not None:
        env["XDG_STATE_HOME"] = str(state)
    return subprocess.run([sys.executable, "-m", "scanpipe.cli", "--db", db, *args], capture_output=True, text=True,
                          env=env, timeout=600)


def _deck_and_store(tmp_path: Path, inject_code: str, cards: int, bad: int, tag: str) -> tuple[Path, Path, str]:
    """A ``sitecustomize`` folder holding ``inject_code``, ``cards`` card files of the fixture deck
    (the ``bad``-th named with ``tag``), and an initialized store: (inject, cards, db URL)."""
    inject = tmp_path / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(inject_code)
    folder = tmp_path / "cards"
    folder.mkdir()
    sources = sorted(p for p in (FIX / "deck" / "cards").iterdir() if p.suffix == ".png")[:cards]
    for i, src in enumerate(sources):
        shutil.copy(src, folder / (f"0{i}-{tag}.png" if i == bad else f"0{i}.png"))
    db = f"sqlite:///{tmp_path / 'db.sqlite'}"
    assert _cli(db, "init", "--election", str(FIX / "election" / "election.json")).returncode == 0
    return inject, folder, db


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_card_that_raises_is_queued_and_the_batch_goes_on(tmp_path: Path, workers: str) -> None:
    inject, cards, db = _deck_and_store(tmp_path, INJECT, 4, 1, "boom")
    done = _cli(db, "ingest", str(cards), "--batch", "B1", "--workers", workers, "-q", inject=inject)
    assert done.returncode == 1, done.stderr  # the queue is not empty: the failing card waits for a person
    assert "4 card(s) stored" in done.stdout, done.stdout
    assert "Traceback" in done.stderr and "injected failure for a test" in done.stderr  # logged
    out = tmp_path / "queue.json"
    assert _cli(db, "queue", "--out", str(out)).returncode == 0
    queued = json.loads(out.read_text())
    failing = [q for q in queued if q["reason"] == "internal_error"]
    assert len(failing) == 1
    export = tmp_path / "cvr.json"
    assert _cli(db, "export", "cvr", "--out", str(export)).returncode == 0
    cvrs = {c["UniqueId"]: c for c in json.loads(export.read_text())["CVR"]}
    assert len(cvrs) == 4
    boom = cvrs[failing[0]["item"]]
    assert "boom" in boom["BallotImage"][0]["Location"]
    others = [c for c in cvrs.values() if c is not boom]
    assert all(s.get("CVRContest") for c in others for s in c["CVRSnapshot"] if s["Type"] == "interpreted")


CRASH = '''
import os, resource, signal
import scanpipe.interpret as _interpret
_real = _interpret.interpret_page

def _crashing(page, context, hints, source):
    if "crash" in source.path:  # a native library's crash on this one file: the process ends at once
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.kill(os.getpid(), signal.SIGSEGV)
    return _real(page, context, hints, source)

_interpret.interpret_page = _crashing
'''


def test_a_card_that_ends_its_reading_process_is_queued_and_the_batch_goes_on(tmp_path: Path) -> None:
    """A worker killed while reading one file (a segmentation fault in an image library) breaks
    the process pool: the files it may have held are read again one at a time, the one that
    ends its process again is stored as one unreadable card naming it, and the rest are read;
    a rerun stores nothing twice."""
    inject, cards, db = _deck_and_store(tmp_path, CRASH, 5, 2, "crash")
    done = _cli(db, "ingest", str(cards), "--batch", "B1", "--workers", "2", "-q", inject=inject)
    assert done.returncode == 1, done.stderr  # the queue is not empty: the crashing card waits for a person
    assert "5 card(s) stored" in done.stdout, done.stdout + done.stderr
    assert "02-crash.png" in done.stderr and "ended the reading process abruptly" in done.stderr  # logged
    out = tmp_path / "queue.json"
    assert _cli(db, "queue", "--out", str(out)).returncode == 0
    failing = [q for q in json.loads(out.read_text()) if q["reason"] == "internal_error"]
    assert len(failing) == 1, failing
    again = _cli(db, "ingest", str(cards), "--batch", "B1", "--workers", "2", "-q", inject=inject)
    assert "0 card(s) stored" in again.stdout, again.stdout + again.stderr
    export = tmp_path / "cvr.json"
    assert _cli(db, "export", "cvr", "--out", str(export)).returncode == 0
    cvrs = {c["UniqueId"]: c for c in json.loads(export.read_text())["CVR"]}
    assert len(cvrs) == 5
    assert "02-crash.png" in cvrs[failing[0]["item"]]["BallotImage"][0]["Location"]
    others = [c for k, c in cvrs.items() if k != failing[0]["item"]]
    assert all(s.get("CVRContest") for c in others for s in c["CVRSnapshot"] if s["Type"] == "interpreted")


def test_a_card_that_ends_the_ingest_s_own_process_is_read_alone_by_the_next_ingest(tmp_path: Path) -> None:
    """With one worker the cards are read in the ingest's own process: a file that ends it (a
    segmentation fault) ends the ingest. The file it was reading is noted while it reads, so the
    next ingest reads that file first in a process of its own, keeps it for a person when it
    ends that one too, and reads the rest as before (it did not die on it again)."""
    inject, cards, db = _deck_and_store(tmp_path, CRASH, 4, 1, "crash")
    state = tmp_path / "state"
    first = _cli(db, "ingest", str(cards), "--batch", "B1", "--workers", "1", "-q", inject=inject, state=state)
    assert first.returncode == -signal.SIGSEGV, (first.returncode, first.stderr)  # the ingest itself ended
    again = _cli(db, "ingest", str(cards), "--batch", "B1", "--workers", "1", "-q", inject=inject, state=state)
    assert again.returncode == 1, again.stderr  # the crashing card waits for a person
    assert "01-crash.png" in again.stderr and "ended the reading process abruptly" in again.stderr
    out = tmp_path / "queue.json"
    assert _cli(db, "queue", "--out", str(out)).returncode == 0
    assert len([q for q in json.loads(out.read_text()) if q["reason"] == "internal_error"]) == 1
    export = tmp_path / "cvr.json"
    assert _cli(db, "export", "cvr", "--out", str(export)).returncode == 0
    assert len(json.loads(export.read_text())["CVR"]) == 4
    assert list((state / "scanpipe" / "reading").iterdir()) == []  # no note left behind


def test_a_reading_note_is_taken_only_from_an_ended_ingest_by_one_that_reads_its_file(tmp_path: Path) -> None:
    """The notes of :class:`~scanpipe.pipeline.ReadingMarks`: a note of a process still running
    is left alone (another ingest reading now), a note of an ended one is taken (once) by an
    ingest reading that file, and left for another that does not; another store's notes are
    not this store's."""
    from scanpipe.pipeline import ReadingMarks

    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead_pid = int(ended.stdout)
    marks = ReadingMarks(tmp_path / "reading", "sqlite:///a.db")
    marks.reading("/cards/0001.png")  # this process: running
    (tmp_path / "reading" / f"{marks.prefix}-{dead_pid}").write_text("/cards/0002.png", encoding="utf-8")
    other = ReadingMarks(tmp_path / "reading", "sqlite:///b.db")
    assert other.left_by_the_dead({"/cards/0001.png", "/cards/0002.png"}) == []  # another store's
    assert marks.left_by_the_dead({"/cards/0009.png"}) == []  # not a file this ingest reads: left
    assert marks.left_by_the_dead({"/cards/0001.png", "/cards/0002.png"}) == ["/cards/0002.png"]
    assert marks.left_by_the_dead({"/cards/0002.png"}) == []  # taken once
    marks.done()
    assert list((tmp_path / "reading").iterdir()) == []


SCAN_CRASH = '''
import os, resource, signal
import scanpipe.interpret as _interpret
_real = _interpret.interpret_page

def _crashing(page, context, hints, source):
    if source.path.endswith("00002.png"):  # the scanner's second page ends the process that reads it
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.kill(os.getpid(), signal.SIGSEGV)
    return _real(page, context, hints, source)

_interpret.interpret_page = _crashing
'''


def test_a_scanned_page_that_ends_the_scan_is_read_apart_on_resume(tmp_path: Path) -> None:
    """``scanpipe scan`` reads each page in its own process as it arrives: a page that ends it
    (a segmentation fault) ends the scan. The page was noted while it was read, so ``--resume``
    reads it in a process of its own, keeps it for a person when it ends that one too, and goes
    on with the rest of the stack (it did not die on it again, nor store a page twice)."""
    inject, cards, db = _deck_and_store(tmp_path, SCAN_CRASH, 4, -1, "")
    state, out = tmp_path / "state", tmp_path / "scans"
    first = _cli(db, "scan", "--device", f"replay:{cards}", "--batch", "S1", "--out", str(out), inject=inject, state=state)
    assert first.returncode == -signal.SIGSEGV, (first.returncode, first.stdout, first.stderr)  # the scan itself ended
    assert sorted(p.name for p in (out / "S1").glob("0*.png")) == ["00001.png", "00002.png"]  # both pages kept on disk
    again = _cli(db, "scan", "--device", f"replay:{cards}?from=3", "--batch", "S1", "--out", str(out), "--resume",
                 inject=inject, state=state)
    assert again.returncode == 1, again.stdout + again.stderr  # the crashing page waits for a person
    assert "S1/00002  the scan ended while reading this page" in again.stdout, again.stdout
    assert "00002.png" in again.stderr and "ended the reading process abruptly" in again.stderr
    queue = tmp_path / "queue.json"
    assert _cli(db, "queue", "--out", str(queue)).returncode == 0
    failing = [q for q in json.loads(queue.read_text()) if q["reason"] == "internal_error"]
    assert len(failing) == 1, failing
    export = tmp_path / "cvr.json"
    assert _cli(db, "export", "cvr", "--out", str(export)).returncode == 0
    cvrs = {c["UniqueId"]: c for c in json.loads(export.read_text())["CVR"]}
    assert len(cvrs) == 4  # pages 1-4 once each
    assert cvrs[failing[0]["item"]]["BallotImage"][0]["Location"].endswith("00002.png")
    others = [c for k, c in cvrs.items() if k != failing[0]["item"]]
    assert all(s.get("CVRContest") for c in others for s in c["CVRSnapshot"] if s["Type"] == "interpreted")
    assert list((state / "scanpipe" / "reading").iterdir()) == []  # no note left behind
