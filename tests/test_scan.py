"""Scanning at the workstation with the replay source: durable pages, manifest, resume,
stop on a flagged card, device errors, the CLI's exit codes; pure parts of SANE/TWAIN."""

from __future__ import annotations

import hashlib
import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from scanpipe.errors import SourceError
from scanpipe.scan import MANIFEST, Manifest, scan_batch
from scanpipe.sources.base import (
    AcquiredPage,
    DeviceGone,
    DeviceNotFound,
    FeederEmpty,
    PaperJam,
    ScanSettings,
    stamp_png,
)
from scanpipe.sources.replay import ReplaySource
from scanpipe.store.repository import Store
from scanpipe.types import UnreadableCard

# --------------------------------------------------------------------------------------
# fixtures shared with test_scan_sane.py and test_watch.py


@pytest.fixture(scope="session")
def election_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from scanpipe.synth.definition import write_demo_election

    return write_demo_election(tmp_path_factory.mktemp("election"))


@pytest.fixture
def scan_store(tmp_path: Path, election_path: Path) -> Iterator[Store]:
    """A fresh SQLite store with the demo election loaded."""
    from scanpipe.workflow import init_election

    store = Store.open(f"sqlite:///{tmp_path / 'scan.db'}")
    store.migrate()
    init_election(store, election_path)
    yield store
    store.close()


