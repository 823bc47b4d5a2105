"""What the reader learned from an election's blanks, kept between runs.

Learning from the blank reference scans (:func:`scanpipe.interpret.load_references`: each
blank's timing marks and refinement points, the style groups and where their members differ)
costs one to four seconds a run for a county's few dozen blanks, paid again by every
``ingest``, ``scan`` and ``watch`` of the election. The result depends only on the blanks and
the code that learns, so it is kept in a cache keyed by all of it: each blank's bytes
(SHA-256) and resolution, its target, write-in and ``distinguish`` boxes, the order of the
pages, and the source of the modules that learn (with the numpy and OpenCV versions). A
changed blank, layout or reader is a new key: an entry is never used for anything but the
exact inputs that made it, and what is loaded is bit for bit what learning again would give
(``tests/test_learned_cache.py``).

An entry is one ``.npz`` file (arrays and a JSON manifest; never a pickle), written to a
temporary name and renamed into place, so concurrent runs and a crash leave either no entry
or a whole one. An entry that cannot be read or does not fit the blanks is ignored and
learned again; a cache folder that cannot be written costs only the time. What an entry holds
decides how ballots read, so on POSIX an entry is used only when the account running scanpipe
owns it and its folder and no one else can write to either (the folder is made ``0700``).

Where: ``$SCANPIPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/scanpipe``, else ``~/.cache/scanpipe``
(``%LOCALAPPDATA%\\scanpipe\\cache`` on Windows). ``SCANPIPE_CACHE_DIR=off`` turns it off.
The newest :data:`KEEP_ENTRIES` entries are kept.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import json
import logging
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from scanpipe.imaging.reference import LearnedPoints, PageModel
from scanpipe.imaging.style import StyleGroup, _Detail, packed_mask, unpacked_mask
from scanpipe.types import Box

log = logging.getLogger(__name__)

CACHE_ENV = "SCANPIPE_CACHE_DIR"
FORMAT = 1  # bump when the entry's layout changes
KEEP_ENTRIES = 8
_LEARNING_MODULES = ("scanpipe.imaging.reference", "scanpipe.imaging.style", "scanpipe.imaging.align",
                     "scanpipe.imaging.decode", "scanpipe.imaging.page", "scanpipe.learned_cache")


@dataclass(frozen=True)
class BlankInput:
    """One blank as the learning reads it."""

    key: tuple[str, int]  # style, page
    sha256: str  # of the reference file's bytes
    dpi: float
    boxes: tuple[Box, ...]  # targets and write-in areas
    distinguish: tuple[Box, ...]


@dataclass(frozen=True)
class CachedGroup:
    """A style group's arrays (:class:`~scanpipe.imaging.style.StyleGroup`), its members by
    their index among the blanks (the anchor first)."""

    members: tuple[int, ...]
    shape: tuple[int, ...]  # of the anchor's frame
    to_anchor: tuple[np.ndarray, ...]
    ink: tuple[np.ndarray, ...]
    solid: tuple[np.ndarray, ...]
    near: tuple[np.ndarray, ...]
    focus: tuple[np.ndarray | None, ...]
    keep: np.ndarray
    timing: np.ndarray


@dataclass(frozen=True)
class Learned:
    """What a cache entry gives back: per blank (in input order) its searched points, and the
    style groups."""

    points: tuple[LearnedPoints, ...]
    groups: tuple[CachedGroup, ...]

    def style_groups(self, models: Sequence[PageModel], keeper: PairKeeper | None = None) -> tuple[StyleGroup, ...] | None:
        """The style groups over freshly decoded ``models`` (in input order), keeping what
        they learn of their pairs with ``keeper``; None when an array does not fit its blank
        (everything is then learned again)."""
        out = []
        for g in self.groups:
            anchor = models[g.members[0]]
            if g.shape != anchor.frame_shape:
                log.warning("the cached learning of the blanks does not fit blank %s page %s: learning again", *anchor.key)
                return None
            for a in g.solid:  # the masks are read-only as unpacked
                a.setflags(write=False)
            out.append(StyleGroup(anchor, tuple(models[k] for k in g.members), g.to_anchor, g.ink, g.solid, g.near,
                                  g.focus, g.keep, g.timing, keeper=keeper))
        return tuple(out)


def cache_dir() -> Path | None:
    """The cache folder in use, or None when caching is off."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off", "0", "none") else Path(chosen)
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "scanpipe" / "cache"
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no home folder to be found (a service account): no cache
            return None
    return Path(base) / "scanpipe"


def entry_key(blanks: Sequence[BlankInput]) -> str:
    """The SHA-256 naming everything the learning depends on."""
    digest = hashlib.sha256()
    digest.update(f"format {FORMAT}; numpy {np.__version__}; opencv {cv2.__version__}\n".encode())
    for name in _LEARNING_MODULES:
        module = importlib.import_module(name)  # each named module's own source, imported here or not
        source = getattr(module, "__file__", None)
        digest.update(name.encode() + b"\0" + (Path(source).read_bytes() if source else b"?") + b"\0")
    for b in blanks:
        digest.update(json.dumps([list(b.key), b.sha256, repr(float(b.dpi)), [list(map(repr, x)) for x in b.boxes],
                                  [list(map(repr, x)) for x in b.distinguish]]).encode() + b"\n")
    return digest.hexdigest()


