"""Files that must not vanish from the record (issue 9 item 7): every entry under an
ingest path is a card or skipped with its reason; card files not read are queued until
read; names cannot forge lines of the summary."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scanpipe.pipeline import IngestSummary
from scanpipe.sources.files import find_card_files, may_hold_cards, shown_path

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "ballot_images"
GOOD = FIX / "defaced" / "good.png"


def test_every_entry_is_a_card_or_skipped_with_its_reason(tmp_path: Path) -> None:
    batch = tmp_path / "batch"
    (batch / "sub").mkdir(parents=True)
    shutil.copy(GOOD, batch / "a.png")
    shutil.copy(GOOD, batch / "sub" / "b.TIF")
    (batch / "notes.txt").write_text("x")
    (batch / ".DS_Store").write_bytes(b"x")
    os.symlink("a.png", batch / "link-to-a.png")
    os.symlink("nowhere.png", batch / "dangling.png")
    os.symlink("loop.png", batch / "loop.png")
    os.symlink("..", batch / "sub" / "up")
    os.mkfifo(batch / "pipe.png")
    (batch / os.fsdecode(b"bad-\xff.png")).write_bytes(b"x")
    found = find_card_files([str(batch)])
    assert found.cards == [str(batch / n) for n in ("a.png", "link-to-a.png", "sub/b.TIF")]
    skipped = {Path(p).relative_to(batch).as_posix(): reason for p, reason in found.skipped}
    assert skipped == {
        ".DS_Store": "not a card file (a hidden file) (extension 'none'; cards are .jpeg, .jpg, .pdf, .png, .tif, .tiff)",
        "bad-\\xff.png": "the file name is not valid UTF-8 and cannot be recorded: rename the file",
        "dangling.png": "a dangling symbolic link (it points to nowhere.png, which does not exist)",
        "loop.png": "a symbolic link loop (the link leads back to itself)",
        "notes.txt": "not a card file (extension '.txt'; cards are .jpeg, .jpg, .pdf, .png, .tif, .tiff)",
        "pipe.png": "not a regular file (a named pipe): nothing to read",
        "sub/up": f"a link to the folder {batch}, which is read already (a link loop, or a second path to it)",
    }
    assert {p for p, _ in found.skipped if may_hold_cards(p)} == {
        str(batch / n) for n in ("bad-\\xff.png", "dangling.png", "loop.png", "pipe.png")}


def test_a_name_with_a_newline_cannot_forge_summary_lines() -> None:
    forged = "scans/x.png\n  unreadable scans/y.png: unreadable_image: forged"
    assert shown_path(forged) == "scans/x.png\\n  unreadable scans/y.png: unreadable_image: forged"
    assert shown_path("scans/ordinary name é.png") == "scans/ordinary name é.png"
    summary = IngestSummary(files=1, skipped=[(forged, "not a card file")], missing=[(forged + ".png", "it vanished")])
    summary.unreadable_cards.append((forged, "unreadable_image", "zero-byte file"))
    lines = summary.lines()
    assert len(lines) == 5 and all("\n" not in line for line in lines)
    assert lines[1] == "  unreadable scans/x.png\\n  unreadable scans/y.png: unreadable_image: forged: unreadable_image: zero-byte file"


def _unprivileged(argv: list[str]) -> list[str]:
    """Run without root's power to read any file (root ignores permission bits): root keeps
    its uid but loses CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, for the command and all the
    processes it starts."""
    if os.geteuid() != 0:
        return argv
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a file without read permission cannot be made")
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", *argv]


@pytest.mark.slow
def test_card_files_not_read_are_queued_until_they_are_read(tmp_path: Path) -> None:
    work = tmp_path
    batch = work / "batch"
    batch.mkdir(parents=True)
    shutil.copy(GOOD, batch / "good.png")
    locked = batch / "locked.png"
    locked.write_bytes(GOOD.read_bytes() + b"\x00")  # another card id
    locked.chmod(0)
    os.symlink("later.png", batch / "later-link.png")
    db = f"sqlite:///{work / 'scan.db'}"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(_unprivileged([sys.executable, "-m", "scanpipe.cli", "--db", db, *args]),
                              capture_output=True, text=True, timeout=300, cwd=work)

    assert run("init", "--election", str(FIX / "election" / "election.json")).returncode == 0
    first = run("ingest", str(batch), "--batch", "b", "-q")
    assert first.returncode == 1, first.stderr
    assert f"  not read {locked}: no permission to read it (Permission denied): give the ingest account read access" in first.stdout
    assert f"  skipped {batch / 'later-link.png'}: a dangling symbolic link (it points to later.png, which does not exist)" in first.stdout
    assert "2 card file(s) or folder(s) not read" in first.stdout
    files = [(i["item"], i["reason"]) for i in json.loads(run("queue", "--json").stdout) if i["kind"] == "file"]
    assert files == [(str(batch / "later-link.png"), "file_unread"), (str(locked), "file_unread")]
    # the operator fixes both; the next ingest reads them and the queue no longer lists them
    locked.chmod(0o644)
    shutil.copy(GOOD, batch / "later.png")
    (batch / "later.png").write_bytes(GOOD.read_bytes() + b"\x01")
    second = run("ingest", str(batch), "--batch", "b", "-q")
    assert "2 card(s) stored" in second.stdout, second.stdout  # later-link.png and later.png are one card
    assert not [i for i in json.loads(run("queue", "--json").stdout) if i["kind"] == "file"]