def noise_pages(folder: Path, n: int, *, seed: int = 0) -> list[Path]:
    """``n`` small distinct grayscale PNGs (not ballots: each is stored as unreadable)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    paths = []
    for i in range(n):
        img = rng.integers(0, 256, size=(80, 60), dtype=np.uint8)
        path = folder / f"card{i + 1:03d}.png"
        cv2.imwrite(str(path), img)
        paths.append(path)
    return paths


def manifest_lines(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / MANIFEST).read_text().splitlines()]


def stored_shas(store: Store) -> list[str]:
    return sorted(c.card.source.sha256 for c in store.iter_cards())


# --------------------------------------------------------------------------------------
# the happy path


def test_replay_batch_stores_every_page_once_with_a_complete_manifest(scan_store: Store, tmp_path: Path) -> None:
    originals = noise_pages(tmp_path / "stack", 5)
    lines: list[str] = []
    summary = scan_batch(scan_store, ReplaySource(f"replay:{tmp_path / 'stack'}"), batch="b1", out_dir=tmp_path / "scans",
                         on_line=lines.append)
    folder = tmp_path / "scans" / "b1"
    assert summary.error is None and summary.stopped_on is None
    assert (summary.pages_written, summary.cards_stored, summary.first_seq, summary.last_seq) == (5, 5, 1, 5)
    assert sorted(p.name for p in folder.glob("*.png")) == [f"{i:05d}.png" for i in range(1, 6)]
    for i, original in enumerate(originals, start=1):
        assert (folder / f"{i:05d}.png").read_bytes() == original.read_bytes()  # replay passes bytes through
    entries = manifest_lines(folder)
    assert [(e["seq"], e["state"]) for e in entries] == [(i, s) for i in range(1, 6) for s in ("written", "stored")]
    for e in entries:
        assert e["sha256"] == hashlib.sha256((folder / e["file"]).read_bytes()).hexdigest()
    cards = list(scan_store.iter_cards())
    assert len(cards) == 5
    assert {c.card.source.path for c in cards} == {str(folder / f"{i:05d}.png") for i in range(1, 6)}
    assert all(isinstance(c.card.interpretation, UnreadableCard) for c in cards)
    assert len(lines) == 5 and lines[0].startswith("b1/00001  unreadable (") and "NEEDS A PERSON" in lines[0]
    assert "[5 card(s), " in lines[-1] and lines[-1].endswith("/min]")
    assert [b.name for b in scan_store.list_batches()] == ["b1"]


def test_an_existing_batch_is_not_scanned_into_without_resume(scan_store: Store, tmp_path: Path) -> None:
    noise_pages(tmp_path / "stack", 2)
    scan_batch(scan_store, ReplaySource(f"replay:{tmp_path / 'stack'}"), batch="b1", out_dir=tmp_path / "scans")
    with pytest.raises(SourceError, match=r"batch b1 already holds 2 scanned page\(s\); add --resume"):
        scan_batch(scan_store, ReplaySource(f"replay:{tmp_path / 'stack'}"), batch="b1", out_dir=tmp_path / "scans")


# --------------------------------------------------------------------------------------
# device errors and resume


def test_a_jam_keeps_the_pages_and_resume_stores_the_rest_exactly_once(scan_store: Store, tmp_path: Path) -> None:
    noise_pages(tmp_path / "stack", 6)
    stack = tmp_path / "stack"
    first = scan_batch(scan_store, ReplaySource(f"replay:{stack}?jam=4"), batch="b", out_dir=tmp_path / "scans")
    assert isinstance(first.error, PaperJam) and first.error.pages_delivered == 3
    assert (first.pages_written, first.cards_stored, first.last_seq) == (3, 3, 3)
    message = first.stop_message()
    assert message is not None
    assert message.startswith(f"replay:{stack}?jam=4: a card jammed in the document feeder after 3 page(s)")
    assert "pages up to b/00003 are kept" in message and "--batch b --resume" in message
    # the operator clears the jam and re-feeds the cards from the 4th on
    second = scan_batch(scan_store, ReplaySource(f"replay:{stack}?from=4"), batch="b", out_dir=tmp_path / "scans", resume=True)
    assert second.error is None and (second.first_seq, second.last_seq, second.cards_stored) == (4, 6, 3)
    expected = sorted(hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(stack.iterdir()))
    assert stored_shas(scan_store) == expected
    assert sorted(Manifest(tmp_path / "scans" / "b").entries) == [1, 2, 3, 4, 5, 6]


def test_resume_after_a_crash_stores_written_pages_first_and_adopts_orphans(scan_store: Store, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    noise_pages(tmp_path / "stack", 5)
    stack, scans = tmp_path / "stack", tmp_path / "scans"
    real_save = scan_store.save_cards
    calls = {"n": 0}

    def crash_on_third(cards):  # noqa: ANN001, ANN202
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # power cut / Ctrl-C between writing and storing page 3
        return real_save(cards)

    monkeypatch.setattr(scan_store, "save_cards", crash_on_third)
    with pytest.raises(KeyboardInterrupt):
        scan_batch(scan_store, ReplaySource(f"replay:{stack}"), batch="b", out_dir=scans)
    monkeypatch.setattr(scan_store, "save_cards", real_save)
    folder = scans / "b"
    assert Manifest(folder).entries[3].state == "written" and len(list(scan_store.iter_cards())) == 2
    # a page written to disk whose manifest line never made it, and a half-written page
    (folder / "00004.png").write_bytes((stack / "card004.png").read_bytes())
    (folder / "00005.png.part").write_bytes(b"\x89PNG half")
    lines: list[str] = []
    summary = scan_batch(scan_store, ReplaySource(f"replay:{stack}?from=5"), batch="b", out_dir=scans, resume=True,
                         on_line=lines.append)
    assert summary.recovered == 2  # page 3 (written, not stored) and page 4 (adopted)
    assert summary.discarded == ["00005.png.part"]
    assert (summary.first_seq, summary.last_seq) == (5, 5)
    assert lines[0].startswith("b/00003  ") and lines[1].startswith("b/00004  ") and lines[2].startswith("b/00005  ")
    assert stored_shas(scan_store) == sorted(hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(stack.iterdir()))
    assert {e.state for e in Manifest(folder).entries.values()} == {"stored"}
    assert not list(folder.glob("*.part"))


def test_resume_restores_pages_the_database_lost(scan_store: Store, tmp_path: Path, election_path: Path) -> None:
    from scanpipe.workflow import init_election

    noise_pages(tmp_path / "stack", 3)
    scan_batch(scan_store, ReplaySource(f"replay:{tmp_path / 'stack'}"), batch="b", out_dir=tmp_path / "scans")
    fresh = Store.open(f"sqlite:///{tmp_path / 'other.db'}")  # e.g. the database was restored from an old backup
    fresh.migrate()
    init_election(fresh, election_path)
    summary = scan_batch(fresh, ReplaySource(f"replay:{tmp_path / 'stack'}?empty"), batch="b", out_dir=tmp_path / "scans",
                         resume=True)
    assert summary.recovered == 3 and len(list(fresh.iter_cards())) == 3
    assert isinstance(summary.error, FeederEmpty)
    fresh.close()


def test_a_device_that_vanishes_mid_batch_leaves_the_batch_resumable(scan_store: Store, tmp_path: Path) -> None:
    noise_pages(tmp_path / "stack", 4)
    first = scan_batch(scan_store, ReplaySource(f"replay:{tmp_path / 'stack'}?gone=2"), batch="b", out_dir=tmp_path / "scans")
    assert isinstance(first.error, DeviceGone) and first.pages_written == 1
    assert "the scanner stopped answering" in str(first.error)
    second = scan_batch(scan_store, ReplaySource(f"replay:{tmp_path / 'stack'}?from=2"), batch="b", out_dir=tmp_path / "scans",
                        resume=True)
    assert (second.first_seq, second.last_seq, second.cards_stored) == (2, 4, 3)
    assert len(list(scan_store.iter_cards())) == 4


def test_refeeding_a_stored_page_counts_it_once(scan_store: Store, tmp_path: Path) -> None:
    noise_pages(tmp_path / "stack", 2)
    scan_batch(scan_store, ReplaySource(f"replay:{tmp_path / 'stack'}"), batch="b", out_dir=tmp_path / "scans")
    lines: list[str] = []
    again = scan_batch(scan_store, ReplaySource(f"replay:{tmp_path / 'stack'}"), batch="b", out_dir=tmp_path / "scans",
                       resume=True, on_line=lines.append)
    assert (again.first_seq, again.last_seq, again.cards_stored, again.cards_already) == (3, 4, 0, 0)
    assert lines == [f"b/0000{i}  already stored (the same image as a card stored before): counted once" for i in (3, 4)]
    assert len(list(scan_store.iter_cards())) == 2


# --------------------------------------------------------------------------------------
# stop on a flagged card


class _Scripted:
    """A source delivering given pages; records stop()."""

    def __init__(self, pages: list[bytes], already_fed_after_stop: int = 0) -> None:
        self.name = "scripted:0"
        self._pages = pages
        self._after = already_fed_after_stop
        self.stopped_at: int | None = None

    def __enter__(self) -> _Scripted:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def stop(self) -> None:
        self.stopped_at = self.stopped_at or 0

    def pages(self) -> Iterator[AcquiredPage]:
        for seq, data in enumerate(self._pages, start=1):
            if self.stopped_at is not None:
                if self._after == 0:
                    return
                self._after -= 1
            yield AcquiredPage(seq, data, ".png")


def test_stop_on_flag_pauses_on_the_card_and_names_it(scan_store: Store, tmp_path: Path) -> None:
    pages = [p.read_bytes() for p in noise_pages(tmp_path / "stack", 5)]
    source = _Scripted(pages, already_fed_after_stop=1)
    summary = scan_batch(scan_store, source, batch="b7", out_dir=tmp_path / "scans", stop_on_flag=True)
    assert source.stopped_at is not None
    assert summary.stopped_on == (1, "00001.png", ("unreadable_image",))
    assert (summary.pages_written, summary.fed_after_stop) == (2, 1)  # the one already in the feeder is kept
    assert summary.stop_message() == (
        "stopped: card b7/00001 (00001.png) needs a person (unreadable_image); the scanner had already fed 1 more card(s), "
        "stored too, so it is the 2nd card counting back from the last one fed. Every card fed so far is stored. Take that card "
        "out of the output tray and set it aside for a person; do not feed any stored card again. Leave the cards not yet fed in "
        "the feeder and run: scanpipe scan --device scripted:0 --batch b7 --resume")
    resumed = scan_batch(scan_store, _Scripted(pages[2:]), batch="b7", out_dir=tmp_path / "scans", resume=True)
    assert (resumed.first_seq, resumed.last_seq) == (3, 5) and len(list(scan_store.iter_cards())) == 5


# --------------------------------------------------------------------------------------
# the command line


@pytest.fixture
def run_cli(scan_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):  # noqa: ANN201
    from scanpipe.cli import cli, main

    if "scan" not in cli.commands:  # until scanpipe.cli registers the commands itself
        from scanpipe.cli_scan import register

        register(cli)
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> tuple[int, str, str]:
        with pytest.raises(SystemExit) as done:
            main(["--db", scan_store.url, *args])
            sys.exit(0)
        out = capsys.readouterr()
        return int(done.value.code or 0), out.out, out.err

    return run


def test_cli_scan_exits_1_when_cards_await_a_person_and_2_for_a_missing_device(run_cli, tmp_path: Path) -> None:  # noqa: ANN001
    noise_pages(tmp_path / "stack", 2)
    code, out, err = run_cli("scan", "--device", f"replay:{tmp_path / 'stack'}", "--batch", "s1", "--out", str(tmp_path / "o"))
    assert code == 1, err
    assert out.splitlines()[0].startswith("s1/00001  unreadable (")
    assert "batch s1: 2 page(s) scanned into" in out and "scan: 2 item(s) await a person" in err
    code, out, err = run_cli("scan", "--device", f"replay:{tmp_path / 'nowhere'}", "--out", str(tmp_path / "o"))
    assert code == 2
    assert f"replay:{tmp_path / 'nowhere'}: no such scanner, or it cannot be opened ({tmp_path / 'nowhere'} is not a folder)" in err


def test_cli_scan_jam_exits_2_with_how_to_resume(run_cli, tmp_path: Path) -> None:  # noqa: ANN001
    noise_pages(tmp_path / "stack", 3)
    device = f"replay:{tmp_path / 'stack'}?jam=2"
    code, out, err = run_cli("scan", "--device", device, "--batch", "j", "--out", str(tmp_path / "o"))
    assert code == 2
    assert "a card jammed in the document feeder after 1 page(s)" in err
    assert f"run: scanpipe scan --device {device} --batch j --resume" in err
    code, out, err = run_cli("scan", "--device", f"replay:{tmp_path / 'stack'}?from=2", "--out", str(tmp_path / "o"), "--resume")
    assert code == 1 and "resuming batch j" in err and "j/00002  " in out and "j/00003  " in out


# --------------------------------------------------------------------------------------
# pure parts


def test_stamp_png_adds_provenance_and_keeps_pixels() -> None:
    img = np.arange(40 * 30, dtype=np.uint32).reshape(40, 30).astype(np.uint8)
    data = cv2.imencode(".png", img)[1].tobytes()
    stamped = stamp_png(data, {"Source": "test:0", "scanpipe:page": "3 front"})
    assert stamped != data and hashlib.sha256(stamped).hexdigest() != hashlib.sha256(data).hexdigest()
    assert np.array_equal(cv2.imdecode(np.frombuffer(stamped, np.uint8), cv2.IMREAD_UNCHANGED), img)
    import io

    from PIL import Image

    assert Image.open(io.BytesIO(stamped)).text == {"Source": "test:0", "scanpipe:page": "3 front"}
    assert stamp_png(b"II*\x00 not a png", {"a": "b"}) == b"II*\x00 not a png"


def test_sane_options_sources_and_modes() -> None:
    from scanpipe.sources.sane import choose_mode, choose_source, parse_options

    text = ("  Scan Mode:\n    --mode Gray|Color [Gray]\n    --resolution 1..1200dpi (in steps of 1) [50]\n"
            "    --source Flatbed|Automatic Document Feeder [Flatbed]\n")
    options = parse_options(text)
    assert options["source"] == (["Flatbed", "Automatic Document Feeder"], "Flatbed")
    assert options["resolution"] == ([], "50")
    assert choose_source(["Flatbed", "Automatic Document Feeder"], duplex=False) == "Automatic Document Feeder"
    assert choose_source(["Flatbed", "ADF Front", "ADF Back", "ADF Duplex"], duplex=False) == "ADF Front"
    assert choose_source(["Flatbed", "ADF Front", "ADF Back", "ADF Duplex"], duplex=True) == "ADF Duplex"
    assert choose_source(["Flatbed"], duplex=False) is None
    assert choose_mode(["Lineart", "Gray", "Color"], "gray") == "Gray"
    assert choose_mode(["Binary", "8bit Grayscale", "24bit Color"], "color") == "24bit Color"
    assert choose_mode(["Lineart"], "gray") is None


def test_sane_build_command_refuses_duplex_on_a_simplex_feeder(tmp_path: Path) -> None:
    from scanpipe.sources.sane import build_command, parse_options

    options = parse_options("    --mode Gray|Color [Gray]\n    --source Flatbed|Automatic Document Feeder [Flatbed]\n")
    cmd = build_command("scanimage", "test:0", options, ScanSettings(dpi=75, mode="color", max_pages=3), tmp_path)
    assert cmd.argv[:3] == ["scanimage", "-d", "test:0"] and not cmd.one_page
    assert {"--resolution=75", "--mode=Color", "--source=Automatic Document Feeder", "--batch-count=3", "--batch-print"} <= set(cmd.argv)
    with pytest.raises(SourceError, match=r"^test:0: has no duplex feeder \(its sources: Flatbed, Automatic Document Feeder\)"):
        build_command("scanimage", "test:0", options, ScanSettings(duplex=True), tmp_path)
    flatbed = build_command("scanimage", "fb:0", parse_options("    --source Flatbed [Flatbed]\n"), ScanSettings(), tmp_path)
    assert flatbed.one_page and "--batch-count=1" in flatbed.argv


def test_sane_exit_statuses_map_to_errors() -> None:
    from scanpipe.sources.sane import classify_exit

    assert classify_exit("d", 0, "scanimage: sane_start: Document feeder out of documents\n", pages=4, stopped=False) is None
    empty = classify_exit("d", 0, "scanimage: sane_start: Document feeder out of documents\n", pages=0, stopped=False)
    assert isinstance(empty, FeederEmpty)
    assert str(empty) == ("d: the document feeder is empty: load the cards and scan again "
                          "(scanimage: sane_start: Document feeder out of documents)")
    jam = classify_exit("d", 6, "scanimage: sane_read: Document feeder jammed\n", pages=2, stopped=False)
    assert isinstance(jam, PaperJam) and str(jam) == ("d: a card jammed in the document feeder after 2 page(s) "
                                                       "(scanimage: sane_read: Document feeder jammed)")
    assert isinstance(classify_exit("d", 9, "scanimage: sane_read: Error during device I/O", pages=5, stopped=False), DeviceGone)
    killed = classify_exit("d", -9, "", pages=3, stopped=False)
    assert isinstance(killed, DeviceGone) and "signal SIGKILL" in str(killed)
    assert classify_exit("d", -15, "", pages=3, stopped=True) is None
    assert isinstance(classify_exit("x:0", 1, "scanimage: open of device x:0 failed: Invalid argument", pages=0, stopped=False),
                      DeviceNotFound)
    cover = classify_exit("d", 8, "scanimage: sane_read: Scanner cover is open", pages=0, stopped=False)
    assert cover is not None and "the scanner cover is open: close it" in str(cover)


def test_twain_is_windows_only_and_says_how_to_get_it() -> None:
    from scanpipe.sources.twain import TwainSource, map_twain_error, twain_devices

    if sys.platform == "win32":
        pytest.skip("on Windows TWAIN may really be there")
    assert twain_devices() == []
    with pytest.raises(DeviceNotFound, match=r"TWAIN needs Windows and the twain extra: pip install scanpipe\[twain\]"):
        with TwainSource("twain:Fujitsu fi-7160", ScanSettings()):
            pass
    exc = types.SimpleNamespace(**{n: type(n, (Exception,), {}) for n in (
        "PaperJam", "PaperDoubleFeedError", "CheckDeviceOnlineError", "GeneralFailure", "NoDataSourceError",
        "DSTransferCancelled")})
    assert isinstance(map_twain_error("twain:x", exc.PaperJam(), exc, pages=3), PaperJam)
    assert isinstance(map_twain_error("twain:x", exc.CheckDeviceOnlineError(), exc, pages=3), DeviceGone)
    assert isinstance(map_twain_error("twain:x", exc.NoDataSourceError(), exc, pages=0), DeviceNotFound)


def test_replay_settings_are_checked() -> None:
    with pytest.raises(SourceError, match=r"unknown replay setting\(s\) jamm"):
        ReplaySource("replay:/tmp?jamm=3")
