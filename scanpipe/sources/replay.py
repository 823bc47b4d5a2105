"""A fake scanner that feeds a folder of images (sorted by name) as if from a feeder.

For tests, demonstrations and operator training. The device name is
``replay:/path/to/folder`` with optional settings after ``?``, joined by ``&``:

- ``from=K``: start at the K-th image (1-based), as when an operator re-feeds the rest
  of a stack after a jam;
- ``jam=K`` / ``gone=K``: the K-th image of this run jams / the device disappears when it
  is reached (images before it are delivered);
- ``empty``: the feeder is empty (nothing is delivered);
- ``delay=S``: wait S seconds before each page, like a real feeder.

Example: ``replay:fixtures/ballot_images/deck/cards?jam=4``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

from scanpipe.errors import SourceError
from scanpipe.sources.base import AcquiredPage, DeviceGone, DeviceInfo, DeviceNotFound, FeederEmpty, PaperJam, ScanSettings, Side

PREFIX = "replay:"
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".tif", ".tiff", ".pdf"})


@dataclass(frozen=True, slots=True)
class ReplayPlan:
    folder: Path
    start: int = 1
    jam_at: int | None = None
    gone_at: int | None = None
    empty: bool = False
    delay_s: float = 0.0


def parse_replay_device(device: str) -> ReplayPlan:
    """``replay:/dir?jam=3&from=2`` -> a plan; a bad setting is a SourceError naming it."""
    assert device.startswith(PREFIX)
    folder, _, query = device[len(PREFIX):].partition("?")
    values: dict[str, str] = {}
    for part in filter(None, query.split("&")):
        key, _, value = part.partition("=")
        values[key] = value
    unknown = set(values) - {"from", "jam", "gone", "empty", "delay"}
    if unknown:
        raise SourceError(f"{device}: unknown replay setting(s) {', '.join(sorted(unknown))} (from, jam, gone, empty, delay)")
    try:
        return ReplayPlan(Path(folder), start=int(values.get("from", "1")),
                          jam_at=int(values["jam"]) if "jam" in values else None,
                          gone_at=int(values["gone"]) if "gone" in values else None,
                          empty="empty" in values, delay_s=float(values.get("delay", "0")))
    except ValueError as e:
        raise SourceError(f"{device}: a replay setting is not a number ({e})") from e


class ReplaySource:
    """Feeds the images of a folder in name order; see the module docstring."""

    def __init__(self, device: str, settings: ScanSettings | None = None) -> None:
        self.name = device
        self.plan = parse_replay_device(device)
        self.settings = settings or ScanSettings()
        self._stopped = False
        self._files: list[Path] = []

    @staticmethod
    def devices() -> list[DeviceInfo]:
        """Replay folders are named, not discovered."""
        return []

    def __enter__(self) -> Self:
        folder = self.plan.folder
        if not folder.is_dir():
            raise DeviceNotFound(self.name, f"{folder} is not a folder")
        files = sorted(f for f in folder.iterdir() if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)
        self._files = files[self.plan.start - 1:]
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._files = []

    def stop(self) -> None:
        self._stopped = True

    def pages(self) -> Iterator[AcquiredPage]:
        if self.plan.empty or not self._files:
            raise FeederEmpty(self.name, detail=f"no images to replay in {self.plan.folder}" if not self._files else None)
        limit = self.settings.max_pages
        for seq, path in enumerate(self._files, start=1):
            if self._stopped or (limit is not None and seq > limit):
                return
            if self.plan.jam_at == seq:
                raise PaperJam(self.name, pages_delivered=seq - 1, detail=f"replayed jam at {path.name}")
            if self.plan.gone_at == seq:
                raise DeviceGone(self.name, pages_delivered=seq - 1, detail=f"replayed disconnection at {path.name}")
            if self.plan.delay_s:
                time.sleep(self.plan.delay_s)
            side: Side = "back" if self.settings.duplex and seq % 2 == 0 else "front"
            yield AcquiredPage(seq, path.read_bytes(), path.suffix.lower(), side)
