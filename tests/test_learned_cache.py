"""The learning of an election's blanks kept between runs (scanpipe.learned_cache): what a
cache entry gives back is bit for bit what learning again gives, and an entry is used for
nothing but the exact blanks, layouts and reader that made it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from scanpipe import learned_cache
from scanpipe.election import load_election
from scanpipe.imaging.reference import ReferenceIndex
from scanpipe.interpret import load_references
from scanpipe.types import Election

MODEL_FIELDS = ("style", "page", "dpi", "image", "coarse", "frame_shape", "marks_in", "mark_size_in", "patches_px",
                "image_reduced", "size_in")
GROUP_FIELDS = ("to_anchor", "ink", "solid", "near", "focus", "keep", "timing")


def _same(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    if isinstance(a, tuple | list):
        return isinstance(b, tuple | list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _assert_identical(fresh: ReferenceIndex, cached: ReferenceIndex) -> None:
    assert list(fresh.models) == list(cached.models)
    for key, model in fresh.models.items():
        for name in MODEL_FIELDS:
            assert _same(getattr(model, name), getattr(cached.models[key], name)), (key, name)
    assert len(fresh.groups) == len(cached.groups) > 1
    for g, h in zip(fresh.groups, cached.groups, strict=True):
        assert [m.key for m in g.members] == [m.key for m in h.members]
        assert all(h.members[i] is cached.models[m.key] for i, m in enumerate(g.members))
        for name in GROUP_FIELDS:
            assert _same(getattr(g, name), getattr(h, name)), name
            pairs = [(getattr(g, name), getattr(h, name))] if name in ("keep", "timing") else zip(getattr(g, name), getattr(h, name), strict=True)
            for x, y in pairs:
                assert x is None or x.flags.writeable == y.flags.writeable, name  # read-only as learned


def test_what_the_cache_gives_back_is_what_learning_gives(vendor_election: Election, tmp_path: Path) -> None:
    fresh = load_references(vendor_election, cache=False)
    assert not tmp_path.exists() or not any(tmp_path.iterdir())
    first = load_references(vendor_election, cache=tmp_path)  # learns, then keeps it
    entries = list(tmp_path.glob("blanks-*.npz"))
    assert len(entries) == 1
    _assert_identical(fresh, first)
    cached = load_references(vendor_election, cache=tmp_path)
    _assert_identical(fresh, cached)


def test_a_cached_entry_is_used_without_learning(vendor_election: Election, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = load_references(vendor_election, cache=tmp_path)
    import scanpipe.imaging.reference as reference
    import scanpipe.interpret as interpret

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("learned again although the entry fits")

    for module, name in ((interpret, "build_style_groups"), (reference, "find_timing_marks"), (reference, "textured_points")):
        monkeypatch.setattr(module, name, refuse)
    _assert_identical(fresh, load_references(vendor_election, cache=tmp_path))
    with pytest.raises(AssertionError, match="learned again"):
        load_references(vendor_election, cache=False)


def test_a_changed_blank_or_layout_is_a_new_entry(vendor_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "election"
    shutil.copytree(vendor_dir, copy)
    election = load_election(copy / "election.json")
    cache = tmp_path / "cache"
    load_references(election, cache=cache)
    page = election.ballot_styles[0].layout.pages[0]
    blank = Path(page.reference)
    data = bytearray(blank.read_bytes())
    blank.write_bytes(bytes(data) + b"\0")  # the same picture, other bytes: another key all the same
    changed = load_election(copy / "election.json")
    load_references(changed, cache=cache)
    assert len(list(cache.glob("blanks-*.npz"))) == 2
    inputs = [learned_cache.BlankInput(("a", 1), "0" * 64, 200.0, ((1.0, 1.0, 0.2, 0.1),), ())]
    moved = [learned_cache.BlankInput(("a", 1), "0" * 64, 200.0, ((1.0, 1.01, 0.2, 0.1),), ())]
    assert learned_cache.entry_key(inputs) != learned_cache.entry_key(moved)
    assert learned_cache.entry_key(inputs) != learned_cache.entry_key([learned_cache.BlankInput(("a", 1), "0" * 64, 300.0, ((1.0, 1.0, 0.2, 0.1),), ())])


def test_a_damaged_entry_is_learned_again_and_replaced(vendor_election: Election, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    fresh = load_references(vendor_election, cache=tmp_path)
    (entry,) = tmp_path.glob("blanks-*.npz")
    entry.write_bytes(entry.read_bytes()[: 1000])
    again = load_references(vendor_election, cache=tmp_path)
    assert "cannot be used" in caplog.text
    _assert_identical(fresh, again)
    _assert_identical(fresh, load_references(vendor_election, cache=tmp_path))  # the entry was written whole again


def test_an_unwritable_cache_costs_only_the_time(vendor_election: Election, tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would be")
    index = load_references(vendor_election, cache=blocked / "cache")
    assert len(index) > 0


def test_the_cache_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(learned_cache.CACHE_ENV, str(tmp_path / "here"))
    assert learned_cache.cache_dir() == tmp_path / "here"
    monkeypatch.setenv(learned_cache.CACHE_ENV, "off")
    assert learned_cache.cache_dir() is None
    monkeypatch.delenv(learned_cache.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert learned_cache.cache_dir() == tmp_path / "xdg" / "scanpipe"


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_an_entry_others_could_have_written_is_not_used(vendor_election: Election, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cache = tmp_path / "cache"
    load_references(vendor_election, cache=cache)
    assert cache.stat().st_mode & 0o777 == 0o700
    (entry,) = cache.glob("blanks-*.npz")
    entry.chmod(0o666)
    blanks_of = learned_cache._private
    assert not blanks_of(entry)
    fresh = load_references(vendor_election, cache=cache)
    assert "another account could have written it" in caplog.text
    assert len(fresh) > 0
    entry.chmod(0o644)
    cache.chmod(0o777)
    assert not blanks_of(entry)
    cache.chmod(0o700)
    assert blanks_of(entry)


def test_no_home_folder_means_no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(learned_cache.CACHE_ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)

    def nowhere() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(learned_cache.Path, "home", staticmethod(nowhere))
    if learned_cache.sys.platform != "win32":
        assert learned_cache.cache_dir() is None


def test_what_a_worker_receives_is_the_reference_files_and_rebuilds_the_same(vendor_election: Election, tmp_path: Path) -> None:
    """An ingest's workers get the blanks as their files' bytes, not as pixels, and rebuild
    every page model and style group to the last bit."""
    import pickle

    index = load_references(vendor_election, cache=tmp_path)
    sent = pickle.dumps(index, protocol=pickle.HIGHEST_PROTOCOL)
    pixels = sum(m.image.nbytes for m in index)
    assert len(sent) < pixels / 2  # the files, not the decoded pages
    received = pickle.loads(sent)
    _assert_identical(index, received)
    assert all(m.memo == {} for m in received)
    for g, h in zip(index.groups, received.groups, strict=True):
        assert np.array_equal(g.keep, h.keep) and np.array_equal(g.timing, h.timing)


def _pairs_learned(index: ReferenceIndex) -> list[object]:
    """What every group learns of its first pair and of its first member's own lines."""
    out: list[object] = []
    for g in index.groups:
        if len(g.members) > 1:
            out += [g.detail_of(0, 1), g.lines_of(1, 0), g.own_lines_of(0)]
    return out


