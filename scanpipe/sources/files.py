"""Which files an ``ingest PATH...`` reads, and why each other one is not read.

Every entry found under an ingest path ends in exactly one of two lists: a card file to
read, or a skipped entry with its reason. Nothing is left out silently:

=======================================  ====================================================
found                                    outcome
=======================================  ====================================================
a regular file ending in a card suffix   read (a link to one too); an unreadable one (no read
                                         permission, vanished) is reported by the reader
another regular file (hidden too)        skipped: not a card file (its extension)
a link whose target does not exist       skipped: dangling link (where it points)
a link that points back at itself        skipped: link loop
a link to a folder already being read    skipped: the folder is read once (a loop, or a
                                         second path to it)
a folder that cannot be listed           skipped, named with a trailing ``/``
a named pipe, socket or device           skipped: not a regular file (reading a pipe would
                                         wait forever)
a name that is not valid UTF-8           skipped: the name cannot be stored (rename it)
=======================================  ====================================================

A skipped entry that may hold a card (a card suffix, or a folder) is a *card file not
read*: ingest records it and the queue lists it (``file_unread``) until a later ingest reads
that path, or lists that folder (:func:`may_hold_cards`).

Names are shown through :func:`shown_path`: control characters (a newline in a file name)
are escaped, so a name cannot forge lines of a summary.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scanpipe.errors import SourceError

CARD_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".tif", ".tiff", ".pdf"})


@dataclass
class FoundFiles:
    """Card files to read (sorted), ``(path, reason)`` of every entry skipped, and the
    folders listed (``path/``)."""

    cards: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)


def may_hold_cards(path: str) -> bool:
    """Whether a skipped entry may be a card (or a folder of them) that was not read."""
    return path.endswith("/") or Path(path).suffix.lower() in CARD_SUFFIXES


def shown_path(path: str) -> str:
    """A path as one printable line: control and undecodable characters escaped
    (``\\n``, ``\\x1b``, ``\\udcff``); an ordinary path is unchanged."""
    if path.isprintable():
        return path
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for ch in path)


def storable_path(path: str) -> str:
    """The path as text a database accepts (a name that is not UTF-8 is escaped)."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", "backslashreplace")


def find_card_files(paths: Sequence[str]) -> FoundFiles:
    """Card files under ``paths`` (recursively, links followed once) and every entry skipped.

    A path that does not exist raises :class:`SourceError` (the command cannot run).
    """
    found = FoundFiles()
    folders_read: dict[tuple[int, int], str] = {}
    for raw in paths:
        if not os.path.lexists(raw):
            raise SourceError(f"{shown_path(raw)}: no such file or folder")
        _visit(raw, found, folders_read)
    found.cards.sort()
    return found


def _visit(path: str, found: FoundFiles, folders_read: dict[tuple[int, int], str]) -> None:
    try:
        st = os.stat(path)
    except OSError as e:
        found.skipped.append((path, _link_problem(path, e)))
        return
    if stat.S_ISDIR(st.st_mode):
        _visit_folder(path, st, found, folders_read)
    elif not stat.S_ISREG(st.st_mode):
        found.skipped.append((path, f"not a regular file ({_kind_of(st.st_mode)}): nothing to read"))
    elif not _is_utf8(path):
        found.skipped.append((storable_path(path), "the file name is not valid UTF-8 and cannot be recorded: rename the file"))
    elif Path(path).suffix.lower() in CARD_SUFFIXES:
        found.cards.append(path)
    else:
        hidden = " (a hidden file)" if Path(path).name.startswith(".") else ""
        found.skipped.append((path, f"not a card file{hidden} (extension '{Path(path).suffix or 'none'}'; "
                                    f"cards are {', '.join(sorted(CARD_SUFFIXES))})"))


def _visit_folder(path: str, st: os.stat_result, found: FoundFiles, folders_read: dict[tuple[int, int], str]) -> None:
    key = (st.st_dev, st.st_ino)
    if key in folders_read:
        found.skipped.append((path, f"a link to the folder {shown_path(folders_read[key])}, which is read already "
                                    f"(a link loop, or a second path to it)"))
        return
    folders_read[key] = path
    try:
        names = sorted(os.listdir(path))
    except OSError as e:
        found.skipped.append((path.rstrip("/") + "/", f"folder cannot be listed: {e.strerror or e}"))
        return
    found.folders.append(path.rstrip("/") + "/")
    for name in names:
        _visit(os.path.join(path, name), found, folders_read)


def _link_problem(path: str, error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "a symbolic link loop (the link leads back to itself)"
    if os.path.islink(path):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        if error.errno == errno.ENOENT:
            return f"a dangling symbolic link (it points to {shown_path(target)}, which does not exist)"
        return f"a symbolic link to {shown_path(target)} that cannot be followed: {error.strerror or error}"
    return f"cannot be examined: {error.strerror or error}"


def _kind_of(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file or folder"


def _is_utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False
