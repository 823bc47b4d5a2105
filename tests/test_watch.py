"""The hot folder (``ingest --watch``): files still being written are never read half-way,
temp names and non-card files are left alone, vanishing files do not crash it, and a
restart loses and repeats nothing."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from scanpipe.sources.watch import EMPTY_FILE_POLLS, FolderWatcher, is_temporary, watch_folder
from scanpipe.store.repository import Store
from scanpipe.types import CardHints
from tests.test_scan import election_path, noise_pages, scan_store  # noqa: F401 - fixtures


def test_temporary_names() -> None:
    for name in ("scan1.png.part", "scan1.tmp", "~scan1.png", ".scan1.png", "scan1.png~", "x.crdownload"):
        assert is_temporary(name), name
    for name in ("scan1.png", "0001.TIF", "part.png", "tmp.jpg"):
        assert not is_temporary(name), name


def test_a_file_is_ready_only_once_size_and_mtime_hold_still(tmp_path: Path) -> None:
    src = noise_pages(tmp_path / "src", 1)[0].read_bytes()
    hot = tmp_path / "hot"
    hot.mkdir()
    w = FolderWatcher((hot,))
    f = hot / "a.png"
    f.write_bytes(src[:40])  # the scanner software is still writing
    assert w.poll().ready == ()
    with open(f, "ab") as out:
        out.write(src[40:])
    assert w.poll().ready == ()  # it changed since the last poll
    assert w.poll().ready == (str(f),)  # unchanged across two polls
    assert w.poll().ready == ()  # handed out once
    os.utime(f, ns=(time.time_ns(), time.time_ns() + 5_000_000_000))  # rewritten later
    assert w.poll().ready == ()
    assert w.poll().ready == (str(f),)


def test_temp_files_dotfiles_and_non_cards(tmp_path: Path) -> None:
    hot = tmp_path / "hot"
    (hot / ".hidden").mkdir(parents=True)
    for name in ("a.png.part", "b.tmp", "~c.png", ".d.png"):
        (hot / name).write_bytes(b"x")
    (hot / ".hidden" / "e.png").write_bytes(b"x")
    (hot / "notes.txt").write_text("batch notes")
    w = FolderWatcher((hot,))
    first, second, third = w.poll(), w.poll(), w.poll()
    assert first.skipped == ((str(hot / "notes.txt"), "not a card file (extension '.txt')"),)
    assert second.skipped == () and third.skipped == ()  # recorded once
    assert first.ready == second.ready == third.ready == ()


def test_an_empty_file_waits_longer_and_a_vanished_one_is_reported(tmp_path: Path) -> None:
    hot = tmp_path / "hot"
    hot.mkdir()
    (hot / "empty.png").write_bytes(b"")
    (hot / "gone.png").write_bytes(b"abc")
    w = FolderWatcher((hot,))
    assert w.poll().ready == ()
    (hot / "gone.png").unlink()
    polled = w.poll()
    assert polled.vanished == (str(hot / "gone.png"),) and polled.ready == ()
    readies = [w.poll().ready for _ in range(EMPTY_FILE_POLLS - 1)]  # unchanged on EMPTY_FILE_POLLS polls
    assert readies[-1] == (str(hot / "empty.png"),) and all(r == () for r in readies[:-1])


def test_watch_folder_ingests_drops_and_a_restart_repeats_nothing(scan_store: Store, tmp_path: Path) -> None:
    hot = tmp_path / "hot"
    noise_pages(hot, 2)
    (hot / "readme.txt").write_text("not a card")
    (hot / "late.png.part").write_bytes(b"half")
    lines: list[str] = []
    summary = watch_folder(scan_store, [str(hot)], batch="hot", hints=CardHints(), poll_seconds=0.02,
                           max_idle_seconds=0.2, on_line=lines.append)
    assert summary.cards_stored == 2 and summary.files == 2
    assert [s.path for s in scan_store.skipped_files("hot")] == [str(hot / "readme.txt")]
    card_lines = [line for line in lines if "card(s)" in line]
    assert len(card_lines) == 2 and card_lines[0].startswith(f"{hot / 'card001.png'}  unreadable (")
    # restart: the same files, one new one renamed into place by the scanner software
    (hot / "late.png.part").write_bytes(noise_pages(tmp_path / "more", 1, seed=9)[0].read_bytes())
    (hot / "late.png.part").rename(hot / "late.png")
    lines.clear()
    again = watch_folder(scan_store, [str(hot)], batch="hot", hints=CardHints(), poll_seconds=0.02,
                         max_idle_seconds=0.2, on_line=lines.append)
    assert (again.cards_stored, again.files_already) == (1, 2)
    assert sum("already stored (same SHA-256)" in line for line in lines) == 2
    assert len(list(scan_store.iter_cards())) == 3


def test_watch_folder_stops_on_the_event_and_survives_a_file_vanishing(scan_store: Store, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import scanpipe.sources.watch as watch

    hot = tmp_path / "hot"
    noise_pages(hot, 2)
    real_open_problem = watch._open_problem

    def vanish_first(path: str) -> str | None:  # the file goes away between the listing and the read
        if path.endswith("card001.png") and Path(path).exists():
            problem = real_open_problem(path)
            Path(path).unlink()
            return problem
        return real_open_problem(path)

    monkeypatch.setattr(watch, "_open_problem", vanish_first)
    stop = threading.Event()
    lines: list[str] = []

    def on_line(line: str) -> None:  # stop once both files were dealt with (no race with a timer)
        lines.append(line)
        if sum("card00" in seen for seen in lines) >= 2:
            stop.set()

    timer = threading.Timer(120, stop.set)  # a bound only for a broken watcher; a loaded machine is slow
    timer.start()
    summary = watch_folder(scan_store, [str(hot)], batch="hot", hints=CardHints(), poll_seconds=0.02, stop=stop,
                           on_line=on_line)
    timer.cancel()
    assert summary.cards_stored == 1
    assert [p for p, _ in summary.missing] == [str(hot / "card001.png")]
    assert any(line.startswith(f"{hot / 'card001.png'}: it vanished before it was read") and line.endswith("; skipped") for line in lines)