def _same_details(a: list[object], b: list[object]) -> None:
    assert len(a) == len(b) > 0
    for x, y in zip(a, b, strict=True):
        assert (x is None) == (y is None)
        if x is not None:
            for name in ("boxes", "first", "second", "where", "lines", "line_first", "line_second"):
                assert _same(getattr(x, name), getattr(y, name)), name


def test_what_is_learned_of_pairs_is_kept_and_given_back_bit_for_bit(vendor_election: Election, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = _pairs_learned(load_references(vendor_election, cache=False))
    assert any(d is not None for d in fresh)
    _same_details(fresh, _pairs_learned(load_references(vendor_election, cache=tmp_path)))  # learned, then kept
    (pairs,) = tmp_path.glob("pairs-*")
    assert len(list(pairs.iterdir())) >= 2
    import scanpipe.imaging.style as style

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("a kept pair learned again")

    with monkeypatch.context() as m:
        m.setattr(style, "_pair_detail", refuse)
        m.setattr(style, "_own_lines", refuse)
        _same_details(fresh, _pairs_learned(load_references(vendor_election, cache=tmp_path)))
    # a damaged pair, or one file standing in for another, is learned again (and kept again)
    files = sorted(pairs.iterdir())
    files[0].write_bytes(files[0].read_bytes()[:200])
    files[1].write_bytes(files[-1].read_bytes()) if len(files) > 2 else None
    _same_details(fresh, _pairs_learned(load_references(vendor_election, cache=tmp_path)))
    with monkeypatch.context() as m:
        m.setattr(style, "_pair_detail", refuse)
        m.setattr(style, "_own_lines", refuse)
        _same_details(fresh, _pairs_learned(load_references(vendor_election, cache=tmp_path)))


def test_kept_pairs_go_with_their_entry(tmp_path: Path) -> None:
    for n in range(learned_cache.KEEP_ENTRIES + 1):
        (tmp_path / f"blanks-{n:02d}.npz").write_bytes(b"x")
        os.utime(tmp_path / f"blanks-{n:02d}.npz", (n, n))
        (tmp_path / f"pairs-{n:02d}").mkdir()
        (tmp_path / f"pairs-{n:02d}" / "a.npz").write_bytes(b"x")
    learned_cache._prune(tmp_path)
    assert not (tmp_path / "pairs-00").exists() and not (tmp_path / "blanks-00.npz").exists()
    assert (tmp_path / "pairs-01" / "a.npz").exists()
