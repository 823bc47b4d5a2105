"""What every page source (a scanner, a replayed folder) offers, and how it fails.

A source is a context manager that yields :class:`AcquiredPage` values one by one, as the
device delivers them. ``stop()`` asks the device to stop feeding; pages it had already
delivered are still yielded, then ``pages()`` ends. Problems that stop the feed are
exceptions under :class:`scanpipe.errors.SourceError`::

    SourceError
     +-- AcquisitionError     the device stopped (or never started) delivering pages
          +-- DeviceNotFound  no such device, or it cannot be opened
          +-- FeederEmpty     the feeder held no card when the scan started
          +-- PaperJam        a card jammed in the feeder
          +-- DeviceGone      the device went away (unplugged, I/O error) mid-batch
          +-- DeviceProblem   anything else the device reported (cover open, busy...)

Each carries ``pages_delivered``: how many pages of this run were delivered before it,
so the caller can say which physical card to look at.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Literal, Protocol, Self, TypeAlias

from scanpipe.errors import SourceError

Side: TypeAlias = Literal["front", "back"]
ColorMode: TypeAlias = Literal["gray", "color"]


@dataclass(frozen=True, slots=True)
class AcquiredPage:
    """One page as a device delivered it: encoded image bytes, not yet on disk here."""

    seq: int  # 1-based position in this run of the source
    image_bytes: bytes
    extension: str  # with the dot, lowercase: ".png", ".tif", ".jpg"
    side: Side = "front"


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    """A scanner that can be named with ``--device``."""

    name: str  # as given to --device: "test:0", "twain:Fujitsu fi-7160", "replay:/dir"
    vendor: str
    model: str
    kind: str  # "sane" | "twain" | "replay"

    def line(self) -> str:
        return f"{self.name}\t{self.vendor} {self.model}\t({self.kind})"


@dataclass(frozen=True, slots=True)
class ScanSettings:
    """What the operator asked of the device."""

    dpi: int = 200
    mode: ColorMode = "gray"
    duplex: bool = False
    max_pages: int | None = None  # stop after this many pages (None: until the feeder is empty)


class PageSource(Protocol):
    """A device that delivers pages. Use as ``with source: for page in source.pages(): ...``."""

    name: str

    def __enter__(self) -> Self: ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...

    def pages(self) -> Iterator[AcquiredPage]:
        """Pages in feed order; raises an :class:`AcquisitionError` when the feed fails."""
        ...

    def stop(self) -> None:
        """Stop feeding; pages already delivered by the device are still yielded."""
        ...


# --------------------------------------------------------------------------------------
# Errors


class AcquisitionError(SourceError):
    """The device stopped delivering pages (or never started)."""

    def __init__(self, device: str, what: str, *, pages_delivered: int = 0, detail: str | None = None) -> None:
        self.device = device
        self.what = what
        self.pages_delivered = pages_delivered
        self.detail = detail
        after = f" after {pages_delivered} page(s)" if pages_delivered else ""
        extra = f" ({detail})" if detail else ""
        super().__init__(f"{device}: {what}{after}{extra}")


class DeviceNotFound(AcquisitionError):
    def __init__(self, device: str, detail: str | None = None, *, known: tuple[str, ...] | None = None) -> None:
        hint = ("; devices found: " + ", ".join(known)) if known else ("; no scanner was found" if known is not None else "")
        super().__init__(device, "no such scanner, or it cannot be opened" + hint, detail=detail)


class FeederEmpty(AcquisitionError):
    def __init__(self, device: str, *, pages_delivered: int = 0, detail: str | None = None) -> None:
        super().__init__(device, "the document feeder is empty: load the cards and scan again",
                         pages_delivered=pages_delivered, detail=detail)


class PaperJam(AcquisitionError):
    def __init__(self, device: str, *, pages_delivered: int = 0, detail: str | None = None) -> None:
        super().__init__(device, "a card jammed in the document feeder", pages_delivered=pages_delivered, detail=detail)


class DeviceGone(AcquisitionError):
    def __init__(self, device: str, *, pages_delivered: int = 0, detail: str | None = None) -> None:
        super().__init__(device, "the scanner stopped answering (disconnected, switched off or an I/O error)",
                         pages_delivered=pages_delivered, detail=detail)


class DeviceProblem(AcquisitionError):
    """Anything else the device reported: cover open, busy, out of memory, cancelled at the device."""


# --------------------------------------------------------------------------------------
# Provenance


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def stamp_png(data: bytes, text: dict[str, str]) -> bytes:
    """The same PNG with ``tEXt`` chunks (device, page, time of acquisition) after IHDR.

    The pixels are untouched. Every acquisition is a distinct event, so two pages of a
    stack are distinct files even when a device returns identical pixels (the SANE test
    backend does; real sensors never do), and the file itself says where it came from.
    Data that is not a PNG is returned unchanged.
    """
    import struct
    import zlib

    if not data.startswith(PNG_SIGNATURE) or data[12:16] != b"IHDR":
        return data
    ihdr_end = 8 + 12 + struct.unpack(">I", data[8:12])[0]
    chunks = b""
    for key, value in text.items():
        body = key.encode("latin-1")[:79] + b"\x00" + value.encode("latin-1", "replace")
        chunks += struct.pack(">I", len(body)) + b"tEXt" + body + struct.pack(">I", zlib.crc32(b"tEXt" + body) & 0xFFFFFFFF)
    return data[:ihdr_end] + chunks + data[ihdr_end:]


def provenance(device: str, seq: int, side: str) -> dict[str, str]:
    from datetime import UTC, datetime

    return {"Source": device, "scanpipe:page": f"{seq} {side}",
            "Creation Time": datetime.now(UTC).isoformat(timespec="microseconds")}