def load(blanks: Sequence[BlankInput], directory: Path | None) -> Learned | None:
    """The entry for these blanks, or None (no cache, no entry, or one that cannot be used)."""
    if directory is None or not blanks:
        return None
    path = directory / f"blanks-{entry_key(blanks)}.npz"
    try:
        if not _private(path):
            log.warning("%s: not used (another account could have written it); learning the blanks again", path)
            return None
        with np.load(path, allow_pickle=False) as data:
            learned = _unpack(data, len(blanks))
    except FileNotFoundError:
        return None
    except Exception as e:  # a damaged or foreign file: learn again (and overwrite it)
        log.warning("%s: the cached learning of the blanks cannot be used (%s); learning again", path, e)
        return None
    try:
        os.utime(path)  # the newest entries are kept
    except OSError:
        pass
    return learned


def _private(path: Path) -> bool:
    """Whether only this account can have written the entry (POSIX: the file and its folder
    are ours and writable by no one else): what is read from it decides how ballots read."""
    if os.name != "posix":
        return True
    for item in (path, path.parent):
        st = item.stat()
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            return False
    return True


def save(blanks: Sequence[BlankInput], models: Sequence[PageModel], groups: Sequence[StyleGroup], directory: Path | None) -> None:
    """Keep what was learned (models in the order of ``blanks``); never fails a run."""
    if directory is None or not blanks:
        return
    path = directory / f"blanks-{entry_key(blanks)}.npz"
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        buffer = io.BytesIO()
        np.savez(buffer, **_pack(models, groups))  # type: ignore[arg-type]  # the stubs type the arrays as savez's allow_pickle
        fd, temporary = tempfile.mkstemp(prefix=".blanks-", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(buffer.getvalue())
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        _prune(directory)
    except OSError as e:
        log.info("%s: the learning of the blanks is not cached (%s)", directory, e)


def _prune(directory: Path) -> None:
    entries = sorted(directory.glob("blanks-*.npz"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[KEEP_ENTRIES:]:
        old.unlink(missing_ok=True)
    kept = {p.name[len("blanks-"): -len(".npz")] for p in entries[:KEEP_ENTRIES]}
    for pairs in directory.glob("pairs-*"):
        if pairs.is_dir() and pairs.name[len("pairs-"):] not in kept:
            for f in pairs.iterdir():
                f.unlink(missing_ok=True)
            pairs.rmdir()


@dataclass(frozen=True)
class PairKeeper:
    """What the style groups of one cache entry learn of their pairs of blanks, kept between
    runs (:class:`scanpipe.imaging.style.DetailKeeper`): where two look-alike styles differ,
    learned the first time a card needs the pair (tens of milliseconds each; a run of a
    county's cards needs dozens). One ``.npz`` per pair in the entry's own folder
    (``pairs-<entry key>/``, removed with the entry), named by the SHA-256 of the pair's
    name; written whole or not at all, used only when private, as an entry is. Picklable: the
    workers of one run share what any of them learned."""

    folder: Path

    def _path(self, name: str) -> Path:
        return self.folder / (hashlib.sha256(name.encode()).hexdigest()[:40] + ".npz")

    def load(self, name: str) -> tuple[bool, _Detail | None]:
        path = self._path(name)
        try:
            if not _private(path):
                return False, None
            with np.load(path, allow_pickle=False) as data:
                return True, _unpack_detail(data, name)
        except FileNotFoundError:
            return False, None
        except Exception as e:  # damaged or foreign: learn again (and overwrite it)
            log.warning("%s: a cached pair of blanks cannot be used (%s); learning it again", path, e)
            return False, None

    def save(self, name: str, detail: _Detail | None) -> None:
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            buffer = io.BytesIO()
            np.savez(buffer, **_pack_detail(detail, name))  # type: ignore[arg-type]
            fd, temporary = tempfile.mkstemp(prefix=".pair-", suffix=".tmp", dir=self.folder)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(buffer.getvalue())
                os.replace(temporary, self._path(name))
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as e:
            log.info("%s: a pair of blanks is not cached (%s)", self.folder, e)


def pair_keeper(blanks: Sequence[BlankInput], directory: Path | None) -> PairKeeper | None:
    """The keeper of the pairs of the entry for ``blanks``; None without a cache."""
    if directory is None or not blanks:
        return None
    return PairKeeper(directory / f"pairs-{entry_key(blanks)}")


_DETAIL_ARRAYS = ("first", "second", "where", "line_first", "line_second")


def _pack_detail(detail: _Detail | None, name: str) -> dict[str, np.ndarray]:
    manifest: dict[str, object] = {"format": FORMAT, "name": name, "none": detail is None}
    out: dict[str, np.ndarray] = {}
    if detail is not None:
        manifest["counts"] = {k: len(getattr(detail, k)) for k in _DETAIL_ARRAYS}
        out["boxes"] = np.array(detail.boxes, np.int64).reshape(-1, 4)
        out["lines"] = np.array(detail.lines, np.int64).reshape(-1, 4)
        for k in _DETAIL_ARRAYS:
            for n, a in enumerate(getattr(detail, k)):
                out[f"{k}{n}"] = a
    out["manifest"] = np.frombuffer(json.dumps(manifest).encode(), np.uint8)
    return out


def _unpack_detail(data: np.lib.npyio.NpzFile, name: str) -> _Detail | None:
    manifest = json.loads(bytes(data["manifest"]).decode())
    if manifest.get("format") != FORMAT or manifest.get("name") != name:
        raise ValueError("kept for another pair")
    if manifest["none"]:
        return None

    def arrays(k: str) -> tuple[np.ndarray, ...]:
        out = []
        for n in range(int(manifest["counts"][k])):
            a = np.array(data[f"{k}{n}"])
            a.setflags(write=False)
            out.append(a)
        return tuple(out)

    def boxes(k: str) -> tuple[tuple[int, int, int, int], ...]:
        return tuple((int(x), int(y), int(w), int(h)) for x, y, w, h in data[k])

    return _Detail(boxes("boxes"), arrays("first"), arrays("second"), arrays("where"), boxes("lines"),
                   arrays("line_first"), arrays("line_second"))


# --------------------------------------------------------------------------------------
# The entry's arrays




def _pack(models: Sequence[PageModel], groups: Sequence[StyleGroup]) -> dict[str, np.ndarray]:
    index = {id(m): i for i, m in enumerate(models)}
    out: dict[str, np.ndarray] = {}
    for i, m in enumerate(models):
        out[f"m{i}_marks"] = np.asarray(m.marks_in, np.float64).reshape(-1, 2)
        out[f"m{i}_size"] = np.array(m.mark_size_in if m.mark_size_in is not None else (np.nan, np.nan), np.float64)
        out[f"m{i}_patches"] = np.asarray(m.patches_px, np.int64).reshape(-1, 2)
    for j, g in enumerate(groups):
        shape = g.keep.shape
        out[f"g{j}_members"] = np.array([index[id(m)] for m in g.members], np.int64)
        out[f"g{j}_to_anchor"] = np.stack(g.to_anchor).astype(np.float64)
        out[f"g{j}_ink"] = np.stack([packed_mask(a) for a in g.ink])
        out[f"g{j}_near"] = np.stack([packed_mask(a) for a in g.near])
        out[f"g{j}_focus"] = np.stack([packed_mask(f if f is not None else np.zeros(shape, bool)) for f in g.focus])
        out[f"g{j}_has_focus"] = np.array([f is not None for f in g.focus], bool)
        for k, s in enumerate(g.solid):
            out[f"g{j}_solid{k}"] = s
        out[f"g{j}_keep"] = packed_mask(g.keep)
        out[f"g{j}_timing"] = packed_mask(g.timing)
        out[f"g{j}_shape"] = np.array(shape, np.int64)
    out["manifest"] = np.frombuffer(json.dumps({"format": FORMAT, "models": len(models), "groups": len(groups)}).encode(), np.uint8)
    return out


def _unpack(data: np.lib.npyio.NpzFile, count: int) -> Learned:
    manifest = json.loads(bytes(data["manifest"]).decode())
    if manifest.get("format") != FORMAT or manifest.get("models") != count:
        raise ValueError(f"an entry for {manifest.get('models')} blanks in format {manifest.get('format')}")
    points = []
    for i in range(count):
        size = data[f"m{i}_size"]
        points.append(LearnedPoints(np.array(data[f"m{i}_marks"], np.float64).reshape(-1, 2),
                                    None if np.isnan(size).any() else (float(size[0]), float(size[1])),
                                    tuple((int(x), int(y)) for x, y in data[f"m{i}_patches"])))
    groups = []
    for j in range(int(manifest["groups"])):
        members = tuple(int(k) for k in data[f"g{j}_members"])
        if not members or any(not 0 <= k < count for k in members):
            raise ValueError(f"group {j} names blanks the election does not have")
        shape = tuple(int(v) for v in data[f"g{j}_shape"])
        has_focus = data[f"g{j}_has_focus"]
        groups.append(CachedGroup(
            members, shape,
            to_anchor=tuple(np.array(t, np.float64) for t in data[f"g{j}_to_anchor"]),
            ink=tuple(unpacked_mask(p, shape) for p in data[f"g{j}_ink"]),
            solid=tuple(np.array(data[f"g{j}_solid{k}"], np.int32) for k in range(len(members))),
            near=tuple(unpacked_mask(p, shape) for p in data[f"g{j}_near"]),
            focus=tuple(unpacked_mask(p, shape) if h else None for p, h in zip(data[f"g{j}_focus"], has_focus, strict=True)),
            keep=unpacked_mask(data[f"g{j}_keep"], shape),
            timing=unpacked_mask(data[f"g{j}_timing"], shape),
        ))
    return Learned(tuple(points), tuple(groups))
